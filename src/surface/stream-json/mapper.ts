import { callCategories } from "../../policy/rules.ts";
import { isChildEvent, type CallCategory, type Risk, type RuntimeEvent } from "../../protocol/events.ts";
import { STREAM_JSON_VERSION, type ErrorCode, type OutputBody, type OutputEvent, type SideEffect } from "../../protocol/stream-json.ts";
import type { Redaction, Redactor } from "../../security/redact.ts";
import { createStreamRedactor } from "../../security/stream-redactor.ts";

const SIDE_EFFECT_OF_RISK: Record<Risk, SideEffect> = { read: "read", write: "write", execute: "shell", network: "network", delegate: "delegate" };

const TOOL_STATUS = { completed: "ok", failed: "error", denied: "denied", cancelled: "cancelled" } as const;

/** How grave each category makes a permission request. */
const LEVEL: Record<CallCategory, "high" | "critical"> = { network: "critical", shell: "high", secret: "high" };

/**
 * The structured risk of a permission request, from the call's categories (never its tool's
 * name): the gravest category sets the level and the block code. A category that only restates
 * the side effect is left out when there are others, so a shell command that reaches the
 * network is `sideEffect: shell` with `risk {critical, [network]}`, as the protocol shows it.
 */
function riskOf(sideEffect: SideEffect, categories: readonly CallCategory[]): { risk: { level: "high" | "critical"; categories: string[] }; code: string } | undefined {
  if (categories.length === 0) return undefined;
  const level = categories.some((category) => LEVEL[category] === "critical") ? "critical" : "high";
  const code = categories.find((category) => LEVEL[category] === level)!;
  const beyond = categories.filter((category) => category !== sideEffect);
  return { risk: { level, categories: beyond.length > 0 ? beyond : [...categories] }, code };
}

/** Error code and message for a run that ended without success. */
function endError(event: Extract<RuntimeEvent, { type: "run.completed" }>, guard: string | undefined): { code: ErrorCode; message: string } | undefined {
  if (event.status === "completed" || event.status === "failed") return undefined; // failures already had their error
  if (event.status === "cancelled") return { code: "cancelled", message: "the run was cancelled" };
  if (event.reason === "deadline") return { code: "timeout", message: guard ?? "the run passed its deadline" };
  return { code: "limit_reached", message: guard ?? `a limit stopped the run (${event.reason ?? "limit"})` };
}

/**
 * Events from the session service are redacted already: the mapper then only
 * re-chunks streamed text at word boundaries (the protocol's delta shape).
 */
const IDENTITY: Redactor = { redact: (text: string) => ({ text, count: 0, kinds: {} as Redaction["kinds"] }), mayContainSecrets: () => false };

/**
 * Translates the internal event stream into stream-json v2. Explicit per event,
 * so an internal change can never silently change the public shape; everything
 * textual is redacted (streamed text with a boundary-aware redactor).
 */
export function createStreamJsonMapper(redactor: Redactor = IDENTITY) {
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
      // The public contract describes one run: a child's activity shows as the delegate call's result.
      if (isChildEvent(event)) return [];
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
              // An unclassified call (unknown tool, invalid input) is answered without running: no side effect happens.
              sideEffect: event.risk ? SIDE_EFFECT_OF_RISK[event.risk] : "read",
            },
          ]);
        case "permission.requested": {
          const sideEffect = SIDE_EFFECT_OF_RISK[event.risk];
          // Events written before categories existed: those the operation implies.
          const risky = riskOf(sideEffect, event.categories ?? callCategories(event.operation));
          const risk = risky?.risk;
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
              ...(risky && risk ? { risk, block: { code: risky.code, toolName: event.tool, action: "prompt" as const, risk, reason: event.reason, recoverable: true } } : {}),
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
            {
              type: "usage",
              promptTokens: event.usage.inputTokens,
              completionTokens: event.usage.outputTokens,
              totalTokens: event.usage.totalTokens,
              ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}),
            },
          ]);
        case "guard.triggered":
          guard = event.message;
          return [];
        case "provider.retry":
          // Retries are silent unless the failed attempt already streamed text or reasoning:
          // then consumers learn that it is discarded (recoverable: the step starts over).
          if (!event.discardedOutput) return [];
          return out([
            ...flushStreams(),
            {
              type: "error",
              code: "provider_error",
              message: scrub(`${event.error.message}; retrying the step (attempt ${event.attempt} of ${event.maxAttempts}): the text and reasoning it streamed so far are discarded`),
              recoverable: true,
            },
          ]);
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
