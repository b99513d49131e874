import type { Message } from "../../protocol/messages.ts";

/**
 * Where compaction cuts the history: the messages before the cut are summarized, the messages
 * from it on (the tail) are kept verbatim. The tail always starts at a user turn, so everything
 * that belongs together (a tool call and its result, a delegate handoff, a permission exchange,
 * a write and its result) lies wholly on one side, and the current user turn is always kept.
 */

export type CutOptions = {
  /** What the messages and instructions may use (see contextBudget). */
  budgetTokens: number;
  /** The share of the budget the verbatim tail may grow to beyond the minimum turns. */
  recentFraction: number;
  /** The tail holds at least this many turns (or all of them). */
  minimumRecentTurns: number;
  /** …and at most this many (the minimum wins if it is larger). */
  keepRecentTurns: number;
  estimate(messages: readonly Message[]): number;
};

/** A user message that starts a turn; an earlier compaction's summary message does not (it is history). */
export function isTurnStart(message: Message): boolean {
  return message.role === "user" && !message.parts.some((part) => part.type === "summary");
}

/**
 * Indices where the history may be cut: turn starts with no tool call before them whose result
 * comes at or after them. Loop-injected user messages (a gate's nudge, a background child's
 * report) are turn starts too, so the check keeps any exchange they interrupt whole.
 */
function cutPoints(messages: readonly Message[]): number[] {
  const resultAt = new Map<string, number>();
  messages.forEach((message, index) => {
    if (message.role === "tool") for (const part of message.parts) resultAt.set(part.callId, index);
  });
  // The furthest result index among the calls seen so far: a cut before it would split a pair.
  let openUntil = -1;
  const points: number[] = [];
  messages.forEach((message, index) => {
    if (isTurnStart(message) && index > openUntil) points.push(index);
    if (message.role !== "assistant") return;
    for (const part of message.parts) {
      if (part.type !== "tool-call") continue;
      const at = resultAt.get(part.callId);
      if (at !== undefined && at > index) openUntil = Math.max(openUntil, at);
    }
  });
  return points;
}

/**
 * The index where the verbatim tail starts, or undefined when nothing can be cut: the tail would
 * be the whole history, or all it would leave to summarize is an earlier summary. The tail grows
 * backwards turn by turn: it takes at least `minimumRecentTurns`, then adds earlier turns while it
 * stays within `recentFraction × budgetTokens` and `keepRecentTurns`. The minimum wins over both
 * bounds, so the tail can exceed its share; the caller sees that in its own estimate.
 */
export function chooseCut(messages: readonly Message[], options: CutOptions): number | undefined {
  const points = cutPoints(messages);
  if (points.length === 0) return undefined;
  const turnsFrom = (index: number) => messages.slice(index).filter(isTurnStart).length;
  const minimum = Math.max(1, Math.floor(options.minimumRecentTurns));
  const maximum = Math.max(minimum, Math.floor(options.keepRecentTurns));
  const target = Math.max(0, options.recentFraction * options.budgetTokens);

  let chosen = points[points.length - 1]!;
  for (let k = points.length - 2; k >= 0; k--) {
    const candidate = points[k]!;
    if (turnsFrom(chosen) >= minimum) {
      if (turnsFrom(candidate) > maximum) break;
      if (options.estimate(messages.slice(candidate)) > target) break;
    }
    chosen = candidate;
  }
  if (chosen === 0) return undefined;
  const onlyEarlierSummaries = messages.slice(0, chosen).every((message) => message.role === "user" && !isTurnStart(message));
  return onlyEarlierSummaries ? undefined : chosen;
}
