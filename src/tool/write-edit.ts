/**
 * Exact-text replacement for the write tool's `edit` operation, as a pure function of the file's
 * text, so its rules (line endings, ambiguity, trailing newline) are testable without a disk.
 */
import { describeNearMatches } from "./write-near.ts";

export type EditRequest = { oldText: string; newText: string; replaceAll: boolean };

export type EditOutcome =
  | { ok: true; text: string; replacements: number }
  | { ok: false; error: string };

const MAX_LISTED_LINES = 20;

/**
 * The file's line ending: CRLF when most line breaks are CRLF. Models almost always send LF, so
 * their text is converted to this before matching and before writing, and a CRLF file stays CRLF.
 */
export function detectEol(text: string): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
    if (index > 0 && text[index - 1] === "\r") crlf += 1;
    else lf += 1;
  }
  return crlf > lf ? "\r\n" : "\n";
}

function withEol(text: string, eol: string): string {
  return text.replace(/\r?\n/g, eol);
}

/** Start offsets of non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = haystack.indexOf(needle); index !== -1; index = haystack.indexOf(needle, index + needle.length)) {
    found.push(index);
  }
  return found;
}

/** 1-based line number of an offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) line += 1;
  return line;
}

/**
 * Replaces oldText by newText in `original`. oldText must occur exactly once unless replaceAll.
 * Line endings: oldText and newText are converted to the file's dominant line ending first; if
 * that converted text is not found, the text as sent is tried (a file with mixed endings).
 * A file that ended with a line break still does afterwards, even if newText dropped it.
 */
export function applyEdit(original: string, request: EditRequest, shown: string): EditOutcome {
  const { oldText, newText, replaceAll } = request;
  if (oldText === "") return { ok: false, error: "oldText is empty; to create or overwrite a whole file use operation write." };
  if (oldText === newText) return { ok: false, error: "oldText and newText are identical; there is nothing to change." };

  const eol = detectEol(original);
  const candidates = [...new Set([withEol(oldText, eol), oldText])];
  let needle = candidates[0] ?? oldText;
  let found: number[] = [];
  for (const candidate of candidates) {
    found = occurrences(original, candidate);
    needle = candidate;
    if (found.length > 0) break;
  }

  if (found.length === 0) {
    return { ok: false, error: `oldText was not found in ${shown}.\n${describeNearMatches(original, oldText)}` };
  }
  if (found.length > 1 && !replaceAll) {
    const lines = found.slice(0, MAX_LISTED_LINES).map((offset) => lineAt(original, offset));
    const more = found.length > MAX_LISTED_LINES ? `, … (${found.length - MAX_LISTED_LINES} more)` : "";
    return {
      ok: false,
      error: `oldText occurs ${found.length} times in ${shown} (at lines ${lines.join(", ")}${more}). Include more surrounding text to make it unique, or set replaceAll: true to replace every occurrence.`,
    };
  }

  const replacement = withEol(newText, eol);
  let text = "";
  let last = 0;
  for (const offset of found) {
    text += original.slice(last, offset) + replacement;
    last = offset + needle.length;
  }
  text += original.slice(last);
  if (original.endsWith("\n") && text !== "" && !text.endsWith("\n")) text += eol;
  if (text === original) return { ok: false, error: "The edit changes nothing (newText equals the text it replaces)." };
  return { ok: true, text, replacements: found.length };
}
