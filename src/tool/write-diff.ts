/**
 * Unified diffs of what the write tool changed: for surfaces (the `diff` field) and, when small,
 * for the model's summary. Paths are workspace-relative with git's a/ b/ prefixes, so a diff of a
 * workspace file applies with `git apply` from the workspace.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff";
import type { Roots } from "../security/roots.ts";
import { isWithin } from "../util/paths.ts";
import { relative } from "node:path";

/** The largest diff a result carries; a huge rewrite must not become a giant event. */
export const MAX_DIFF_CHARS = 200 * 1024;
/** Diffs up to this size are also shown to the model after the summary line. */
export const INLINE_DIFF_CHARS = 4_000;
/** Inputs larger than this (old + new) get the cheap replacement diff without trying jsdiff. */
const MAX_DIFF_INPUT_CHARS = 8 * 1024 * 1024;
/**
 * jsdiff's Myers diff is O((N+M)·D): it gives up (returns undefined) past this many edits or this
 * long, and the cheap replacement diff stands in.
 */
const MAX_EDIT_LENGTH = 2_000;
const DIFF_TIMEOUT_MS = 500;
const CONTEXT_LINES = 3;

export type TextDiff = {
  /** The unified diff, bounded; undefined when it could not be computed (too large, too slow). */
  diff: string | undefined;
  added: number;
  removed: number;
};

/** `a/<rel>`-style names inside the workspace; absolute paths elsewhere (extra roots). */
export function diffName(roots: Roots, absolute: string, side: "a" | "b"): string {
  if (!isWithin(roots.workspace, absolute) || absolute === roots.workspace) return absolute;
  return `${side}/${relative(roots.workspace, absolute)}`;
}

/** Cuts a diff to the bound at a line break, saying how much was left out. */
export function boundDiff(diff: string, max = MAX_DIFF_CHARS): string {
  if (diff.length <= max) return diff;
  const cut = diff.lastIndexOf("\n", max);
  const head = diff.slice(0, cut > 0 ? cut + 1 : max);
  return `${head}… diff truncated: ${diff.length - head.length} more characters\n`;
}

/**
 * Diff of one file's text. `oldName`/`newName` are diff names (see `diffName`) or "/dev/null" for
 * a created or deleted file.
 */
export function diffTexts(oldName: string, newName: string, oldText: string, newText: string): TextDiff {
  if (oldText === newText) return { diff: "", added: 0, removed: 0 };
  const patch =
    oldText.length + newText.length > MAX_DIFF_INPUT_CHARS
      ? undefined
      : structuredPatch(oldName, newName, oldText, newText, undefined, undefined, {
          context: CONTEXT_LINES,
          maxEditLength: MAX_EDIT_LENGTH,
          timeout: DIFF_TIMEOUT_MS,
        });
  if (patch === undefined) return replacementDiff(oldName, newName, oldText, newText);
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added += 1;
      else if (line.startsWith("-")) removed += 1;
    }
  }
  if (patch.hunks.length === 0) return { diff: "", added, removed };
  return { diff: boundDiff(formatPatch(patch, FILE_HEADERS_ONLY)), added, removed };
}

/** Lines with their terminators; a last line without one stays as it is. */
function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines[lines.length - 1] === "" ? lines.slice(0, -1) : lines;
}

/**
 * A correct but not minimal diff in linear time: the common leading and trailing lines are kept as
 * context and everything between is one removal plus one addition.
 */
export function replacementDiff(oldName: string, newName: string, oldText: string, newText: string): TextDiff {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix += 1;
  const start = Math.max(0, prefix - CONTEXT_LINES);
  const trailing = Math.min(suffix, CONTEXT_LINES);
  const removed = a.length - suffix - prefix;
  const added = b.length - suffix - prefix;
  const body: string[] = [];
  const emit = (marker: string, line: string) => {
    body.push(`${marker}${line.endsWith("\n") ? line.slice(0, -1) : line}`);
    if (!line.endsWith("\n")) body.push("\\ No newline at end of file");
  };
  for (const line of a.slice(start, prefix)) emit(" ", line);
  for (const line of a.slice(prefix, a.length - suffix)) emit("-", line);
  for (const line of b.slice(prefix, b.length - suffix)) emit("+", line);
  for (const line of a.slice(a.length - suffix, a.length - suffix + trailing)) emit(" ", line);
  const oldCount = prefix - start + removed + trailing;
  const newCount = prefix - start + added + trailing;
  const oldStart = oldCount === 0 ? start : start + 1;
  const newStart = newCount === 0 ? start : start + 1;
  const header = `--- ${oldName}\n+++ ${newName}\n@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
  return { diff: boundDiff(`${header}${body.join("\n")}\n`), added, removed };
}

/** Number of lines in a text; a last line without a newline counts. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let lines = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) lines += 1;
  return text.endsWith("\n") ? lines : lines + 1;
}

/** The summary line plus the diff when it is small enough to be worth the model's tokens. */
export function withInlineDiff(summary: string, diff: string | undefined): string {
  if (diff === undefined || diff === "" || diff.length > INLINE_DIFF_CHARS) return summary;
  return `${summary}\n${diff.endsWith("\n") ? diff.slice(0, -1) : diff}`;
}
