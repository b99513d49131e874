import type { StepToolCall } from "../llm/step.ts";
import { emptyUsage, type StopReason, type ToolStatus, type Usage } from "../protocol/events.ts";
import type { ToolResultOutput, ToolResultPart } from "../protocol/messages.ts";
import { evaluate } from "../policy/rules.ts";
import type { MediaPart, RedactionSummary, ToolResult } from "../tool/define.ts";
import { capabilityOf } from "../tool/media.ts";
import { stableJson } from "../util/stable-json.ts";
import type { LoopInput } from "./loop-input.ts";

/** Run-wide state the guards and tools need; mutated as calls are made. */
export type CallGuards = { toolCalls: number; lastSignature: string; repeats: number; knownArtifacts: Set<string> };

/** How many identical consecutive calls stop a run. */
export const REPETITION_LIMIT = 3;

/** `text` and `truncated` are what the surfaces were told (`tool.completed`). */
export type Answered = { part: ToolResultPart; state: ToolStatus; text: string; truncated: boolean; stop?: StopReason };

/** A call after admission: answered already (refused, denied, invalid) or ready to run. */
export type Admitted =
  | { kind: "answered"; answered: Answered }
  | { kind: "runnable"; /** read-only: may run beside other read-only calls */ parallel: boolean; run(): Promise<Answered> };

const ARTIFACT_REF = /artifact:\/\/([0-9a-f]{64})/g;

/** Remembers the artifact references the model has now seen, so it may open them later. */
export function learnArtifacts(text: string, known: Set<string>): void {
  for (const match of text.matchAll(ARTIFACT_REF)) known.add(match[1]!);
}


/** The model-facing output: typed media when the model takes it, a note when it does not. */
function modelOutput(input: LoopInput, result: ToolResult): ToolResultOutput {
  if (result.status !== "completed") return { type: "error-text", value: result.output };
  const media = result.media ?? [];
  if (media.length === 0) return { type: "text", value: result.output };
  const accepted = media.filter((m) => input.modelCapabilities.includes(capabilityOf(m.mediaType)));
  const refused = media.filter((m) => !accepted.includes(m));
  const notes = refused.map(
    (m: MediaPart) => `[${m.mediaType} not sent: the model does not declare the "${capabilityOf(m.mediaType)}" capability]`,
  );
  const text = [result.output, ...notes].join("\n");
  if (accepted.length === 0) return { type: "text", value: text };
  return {
    type: "content",
    value: [
      { type: "text", text },
      ...accepted.map((m) => ({ type: "file" as const, mediaType: m.mediaType, data: m.data, ...(m.filename ? { filename: m.filename } : {}) })),
    ],
  };
}

/**
 * Takes one tool call through admission: lifecycle hooks may rewrite or block it first (plugins'
 * beforeTool), then requested → guards → allowlist → validation → policy (and approval) judge the
 * call as rewritten. Refused calls are answered here; allowed ones come back runnable. Every path
 * ends in exactly one tool.completed, and every call the hooks saw in one `afterCall`.
 */
export async function admitCall(
  input: LoopInput,
  call: StepToolCall,
  step: number,
  guards: CallGuards,
  stoppedBy: StopReason | undefined,
  usage: Usage = emptyUsage(),
): Promise<Admitted> {
  const hooks = input.hooks;
  // A run that is stopping asks nobody: its calls are answered "not executed".
  if ((!hooks?.rewriteCall && !hooks?.afterCall) || input.signal.aborted || stoppedBy) return admit(input, call, call, step, guards, stoppedBy);
  const state = () => ({ step, usage, toolCalls: guards.toolCalls });
  const rewritten = await hooks.rewriteCall?.({ callId: call.callId, tool: call.tool, input: call.input }, state());
  const blocked = rewritten && "block" in rewritten ? rewritten.block : undefined;
  const judged: StepToolCall = rewritten && "tool" in rewritten ? { callId: call.callId, tool: rewritten.tool, input: rewritten.input } : call;
  const admitted = await admit(input, call, judged, step, guards, stoppedBy, blocked);
  if (!hooks.afterCall) return admitted;
  const after = async (answered: Answered): Promise<Answered> => {
    await hooks.afterCall!({ callId: call.callId, tool: judged.tool, input: judged.input }, { status: answered.state, output: answered.text, truncated: answered.truncated }, state());
    return answered;
  };
  if (admitted.kind === "answered") return { kind: "answered", answered: await after(admitted.answered) };
  return { ...admitted, run: async () => after(await admitted.run()) };
}

/**
 * Admission of `call` (the call as judged: the model's, or a hook's rewrite of it). `model` is the
 * call the model made: the guards count it, and its answer keeps its tool name (the history pairs
 * each result with its call). `blocked`: a hook refused the call before any check.
 */
async function admit(
  input: LoopInput,
  model: StepToolCall,
  call: StepToolCall,
  step: number,
  guards: CallGuards,
  stoppedBy: StopReason | undefined,
  blocked?: string,
): Promise<Admitted> {
  const tool = input.tools.get(call.tool);
  const prepared = tool && call.invalid === undefined ? tool.prepare(call.input, { roots: input.roots, ...(input.sensitiveFiles ? { sensitiveFiles: input.sensitiveFiles } : {}), ...(input.services.mcpContent ? { mcpContent: input.services.mcpContent } : {}) }) : undefined;
  const classification = prepared?.ok ? prepared.classification : undefined;
  input.emit({
    type: "tool.requested",
    step,
    callId: call.callId,
    tool: call.tool,
    input: call.input ?? null,
    risk: classification?.risk ?? null,
    operation: classification?.operation ?? null,
    target: classification?.target ?? null,
    categories: classification ? [...classification.categories] : null,
  });

  const started = performance.now();
  type Extra = { truncated?: boolean; diff?: string; redactions?: RedactionSummary; stop?: StopReason };
  const answer = (status: ToolStatus, output: ToolResultOutput, text: string, extra: Extra = {}): Answered => {
    input.emit({
      type: "tool.completed",
      callId: call.callId,
      tool: call.tool,
      status,
      output: text,
      truncated: extra.truncated ?? false,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      ...(extra.diff !== undefined ? { diff: extra.diff } : {}),
      ...(extra.redactions ? { redactions: extra.redactions } : {}),
    });
    return { part: { type: "tool-result", callId: call.callId, tool: model.tool, output }, state: status, text, truncated: extra.truncated ?? false, ...(extra.stop ? { stop: extra.stop } : {}) };
  };
  const done = (answered: Answered): Admitted => ({ kind: "answered", answered });
  const fail = (text: string, stop?: StopReason) => done(answer("failed", { type: "error-text", value: text }, text, stop ? { stop } : {}));

  if (input.signal.aborted) return done(answer("cancelled", { type: "error-text", value: "not executed: the run was stopped" }, "not executed: the run was stopped"));
  if (stoppedBy) return fail(`not executed: the run is stopping (${stoppedBy.replaceAll("_", " ")})`);

  // Guards count every attempt, allowed or not.
  const signature = `${model.tool}\u0000${stableJson(model.input)}`;
  guards.repeats = signature === guards.lastSignature ? guards.repeats + 1 : 1;
  guards.lastSignature = signature;
  if (guards.repeats >= REPETITION_LIMIT) {
    const message = `the model made the same ${model.tool} call ${REPETITION_LIMIT} times in a row; stopping to avoid a loop`;
    input.emit({ type: "guard.triggered", guard: "repetition", message });
    return fail(`not executed: ${message}`, "repetition");
  }
  if (guards.toolCalls >= input.limits.maxToolCalls) {
    const message = `reached the tool-call limit (${input.limits.maxToolCalls} calls)`;
    input.emit({ type: "guard.triggered", guard: "max_tool_calls", message });
    return fail(`not executed: ${message}`, "max_tool_calls");
  }
  guards.toolCalls += 1;
  input.campaign?.charge({ toolCalls: 1 });
  if (blocked !== undefined) return fail(`blocked: ${blocked}`);

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
  const { target, categories } = prepared.classification;
  const outOfScope = input.scope?.({ tool: call.tool, operation, target });
  if (outOfScope !== undefined) {
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: "deny", source: "scope", reason: outOfScope });
    return done(answer("denied", { type: "execution-denied", reason: outOfScope }, `denied: ${outOfScope}`));
  }
  const verdict = evaluate(input.rules, { tool: call.tool, risk, operation, target, categories }, input.permissionMode);
  let allowed = verdict.decision === "allow";
  let reason = verdict.reason;
  if (verdict.decision === "ask" && input.approvals.remembered({ tool: call.tool, risk, operation, target })) {
    allowed = true;
    reason = "allowed earlier for this session";
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: "allow", source: "session", reason });
  } else if (verdict.decision === "ask") {
    input.emit({ type: "permission.requested", callId: call.callId, tool: call.tool, risk, operation, target, categories: [...categories], permissionMode: input.permissionMode, reason });
    const result = await input.approvals.request({ callId: call.callId, tool: call.tool, risk, operation, target, categories, reason, input: prepared.input }, input.signal);
    allowed = result.allowed;
    reason = result.reason;
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: allowed ? "allow" : "deny", source: result.source, reason });
  } else if (verdict.decision === "deny") {
    input.emit({ type: "permission.decided", callId: call.callId, tool: call.tool, decision: "deny", source: "mode", reason });
  }
  if (!allowed) return done(answer("denied", { type: "execution-denied", reason }, `denied: ${reason}`));

  return {
    kind: "runnable",
    parallel: operation === "read",
    async run() {
      if (input.signal.aborted) return answer("cancelled", { type: "error-text", value: "not executed: the run was stopped" }, "not executed: the run was stopped");
      const hookCall = { callId: call.callId, tool: call.tool, input: prepared.input, classification: prepared.classification };
      const blocked = await input.hooks?.beforeToolCall?.(hookCall);
      if (blocked?.block !== undefined) return answer("failed", { type: "error-text", value: `blocked: ${blocked.block}` }, `blocked: ${blocked.block}`);
      input.emit({ type: "tool.started", callId: call.callId, tool: call.tool });
      const result = await tool.run(prepared.input, {
        callId: call.callId,
        roots: input.roots,
        signal: input.signal,
        timeoutMs: input.limits.toolTimeoutMs,
        progress: (message) => input.emit({ type: "tool.progress", callId: call.callId, tool: call.tool, message }),
        env: input.services.env,
        artifacts: input.services.artifacts,
        knownArtifacts: guards.knownArtifacts,
        // Only references zero itself handed out become readable, never ones scraped from text.
        rememberArtifact: (sha256) => guards.knownArtifacts.add(sha256),
        maxAttachmentBytes: input.limits.maxAttachmentBytes,
        redactor: input.services.redactor,
        ...(input.services.network ? { network: input.services.network } : {}),
        ...(input.services.webSearch ? { webSearch: input.services.webSearch } : {}),
        ask: (question) => input.ask(question, input.signal),
        ...(input.services.delegation ? { delegation: input.services.delegation } : {}),
        ...(input.services.updatePlan ? { updatePlan: input.services.updatePlan } : {}),
        ...(input.services.mcpContent ? { mcpContent: input.services.mcpContent } : {}),
      });
      await input.hooks?.afterToolCall?.(hookCall, result);
      return answer(result.status, modelOutput(input, result), result.output, {
        truncated: result.truncated,
        ...(result.diff !== undefined ? { diff: result.diff } : {}),
        ...(result.redactions ? { redactions: result.redactions } : {}),
      });
    },
  };
}
