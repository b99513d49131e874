/**
 * Where a JSON object may sit in a model's answer, most explicit first: the whole text, then
 * fenced blocks (the last first), then balanced top-level `{...}` spans (the last first). Callers
 * parse and validate each candidate in turn; `start`/`end` locate it in the text.
 */
export type JsonCandidate = { json: string; start: number; end: number };

/** An unclosed brace restarts the scan just after it, at most this many times (no quadratic scans). */
const MAX_OBJECT_RESCANS = 50;

export function jsonCandidates(text: string): JsonCandidate[] {
  const whole = { json: text.trim(), start: 0, end: text.length };
  const fences: JsonCandidate[] = [];
  for (const fence of text.matchAll(/```[ \t]*(?:json|jsonc)?[ \t]*\r?\n([\s\S]*?)```/gi)) {
    fences.push({ json: (fence[1] ?? "").trim(), start: fence.index, end: fence.index + fence[0].length });
  }
  const objects = topLevelObjects(text).map((span) => ({ ...span, json: text.slice(span.start, span.end) }));
  return [whole, ...fences.reverse(), ...objects.reverse()];
}

/**
 * Spans of balanced `{...}` at the top level of prose. Quotes count only inside an object (prose
 * has apostrophes and quotes of its own); an unclosed brace restarts the scan just after it.
 */
function topLevelObjects(text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  let from = 0;
  for (let rescans = 0; rescans <= MAX_OBJECT_RESCANS; rescans++) {
    let depth = 0;
    let start = -1;
    let inString = false;
    let escaped = false;
    for (let i = from; i < text.length; i++) {
      const c = text[i];
      if (depth === 0) {
        if (c === "{") {
          depth = 1;
          start = i;
        }
      } else if (inString) {
        if (escaped) escaped = false;
        else if (c === "\\") escaped = true;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) spans.push({ start, end: i + 1 });
    }
    if (depth === 0) break;
    from = start + 1;
  }
  return spans;
}
