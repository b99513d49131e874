// Drives the fake provider with the real AI SDK adapters, in-process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { APICallError, RetryError, StreamProviderError, generateText, streamText, tool, type LanguageModel } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { UNRESOLVABLE_URL, startFakeProvider, type FakeProvider, type FakeTurn } from "./fake-provider.ts";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

type Proto = {
  name: "responses" | "chat" | "anthropic";
  path: string;
  model: (url: string) => LanguageModel;
  auth: [header: string, value: string];
  userText: (body: any) => string; // where the user's message lands in the request body
};

const PROTOCOLS: Proto[] = [
  {
    name: "responses",
    path: "/v1/responses",
    model: (url) => createOpenAI({ baseURL: url, apiKey: "sk-resp" })("fake-resp"),
    auth: ["authorization", "Bearer sk-resp"],
    userText: (body) => body.input[0].content[0].text,
  },
  {
    name: "chat",
    path: "/v1/chat/completions",
    model: (url) => createOpenAICompatible({ name: "fake", baseURL: url, apiKey: "sk-chat", includeUsage: true })("fake-chat"),
    auth: ["authorization", "Bearer sk-chat"],
    userText: (body) => body.messages[0].content,
  },
  {
    name: "anthropic",
    path: "/v1/messages",
    model: (url) => createAnthropic({ baseURL: url, apiKey: "sk-ant" })("fake-claude"),
    auth: ["x-api-key", "sk-ant"],
    userText: (body) => body.messages[0].content[0].text,
  },
];

const tools = { read: tool({ description: "Read a file", inputSchema: z.object({ path: z.string() }) }) };

type Timed = { part: any; at: number };
type Run = {
  parts: Timed[];
  thrown: unknown;
  text: string;
  reasoning: string;
  textDeltas: string[];
  reasoningDeltas: string[];
  toolCalls: any[];
  errors: any[];
  finish: any;
};

async function run(model: LanguageModel, options: { maxRetries?: number; abortSignal?: AbortSignal; prompt?: string } = {}): Promise<Run> {
  const result = streamText({
    model,
    tools,
    maxOutputTokens: 1000,
    messages: [{ role: "user", content: options.prompt ?? "hello fake" }],
    onError: () => {}, // keep the SDK's default console logging out of the test output
    ...(options.maxRetries != null && { maxRetries: options.maxRetries }),
    ...(options.abortSignal && { abortSignal: options.abortSignal }),
  });
  const parts: Timed[] = [];
  let thrown: unknown;
  try {
    for await (const part of result.stream) parts.push({ part, at: performance.now() });
  } catch (error) {
    thrown = error;
  }
  const of = (type: string) => parts.map((p) => p.part).filter((p) => p.type === type);
  const textDeltas = of("text-delta").map((p) => p.text as string);
  const reasoningDeltas = of("reasoning-delta").map((p) => p.text as string).filter((t) => t !== "");
  return {
    parts,
    thrown,
    text: textDeltas.join(""),
    reasoning: reasoningDeltas.join(""),
    textDeltas,
    reasoningDeltas,
    toolCalls: of("tool-call"),
    errors: of("error").map((p) => p.error),
    finish: of("finish")[0],
  };
}

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
});

/** Scripts turns on the shared fake and returns the index of the first request they will see. */
function script(...turns: FakeTurn[]): number {
  const start = fake.requests.length;
  fake.script(turns);
  return start;
}

describe.each(PROTOCOLS)("$name protocol", (proto) => {
  const model = () => proto.model(fake.url);

  test("text arrives in several deltas and joins", async () => {
    script({ text: "The quick brown fox jumps" }, { text: ["a", "bb", "ccc", "dddd"] });
    const first = await run(model());
    expect(first.textDeltas.length).toBe(3);
    expect(first.text).toBe("The quick brown fox jumps");
    expect(first.finish.finishReason).toBe("stop");
    expect(first.errors).toEqual([]);
    const second = await run(model());
    expect(second.textDeltas).toEqual(["a", "bb", "ccc", "dddd"]);
  });

  test("reasoning arrives as reasoning deltas, not text", async () => {
    script({ reasoning: "Let me think about it", text: "Answer: 42" });
    const r = await run(model());
    expect(r.reasoningDeltas.length).toBe(3);
    expect(r.reasoning).toBe("Let me think about it");
    expect(r.text).toBe("Answer: 42");
    const kinds = r.parts.map((p) => p.part.type);
    expect(kinds.lastIndexOf("reasoning-delta")).toBeLessThan(kinds.indexOf("text-delta"));
  });

  test("a tool call with split arguments parses", async () => {
    script({ text: "Reading.", toolCalls: [{ name: "read", args: { path: "src/main.ts" } }] });
    const r = await run(model());
    expect(r.toolCalls.length).toBe(1);
    expect(r.toolCalls[0].toolName).toBe("read");
    expect(r.toolCalls[0].input).toEqual({ path: "src/main.ts" });
    expect(r.toolCalls[0].toolCallId).toMatch(/^call_\d+$/);
    const argDeltas = r.parts.filter((p) => p.part.type === "tool-input-delta" && p.part.delta !== "");
    expect(argDeltas.length).toBeGreaterThanOrEqual(3);
    expect(r.finish.finishReason).toBe("tool-calls");
  });

  test("two tool calls in one reply both arrive", async () => {
    script({
      toolCalls: [
        { name: "read", args: { path: "a.txt" }, id: `${proto.name}_a` },
        { name: "read", args: { path: "b.txt" }, id: `${proto.name}_b` },
      ],
    });
    const r = await run(model());
    expect(r.toolCalls.map((c) => [c.toolCallId, c.input])).toEqual([
      [`${proto.name}_a`, { path: "a.txt" }],
      [`${proto.name}_b`, { path: "b.txt" }],
    ]);
  });

  test("usage numbers come through", async () => {
    script({ reasoning: "hmm", text: "ok", usage: { input: 123, output: 45, reasoning: 6, cached: 20 } });
    const usage = (await run(model())).finish.totalUsage;
    expect(usage.inputTokens).toBe(123);
    expect(usage.outputTokens).toBe(45);
    expect(usage.totalTokens).toBe(168);
    expect(usage.outputTokenDetails.reasoningTokens).toBe(6);
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(20);
    script({ text: "defaults" });
    const defaults = (await run(model())).finish.totalUsage;
    expect([defaults.inputTokens, defaults.outputTokens]).toEqual([10, 5]);
  });

  test("records the request: path, auth header, body", async () => {
    const at = script({ text: "ok" });
    await run(model(), { prompt: `hi from ${proto.name}` });
    const req = fake.requests[at]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe(proto.path);
    expect(req.protocol).toBe(proto.name);
    expect(req.headers[proto.auth[0]]).toBe(proto.auth[1]);
    expect(req.headers["content-type"]).toContain("application/json");
    if (proto.name === "anthropic") expect(req.headers["anthropic-version"]).toBeString();
    expect(req.body.model).toBe(`fake-${{ responses: "resp", chat: "chat", anthropic: "claude" }[proto.name]}`);
    expect(req.body.stream).toBe(true);
    expect(proto.userText(req.body)).toBe(`hi from ${proto.name}`);
    expect(JSON.stringify(req.body.tools)).toContain('"read"');
    expect(req.bodyBytes).toBe(Buffer.byteLength(JSON.stringify(req.body)));
    expect(Math.abs(req.receivedAt - Date.now())).toBeLessThan(5000);
  });

  test("401 surfaces as an APICallError with statusCode 401", async () => {
    const at = script({ kind: "error", status: 401, message: "invalid key for fake" });
    const r = await run(model(), { maxRetries: 0 });
    expect(r.errors.length).toBe(1);
    const error = r.errors[0];
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error.statusCode).toBe(401);
    expect(error.isRetryable).toBe(false);
    expect(error.message).toBe("invalid key for fake"); // parsed from the protocol's error JSON
    expect(fake.requests.length - at).toBe(1);
  });

  test("429 with Retry-After: 0 is retried at once", async () => {
    const at = script({ kind: "error", status: 429, headers: { "Retry-After": "0" } }, { text: "after the retry" });
    const started = performance.now();
    const r = await run(model());
    expect(r.text).toBe("after the retry");
    expect(r.errors).toEqual([]);
    expect(fake.requests.length - at).toBe(2);
    expect(performance.now() - started).toBeLessThan(1500); // not the 2 s default backoff
  });

  test("a stall (no headers) is ended by an abort", async () => {
    const at = script({ kind: "stall" }, { text: "still alive" });
    const controller = new AbortController();
    const pending = run(model(), { abortSignal: controller.signal });
    await fake.waitForRequests(at + 1);
    await Bun.sleep(30);
    controller.abort();
    const r = await pending;
    expect(r.parts.some((p) => p.part.type === "abort")).toBe(true);
    expect(r.thrown).toBeUndefined();
    expect(r.text).toBe("");
    expect((await run(model())).text).toBe("still alive"); // the server is fine afterwards
  });

  test("stallAfterChunks sends that many deltas, then hangs until the abort", async () => {
    const at = script({ text: ["one ", "two ", "three"], stallAfterChunks: 1 });
    const controller = new AbortController();
    const pending = run(model(), { abortSignal: controller.signal });
    await fake.waitForRequests(at + 1);
    await Bun.sleep(100);
    controller.abort();
    const r = await pending;
    expect(r.textDeltas).toEqual(["one "]);
    expect(r.finish?.finishReason).not.toBe("stop");
  });

  test("dropAfterChunks surfaces as an error", async () => {
    script({ text: ["one ", "two ", "three"], dropAfterChunks: 2 });
    const r = await run(model(), { maxRetries: 0 });
    expect(r.textDeltas).toEqual(["one ", "two "]);
    const error: any = r.thrown ?? r.errors[0];
    expect(error).toBeDefined();
    // The words vary with where the reset lands (socket, fetch body, SDK parser).
    expect(String(error.message) + String(error.cause?.message)).toMatch(/ECONNRESET|closed|Failed to process|terminated|reset|aborted/i);
  });

  test("commentary is a text block of its own before the text (one stream on chat)", async () => {
    script({ commentary: "Looking.", text: "Answer." });
    const r = await run(model());
    expect(r.text).toBe("Looking.Answer."); // the SDK itself does not separate blocks
    const starts = r.parts.filter((p) => p.part.type === "text-start").length;
    expect(starts).toBe(proto.name === "chat" ? 1 : 2);
  });

  test("refusal ends with finish reason content-filter and carries the explanation", async () => {
    script({ refusal: "I can't help with that." });
    const r = await run(model());
    expect(r.errors).toEqual([]);
    const step = r.parts.map((p) => p.part).find((p) => p.type === "finish-step");
    expect(step.finishReason).toBe("content-filter");
    if (proto.name === "anthropic") {
      expect(step.rawFinishReason).toBe("refusal");
      expect(step.providerMetadata.anthropic.stopDetails).toMatchObject({ type: "refusal", explanation: "I can't help with that." });
      expect(r.text).toBe("");
    } else {
      expect(r.text).toBe("I can't help with that."); // refusal text streams as text
    }
  });

  test("streamError sends deltas, then the protocol's error event mid-stream", async () => {
    script({ text: ["one ", "two ", "three"], streamError: { afterChunks: 1, type: "overloaded_error", message: "Overloaded" } });
    const r = await run(model(), { maxRetries: 0 });
    expect(r.textDeltas).toEqual(["one "]);
    expect(r.errors.length).toBe(1);
    expect(StreamProviderError.isInstance(r.errors[0])).toBe(true);
    expect(r.errors[0].message).toBe("Overloaded");
    if (proto.name === "anthropic") expect([r.errors[0].statusCode, r.errors[0].isRetryable]).toEqual([529, true]);
  });

  test("an error turn's type and code replace the protocol's defaults", async () => {
    script({ kind: "error", status: 429, message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" });
    const r = await run(model(), { maxRetries: 0 });
    const body = JSON.parse(r.errors[0].responseBody);
    expect(proto.name === "anthropic" ? body.error.type : [body.error.type, body.error.code]).toEqual(
      proto.name === "anthropic" ? "insufficient_quota" : ["insufficient_quota", "insufficient_quota"],
    );
  });

  test("chunkDelayMs spreads the deltas out in time", async () => {
    script({ text: ["a", "b", "c", "d"], chunkDelayMs: 40 });
    const r = await run(model());
    const times = r.parts.filter((p) => p.part.type === "text-delta").map((p) => p.at);
    expect(times.length).toBe(4);
    // 3 gaps of 40 ms at the server; on a loaded machine the client may read two at once, so the
    // check is that they are spread out at all (an undelayed stream arrives within a millisecond or two).
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(60);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps.filter((gap) => gap >= 20).length).toBeGreaterThanOrEqual(2);
  });
});

describe("retries and script handling", () => {
  const responses = () => PROTOCOLS[0]!.model(fake.url);

  test("openai .chat() reads the same chat stream", async () => {
    const at = script({ reasoning: "hidden", text: "Hello chat", toolCalls: [{ name: "read", args: { path: "x" } }], usage: { input: 7, output: 3 } });
    const r = await run(createOpenAI({ baseURL: fake.url, apiKey: "sk-oa" }).chat("gpt-fake"));
    expect(r.text).toBe("Hello chat"); // openai's chat adapter ignores reasoning_content
    expect(r.reasoning).toBe("");
    expect(r.toolCalls.map((c) => c.input)).toEqual([{ path: "x" }]);
    expect([r.finish.totalUsage.inputTokens, r.finish.totalUsage.outputTokens]).toEqual([7, 3]);
    expect(fake.requests[at]!.body.stream_options).toEqual({ include_usage: true });
  });

  test("string tool args are sent verbatim; unknown routes get a 404", async () => {
    script({ toolCalls: [{ name: "read", args: '{"path": "raw.txt"}' }] });
    expect((await run(responses())).toolCalls[0].input).toEqual({ path: "raw.txt" });
    const at = fake.requests.length;
    const res = await fetch(`${fake.url}/embeddings`, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.message).toContain("no route");
    expect(fake.requests[at]!.protocol).toBe("other");
  });

  test("retry-after-ms sets the delay between attempts", async () => {
    const at = script({ kind: "error", status: 503, headers: { "retry-after-ms": "150" } }, { text: "ok" });
    const r = await run(responses());
    expect(r.text).toBe("ok");
    const [first, second] = fake.requests.slice(at);
    const gap = second!.receivedAt - first!.receivedAt;
    expect(gap).toBeGreaterThanOrEqual(140);
    expect(gap).toBeLessThan(1500);
  });

  test("maxRetries exhausted gives a RetryError after 3 attempts", async () => {
    const busy: FakeTurn = { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } };
    const at = script(busy, busy, busy);
    const r = await run(PROTOCOLS[2]!.model(fake.url));
    expect(fake.requests.length - at).toBe(3);
    expect(RetryError.isInstance(r.errors[0])).toBe(true);
    expect(r.errors[0].reason).toBe("maxRetriesExceeded");
    expect(r.errors[0].lastError.statusCode).toBe(429);
  });

  test("an exhausted script answers 500 'script exhausted' (retries are immediate)", async () => {
    const own = await startFakeProvider();
    try {
      const r = await run(PROTOCOLS[1]!.model(own.url));
      expect(own.requests.length).toBe(3);
      expect(String(r.errors[0]?.message)).toContain("fake provider: script exhausted");
      const res = await fetch(`${own.url}/messages`, { method: "POST", body: JSON.stringify({ model: "m", stream: true }) });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ type: "error", error: { type: "api_error", message: "fake provider: script exhausted" }, request_id: "req_fake" });
    } finally {
      await own.close();
    }
  });

  test("turn functions see the request; fallback serves when the script is empty", async () => {
    const own = await startFakeProvider({
      turns: [(req) => ({ text: `you said: ${req.body.messages[0].content}` })],
      fallback: { text: "fallback" },
    });
    try {
      const model = PROTOCOLS[1]!.model(own.url);
      expect((await run(model, { prompt: "ping" })).text).toBe("you said: ping");
      expect((await run(model)).text).toBe("fallback");
      expect((await run(model)).text).toBe("fallback");
    } finally {
      await own.close();
    }
  });

  test("non-streaming requests get a 400 and do not consume a turn", async () => {
    const at = script({ text: "streamed" });
    const model = PROTOCOLS[1]!.model(fake.url);
    const error = await generateText({ model, prompt: "x", maxRetries: 0 }).catch((e) => e);
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain("streaming is required");
    expect((await run(model)).text).toBe("streamed");
    expect(fake.requests.length - at).toBe(2);
  });

  test("GET /v1/models lists the model ids seen, or fake-1", async () => {
    const own = await startFakeProvider({ fallback: { text: "x" } });
    try {
      const first: any = await (await fetch(`${own.url}/models`)).json();
      expect(first.object).toBe("list");
      expect(first.data.map((m: any) => m.id)).toEqual(["fake-1"]);
      await run(PROTOCOLS[0]!.model(own.url));
      await run(PROTOCOLS[2]!.model(own.url));
      const second: any = await (await fetch(`${own.url}/models`)).json();
      expect(second.data.map((m: any) => m.id)).toEqual(["fake-resp", "fake-claude"]);
      expect(own.requests.length).toBe(2); // /models is not recorded
    } finally {
      await own.close();
    }
  });

  test("UNRESOLVABLE_URL fails locally and fast (ENOTFOUND), with no request anywhere", async () => {
    const started = performance.now();
    const r = await run(PROTOCOLS[0]!.model(UNRESOLVABLE_URL), { maxRetries: 0 });
    expect(performance.now() - started).toBeLessThan(2000);
    const error: any = r.thrown ?? r.errors[0];
    expect(error.code).toBe("ENOTFOUND");
    expect(error.message).toContain("getaddrinfo ENOTFOUND");
  });

  test("waitForRequests times out with a clear message", async () => {
    await expect(fake.waitForRequests(fake.requests.length + 1, 50)).rejects.toThrow(/waited 50 ms for/);
  });

  test("close() ends stalled requests and streams promptly", async () => {
    const own = await startFakeProvider({ turns: [{ kind: "stall" }, { text: ["a", "b"], stallAfterChunks: 1 }] });
    const model = PROTOCOLS[1]!.model(own.url);
    const stalled = run(model, { maxRetries: 0 });
    const streaming = run(model, { maxRetries: 0 });
    await own.waitForRequests(2);
    await Bun.sleep(30);
    const started = performance.now();
    await own.close();
    const [a, b] = await Promise.all([stalled, streaming]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(a.errors.length + (a.thrown ? 1 : 0)).toBeGreaterThan(0);
    expect(b.textDeltas).toEqual(["a"]);
    expect(b.errors.length + (b.thrown ? 1 : 0)).toBeGreaterThan(0);
  });

  test("50 instant turns are fast", async () => {
    const own = await startFakeProvider({ fallback: { text: "quick reply here", usage: { input: 1, output: 1 } } });
    try {
      const model = PROTOCOLS[1]!.model(own.url);
      const started = performance.now();
      for (let i = 0; i < 50; i++) expect((await run(model)).text).toBe("quick reply here");
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      await own.close();
    }
  });
});
