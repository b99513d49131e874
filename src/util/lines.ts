/**
 * Protocol input lines (`zero host`, `zero exec --input-format stream-json`): a streaming
 * splitter over bytes, bounded per line. Lines end at the byte "\n" only — never at U+2028,
 * U+2029 or a lone CR — and since 0x0A never occurs inside a UTF-8 sequence, no byte sequence
 * can break the framing. Each line is decoded on its own with a fatal decoder, so invalid
 * UTF-8 is reported instead of being replaced. A line longer than the limit is reported as soon
 * as it crosses the limit; its remaining bytes are read and dropped up to the next "\n",
 * never buffered.
 */

/** The longest input line, in bytes, not counting its "\n" (docs/host-protocol.md, docs/stream-json.md). */
export const MAX_LINE_BYTES = 1024 * 1024;

/** One input line: its text, or why it was refused. Numbers count from 1 and include blank lines. */
export type InputLine = { number: number; ok: true; text: string } | { number: number; ok: false; problem: string };

const NEWLINE = 0x0a;
const MIB = 1024 * 1024;

const sizeInWords = (bytes: number) => (bytes % MIB === 0 ? `${bytes / MIB} MiB (${bytes} bytes)` : `${bytes} bytes`);

/** Splits pushed byte chunks into lines; holds at most `maxLineBytes` of an unfinished line. */
export class LineSplitter {
  /** The unfinished line so far (one growing copy: many tiny chunks cost no per-chunk objects). */
  #buffer = new Uint8Array(0);
  #size = 0;
  #discarding = false;
  #number = 0;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  constructor(readonly maxLineBytes: number = MAX_LINE_BYTES) {}

  /** Bytes of the unfinished line held right now (never more than `maxLineBytes`). */
  get bufferedBytes(): number {
    return this.#size;
  }

  /** Capacity of the internal buffer (never more than `maxLineBytes`). */
  get capacityBytes(): number {
    return this.#buffer.length;
  }

  /** The lines this chunk completes (and an over-long line, when this chunk pushes it past the limit). */
  push(chunk: Uint8Array): InputLine[] {
    const out: InputLine[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.#hold(chunk.subarray(start), out);
        return out;
      }
      const piece = chunk.subarray(start, newline);
      if (this.#size === 0 && !this.#discarding && piece.length <= this.maxLineBytes) {
        this.#emit(piece, out); // a whole line inside one chunk: decoded in place, never copied
      } else {
        this.#hold(piece, out);
        this.#endLine(out);
      }
      start = newline + 1;
    }
  }

  /** The last line, when the input did not end with "\n". */
  end(): InputLine[] {
    const out: InputLine[] = [];
    if (this.#size > 0) this.#endLine(out);
    this.#discarding = false;
    return out;
  }

  /** Appends part of an unfinished line, or starts discarding it once it crosses the limit. */
  #hold(piece: Uint8Array, out: InputLine[]) {
    if (this.#discarding || piece.length === 0) return;
    const size = this.#size + piece.length;
    if (size > this.maxLineBytes) {
      this.#release();
      this.#discarding = true;
      out.push({ number: ++this.#number, ok: false, problem: `longer than the maximum line size of ${sizeInWords(this.maxLineBytes)}` });
      return;
    }
    if (size > this.#buffer.length) {
      const grown = new Uint8Array(Math.min(this.maxLineBytes, Math.max(size, this.#buffer.length * 2, 1024)));
      grown.set(this.#buffer.subarray(0, this.#size));
      this.#buffer = grown;
    }
    this.#buffer.set(piece, this.#size);
    this.#size = size;
  }

  #endLine(out: InputLine[]) {
    if (this.#discarding) {
      this.#discarding = false; // already reported when it crossed the limit
      return;
    }
    this.#emit(this.#buffer.subarray(0, this.#size), out);
    this.#size = 0;
    if (this.#buffer.length > 64 * 1024) this.#release(); // a long line's buffer is not kept around
  }

  #release() {
    this.#buffer = new Uint8Array(0);
    this.#size = 0;
  }

  #emit(bytes: Uint8Array, out: InputLine[]) {
    const number = ++this.#number;
    let text: string;
    try {
      text = this.#decoder.decode(bytes);
    } catch {
      out.push({ number, ok: false, problem: "not valid UTF-8" });
      return;
    }
    // A byte order mark is allowed at the very start of the input only (as a streaming decoder would drop it).
    out.push({ number, ok: true, text: number === 1 && text.startsWith("\uFEFF") ? text.slice(1) : text });
  }
}

/** The lines of a byte stream, read as they arrive. */
export async function* splitLines(source: AsyncIterable<Uint8Array>, maxLineBytes: number = MAX_LINE_BYTES): AsyncGenerator<InputLine> {
  const splitter = new LineSplitter(maxLineBytes);
  for await (const chunk of source) yield* splitter.push(chunk);
  yield* splitter.end();
}

/**
 * How a decoded line reads: `blank` (empty, or only spaces, tabs and carriage returns — JSON's
 * own whitespace: skipped, as NDJSON readers do), `whitespace` (only whitespace, some of it
 * other than that — U+00A0, U+2028, U+FEFF, U+3000, a vertical tab…: invalid input, never
 * skipped) or `content`.
 */
export function lineKind(text: string): "blank" | "whitespace" | "content" {
  if (/^[ \t\r]*$/.test(text)) return "blank";
  if (/^[\s\u180E\u200B-\u200D\u2060]*$/u.test(text)) return "whitespace";
  return "content";
}
