import { describe, expect, test } from "bun:test";
import { boundedFetch } from "./http-fetch.ts";

// boundedFetch wraps any fetch: here the base is a function answering with a stream we control
// chunk by chunk (the boundaries matter), so each bound can be hit exactly.

const LIMIT = 1_000;
const encoder = new TextEncoder();

/** The reasons the bounded fetch reported a cut with (the connection closes on them). */
const cuts: string[] = [];

/** A fetch that answers every request with `chunks` as the body, each its own read. */
function serving(chunks: Array<string | Uint8Array>, contentType: string, status = 200) {
  return boundedFetch(
    async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
            controller.close();
          },
        }),
        { status, headers: { "content-type": contentType, "mcp-session-id": "s1" } },
      ),
    'MCP server "t"',
    (reason) => cuts.push(reason),
    LIMIT,
  );
}
/** `text` split into one-byte chunks: every boundary falls somewhere awkward. */
const bytewise = (text: string) => [...encoder.encode(text)].map((byte) => new Uint8Array([byte]));
const body = async (fetchLike: ReturnType<typeof serving>) => (await fetchLike("http://127.0.0.1/mcp", {})).text();
const CUT = `MCP server "t" sent more than ${LIMIT} bytes in one message; the response was cut off`;

describe("a JSON answer is bounded in total", () => {
  test("up to the limit it passes, whatever the chunking; status and headers are kept", async () => {
    const json = `{"x":"${"a".repeat(LIMIT - 8)}"}`;
    expect(json).toHaveLength(LIMIT);
    const response = await serving([json.slice(0, 300), json.slice(300)], "application/json", 202)("http://127.0.0.1/mcp", {});
    expect(response.status).toBe(202);
    expect(response.headers.get("mcp-session-id")).toBe("s1");
    expect(await response.text()).toBe(json);
  });

  test("one byte more and reading the body fails with the reason, which the connection hears of", async () => {
    cuts.length = 0;
    await expect(body(serving(["a".repeat(600), "a".repeat(LIMIT - 600 + 1)], "application/json"))).rejects.toThrow(CUT);
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toContain("the response was cut off");
  });

  test("a body without a content type is bounded in total too", async () => {
    await expect(body(serving(bytewise("b".repeat(LIMIT + 1)), ""))).rejects.toThrow(CUT);
  });
});

describe("an event stream is bounded per event", () => {
  const event = (i: number) => `event: message\nid: ${i}\ndata: {"n":${i},"pad":"${"p".repeat(60)}"}\n\n`;
  const many = Array.from({ length: 200 }, (_, i) => event(i)).join("");

  test("a long stream of small events passes in full, however it is chunked", async () => {
    expect(many.length).toBeGreaterThan(LIMIT * 10);
    expect(await body(serving([many], "text/event-stream"))).toBe(many);
    expect(await body(serving(bytewise(many), "text/event-stream"))).toBe(many);
  });

  test("events separated by CRLF blank lines pass too, however they are chunked", async () => {
    const crlf = many.replaceAll("\n", "\r\n");
    expect(await body(serving([crlf], "text/event-stream; charset=utf-8"))).toBe(crlf);
    expect(await body(serving(bytewise(crlf), "text/event-stream; charset=utf-8"))).toBe(crlf);
  });

  test("one event larger than the limit is cut: one long line a byte at a time, or many lines", async () => {
    await expect(body(serving(bytewise(`data: ${"x".repeat(LIMIT)}`), "text/event-stream"))).rejects.toThrow(CUT);
    const manyLines = Array.from({ length: 40 }, () => `data: ${"y".repeat(40)}\n`).join("");
    await expect(body(serving([manyLines, "\n"], "text/event-stream"))).rejects.toThrow(CUT);
  });

  test("one event larger than the limit is cut also when it arrives whole, blank line included, in one chunk", async () => {
    await expect(body(serving([`data: ${"x".repeat(LIMIT)}\n\n`], "text/event-stream"))).rejects.toThrow(CUT);
    await expect(body(serving([`data: ${"x".repeat(LIMIT)}\n\ndata: small\n\n`], "text/event-stream"))).rejects.toThrow(CUT);
  });

  test("an event just under the limit passes, then the count starts again", async () => {
    const big = `data: ${"z".repeat(LIMIT - 10)}\n\n`;
    const stream = [big, big, big].join("");
    expect(await body(serving([stream], "text/event-stream"))).toBe(stream);
  });
});

test("a response without a body is passed through", async () => {
  const fetchLike = boundedFetch(async () => new Response(null, { status: 202 }), "x", undefined, LIMIT);
  const response = await fetchLike("http://127.0.0.1/mcp", {});
  expect(response.status).toBe(202);
  expect(response.body).toBeNull();
});
