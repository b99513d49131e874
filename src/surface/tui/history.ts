/**
 * The composer's history of sent messages: Up at the first line goes back, Down at the last line
 * comes forward, and what was being typed before browsing comes back at the end. Bounded; a
 * message sent twice in a row is kept once.
 */

export const MAX_HISTORY = 200;

export type ComposerHistory = {
  sent: string[];
  /** Index into `sent` while browsing; `sent.length` when not. */
  cursor: number;
  /** The draft that was in the composer when browsing began. */
  draft: string;
};

export function emptyHistory(sent: string[] = []): ComposerHistory {
  const kept = sent.slice(-MAX_HISTORY);
  return { sent: kept, cursor: kept.length, draft: "" };
}

export function remember(history: ComposerHistory, text: string): void {
  if (text.trim() !== "" && history.sent.at(-1) !== text) history.sent.push(text);
  if (history.sent.length > MAX_HISTORY) history.sent.splice(0, history.sent.length - MAX_HISTORY);
  history.cursor = history.sent.length;
  history.draft = "";
}

/** The text to show after Up; undefined when there is nothing older. */
export function older(history: ComposerHistory, current: string): string | undefined {
  if (history.cursor === 0) return undefined;
  if (history.cursor === history.sent.length) history.draft = current;
  history.cursor -= 1;
  return history.sent[history.cursor];
}

/** The text to show after Down; undefined when not browsing. */
export function newer(history: ComposerHistory): string | undefined {
  if (history.cursor >= history.sent.length) return undefined;
  history.cursor += 1;
  return history.cursor === history.sent.length ? history.draft : history.sent[history.cursor];
}
