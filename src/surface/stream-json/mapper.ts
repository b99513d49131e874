import type { Operation, Risk, RuntimeEvent } from "../../protocol/events.ts";
import { STREAM_JSON_VERSION, type ErrorCode, type OutputBody, type OutputEvent, type SideEffect } from "../../protocol/stream-json.ts";
import type { Redactor } from "../../security/redact.ts";
import { createStreamRedactor } from "../../security/stream-redactor.ts";

const SIDE_EFFECT_OF_RISK: Record<Risk, SideEffect> = { read: "read", write: "write", execute: "shell", network: "network", delegate: "delegate" };
/** For calls whose risk is unknown (an unknown tool, invalid input): what the tool would be. */
const SIDE_EFFECT_OF_TOOL: Record<string, SideEffect> = { read: "read", find: "read", write: "write", run: "shell", search: "network", delegate: "delegate" };

const TOOL_STATUS = { completed: "ok", failed: "error", denied: "denied", cancelled: "cancelled" } as const;

/** Operations that carry structured risk metadata on a permission request. */
const RISKY: Partial<Record<Operation, { level: "high" | "critical"; category: string }>> = {
  network: { level: "critical", category: "network" },
  execute: { level: "high", category: "shell" },
  "read-secret": { level: "high", category: "secret" },
  "write-sensitive": { level: "high", category: "secret" },
};

/** Error code and message for a run that ended without success. */
function endError(event: Extract<RuntimeEvent, { type: "run.completed" }>, guard: string | undefined): { code: ErrorCode; message: string } | undefined {
  if (event.status === "completed" || event.status === "failed") return undefined; // failures already had their error
  if (event.status === "cancelled") return { code: "cancelled", message: "the run was cancelled" };
  if (event.reason === "deadline") return { code: "timeout", message: guard ?? "the run passed its deadline" };
  return { code: "limit_reached", message: guard ?? `a limit stopped the run (${event.reason ?? "limit"})` };
}

/**
 * Translates the internal event stream into stream-json v2. Explicit per event,
 * so an internal change can never silently change the public shape; everything
 * textual is redacted (streamed text with a boundary-aware redactor).
 */
export function createStreamJsonMapper(redactor: Redactor) {
  const text = createStreamRedactor(redactor);
  const reasoning = createStreamRedactor(redactor);
  const scrub = (value: string) => redactor.redact(value).text;
  let guard: string | undefined;
  let runId = "";

  const out = (bodies: OutputBody[]): OutputEvent[] =>
    bodies.map((body) => ({ schemaVersion: STREAM_JSON_VERSION, runId, ...body }) as OutputEvent);
  /** Held streamed text goes out before anything that follows it. */
  const flushStreams = (): OutputBody[] => {
    const bodies: OutputBody[] = [];
    const thought = reasoning.flush();
    if (thought !== "") bodies.push({ type: "reasoning", delta: thought });
    const said = text.flush();
    if (said !== "") bodies.push({ type: "text", delta: said });
    return bodies;
  };

  return {
    map(event: RuntimeEvent): OutputEvent[] {
      runId = event.runId;
      switch (event.type) {
        case "run.started":
          return out([
            {
              type: "run_start",
              sessionId: event.sessionId,
              cwd: event.cwd,
              provider: event.model.profile ?? event.model.provider,
              model: event.model.alias,
              apiModel: event.model.model,
            },
          ]);
        case "reasoning.delta": {
          const delta = reasoning.push(event.text);
          return delta === "" ? [] : out([{ type: "reasoning", delta }]);
        }
        case "message.delta": {
          // Reasoning that is still held came first: it goes out before the answer text.
          const thought = reasoning.flush();
          const delta = text.push(event.text);
          return out([...(thought !== "" ? [{ type: "reasoning" as const, delta: thought }] : []), ...(delta !== "" ? [{ type: "text" as const, delta }] : [])]);
        }
        case "step.completed":
          return out(flushStreams());
        case "tool.requested":
          return out([
            {
              type: "tool_call",
              id: event.callId,
              name: event.tool,
              args: JSON.parse(scrub(JSON.stringify(event.input ?? null))),
              sideEffect: event.risk ? SIDE_EFFECT_OF_RISK[event.risk] : (SIDE_EFFECT_OF_TOOL[event.tool] ?? "read"),
            },
          ]);
        case "permission.requested": {
          const sideEffect = SIDE_EFFECT_OF_RISK[event.risk];
          const risky = RISKY[event.operation];
          const risk = risky ? { level: risky.level, categories: [risky.category] } : undefined;
          return out([
            {
              type: "permission_request",
              id: event.callId,
              name: event.tool,
              action: "prompt",
              permission: "prompt",
              permissionMode: event.permissionMode,
              sideEffect,
              reason: event.reason,
              ...(risk ? { risk, block: { code: risky!.category, toolName: event.tool, action: "prompt" as const, risk, reason: event.reason, recoverable: true } } : {}),
            },
          ]);
        }
        case "permission.decided":
          // Only a real answer is a decision; headless denials and mode verdicts show in tool_result.
          if (event.source === "no-responder" || event.source === "mode") return [];
          return out([
            {
              type: "permission_decision",
              id: event.callId,
              name: event.tool,
              action: event.decision,
              permission: "prompt",
              permissionGranted: event.decision === "allow",
              decisionReason: event.reason,
            },
          ]);
        case "tool.completed":
          return out([{ type: "tool_result", id: event.callId, status: TOOL_STATUS[event.status], output: scrub(event.output), truncated: event.truncated }]);
        case "usage.updated":
          return out([
            ...flushStreams(),
            { type: "usage", promptTokens: event.usage.inputTokens, completionTokens: event.usage.outputTokens, totalTokens: event.usage.totalTokens },
          ]);
        case "guard.triggered":
          guard = event.message;
          return [];
        case "run.failed":
          return out([
            ...flushStreams(),
            { type: "error", code: event.error.kind === "provider" ? "provider_error" : "internal", message: scrub(event.error.message), recoverable: false },
          ]);
        case "run.completed": {
          const bodies: OutputBody[] = flushStreams();
          const error = endError(event, guard);
          if (error) bodies.push({ type: "error", ...error, recoverable: false });
          if (event.status === "completed") bodies.push({ type: "final", text: scrub(event.text) });
          bodies.push({ type: "run_end", status: event.status === "completed" ? "success" : "error", exitCode: event.exitCode });
          return out(bodies);
        }
        default:
          return [];
      }
    },
  };
}

/** The lines for a run that never started (bad input, bad config): an error, then run_end. */
export function failedBeforeStart(runId: string, code: ErrorCode, message: string, exitCode: number): OutputEvent[] {
  return [
    { schemaVersion: STREAM_JSON_VERSION, runId, type: "error", code, message, recoverable: false },
    { schemaVersion: STREAM_JSON_VERSION, runId, type: "run_end", status: "error", exitCode },
  ];
}
