import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { isChildEvent, type RuntimeEvent } from "../../protocol/events.ts";

const REQUIRED: Record<string, string[]> = {
  ping: ["request_id", "session_id"],
  run: ["request_id", "session_id", "prompt"],
  cancel: ["request_id", "session_id", "target_request_id"],
};

/**
 * What is wrong with a request, in the words a bridge developer needs; undefined when
 * it is acceptable. Extra fields are allowed (forward compatibility).
 */
export function describeRequestProblem(record: Record<string, unknown>): string | undefined {
  if (record.protocol_version !== 1) return `protocol_version must be 1 (got ${JSON.stringify(record.protocol_version) ?? "none"})`;
  const type = record.type;
  if (typeof type !== "string" || !Object.hasOwn(REQUIRED, type)) return `unknown type ${JSON.stringify(type) ?? "(missing)"} (allowed: ping, run, cancel)`;
  for (const field of REQUIRED[type]!) {
    if (typeof record[field] !== "string" || record[field] === "") return `${type} request requires a non-empty ${field}`;
  }
  if (type === "run") {
    if (typeof record.idempotency_key !== "string" || record.idempotency_key === "") return "run request requires non-empty idempotency_key";
    if (record.timeout_ms !== undefined && !(Number.isInteger(record.timeout_ms) && (record.timeout_ms as number) > 0)) return "timeout_ms must be a positive integer";
    if (record.stream !== undefined && typeof record.stream !== "boolean") return "stream must be true or false";
    if (record.metadata !== undefined && (typeof record.metadata !== "object" || record.metadata === null || Array.isArray(record.metadata))) return "metadata must be an object";
    if (record.ts_ms !== undefined && typeof record.ts_ms !== "number") return "ts_ms must be a number";
  }
  return undefined;
}

/** The progress event a streamed run shows for an internal event, if any. */
export function hostEventFor(event: RuntimeEvent, context?: { tokens: number; window: number }): { type: string; payload: Record<string, unknown> } | undefined {
  // A bridge sees the root run; children show up as its delegate call and result.
  if (isChildEvent(event)) return undefined;
  switch (event.type) {
    case "message.delta":
      return { type: "TEXT_DELTA", payload: { text: event.text } };
    case "reasoning.delta":
      return { type: "REASONING_DELTA", payload: { text: event.text } };
    case "tool.requested":
      return { type: "TOOL_CALL", payload: { id: event.callId, name: event.tool, args: event.input } };
    case "tool.completed":
      return { type: "TOOL_RESULT", payload: { id: event.callId, status: event.status, output: event.output, truncated: event.truncated } };
    case "usage.updated":
      return {
        type: "USAGE",
        payload: {
          prompt_tokens: event.usage.inputTokens,
          completion_tokens: event.usage.outputTokens,
          total_tokens: event.usage.totalTokens,
          ...(event.costUsd !== undefined ? { cost_usd: event.costUsd } : {}),
          // Ours: the estimated request size against the context window (compaction on).
          ...(context ? { context_tokens: context.tokens, context_window: context.window } : {}),
        },
      };
    default:
      return undefined;
  }
}

/** Where a line stops being JSON and what was found there, with a short excerpt around it. */
export function describeJsonError(line: string): string {
  const errors: ParseError[] = [];
  parseJsonc(line, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (!first) return "not a JSON value";
  const from = Math.max(0, first.offset - 20);
  const excerpt = line.slice(from, first.offset + 20);
  return `${printParseErrorCode(first.error)} at character ${first.offset + 1} (near ${JSON.stringify(excerpt)})`;
}
