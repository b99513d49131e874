/**
 * Keeps a redaction marker from replacing a real secret on disk.
 *
 * The model never sees secrets: where a file holds a token it sees `[REDACTED:github-token]`
 * (security/redact.ts). Writing such a file back as it was seen — or any change that removes a
 * hidden secret while adding a marker — would replace the secret with the marker. Such changes
 * are refused, with an error telling the model to edit around the secret.
 *
 * The rule, on the file's text before and after the change (the post-image), for write, edit,
 * patch and a move that replaces a file:
 * - the change adds redaction markers (some kind occurs more often after than before), AND
 * - the file holds a secret the redactor hides (judged with the run's own redactor, so exactly
 *   what the model was shown), AND
 * - some of that hidden text is gone afterwards.
 * A change that keeps every hidden secret may add markers (documentation, a redaction test); a
 * change that removes a secret without adding markers is a deliberate removal. A new file holds
 * no secret to lose, so markers in it are allowed. A file that cannot be examined (binary, too
 * large) must not receive new markers.
 */
import type { Redactor } from "../security/redact.ts";

const MARKER = /\[REDACTED:[A-Za-z0-9_-]{1,64}\]/g;

/** How often each marker occurs in a text. */
function markerCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!text.includes("[REDACTED:")) return counts;
  for (const match of text.matchAll(MARKER)) counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
  return counts;
}

/** The markers `after` holds more often than `before`. */
export function addedMarkers(before: string, after: string): string[] {
  const old = markerCounts(before);
  return [...markerCounts(after)].filter(([marker, count]) => count > (old.get(marker) ?? 0)).map(([marker]) => marker);
}

/** The markers in a text, each once. */
export function markersIn(text: string): string[] {
  return [...markerCounts(text).keys()];
}

/**
 * The text the redactor hides, in pieces: redaction keeps every line break, so line i of the
 * redacted text stands for line i of the original; on a changed line, what lies between the common
 * prefix and the common suffix is hidden text (a secret, or the run between two secrets).
 */
export function hiddenFragments(original: string, redacted: string): string[] {
  const before = original.split("\n");
  const after = redacted.split("\n");
  const pairs: [string, string][] = before.length === after.length ? before.map((line, index) => [line, after[index] ?? ""]) : [[original, redacted]];
  const fragments: string[] = [];
  for (const [line, shown] of pairs) {
    if (line === shown) continue;
    let prefix = 0;
    const limit = Math.min(line.length, shown.length);
    while (prefix < limit && line[prefix] === shown[prefix]) prefix++;
    let suffix = 0;
    while (suffix < limit - prefix && line[line.length - 1 - suffix] === shown[shown.length - 1 - suffix]) suffix++;
    const fragment = line.slice(prefix, line.length - suffix);
    if (fragment.trim() !== "") fragments.push(fragment);
  }
  return fragments;
}

const ADVICE =
  "Edit around the secret instead: use operation edit with oldText and newText taken only from lines without a [REDACTED:…] marker, and keep every marker out of oldText and newText. To change the secret itself, ask the user to do it.";

/** The error for a change that would put `added` markers where `shown` holds hidden secrets. */
export function secretOverwriteMessage(shown: string, hidden: { count: number; kinds: Record<string, number> }, added: readonly string[]): string {
  const what = hidden.count === 1 ? "a secret" : `${hidden.count} secrets`;
  return [
    `Refused: ${shown} holds ${what} (${Object.keys(hidden.kinds).join(", ")}) that zero showed you as a redaction marker; the real value is still in the file.`,
    `This change puts ${added.join(", ")} where that secret is, which would overwrite it with the marker text. Nothing was changed.`,
    ADVICE,
  ].join(" ");
}

/**
 * Why writing `after` over a file whose current text is `before` must be refused, or undefined when
 * it may go ahead. `before`: the current text, undefined for a new file, "unexamined" when the file
 * exists but is not text or too large to check.
 */
export function markerOverwriteProblem(before: string | undefined | "unexamined", after: string, redactor: Redactor, shown: string): string | undefined {
  if (before === undefined || !after.includes("[REDACTED:")) return undefined;
  if (before === "unexamined") {
    const markers = markersIn(after);
    if (markers.length === 0) return undefined;
    return `Refused: the new content of ${shown} contains the redaction marker ${markers[0]}, and ${shown} is binary or too large to check for the secret it may stand for. Nothing was changed. ${ADVICE}`;
  }
  const added = addedMarkers(before, after);
  if (added.length === 0) return undefined;
  const redaction = redactor.redact(before);
  if (redaction.count === 0) return undefined;
  const lost = hiddenFragments(before, redaction.text).filter((fragment) => !after.includes(fragment));
  if (lost.length === 0) return undefined;
  return secretOverwriteMessage(shown, redaction, added);
}

/**
 * A better error for an edit whose oldText was not found because it contains a marker the file
 * does not literally hold: the file has the real secret there, so the text can never match.
 */
export function markerInOldTextProblem(before: string, oldText: string, shown: string): string | undefined {
  const missing = markersIn(oldText).filter((marker) => !before.includes(marker));
  if (missing.length === 0) return undefined;
  return [
    `oldText contains ${missing.join(", ")}, which zero showed you in place of a secret; ${shown} holds the real value there, so this oldText can never match. Nothing was changed.`,
    ADVICE,
  ].join(" ");
}

/** A hint for a patch git could not apply whose context or removed lines hold a marker. */
export function markerInPatchHint(removedOrContext: readonly string[]): string | undefined {
  const markers = [...new Set(removedOrContext.flatMap(markersIn))];
  if (markers.length === 0) return undefined;
  return `The patch's context or removed lines contain ${markers.join(", ")}, which zero showed you in place of a secret; the file holds the real value there, so those lines never match. ${ADVICE}`;
}
