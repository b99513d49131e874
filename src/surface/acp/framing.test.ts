import { describe, expect, test } from "bun:test";
import { screenFrames } from "./framing.ts";

const encoder = new TextEncoder();

/** Feeds `chunks` through the screen; returns what reaches the SDK and what was answered here. */
async function run(chunks: string[], options: { maxBytes?: number; answer?: (screen: ReturnType<typeof screenFrames>) => void; drainMs?: number } = {}) {
  const replies: Record<string, unknown>[] = [];
  let ended = 0;
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const screen = screenFrames(source, { reply: (m) => replies.push(m), onEnd: () => ended++, maxBytes: options.maxBytes ?? 1024, drainMs: options.drainMs ?? 2_000 });
  options.answer?.(screen);
  let passed = "";
  const decoder = new TextDecoder();
  for await (const chunk of screen.input) passed += decoder.decode(chunk, { stream: true });
  return { passed: passed.split("\n").filter((l) => l !== ""), replies, ended };
}

const request = (id: unknown, method = "initialize") => JSON.stringify({ jsonrpc: "2.0", id, method, params: {} });

describe("the frame screen", () => {
  test("lines split across chunks, several in one chunk, CRLF and a last line without newline pass whole", async () => {
    const a = request(1);
    const b = request("two", "session/new");
    const { passed, replies } = await run([a.slice(0, 7), `${a.slice(7)}\r\n${b}\n\n`, '{"jsonrpc":"2.0","method":"session/cancel","params":{}}'], {
      answer: (s) => setTimeout(() => s.sent(`{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":"two","result":{}}\n`), 10),
    });
    expect(passed).toEqual([`${a}\r`, b, '{"jsonrpc":"2.0","method":"session/cancel","params":{}}']);
    expect(replies).toEqual([]);
  });

  test("a malformed envelope with a usable id is answered with that id and what is wrong", async () => {
    const { passed, replies } = await run([`${JSON.stringify({ id: 7, method: "session/prompt", jsonrpc: 2 })}\n${JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "x" })}\n42\n`]);
    expect(passed).toEqual([]);
    expect(replies.map((r) => [r.id, (r.error as { message: string }).message])).toEqual([
      [7, 'Invalid request: "jsonrpc" must be "2.0"'],
      [null, 'Invalid request: "id" must be a string, a number or null'],
      [null, "Invalid request: a message must be a JSON object"],
    ]);
  });

  test("not JSON, batches and responses go to the SDK as they are", async () => {
    const { passed, replies } = await run(['{oops\n[1,2]\n{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}\n']);
    expect(passed).toHaveLength(3);
    expect(replies).toEqual([]);
  });

  test("an oversized line is skipped and answered; the next line still passes", async () => {
    const { passed, replies } = await run([`{"jsonrpc":"2.0","id":1,"method":"x","params":"${"a".repeat(700)}`, `${"b".repeat(700)}"}\n`, `${request(2)}\n`], {
      answer: (s) => setTimeout(() => s.sent(`{"jsonrpc":"2.0","id":2,"result":{}}\n`), 10),
    });
    expect(passed).toEqual([request(2)]);
    expect(replies).toHaveLength(1);
    expect(JSON.stringify(replies[0])).toContain("longer than 1024 bytes");
  });

  test("at the end of input the turns are cancelled, and the input stays open until each request read was answered", async () => {
    const started = performance.now();
    const { ended } = await run([`${request(1)}\n`], { answer: (s) => setTimeout(() => s.sent(`{"jsonrpc":"2.0","id":1,"result":{}}\n`), 150) });
    expect(ended).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    // An answer that never comes: the bound ends the wait.
    const bounded = performance.now();
    await run([`${request(9)}\n`], { drainMs: 100 });
    expect(performance.now() - bounded).toBeLessThan(1_500);
  });
});
