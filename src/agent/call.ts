import type { StepToolCall } from "../llm/step.ts";
import type { StopReason, ToolStatus } from "../protocol/events.ts";
import type { ToolResultOutput, ToolResultPart } from "../protocol/messages.ts";
import { evaluate } from "../policy/rules.ts";
import type { LoopInput } from "./loop-input.ts";

/** Run-wide counters the guards need; mutated as calls are made. */
export type CallGuards = { toolCalls: number; lastSignature: string; repeats: number };

/** How many identical consecutive calls stop a run. */
export const REPETITION_LIMIT = 3;

type Answered = { part: ToolResultPart; stop?: StopReason };

function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
}

/**
 * Takes one tool call through its lifecycle: requested → (approval) → running
 * → completed | failed | denied | cancelled. Every path answers the model and
 * emits exactly one tool.completed.
 */
export async function executeCall(
  input: LoopInput,
  call: StepToolCall,
  step: number,
  guards: CallGuards,
  stoppedBy: StopReason | undefined,
): Promise<Answered> {
  const tool = input.tools.get(call.tool);
  const prepared = tool && call.invalid === undefined ? tool.prepare(call.input) : undefined;
  const classification = prepared?.ok ? prepared.classification : undefined;
  input.emit({
    type: "tool.requested",
    step,
    callId: call.callId,
    tool: call.tool,
    input: call.input ?? null,
    risk: classification?.risk ?? null,
    operation: classification?.operation ?? null,
  });

  const started = performance.now();
  const answer = (status: ToolStatus, output: ToolResultOutput, text: string, truncated = false, stop?: StopReason): Answered => {
    input.emit({
      type: "tool.completed",
      callId: call.callId,
      tool: call.tool,
      status,
      output: text,
      truncated,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    });
    return { part: { type: "tool-result", toolCallId: call.callId, toolName: call.tool, output }, ...(stop ? { stop } : {}) };
  };
  const fail = (text: string, stop?: StopReason) => answer("failed", { type: "error-text", value: text }, text, false, stop);

  if (input.signal.aborted) return answer("cancelled", { type: "error-text", value: "not executed: the run was stopped" }, "not executed: the run was stopped");
  if (stoppedBy) return fail(`not executed: the run is stopping (${stoppedBy.replaceAll("_", " ")})`);

  // Guards count every attempt, allowed or not.
  const signature = `${call.tool}\u0000${stableJson(call.input)}`;
  guards.repeats = signature === guards.lastSignature ? guards.repeats + 1 : 1;
  guards.lastSignature = signature;
  if (guards.repeats >= REPETITION_LIMIT) {
    const message = `the model made the same ${call.tool} call ${REPETITION_LIMIT} times in a row; stopping to avoid a loop`;
    input.emit({ type: "guard.triggered", guard: "repetition", message });
    return fail(`not executed: ${message}`, "repetition");
  }
  if (guards.toolCalls >= input.limits.maxToolCalls) {
    const message = `reached the tool-call limit (${input.limits.maxToolCalls} calls)`;
    input.emit({ type: "guard.triggered", guard: "max_tool_calls", message });
    return fail(`not executed: ${message}`, "max_tool_calls");
  }
  guards.toolCalls += 1;

  if (call.invalid !== undefined && !tool) {
    return fail(`tool '${call.tool}' is not available to agent ${input.agent} (allowed: ${[...input.tools.keys()].join(", ") || "none"})`);
  }
  if (!tool) return fail(`tool '${call.tool}' is not allowed for agent ${input.agent}`);
  if (call.invalid !== undefined) {
    // Prefer our own validation message over the SDK's internals.
    const own = typeof call.input === "object" && call.input !== null ? tool.prepare(call.input) : undefined;
    if (own && !own.ok) return fail(own.error);
    return fail(`invalid call to ${call.tool}: ${typeof call.input === "string" ? "its arguments are not valid JSON" : call.invalid}`);
  }
  if (!prepared || !prepared.ok) return fail(prepared?.error ?? `invalid call to ${call.tool}`);

  const { risk, operation } = prepared.classification;
  const verdict = evaluate(input.rules, { tool: call.tool, risk, operation }, input.permissionMode);
  let allowed = verdict.decision === "allow";
  let reason = verdict.reason;
  if (verdict.decision === "ask" && input.approvals.remembered({ tool: call.tool, risk, operation })) {
    allowed = true;
    reason = "allowed earlier for this session";
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: "allow", source: "session", reason });
  } else if (verdict.decision === "ask") {
    input.emit({ type: "permission.requested", callId: call.callId, tool: call.tool, risk, operation, permissionMode: input.permissionMode, reason });
    const result = await input.approvals.request({ callId: call.callId, tool: call.tool, risk, operation, reason, input: prepared.input }, input.signal);
    allowed = result.allowed;
    reason = result.reason;
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: allowed ? "allow" : "deny", source: result.source, reason });
  } else if (verdict.decision === "deny") {
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: "deny", source: "mode", reason });
  }
  if (!allowed) return answer("denied", { type: "execution-denied", reason }, `denied: ${reason}`);

  input.emit({ type: "tool.started", callId: call.callId, tool: call.tool });
  const result = await tool.run(prepared.input, {
    callId: call.callId,
    roots: input.roots,
    signal: input.signal,
    timeoutMs: input.limits.toolTimeoutMs,
    progress: (message) => input.emit({ type: "tool.progress", callId: call.callId, tool: call.tool, message }),
  });
  const output: ToolResultOutput = result.status === "completed" ? { type: "text", value: result.output } : { type: "error-text", value: result.output };
  return answer(result.status, output, result.output, result.truncated);
}
