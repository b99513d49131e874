/**
 * An MCP server's tool as one of zero's: the same contract as the core tools (input validated
 * against the server's JSON Schema before the call, output redacted, bounded and spilled, media
 * typed). Its risk is its transport's — execute for stdio, network for HTTP — whatever the
 * server's annotations claim: they are hints from the server, not facts zero can check.
 */
import { defineJsonSchemaTool, type Tool } from "../tool/define.ts";
import { escapeTarget } from "../tool/targets.ts";
import { stripTerminalSequences } from "../security/terminal.ts";
import type { McpToolInfo, ServerConnection } from "./connection.ts";
import { toolCallOutput } from "./result.ts";

/** A tool description longer than this is cut: every byte is paid on every request. */
export const MAX_DESCRIPTION_CHARS = 1_024;
/** An input schema larger than this (serialized) is refused: the tool is left out with a notice. */
export const MAX_SCHEMA_CHARS = 64 * 1024;
/** Nesting and node bounds checked before Ajv compiles a schema: compiling is CPU on the main thread. */
export const MAX_SCHEMA_DEPTH = 32;
export const MAX_SCHEMA_NODES = 4_000;
/** Tool names longer than this (MCP recommends at most 128) are refused. */
export const MAX_TOOL_NAME_CHARS = 128;

/** Maps whose keys are names (a property called `$id`), not schema keywords. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Why a schema is not compiled at all: too deep, too many nodes (either can keep Ajv busy for
 * seconds), or a nested `$id` (ids are global to the validator: one server's id could break
 * another server's tool).
 */
export function schemaProblem(schema: unknown): string | undefined {
  let nodes = 0;
  const stack: Array<{ value: unknown; depth: number; namesMap: boolean }> = [{ value: schema, depth: 0, namesMap: false }];
  while (stack.length > 0) {
    const { value, depth, namesMap } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (++nodes > MAX_SCHEMA_NODES) return `its input schema has more than ${MAX_SCHEMA_NODES} nodes`;
    if (depth > MAX_SCHEMA_DEPTH) return `its input schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`;
    const entries = Array.isArray(value) ? value.map((item) => ["", item] as const) : Object.entries(value);
    for (const [key, item] of entries) {
      if (!namesMap && depth > 0 && key === "$id") return "its input schema has a nested $id";
      stack.push({ value: item, depth: depth + 1, namesMap: !Array.isArray(value) && !namesMap && NAME_MAPS.has(key) });
    }
  }
  return undefined;
}

function describe(server: string, info: McpToolInfo): string {
  const text = stripTerminalSequences(info.description).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim();
  const cut = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  return `${cut === "" ? info.name : cut} (MCP server "${server}", tool "${info.name}")`;
}

/** The tool as zero offers it under `exposed`; throws when its schema cannot be used. */
export function adaptTool(connection: ServerConnection, info: McpToolInfo, exposed: string): Tool {
  if (info.name.length > MAX_TOOL_NAME_CHARS || /[\s\p{Cc}]/u.test(info.name)) throw new Error(`its name is longer than ${MAX_TOOL_NAME_CHARS} characters or holds spaces or control characters`);
  const schemaSize = JSON.stringify(info.inputSchema ?? null).length;
  if (schemaSize > MAX_SCHEMA_CHARS) throw new Error(`its input schema is ${schemaSize} characters (at most ${MAX_SCHEMA_CHARS})`);
  if (info.inputSchema?.type !== "object") throw new Error('its input schema is not of type "object"');
  const problem = schemaProblem(info.inputSchema);
  if (problem !== undefined) throw new Error(problem);
  const risk = connection.transportKind === "stdio" ? "execute" : "network";
  const target = escapeTarget(`mcp:${connection.id}:${info.name}`);
  return defineJsonSchemaTool({
    name: exposed,
    description: describe(connection.id, info),
    inputSchema: info.inputSchema,
    classify: () => ({ risk, operation: risk, target }),
    async execute(input, ctx) {
      const result = await connection.callTool(info.name, input, { signal: ctx.signal, timeoutMs: ctx.timeoutMs, onProgress: ctx.progress });
      return toolCallOutput(result as Parameters<typeof toolCallOutput>[0], { maxAttachmentBytes: ctx.maxAttachmentBytes });
    },
  });
}
