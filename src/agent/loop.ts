import type { ProviderFailure } from "../llm/errors.ts";
import { addUsage, emptyUsage, type RunStatus, type StopReason, type Usage } from "../protocol/events.ts";
import { toolResultMessage, type ModelMessage, type ToolResultPart } from "../protocol/messages.ts";
import { admitCall, learnArtifacts, type Answered, type CallGuards } from "./call.ts";
import type { LoopInput } from "./loop-input.ts";

export type { LoopInput, LoopLimits } from "./loop-input.ts";

export type LoopResult = {
  status: RunStatus;
  reason: StopReason | null;
  text: string;
  usage: Usage;
  steps: number;
  toolCalls: number;
  history: ModelMessage[];
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
  const guards: CallGuards = { toolCalls: input.spent?.toolCalls ?? 0, lastSignature: "", repeats: 0, knownArtifacts: new Set() };
  // References already in the conversation (the task, earlier turns) may be opened.
  learnArtifacts(JSON.stringify(history), guards.knownArtifacts);
  const finish = (status: RunStatus, reason: StopReason | null, failure?: ProviderFailure): LoopResult => ({
    status,
    reason,
    text: lastText,
    usage,
    steps,
    toolCalls: guards.toolCalls,
    history,
    ...(failure ? { failure } : {}),
  });

  for (;;) {
    if (input.signal.aborted) {
      const stop = aborted(input);
      return finish(stop.status, stop.reason);
    }
    if (steps >= input.limits.maxSteps) {
      input.emit({ type: "guard.triggered", guard: "max_steps", message: `reached the step limit (${input.limits.maxSteps} model steps)` });
      return finish("limit", "max_steps");
    }
    steps += 1;
    const step = steps;
    input.emit({ type: "step.started", step });
    const outcome = await input.runner.step({
      instructions: input.instructions,
      messages: history,
      signal: input.signal,
      onText: (text) => input.emit({ type: "message.delta", step, text }),
      onReasoning: (text) => input.emit({ type: "reasoning.delta", step, text }),
      onRetry: ({ attempt, maxAttempts, delayMs, failure }) =>
        input.emit({
          type: "provider.retry",
          step,
          attempt,
          maxAttempts,
          delayMs,
          error: { category: failure.category, message: failure.message, statusCode: failure.statusCode },
        }),
    });
    if (!outcome.ok) {
      if (outcome.aborted || input.signal.aborted) {
        const stop = aborted(input);
        return finish(stop.status, stop.reason);
      }
      const f = outcome.failure;
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
    input.emit({ type: "usage.updated", step, stepUsage: outcome.usage, usage });
    lastText = outcome.text;

    // The SDK already answered calls it could not parse or that name no offered
    // tool; drop its answers so every call is answered once, by us, in order.
    const invalidIds = new Set(outcome.toolCalls.filter((c) => c.invalid !== undefined).map((c) => c.callId));
    history.push(...withoutAnswers(outcome.responseMessages, invalidIds));
    input.emit({ type: "step.completed", step, finishReason: outcome.finishReason, toolCalls: outcome.toolCalls.length });
    if (outcome.toolCalls.length === 0) return finish("completed", null);

    // Admission runs in call order (guards, policy, approvals). Read-only calls
    // then run side by side; a mutating call waits for them and runs alone.
    const answers: Array<Promise<Answered>> = [];
    let reads: Array<Promise<Answered>> = [];
    let stop: { reason: StopReason } | undefined;
    for (const call of outcome.toolCalls) {
      const admitted = await admitCall(input, call, step, guards, stop?.reason);
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
    const results: ToolResultPart[] = (await Promise.all(answers)).map((a) => a.part);
    history.push(toolResultMessage(results));
    // A consistent point (every call answered): the session may checkpoint it.
    input.onCheckpoint?.({ history, usage, steps, toolCalls: guards.toolCalls });
    if (stop) return finish("limit", stop.reason);
  }
}

/** Removes tool-result parts for the given call ids (and tool messages left empty). */
function withoutAnswers(messages: ModelMessage[], callIds: Set<string>): ModelMessage[] {
  if (callIds.size === 0) return messages;
  const kept: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role !== "tool") {
      kept.push(message);
      continue;
    }
    const content = message.content.filter((part) => !callIds.has(part.toolCallId));
    if (content.length > 0) kept.push({ role: "tool", content });
  }
  return kept;
}
