/**
 * JSON with object keys sorted, so two values that differ only in key order give the same text
 * (the repetition guard compares calls with it; the manifest check compares fields). `undefined`
 * anywhere is written as `undefined`, which no JSON text contains.
 */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(",")}}`;
}
