import { describe, expect, test } from "bun:test";
import { LineSplitter, MAX_LINE_BYTES, lineKind, splitLines, type InputLine } from "./lines.ts";

const enc = new TextEncoder();
const bytes = (...parts: Array<string | number[]>) => {
  const arrays = parts.map((part) => (typeof part === "string" ? enc.encode(part) : new Uint8Array(part)));
  const all = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    all.set(a, at);
    at += a.length;
  }
  return all;
};

/** Feeds `input` in chunks of the given sizes (cycled), collecting every line. */
function split(input: Uint8Array, sizes: number[] = [input.length || 1], max = MAX_LINE_BYTES): InputLine[] {
  const splitter = new LineSplitter(max);
  const lines: InputLine[] = [];
  for (let offset = 0, i = 0; offset < input.length; i++) {
    const size = sizes[i % sizes.length]!;
    lines.push(...splitter.push(input.subarray(offset, offset + size)));
    offset += size;
  }
  lines.push(...splitter.end());
  return lines;
}
const texts = (lines: InputLine[]) => lines.map((l) => (l.ok ? l.text : `!${l.problem}`));

describe("LineSplitter", () => {
  test("splits on \\n only: U+2028, U+2029 and a lone CR stay inside the line; a CR before \\n is kept for the reader", () => {
    const input = bytes("a\u2028b\u2029c\rd\n", "e\r\n", "last");
    expect(texts(split(input))).toEqual(["a\u2028b\u2029c\rd", "e\r", "last"]);
  });

  test("every chunking gives the same lines, also when chunks end inside multi-byte characters", () => {
    const input = bytes("héllo wörld 🙂\n", "日本語\u2028テキスト\n", "\n", "€uro 𝄞 end");
    const expected = ["héllo wörld 🙂", "日本語\u2028テキスト", "", "€uro 𝄞 end"];
    for (const sizes of [[1], [2], [3], [5, 1, 7], [input.length]]) expect(texts(split(input, sizes))).toEqual(expected);
  });

  test("line numbers count every line, blank and refused ones included", () => {
    const lines = split(bytes("a\n\n", [0xff], "\nb\n"));
    expect(lines.map((l) => [l.number, l.ok])).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, true],
    ]);
  });

  test("a trailing \\n ends the input without an empty last line; no input gives no lines", () => {
    expect(texts(split(bytes("a\nb\n")))).toEqual(["a", "b"]);
    expect(split(new Uint8Array(0))).toEqual([]);
  });

  test("invalid UTF-8 is refused per line, never replaced, and the next line is read", () => {
    const lines = split(bytes("ok\n", [0x7b, 0xff, 0x7d], "\n", [0xe2, 0x82], "\n", [0xed, 0xa0, 0x80], "\nfine"), [1]);
    expect(texts(lines)).toEqual(["ok", "!not valid UTF-8", "!not valid UTF-8", "!not valid UTF-8", "fine"]);
  });

  test("a byte order mark is dropped at the start of the input only", () => {
    expect(texts(split(bytes("\uFEFFa\n\uFEFFb\n\uFEFF")))).toEqual(["a", "\uFEFFb", "\uFEFF"]);
  });

  test("a line of exactly the limit passes; one byte more is refused, naming the limit, and the next line is read", () => {
    expect(texts(split(bytes("x".repeat(16), "\nok"), [1], 16))).toEqual(["x".repeat(16), "ok"]);
    const lines = split(bytes("y".repeat(17), "\nok\n"), [4], 16);
    expect(texts(lines)).toEqual(["!longer than the maximum line size of 16 bytes", "ok"]);
    expect(lines[1]!.number).toBe(2);
    expect(texts(split(bytes("y".repeat(17), "\nok\n"), undefined, 16))).toEqual(["!longer than the maximum line size of 16 bytes", "ok"]); // one chunk
    const mib = split(bytes("z".repeat(MAX_LINE_BYTES + 1)));
    expect(mib).toEqual([{ number: 1, ok: false, problem: "longer than the maximum line size of 1 MiB (1048576 bytes)" }]);
  });

  test("an over-long line is reported as soon as it crosses the limit, before its newline arrives", () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(enc.encode("12345678"))).toEqual([]);
    expect(splitter.push(enc.encode("9"))).toEqual([{ number: 1, ok: false, problem: "longer than the maximum line size of 8 bytes" }]);
    expect(splitter.push(enc.encode("more and more"))).toEqual([]);
    expect(splitter.push(enc.encode("…\nnext\n"))).toEqual([{ number: 2, ok: true, text: "next" }]);
  });

  test("an over-long line is never buffered: the held bytes and the buffer stay within the limit throughout", () => {
    const max = 64 * 1024;
    const splitter = new LineSplitter(max);
    let peak = 0;
    const lines: InputLine[] = [];
    const chunk = enc.encode("x".repeat(4093));
    for (let sent = 0; sent < 10 * 1024 * 1024; sent += chunk.length) {
      lines.push(...splitter.push(chunk));
      peak = Math.max(peak, splitter.bufferedBytes, splitter.capacityBytes);
    }
    lines.push(...splitter.push(enc.encode("\n{\"ok\":1}\n")));
    expect(peak).toBeLessThanOrEqual(max);
    expect(texts(lines)).toEqual(["!longer than the maximum line size of 65536 bytes", '{"ok":1}']);
    expect(splitter.bufferedBytes).toBe(0);
  });

  test("an over-long last line without a newline is reported once", () => {
    expect(texts(split(bytes("ok\n", "w".repeat(40)), [7], 16))).toEqual(["ok", "!longer than the maximum line size of 16 bytes"]);
  });

  test("a chunk the producer reuses afterwards does not change a held partial line", () => {
    const splitter = new LineSplitter();
    const chunk = enc.encode("abc");
    splitter.push(chunk);
    chunk.fill(0x21);
    expect(splitter.push(enc.encode("d\n"))).toEqual([{ number: 1, ok: true, text: "abcd" }]);
  });
});

describe("splitLines", () => {
  test("reads an async byte stream line by line", async () => {
    async function* source() {
      yield enc.encode("one\ntw");
      yield enc.encode("o\n");
      yield new Uint8Array([0xf0, 0x9f]);
      yield new Uint8Array([0x99, 0x82, 0x0a]);
    }
    const lines: InputLine[] = [];
    for await (const line of splitLines(source())) lines.push(line);
    expect(texts(lines)).toEqual(["one", "two", "🙂"]);
  });
});

describe("lineKind", () => {
  test("empty and ASCII space/tab/CR lines are blank", () => {
    for (const text of ["", " ", "\t", "\r", "  \t \r"]) expect(lineKind(text)).toBe("blank");
  });

  test("lines of only other Unicode whitespace are whitespace, never blank", () => {
    for (const text of ["\u00a0", "\u2028", "\u2029", "\ufeff", "\u3000", " \u00a0 ", "\u000b", "\u000c", "\u200b", "\u1680\u2003\u205f"]) {
      expect(lineKind(text)).toBe("whitespace");
    }
  });

  test("anything else is content", () => {
    for (const text of ["{}", " x ", "\u00a0{}"]) expect(lineKind(text)).toBe("content");
  });
});
