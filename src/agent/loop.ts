import type { ProviderFailure } from "../llm/errors.ts";
import { addUsage, emptyUsage, type RunStatus, type StopReason, type Usage } from "../protocol/events.ts";
import { toolResultMessage, type AssistantMessage, type Message, type ToolCallState, type ToolResultPart } from "../protocol/messages.ts";
import { admitCall, learnArtifacts, type Answered, type CallGuards } from "./call.ts";
import { costMicroUsd, microToUsd } from "./cost.ts";
import { estimateMessageTokens, estimateTokens } from "./estimate.ts";
import type { BudgetStop, ModelCallAdmission } from "./loop-input.ts";
import type { LoopInput } from "./loop-input.ts";

export type { LoopInput, LoopLimits } from "./loop-input.ts";

export type LoopResult = {
  status: RunStatus;
  reason: StopReason | null;
  text: string;
  usage: Usage;
  steps: number;
  toolCalls: number;
  history: Message[];
  /** What the run's model calls cost, in micro-USD (priced models only). */
  costMicroUsd?: number;
  failure?: ProviderFailure;
};

function aborted(input: LoopInput) {
  const reason = input.abortReason();
  return { status: (reason === "cancelled" ? "cancelled" : "limit") as RunStatus, reason };
}

/**
 * The agent loop: one model step, then every tool call it made (validated,
 * allowlisted, policy-checked, executed, answered in call order), then the
 * next step, until the model stops calling tools or a hard stop.
 */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const history = [...input.history];
  // A resumed run continues its spent budget: steps, calls and usage count from where it stopped.
  let usage = input.spent?.usage ?? emptyUsage();
  let steps = input.spent?.steps ?? 0;
  let lastText = "";
  let overflowRecovered = false;
  // What this run's steps cost (micro-USD); only counted for a priced model.
  let costMicro = input.spent?.costMicroUsd ?? 0;
  const guards: CallGuards = { toolCalls: input.spent?.toolCalls ?? 0, lastSignature: "", repeats: 0, knownArtifacts: input.knownArtifacts ?? new Set() };
  // References already in the conversation (the task, earlier turns) may be opened — unless the
  // caller seeded the set itself (a child may open only what its parent handed it).
  if (input.learnArtifactsFromHistory !== false) learnArtifacts(JSON.stringify(history), guards.knownArtifacts);
  const finish = (status: RunStatus, reason: StopReason | null, failure?: ProviderFailure): LoopResult => ({
    status,
    reason,
    text: lastText,
    usage,
    steps,
    toolCalls: guards.toolCalls,
    history,
    ...(input.pricing ? { costMicroUsd: costMicro } : {}),
    ...(failure ? { failure } : {}),
  });

  // A resumed run may already be past its ceiling.
  let exhausted = tokenLimit(input, usage);
  for (;;) {
    if (input.signal.aborted) {
      const stop = aborted(input);
      return finish(stop.status, stop.reason);
    }
    if (steps >= input.limits.maxSteps) {
      input.emit({ type: "guard.triggered", guard: "max_steps", message: `reached the step limit (${input.limits.maxSteps} model steps)` });
      return finish("limit", "max_steps");
    }
    if (exhausted !== undefined) {
      input.emit({ type: "guard.triggered", guard: exhausted.guard, message: exhausted.message });
      return finish("limit", exhausted.guard);
    }
    await input.hooks?.beforeStep?.({ step: steps + 1, usage, toolCalls: guards.toolCalls });
    // Queued user input (steering, follow-ups) joins the history between steps.
    const queued = input.hooks?.pendingInput?.() ?? [];
    if (queued.length > 0) history.push(...queued);
    const context = input.hooks?.transformContext ? await input.hooks.transformContext(history) : history;
    // Lifecycle hooks may change this one request (system text, messages); the history stays as it is.
    const { instructions, messages } = (await input.hooks?.beforeModel?.({ step: steps + 1, instructions: input.instructions, messages: context })) ?? { instructions: input.instructions, messages: context };
    // Under a campaign budget the call waits its turn and gets an output allowance, or is not made.
    const admission = await admit(input, instructions, messages);
    if (admission === "stopped") {
      const stop = aborted(input);
      return finish(stop.status, stop.reason);
    }
    if (!admission.ok) {
      input.emit({ type: "guard.triggered", guard: admission.guard, message: admission.message });
      return finish("limit", admission.guard);
    }
    steps += 1;
    const step = steps;
    input.campaign?.charge({ steps: 1 });
    input.emit({ type: "step.started", step });
    // The queue's lease is given back on every path (a runner that throws included), or the
    // campaign's other runs would wait for it until their deadline.
    const outcome = await input.runner
      .step({
      instructions,
      messages,
      signal: input.signal,
      ...(admission.maxOutputTokens !== undefined ? { maxOutputTokens: admission.maxOutputTokens } : {}),
      onText: (text) => input.emit({ type: "message.delta", step, text }),
      onReasoning: (text) => input.emit({ type: "reasoning.delta", step, text }),
      onRetry: ({ attempt, maxAttempts, delayMs, failure, discardedOutput }) =>
        input.emit({
          type: "provider.retry",
          step,
          attempt,
          maxAttempts,
          delayMs,
          discardedOutput,
          error: { category: failure.category, message: failure.message, statusCode: failure.statusCode },
        }),
      })
      .catch((error: unknown) => {
        admission.release();
        throw error;
      });
    if (!outcome.ok) {
      admission.release();
      if (outcome.aborted || input.signal.aborted) {
        const stop = aborted(input);
        return finish(stop.status, stop.reason);
      }
      const f = outcome.failure;
      // One bounded recovery: compact, then retry the step once.
      if (f.category === "context_overflow" && !overflowRecovered && input.hooks?.onContextOverflow) {
        overflowRecovered = true;
        if (await input.hooks.onContextOverflow(history)) continue;
      }
      input.emit({
        type: "run.failed",
        error: {
          kind: "provider",
          category: f.category,
          message: f.message,
          statusCode: f.statusCode,
          retryAfterMs: f.retryAfterMs,
          retryable: f.retryable,
        },
      });
      return finish("failed", "provider_error", f);
    }

    usage = addUsage(usage, outcome.usage);
    input.hooks?.afterStep?.(outcome.usage);
    const cost = costMicroUsd(outcome.usage, input.pricing);
    if (cost !== undefined) costMicro += cost;
    input.campaign?.charge({ tokens: outcome.usage.totalTokens, ...(cost !== undefined ? { costMicroUsd: cost } : {}) });
    // Charged: the next call of the campaign may compute its allowance now.
    admission.release();
    input.emit({ type: "usage.updated", step, stepUsage: outcome.usage, usage, ...(input.pricing ? { costUsd: microToUsd(costMicro) } : {}) });
    exhausted = tokenLimit(input, usage);
    lastText = outcome.text;
    if (input.hooks?.afterModel) {
      const calls = outcome.toolCalls.map(({ callId, tool, input: args }) => ({ callId, tool, input: args }));
      await input.hooks.afterModel({ step, text: outcome.text, toolCalls: calls, finishReason: outcome.finishReason, usage: outcome.usage }, { step, usage, toolCalls: guards.toolCalls });
    }
    if (outcome.refusal) {
      // A refusal is no answer: the run fails (exit 3) with the provider's explanation.
      const f = outcome.refusal.failure;
      input.emit({ type: "step.completed", step, finishReason: outcome.finishReason, toolCalls: outcome.toolCalls.length });
      input.emit({
        type: "run.failed",
        error: { kind: "provider", category: f.category, message: f.message, statusCode: f.statusCode, retryAfterMs: f.retryAfterMs, retryable: f.retryable },
      });
      return finish("failed", "refusal", f);
    }

    // llm/ already dropped the SDK's own answers to calls it could not parse:
    // every call is answered once, by us, in order.
    const responseStart = history.length;
    history.push(...outcome.responseMessages);
    // Stored before any tool runs: a crash mid-call leaves the call on record.
    if (outcome.toolCalls.length > 0) input.onHistory?.(history);
    input.emit({ type: "step.completed", step, finishReason: outcome.finishReason, toolCalls: outcome.toolCalls.length });
    if (outcome.toolCalls.length === 0) {
      // A finish may be refused (work-depth gates): what is missing joins the history as user input.
      const verdict = (await input.hooks?.beforeFinish?.(input.signal)) ?? { finish: true as const };
      // Cancelled (or past the deadline) while the finish was being decided: that is how it ends.
      if (input.signal.aborted) {
        const stop = aborted(input);
        return finish(stop.status, stop.reason);
      }
      if ("stop" in verdict) {
        input.emit({ type: "guard.triggered", guard: "gates", message: verdict.stop });
        return finish("limit", "gates");
      }
      if ("continueWith" in verdict) {
        history.push(...verdict.continueWith);
        input.onCheckpoint?.({ history, usage, steps, toolCalls: guards.toolCalls, ...(input.pricing ? { costMicroUsd: costMicro } : {}) });
        continue;
      }
      return finish("completed", null);
    }

    // Admission runs in call order (guards, policy, approvals). Read-only calls
    // then run side by side; a mutating call waits for them and runs alone.
    const answers: Array<Promise<Answered>> = [];
    let reads: Array<Promise<Answered>> = [];
    // A token ceiling passed by this step: its calls are answered, not run.
    let stop: { reason: StopReason } | undefined = exhausted ? { reason: exhausted.guard } : undefined;
    if (exhausted) input.emit({ type: "guard.triggered", guard: exhausted.guard, message: exhausted.message });
    for (const call of outcome.toolCalls) {
      const admitted = await admitCall(input, call, step, guards, stop?.reason, usage);
      if (admitted.kind === "answered") {
        answers.push(Promise.resolve(admitted.answered));
        if (admitted.answered.stop && !stop) stop = { reason: admitted.answered.stop };
      } else if (admitted.parallel) {
        const running = admitted.run();
        reads.push(running);
        answers.push(running);
      } else {
        await Promise.all(reads);
        reads = [];
        answers.push(Promise.resolve(await admitted.run()));
      }
    }
    const answered = await Promise.all(answers);
    const results: ToolResultPart[] = answered.map((a) => a.part);
    settleCallStates(history, responseStart, new Map(answered.map((a) => [a.part.callId, a.state])));
    history.push(toolResultMessage(results));
    // A consistent point (every call answered): the session may checkpoint it.
    input.onCheckpoint?.({ history, usage, steps, toolCalls: guards.toolCalls, ...(input.pricing ? { costMicroUsd: costMicro } : {}) });
    if (stop) return finish("limit", stop.reason);
    const halt = await input.hooks?.shouldStop?.({ step, usage, toolCalls: guards.toolCalls });
    if (halt !== undefined) {
      input.emit({ type: "guard.triggered", guard: "plugin", message: halt });
      return finish("limit", "plugin");
    }
  }
}

/**
 * Records each call's final state on the assistant message that made it. The
 * message is replaced, never mutated: whoever holds the old object (the store's
 * record of what it wrote, the SDK conversion cache) sees the change.
 */
function settleCallStates(history: Message[], from: number, states: Map<string, ToolCallState>): void {
  for (let index = from; index < history.length; index++) {
    const message = history[index]!;
    if (message.role !== "assistant") continue;
    const parts = message.parts.map((part) =>
      part.type === "tool-call" && states.has(part.callId) ? { ...part, state: states.get(part.callId)! } : part,
    );
    history[index] = { role: "assistant", parts } satisfies AssistantMessage;
  }
}

/** Asks the campaign to admit the next model call, with the request's estimated input size. */
async function admit(input: LoopInput, instructions: string, messages: readonly Message[]): Promise<ModelCallAdmission | "stopped"> {
  // Uncapped campaigns queue nothing: no estimate is computed (it would stringify the history every step).
  if (!input.campaign?.admitModelCall || !input.campaign.capped) return { ok: true, release: () => {} };
  const estimatedInputTokens = estimateMessageTokens(messages) + estimateTokens(instructions.length + (input.requestOverheadChars ?? 0));
  try {
    return await input.campaign.admitModelCall({ estimatedInputTokens, ...(input.pricing ? { pricing: input.pricing } : {}), signal: input.signal });
  } catch {
    return "stopped"; // cancelled while waiting for its turn
  }
}

/** The per-run token ceiling (agent maxTokens) and the campaign's, whichever is passed first. */
function tokenLimit(input: LoopInput, usage: Usage): BudgetStop | undefined {
  const max = input.limits.maxTokens;
  if (max != null && usage.totalTokens > max) {
    return { guard: "max_tokens", message: `spent ${usage.totalTokens} tokens, past the run's limit of ${max} (maxTokens)` };
  }
  const campaign = input.campaign?.exhausted();
  return campaign;
}
