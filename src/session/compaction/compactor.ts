/**
 * Context compaction for one run. The canonical history is never changed: the model is shown an
 * active view — a summary of everything before a cut, then the verbatim tail — built when the
 * estimated request crosses the trigger, when the provider reports an overflow (once), or when
 * the session asked for it (manual). The summary is a structured checkpoint the model writes;
 * when that call fails or its answer is invalid, a deterministic summary stands in, so the user's
 * task is never lost. Each compaction is an event (`context.compacted`) with the summary and the
 * cut: the durable record a resumed session continues from.
 */
import type { CompactionSettings } from "../../config/schema.ts";
import type { EventBody, Usage } from "../../protocol/events.ts";
import type { Message, UserMessage } from "../../protocol/messages.ts";
import type { ModelRunner } from "../../llm/step.ts";
import type { ModelCallAdmission } from "../../agent/loop-input.ts";
import type { ArtifactStore } from "../../store/artifacts.ts";
import { checkpointInstructions, fallbackSummary, parseCheckpoint, renderCheckpoint } from "./checkpoint.ts";
import { chooseCut, isTurnStart } from "./cut.ts";
import { contextBudget, createCalibration, estimateMessageTokens } from "../../agent/estimate.ts";
import { pruneToolOutputs } from "./prune.ts";
import { newestWithin, renderMessage } from "../delegation/contract.ts";

/** Where the history is compacted: messages before `cut` are replaced by `summary`. */
export type CompactionState = { cut: number; summary: string };

export type CompactorOptions = {
  settings: CompactionSettings;
  /** The model's context window (contextWindow, else context.fallbackWindowTokens). */
  window: number;
  /** What every request carries besides the messages: instructions and tool schemas. */
  overheadTokens: number;
  /** The runner that writes checkpoints (the run's model, without tools); created on first use. */
  summarizer(): Promise<ModelRunner>;
  artifacts: ArtifactStore;
  /** A checkpoint call's usage: it counts against the campaign like any call. */
  charge(usage: Usage): void;
  /** Under a campaign cap, the checkpoint call waits its turn like any model call (absent: no cap). */
  admit?(estimatedInputTokens: number): Promise<ModelCallAdmission>;
  emit(body: EventBody): void;
  signal: AbortSignal;
  /** Registers a reference the model may open (pruned tool outputs point at artifacts). */
  rememberArtifact?(sha256: string): void;
  /** The session's earlier compaction, if any (resume continues from it). */
  initial?: CompactionState;
  /** The session asked for a compaction before this run's first request. */
  compactFirst?: boolean;
};

export type Compactor = {
  /** The messages the next request sends (the loop's transformContext). */
  view(history: readonly Message[]): Promise<Message[]>;
  /** A step's reported input tokens: the estimate learns from them. */
  learn(usage: Usage): void;
  /** The provider said the context overflowed: compact now (true when anything was cut). */
  recover(history: readonly Message[]): Promise<boolean>;
};

/** Where a summary holds the request of a turn it was cut inside: kept verbatim after this marker. */
const REQUEST_MARKER = "\n\nThe current request, verbatim:\n";

/**
 * A cut inside the last turn: at an assistant message right after a complete tool exchange, as
 * late as keeps the tail within `tailTokens` (at least the last step stays). Returns the turn's
 * request text, which the summary must carry verbatim.
 */
function chooseStepCut(view: readonly Message[], tailTokens: number, estimate: (ms: readonly Message[]) => number): { cut: number; request: string } | undefined {
  let start = -1;
  for (let index = view.length - 1; index >= 0; index--) {
    if (isTurnStart(view[index]!)) {
      start = index;
      break;
    }
  }
  // Already cut inside this turn: the view starts with the summary, which carries the request.
  const first = view[0];
  const carried = first?.role === "user" ? first.parts.find((part) => part.type === "summary")?.text.split(REQUEST_MARKER)[1] : undefined;
  if (start === -1 && carried === undefined) return undefined;
  if (start === -1) start = 0;
  const request = start === 0 && carried !== undefined ? carried : view[start]!.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
  const candidates: number[] = [];
  for (let index = start + 2; index < view.length; index++) {
    if (view[index]!.role === "assistant" && view[index - 1]!.role === "tool") candidates.push(index);
  }
  if (candidates.length === 0) return undefined;
  // The earliest candidate whose tail fits; else the latest (keep at least the last step).
  const fitting = candidates.find((cut) => estimate(view.slice(cut)) <= tailTokens);
  return { cut: fitting ?? candidates[candidates.length - 1]!, request };
}

/** The head as plain lines, the earlier summary first, then the newest lines that fit `maxChars`. */
function transcript(head: readonly Message[], maxChars: number): string {
  const lines = head.flatMap((message) => renderMessage(message, (text) => text));
  const first = lines[0]?.startsWith("summary of earlier conversation") ? lines.shift()! : undefined;
  const rest = newestWithin(lines, maxChars - (first === undefined ? 0 : first.length + 1));
  return first === undefined ? rest : `${first}\n${rest}`;
}

function summaryMessage(state: CompactionState): UserMessage {
  return { role: "user", parts: [{ type: "summary", text: `Summary of the earlier conversation (compacted):\n${state.summary}`, replacedMessages: state.cut }] };
}

export function createCompactor(options: CompactorOptions): Compactor {
  const { settings } = options;
  const calibration = createCalibration();
  let state = options.initial;
  let pendingManual = options.compactFirst === true;
  let lastEstimate = 0;
  const budget = contextBudget({
    window: options.window,
    reservedOutputTokens: settings.reservedOutputTokens,
    safetyBufferTokens: settings.safetyBufferTokens,
    toolSchemaTokens: options.overheadTokens,
  });
  const estimate = (messages: readonly Message[]) => Math.ceil(estimateMessageTokens(messages) * calibration.factor());
  const activeView = (history: readonly Message[]): Message[] => (state && state.cut <= history.length ? [summaryMessage(state), ...history.slice(state.cut)] : [...history]);

  async function checkpointOf(head: Message[]): Promise<{ summary: string; fallback: boolean }> {
    let admission: ModelCallAdmission | undefined;
    try {
      admission = await options.admit?.(estimate(head));
      // The budget cannot pay for a checkpoint: the deterministic summary costs nothing.
      if (admission && !admission.ok) return { summary: fallbackSummary(head), fallback: true };
      const allowance = admission?.ok ? admission.maxOutputTokens : undefined;
      const runner = await options.summarizer();
      const outcome = await runner.step({
        instructions: checkpointInstructions(settings.maxSummaryTokens),
        // The head as a transcript: no tool-call parts reach a request that declares no tools.
        messages: [{ role: "user", parts: [{ type: "text", text: `${transcript(head, budget * 3)}\n\nWrite the checkpoint of the conversation above now, as the JSON object described.` }] }],
        signal: options.signal,
        maxOutputTokens: Math.min(settings.maxSummaryTokens, allowance ?? Number.POSITIVE_INFINITY),
        onText: () => {},
        onReasoning: () => {},
      });
      if (outcome.ok) {
        options.charge(outcome.usage);
        const parsed = parseCheckpoint(outcome.text);
        if (parsed) return { summary: renderCheckpoint(parsed), fallback: false };
      }
    } catch {
      // The fallback below: the run goes on with a deterministic summary.
    } finally {
      if (admission?.ok) admission.release();
    }
    return { summary: fallbackSummary(head), fallback: true };
  }

  /** Compacts the current view; returns whether anything was cut. */
  async function compact(history: readonly Message[], reason: "auto" | "manual" | "overflow"): Promise<boolean> {
    const view = activeView(history);
    const before = estimate(view);
    // Asked for (manual) or forced (overflow): keep only the minimum of recent turns.
    const recentFraction = reason === "auto" ? settings.recentFraction : 0;
    const turnCut = chooseCut(view, {
      budgetTokens: budget,
      recentFraction,
      minimumRecentTurns: settings.minimumRecentTurns,
      keepRecentTurns: settings.keepRecentTurns,
      estimate,
    });
    // One long turn (a task, then many tool steps) has no earlier turn to cut at: cut between its
    // completed steps instead, and keep its request verbatim in the summary.
    const stepCut = turnCut === undefined ? chooseStepCut(view, recentFraction * budget, estimate) : undefined;
    const cutInView = turnCut ?? stepCut?.cut;
    if (cutInView === undefined || cutInView <= (state ? 1 : 0)) return false;
    // Old tool payloads become metadata plus a reference the model can reopen, before the checkpoint call sees them.
    const head = settings.pruneToolOutputs
      ? pruneToolOutputs(view.slice(0, cutInView), options.artifacts, options.rememberArtifact ? { rememberArtifact: options.rememberArtifact } : {})
      : view.slice(0, cutInView);
    const checkpoint = await checkpointOf(head);
    const fallback = checkpoint.fallback;
    const summary = stepCut ? `${checkpoint.summary}${REQUEST_MARKER}${stepCut.request}` : checkpoint.summary;
    const cut = (state ? state.cut - 1 : 0) + cutInView;
    state = { cut, summary };
    const after = estimate(activeView(history));
    options.emit({ type: "context.compacted", reason, cut, replacedMessages: cut, summary, fallback, beforeTokens: before, afterTokens: after });
    return true;
  }

  return {
    async view(history) {
      if (!settings.enabled) return [...history];
      if (pendingManual) {
        pendingManual = false;
        await compact(history, "manual");
      }
      let view = activeView(history);
      lastEstimate = estimate(view);
      // Twice at most: a cut at a turn can leave big recent turns; the second cuts inside the last one.
      for (let attempt = 0; attempt < 2 && lastEstimate >= settings.triggerRatio * budget; attempt++) {
        if (!(await compact(history, "auto"))) break;
        view = activeView(history);
        lastEstimate = estimate(view);
      }
      options.emit({
        type: "context.updated",
        tokens: lastEstimate + options.overheadTokens,
        window: options.window,
        percent: Math.round(((lastEstimate + options.overheadTokens) / options.window) * 1000) / 10,
        compacted: state !== undefined,
      });
      return view;
    },
    learn(usage) {
      if (usage.inputTokens > 0 && lastEstimate > 0) calibration.learn(lastEstimate + options.overheadTokens, usage.inputTokens);
    },
    recover(history) {
      return compact(history, "overflow");
    },
  };
}
