import { describe, expect, test } from "bun:test";
import { parseInputEvents, readInputEvents } from "./input.ts";

const message = (content: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ schemaVersion: 2, type: "message", role: "user", content, ...extra });
const prompt = (content: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ schemaVersion: 2, type: "prompt", content, ...extra });

/** The rejection message, failing loudly if the input was accepted. */
function rejection(text: string, maxLineBytes?: number): string {
  const parsed = parseInputEvents(text, maxLineBytes);
  if (parsed.ok) throw new Error(`expected a rejection, got content ${JSON.stringify(parsed.content)}`);
  return parsed.message;
}

describe("accepted input", () => {
  test("a message and a prompt are combined in order with a blank line between", () => {
    const parsed = parseInputEvents(`${message("Inspect this repo.")}\n${prompt("Return only blockers.")}\n`);
    expect(parsed).toEqual({ ok: true, content: "Inspect this repo.\n\nReturn only blockers." });
  });

  test("order is kept, several events of a kind are fine, no trailing newline needed", () => {
    const parsed = parseInputEvents([prompt("one"), message("two"), prompt("three")].join("\n"));
    expect(parsed).toEqual({ ok: true, content: "one\n\ntwo\n\nthree" });
  });

  test("blank and whitespace-only lines are ignored, CRLF line endings too", () => {
    const plain = parseInputEvents(`${message("a")}\n${prompt("b")}\n`);
    const spaced = parseInputEvents(`\n\n${message("a")}\n   \n\t\n${prompt("b")}\n\n`);
    const crlf = parseInputEvents(`${message("a")}\r\n\r\n${prompt("b")}\r\n`);
    expect(plain).toEqual({ ok: true, content: "a\n\nb" });
    expect(spaced).toEqual(plain);
    expect(crlf).toEqual(plain);
  });

  test("content keeps its own newlines and a U+2028 inside a JSON string survives", () => {
    const raw = `{"schemaVersion":2,"type":"prompt","content":"before\u2028after"}`; // the raw character, not an escape
    expect(raw).toContain("\u2028");
    expect(parseInputEvents(`${raw}\n`)).toEqual({ ok: true, content: "before\u2028after" });
    expect(parseInputEvents(prompt("line 1\nline 2\u2029end"))).toEqual({ ok: true, content: "line 1\nline 2\u2029end" });
  });
});

describe("rejections name the line and the problem", () => {
  test("malformed JSON", () => {
    const text = rejection(`${prompt("ok")}\n{"schemaVersion":2,"type":"prompt",\n`);
    expect(text).toStartWith("line 2: malformed JSON");
  });

  test("line numbers count blank lines", () => {
    expect(rejection(`\n\n${prompt("ok")}\n\nnot json`)).toStartWith("line 5: malformed JSON");
    expect(rejection(`${prompt("ok")}\r\n\r\nnot json\r\n`)).toStartWith("line 3: malformed JSON");
  });

  test("missing schemaVersion", () => {
    const text = rejection(JSON.stringify({ type: "prompt", content: "x" }));
    expect(text).toStartWith("line 1: ");
    expect(text).toContain("schemaVersion must be 2");
    expect(text).toContain("none");
  });

  test("schemaVersion 1 (and \"2\" as a string)", () => {
    const one = rejection(`${prompt("ok")}\n${JSON.stringify({ schemaVersion: 1, type: "prompt", content: "x" })}`);
    expect(one).toStartWith("line 2: ");
    expect(one).toContain("schemaVersion must be 2 (got 1)");
    expect(rejection(JSON.stringify({ schemaVersion: "2", type: "prompt", content: "x" }))).toContain('schemaVersion must be 2 (got "2")');
  });

  test("unknown type, and a missing type", () => {
    const banana = rejection(JSON.stringify({ schemaVersion: 2, type: "banana", content: "x" }));
    expect(banana).toStartWith("line 1: ");
    expect(banana).toContain('unknown type "banana"');
    expect(banana).toContain("message, prompt");
    expect(rejection(JSON.stringify({ schemaVersion: 2, content: "x" }))).toMatch(/^line 1: unknown type .*missing/);
  });

  test("unknown field", () => {
    const extra = rejection(`${message("ok")}\n${prompt("x", { extra: 1 })}`);
    expect(extra).toStartWith("line 2: ");
    expect(extra).toContain('unknown field "extra"');
    // role is a field of message only
    expect(rejection(prompt("x", { role: "user" }))).toContain('unknown field "role"');
  });

  test("role other than user, and a missing role", () => {
    const assistant = rejection(JSON.stringify({ schemaVersion: 2, type: "message", role: "assistant", content: "x" }));
    expect(assistant).toStartWith("line 1: ");
    expect(assistant).toContain('role must be "user" (got "assistant")');
    expect(rejection(JSON.stringify({ schemaVersion: 2, type: "message", content: "x" }))).toContain('role must be "user"');
  });

  test("non-string content, and a missing content", () => {
    for (const content of [42, null, ["x"], { text: "x" }]) {
      const text = rejection(message(content));
      expect(text).toBe("line 1: content must be a string");
    }
    expect(rejection(JSON.stringify({ schemaVersion: 2, type: "prompt" }))).toBe("line 1: content must be a string");
  });

  test("a line that is not an object", () => {
    for (const line of ["[1,2]", '"a prompt"', "42", "null", "true"]) {
      expect(rejection(`${prompt("ok")}\n${line}`)).toBe("line 2: an input event must be a JSON object");
    }
  });

  test("no events at all", () => {
    for (const text of ["", "\n", "\n  \n\r\n"]) {
      const message = rejection(text);
      expect(message).toContain("no input events");
    }
  });

  test("the first bad line rejects everything, even with good lines after it", () => {
    expect(rejection(`${prompt("a")}\n${prompt("b", { x: 1 })}\n${prompt("c")}`)).toStartWith('line 2: unknown field "x"');
  });

  test("a line of only Unicode whitespace is rejected, not skipped like a blank line", () => {
    for (const space of ["\u00a0", "\u2028", "\u2029", "\ufeff", "\u3000", " \u00a0\t", "\u000b"]) {
      expect(rejection(`${prompt("ok")}\n${space}\n${prompt("more")}`)).toStartWith("line 2: only whitespace");
    }
  });

  test("a line longer than the limit is rejected naming the line and the limit", () => {
    expect(rejection(`${prompt("ok")}\n${prompt("x".repeat(64))}\n`, 80)).toBe("line 2: longer than the maximum line size of 80 bytes");
    expect(rejection(`${prompt("x".repeat(1024 * 1024))}\n`)).toBe("line 1: longer than the maximum line size of 1 MiB (1048576 bytes)");
  });
});

/** A byte stream in chunks, recording how many chunks were read. */
function chunks(parts: Array<string | Uint8Array>) {
  const state = { read: 0 };
  async function* source() {
    for (const part of parts) {
      state.read += 1;
      yield typeof part === "string" ? new TextEncoder().encode(part) : part;
    }
  }
  return { source: source(), state };
}

describe("readInputEvents (a byte stream)", () => {
  test("reads lines across chunk boundaries, also inside multi-byte characters", async () => {
    const bytes = new TextEncoder().encode(`${prompt("héllo 🙂")}\n${message("日本")}\n`);
    const parts = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(await readInputEvents(chunks(parts).source)).toEqual({ ok: true, content: "héllo 🙂\n\n日本" });
  });

  test("invalid UTF-8 in a line is rejected naming the line", async () => {
    const bad = new Uint8Array([...new TextEncoder().encode('{"schemaVersion":2,"type":"prompt","content":"a'), 0xff, ...new TextEncoder().encode('"}\n')]);
    expect(await readInputEvents(chunks([`${prompt("ok")}\n`, bad]).source)).toEqual({ ok: false, message: "line 2: not valid UTF-8" });
  });

  test("an over-long line is rejected as soon as it crosses the limit: the rest of the input is not read", async () => {
    const { source, state } = chunks([`${prompt("ok")}\n`, "x".repeat(40), "y".repeat(40), "never read", "\n"]);
    expect(await readInputEvents(source, 64)).toEqual({ ok: false, message: "line 2: longer than the maximum line size of 64 bytes" });
    expect(state.read).toBe(3);
  });
});
