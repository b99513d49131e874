/**
 * `@path` and `@"path with spaces"` mentions in a prompt: the run attaches the files they name,
 * the TUI's composer completes and shows them. One grammar for both.
 */

/** An `@` that starts a word (not an e-mail address or a decorator in the middle of text). */
const MENTION = /(?:^|[\s([{,;])@(?:"([^"\n]+)"|([^\s"'`,;)\]}]+))/g;

/** The `@` word being typed at the end of `text` (a plain path or an opened quote), if any. */
export const PARTIAL_MENTION = /(^|[\s([{,;])@("[^"\n]*|[^\s"'`,;)\]}]*)$/;

/** The paths a text mentions, in order, without repeats. */
export function mentionedPaths(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const path = (match[1] ?? match[2] ?? "").replace(/[.:!?]+$/, "");
    if (path !== "" && !found.includes(path)) found.push(path);
  }
  return found;
}
