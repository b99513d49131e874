import { z } from "zod";
import type { Operation } from "../protocol/events.ts";
import { defineTool, type Tool } from "../tool/define.ts";
import type { ToolDefinition, ToolRisk } from "./define.ts";

/** A declared risk as the operation policy judges (a plugin's write is an edit, never a delete or move). */
const OPERATION_OF: Record<ToolRisk, Operation> = { read: "read", write: "write-edit", execute: "execute", network: "network" };

/** The policy target of every call of a plugin tool: rules and "always" approvals name it. */
export function pluginTarget(name: string): string {
  return `plugin:${name}`;
}

/**
 * A plugin's tool as one of zero's, through the same contract as the core tools: the input is
 * validated by the plugin's Zod schema, the call is classified by its declared risk (target
 * `plugin:<name>`), the executor gets its own timeout signal, and its output is redacted and
 * bounded; a throw becomes a failed result. Throws here when the schema is not a Zod object schema.
 */
export function pluginTool(definition: ToolDefinition): Tool {
  const { name, risk } = definition;
  const operation = OPERATION_OF[risk];
  const target = pluginTarget(name);
  const tool = defineTool({
    name,
    description: definition.description,
    input: definition.inputSchema as z.ZodType,
    classify: () => ({ risk, operation, target }),
    async execute(input, ctx) {
      const context = Object.freeze({
        callId: ctx.callId,
        workspace: ctx.roots.workspace,
        signal: ctx.signal,
        timeoutMs: ctx.timeoutMs,
        progress: (message: string) => ctx.progress(String(message)),
      });
      const output: unknown = await definition.execute(input, context);
      if (typeof output === "string") return { output };
      if (typeof output === "object" && output !== null && typeof (output as { output?: unknown }).output === "string") {
        return { output: (output as { output: string }).output };
      }
      throw new Error(`plugin tool ${name} answered ${output === null ? "null" : typeof output}, not a string or { output: string }`);
    },
  });
  if (tool.inputSchema.type !== "object") throw new Error("its inputSchema must be a Zod object schema (z.object({ … }))");
  return tool;
}
