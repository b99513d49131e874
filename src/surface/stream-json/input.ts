import { inputEventSchema } from "../../protocol/stream-json.ts";

export type ParsedInput = { ok: true; content: string } | { ok: false; message: string };

const ALLOWED_TYPES = ["message", "prompt"];

/** The first problem of one input line, in words a client developer can act on. */
function describe(line: number, value: unknown): string {
  const record = value as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return `line ${line}: an input event must be a JSON object`;
  if (record.schemaVersion !== 2) return `line ${line}: schemaVersion must be 2 (got ${JSON.stringify(record.schemaVersion) ?? "none"})`;
  if (!ALLOWED_TYPES.includes(record.type as string)) return `line ${line}: unknown type ${JSON.stringify(record.type) ?? "(missing)"} (allowed: message, prompt)`;
  const allowed = record.type === "message" ? ["schemaVersion", "type", "role", "content"] : ["schemaVersion", "type", "content"];
  const unknown = Object.keys(record).find((key) => !allowed.includes(key));
  if (unknown !== undefined) return `line ${line}: unknown field ${JSON.stringify(unknown)} for type ${record.type} (allowed: ${allowed.join(", ")})`;
  if (record.type === "message" && record.role !== "user") return `line ${line}: role must be "user" (got ${JSON.stringify(record.role) ?? "none"})`;
  if (typeof record.content !== "string") return `line ${line}: content must be a string`;
  return `line ${line}: invalid input event`;
}

/**
 * Reads stream-json v2 input: one JSON object per line, split on "\n" only (a U+2028
 * inside a JSON string is legal and stays), blank lines ignored. Accepted contents are
 * joined in order with a blank line between them. The first invalid line rejects all.
 */
export function parseInputEvents(text: string): ParsedInput {
  const contents: string[] = [];
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      return { ok: false, message: `line ${index + 1}: malformed JSON (${error instanceof Error ? error.message : String(error)})` };
    }
    const parsed = inputEventSchema.safeParse(value);
    if (!parsed.success) return { ok: false, message: describe(index + 1, value) };
    contents.push(parsed.data.content);
  }
  if (contents.length === 0) return { ok: false, message: "no input events: send at least one message or prompt event" };
  return { ok: true, content: contents.join("\n\n") };
}
