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

function describe(server: string, info: McpToolInfo): string {
  const text = stripTerminalSequences(info.description).replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim();
  const cut = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  return `${cut === "" ? info.name : cut} (MCP server "${server}", tool "${info.name}")`;
}

/** The tool as zero offers it under `exposed`; throws when its schema cannot be used. */
export function adaptTool(connection: ServerConnection, info: McpToolInfo, exposed: string): Tool {
  const schemaSize = JSON.stringify(info.inputSchema ?? null).length;
  if (schemaSize > MAX_SCHEMA_CHARS) throw new Error(`its input schema is ${schemaSize} characters (at most ${MAX_SCHEMA_CHARS})`);
  if (info.inputSchema?.type !== "object") throw new Error('its input schema is not of type "object"');
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
