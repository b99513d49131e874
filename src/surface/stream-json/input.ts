import { inputEventSchema } from "../../protocol/stream-json.ts";
import { LineSplitter, MAX_LINE_BYTES, lineKind, splitLines, type InputLine } from "../../util/lines.ts";

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
 * Collects stream-json v2 input events line by line: one JSON object per line, split on "\n"
 * only (a U+2028 inside a JSON string is legal and stays), each line at most MAX_LINE_BYTES of
 * valid UTF-8. Blank lines (empty, or only spaces, tabs and CR) are skipped; a line of only other
 * whitespace (U+00A0, U+2028, U+FEFF, …) is invalid. Accepted contents are joined in order with a
 * blank line between them. The first invalid line rejects all.
 */
function createCollector() {
  const contents: string[] = [];
  return {
    /** Takes one line; a rejection ends the input. */
    add(input: InputLine): ParsedInput | undefined {
      const number = input.number;
      if (!input.ok) return { ok: false, message: `line ${number}: ${input.problem}` };
      const line = input.text.endsWith("\r") ? input.text.slice(0, -1) : input.text;
      const kind = lineKind(line);
      if (kind === "blank") return undefined;
      if (kind === "whitespace") return { ok: false, message: `line ${number}: only whitespace (a blank line may hold only spaces, tabs and a carriage return)` };
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        return { ok: false, message: `line ${number}: malformed JSON (${error instanceof Error ? error.message : String(error)})` };
      }
      const parsed = inputEventSchema.safeParse(value);
      if (!parsed.success) return { ok: false, message: describe(number, value) };
      contents.push(parsed.data.content);
      return undefined;
    },
    finish(): ParsedInput {
      if (contents.length === 0) return { ok: false, message: "no input events: send at least one message or prompt event" };
      return { ok: true, content: contents.join("\n\n") };
    },
  };
}

/** Reads input events from a byte stream as it arrives; stops reading at the first bad line. */
export async function readInputEvents(source: AsyncIterable<Uint8Array>, maxLineBytes: number = MAX_LINE_BYTES): Promise<ParsedInput> {
  const collector = createCollector();
  for await (const line of splitLines(source, maxLineBytes)) {
    const rejected = collector.add(line);
    if (rejected) return rejected;
  }
  return collector.finish();
}

/** The same, over text already in memory. */
export function parseInputEvents(text: string, maxLineBytes: number = MAX_LINE_BYTES): ParsedInput {
  const collector = createCollector();
  const splitter = new LineSplitter(maxLineBytes);
  for (const line of [...splitter.push(new TextEncoder().encode(text)), ...splitter.end()]) {
    const rejected = collector.add(line);
    if (rejected) return rejected;
  }
  return collector.finish();
}
