/**
 * Scripted fake model provider for whole-program tests.
 *
 * A Bun.serve HTTP server on 127.0.0.1 (free port) that speaks, with real SSE
 * streaming, the three wire protocols the AI SDK provider adapters use:
 *   POST /v1/responses         OpenAI Responses      createOpenAI({ baseURL, apiKey })(id)
 *   POST /v1/chat/completions  OpenAI Chat           createOpenAI(...).chat(id), createOpenAICompatible(...)(id)
 *   POST /v1/messages          Anthropic Messages    createAnthropic({ baseURL, apiKey })(id)
 *   GET  /v1/models            model ids seen so far (or "fake-1")
 * (Routes match on the path suffix, so a baseURL without /v1 works too.)
 * Each model request consumes the next scripted turn; see startFakeProvider.
 * Wire details: fake-provider-wire.ts.
 *
 * Rules of thumb:
 * - Only streaming requests are served. A request without `stream: true` is
 *   recorded and answered 400 ("streaming is required") WITHOUT consuming a turn.
 * - Other paths are recorded (protocol "other") and answered 404, no turn used.
 * - Chat usage is only sent when the request asks for it
 *   (stream_options.include_usage), like the real API: openai's .chat() always
 *   does, createOpenAICompatible only with `includeUsage: true`.
 * - `args` of a FakeToolCall that is a string is sent verbatim as the raw JSON
 *   argument text (use it to script malformed arguments).
 * - "Content chunks" are the deltas (reasoning, text, tool-argument pieces);
 *   structural events (block start/stop, item added/done) ride with the next
 *   delta. The preamble (response.created / message_start / role chunk) is sent
 *   with the headers; stallAfterChunks/dropAfterChunks >= the number of deltas
 *   hang/drop just before the final events (finish reason + usage).
 * - Script exhausted: HTTP 500 "fake provider: script exhausted" with header
 *   `retry-after-ms: 0`, so the SDK's retries of it are immediate.
 * - `streamError: { afterChunks }` sends that many deltas, then the protocol's
 *   in-stream error event (0 = right after the preamble, which the Anthropic
 *   and Responses adapters still turn into an APICallError before any output).
 *   `refusal` and `commentary` script a refusal and a second text block; an
 *   error's `type`/`code` script e.g. an `insufficient_quota` 429.
 * - UNRESOLVABLE_URL: a base URL under `.invalid` for DNS failures (no network).
 * - Provider data a reply hands out, to be sent back on the next request: Anthropic thinking
 *   signatures (`fake-signature-N`) and `redactedThinking` blocks; Responses item ids (`rs_N`,
 *   `msg_N`, `fc_N_i`) and, when the request's `include` asks (or `encryptedReasoning`), the
 *   reasoning item's `encrypted_content`; Chat `reasoning_content` and a call's
 *   `thoughtSignature`; the gateway's provider metadata per model family (`anthropic/…`:
 *   signature, redactedData; `openai/…`: item ids and encrypted content). The ids are built by
 *   the helpers of fake-provider-wire.ts (signatureOf, reasoningItemIdOf, …).
 * - `strict` (start option or settable property): the fake refuses, like the real APIs, a
 *   request whose history lost or altered that data (fake-provider-echo.ts has the rules).
 * - Mid-stream failures reach streamText as StreamProviderError (statusCode and
 *   isRetryable inferred from the provider's error type, e.g. Anthropic
 *   `overloaded_error` → 529, retryable); a DNS failure is a bare TypeError
 *   (code ENOTFOUND), which the SDK does not wrap or retry.
 *
 * ---- What AI SDK 7 (ai@7.0.173, provider-utils 5.0.81) does on HTTP errors ----
 * - `maxRetries` (streamText/generateText) defaults to 2: up to 3 HTTP attempts.
 *   maxRetries: 0 throws/streams the original APICallError (statusCode, etc.).
 * - Retried: APICallError with isRetryable === true, which by default means
 *   status 408, 409, 429 or >= 500 (400/401/403/404/413/422 are not), plus
 *   network errors (ECONNRESET, ECONNREFUSED, ETIMEDOUT, EPIPE, "fetch failed",
 *   ...; retryable APICallError), and GatewayError.isRetryable. Abort errors
 *   are never retried.
 * - Delays: exponential, initialDelayInMs 2000, backoffFactor 2: 2 s before the
 *   2nd attempt, 4 s before the 3rd (then 8 s, ... with larger maxRetries).
 * - Headers override the delay (ai's getRetryDelayInMs, names lower-cased):
 *   `retry-after-ms` (parseFloat, milliseconds) wins; else `retry-after`
 *   (parseFloat seconds * 1000, or an HTTP date: Date.parse(v) - Date.now()).
 *   The value is used iff it is a number, >= 0, and (< 60000 ms or < the
 *   current backoff delay); otherwise the exponential delay is used. So
 *   `retry-after: 0` / `retry-after-ms: 0` retry immediately, `retry-after: 30`
 *   really waits 30 s, `retry-after: 61` (or a negative value) falls back to 2 s/4 s.
 * - After the last attempt: RetryError (AI_RetryError, reason
 *   "maxRetriesExceeded", .errors, .lastError). A non-retryable error on the
 *   1st attempt is thrown as is; after earlier retries it is wrapped in a
 *   RetryError with reason "errorNotRetryable".
 * - Scope: the retry wraps the provider's doStream, i.e. until the adapter has
 *   returned its stream. The Responses and openai .chat() adapters read ahead
 *   until the first output chunk (or 50 ms after response.in_progress), the
 *   Anthropic adapter until the first event after the headers; the
 *   openai-compatible adapter returns right after the headers. Failures after
 *   that (error events in the stream, dropped connections) are NOT retried by
 *   maxRetries; only `streamRetries` (default 0 = off) would retry them. A
 *   drop (or error event) before that point is retried like an HTTP error (a
 *   drop is a retryable network error: 2 s backoff!).
 * - How it looks from streamText (checked in fake-provider.test.ts): HTTP
 *   errors and drops before doStream returned arrive as an `error` part in
 *   result.stream (the APICallError itself when maxRetries is 0, else a
 *   RetryError). A connection drop after that makes iterating result.stream
 *   THROW an APICallError "Failed to process successful response"
 *   (statusCode 200, isRetryable true, cause ECONNRESET). An abort ends the
 *   stream with an `abort` part. Without an `onError` option streamText also
 *   console.error()s every error, so tests should pass `onError: () => {}`.
 */
import { echoProblem, type LedgerEntry } from "./fake-provider-echo.ts";
import { encodeReply, errorBody, modelList, split, streamErrorEvent, type Plan, type Protocol, type StreamErrorSpec } from "./fake-provider-wire.ts";

/**
 * A base URL whose host never resolves (RFC 6761 reserves `.invalid`): the resolver fails
 * locally and at once (ENOTFOUND), no network is touched. For "no DNS / no network" tests.
 */
export const UNRESOLVABLE_URL = "http://fake-provider.invalid/v1";

/** `thoughtSignature`: Chat only, sent as the call's `extra_content.google.thought_signature` (Gemini's OpenAI-compatible endpoint). */
export type FakeToolCall = { name: string; args: unknown; id?: string; thoughtSignature?: string };
export type FakeUsage = { input: number; output: number; reasoning?: number; cached?: number };
export type FakeReply = {
  kind?: "reply";
  text?: string | string[];
  reasoning?: string | string[];
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  chunkDelayMs?: number;
  stallAfterChunks?: number;
  dropAfterChunks?: number;
  /**
   * A separate text block before `text`: Responses sends it as its own output message (phase
   * "commentary", then "final_answer"), Anthropic and the gateway as another text block; Chat has
   * one text stream, so there it is just more content before `text`.
   */
  commentary?: string | string[];
  /**
   * The model refuses, explaining why: Anthropic stop_reason "refusal" with
   * stop_details.explanation (no text of its own), Chat `delta.refusal` deltas and finish_reason
   * "content_filter", Responses a message with a refusal content part, the gateway text deltas
   * and finish reason content-filter. `text` still streams before it.
   */
  refusal?: string;
  /**
   * After this many content chunks, the protocol's in-stream error event (Anthropic `event: error`
   * with `overloaded_error` by default) ends the stream: HTTP 200, then an error mid-stream.
   */
  streamError?: StreamErrorSpec & { afterChunks: number };
  /**
   * Anthropic: a `redacted_thinking` content block with this opaque `data` (after the thinking
   * block, if any); the gateway: a reasoning part whose provider metadata is
   * `{ anthropic: { redactedData } }`. Other protocols ignore it.
   */
  redactedThinking?: string;
  /**
   * Responses: the reasoning item carries `encrypted_content` even though the request did not
   * ask for it (it always does when the request's `include` has "reasoning.encrypted_content").
   */
  encryptedReasoning?: boolean;
};
/** `type`/`code` replace the error JSON's (e.g. `{ status: 429, code: "insufficient_quota", type: "insufficient_quota" }`). */
export type FakeError = { kind: "error"; status: number; message?: string; headers?: Record<string, string>; type?: string; code?: string | null };
export type FakeStall = { kind: "stall" };
export type FakeTurn = FakeReply | FakeError | FakeStall;
export type RecordedRequest = {
  method: string;
  path: string;
  protocol: "responses" | "chat" | "anthropic" | "gateway" | "other";
  headers: Record<string, string>;
  body: any;
  bodyBytes: number;
  receivedAt: number;
  /** When the reply was handed to the server (replies only; with no delays the whole stream goes out at once). */
  answeredAt?: number;
  /** Strict mode: why the request was refused (its history lost or altered provider data). */
  rejected?: string;
  /** The reply's sequence number N (replies only): the ids and signatures it handed out derive from it (signatureOf(N), …). */
  replyNumber?: number;
};
type TurnSource = FakeTurn | ((req: RecordedRequest) => FakeTurn);
export type FakeProvider = {
  url: string;
  port: number;
  requests: RecordedRequest[];
  script(turns: TurnSource[]): void;
  /**
   * Strict mode (see fake-provider-echo.ts): a request whose history lost or altered what earlier
   * replies handed out (thinking signatures, redacted thinking, reasoning items and their
   * encrypted content, tool call ids) is answered with the error a real provider gives (HTTP
   * 400/404, realistic body), recorded with `rejected`, and uses no turn. Settable; reset()
   * restores the start option.
   */
  strict: boolean;
  /** Forgets unconsumed turns, recorded requests and the replies strict mode remembers (between tests). */
  reset(): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

function protocolOf(method: string, path: string): Protocol {
  if (method !== "POST") return "other";
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/chat/completions")) return "chat";
  if (path.endsWith("/messages")) return "anthropic";
  if (path.endsWith("/language-model")) return "gateway";
  return "other";
}

export async function startFakeProvider(options: { turns?: TurnSource[]; fallback?: TurnSource; strict?: boolean } = {}): Promise<FakeProvider> {
  const queue: TurnSource[] = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  const ledger: LedgerEntry[] = []; // every reply sent, for strict mode
  let strict = options.strict ?? false;
  const modelIds = new Set<string>();
  const waiters = new Set<{ count: number; done: () => void }>();
  const releases = new Set<() => void>(); // wake stalled requests/streams on close()
  let replySeq = 0;
  let callSeq = 0;
  let closed = false;

  const errorResponse = (protocol: Protocol, status: number, message: string, headers?: Record<string, string>, override?: { type?: string; code?: string | null; param?: string | null }) =>
    json(status, errorBody(protocol, status, message, override), headers);

  // A stall before the headers: resolves (into the void) once the client aborts.
  const stall = (req: Request) =>
    new Promise<Response>((resolve) => {
      const done = () => {
        releases.delete(done);
        resolve(new Response(null, { status: 499 }));
      };
      releases.add(done);
      if (req.signal.aborted) done();
      else req.signal.addEventListener("abort", done, { once: true });
    });

  const reply = (protocol: Protocol, turn: FakeReply, rec: RecordedRequest): Response => {
    const model = typeof rec.body?.model === "string" ? rec.body.model : (rec.headers["ai-language-model-id"] ?? "fake-1");
    const include: unknown = rec.body?.include;
    const plan: Plan = {
      model,
      n: ++replySeq,
      created: Math.floor(Date.now() / 1000),
      reasoning: split(turn.reasoning),
      text: split(turn.text),
      commentary: split(turn.commentary),
      ...(turn.refusal !== undefined ? { refusal: turn.refusal } : {}),
      ...(turn.redactedThinking !== undefined ? { redactedThinking: turn.redactedThinking } : {}),
      encryptedReasoning: turn.encryptedReasoning === true || (Array.isArray(include) && include.includes("reasoning.encrypted_content")),
      ...(model.startsWith("anthropic/") ? { family: "anthropic" as const } : model.startsWith("openai/") ? { family: "openai" as const } : {}),
      calls: (turn.toolCalls ?? []).map((call) => {
        const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args ?? {});
        const signature = call.thoughtSignature !== undefined ? { thoughtSignature: call.thoughtSignature } : {};
        return { id: call.id ?? `call_${++callSeq}`, name: call.name, args, pieces: split(args), ...signature };
      }),
      usage: turn.usage ?? { input: 10, output: 5 },
      includeUsage: rec.body?.stream_options?.include_usage === true,
    };
    rec.replyNumber = plan.n;
    ledger.push({ protocol, plan, store: rec.body?.store !== false });
    let chunks = encodeReply(protocol, plan);
    if (turn.streamError) {
      // Keep the preamble and the first `afterChunks` content chunks, then the error event ends the stream.
      let seen = 0;
      const end = chunks.findIndex((chunk) => chunk.content && ++seen > turn.streamError!.afterChunks);
      // Fewer content chunks than that: all of them, but not the finish events after the last one.
      const lastContent = chunks.findLastIndex((chunk) => chunk.content);
      const kept = end === -1 ? chunks.slice(0, Math.max(1, lastContent + 1)) : chunks.slice(0, Math.max(chunks[0]?.content ? 0 : 1, end));
      chunks = [...kept, { text: streamErrorEvent(protocol, turn.streamError), content: false }];
    }
    const delay = turn.chunkDelayMs ?? 0;
    const stallAt = turn.stallAfterChunks;
    const dropAt = turn.dropAfterChunks;
    // Fast path: the whole event stream in one write.
    if (delay <= 0 && stallAt == null && dropAt == null) {
      return new Response(chunks.map((chunk) => chunk.text).join(""), { headers: SSE_HEADERS });
    }
    let next = 0;
    let sent = 0; // content chunks written
    let cancelled = false;
    let stop: (() => void) | undefined;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = chunks[next];
        if (!chunk) return controller.close();
        if (next > 0) {
          if (delay > 0) await Bun.sleep(delay);
          if (cancelled) return;
          if (stallAt != null && sent >= stallAt) {
            // Hang with the connection open until the client goes away (cancel) or close().
            await new Promise<void>((wake) => {
              const done = () => {
                releases.delete(done);
                wake();
              };
              releases.add(done);
              stop = done;
            });
            if (!cancelled) controller.error(); // error() without a reason: Bun resets the socket silently
            return;
          }
          if (dropAt != null && sent >= dropAt) {
            // Let Bun flush what was written (it corks writes until the tick ends;
            // error() right away would discard them, even the headers), then reset. 10 ms was
            // not always enough on a loaded CI machine.
            if (delay < 50) await Bun.sleep(50);
            if (!cancelled) controller.error();
            return;
          }
        }
        next++;
        if (chunk.content) sent++;
        controller.enqueue(encoder.encode(chunk.text));
      },
      cancel() {
        cancelled = true;
        stop?.();
      },
    });
    return new Response(stream, { headers: SSE_HEADERS });
  };

  const handle = async (req: Request): Promise<Response> => {
    const receivedAt = performance.timeOrigin + performance.now();
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path.endsWith("/models")) return json(200, modelList(modelIds.size ? [...modelIds] : ["fake-1"]));
    const raw = await req.arrayBuffer();
    let body: any = null;
    if (raw.byteLength > 0) {
      try {
        body = JSON.parse(decoder.decode(raw));
      } catch {}
    }
    const protocol = protocolOf(req.method, path);
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const rec: RecordedRequest = { method: req.method, path, protocol, headers, body, bodyBytes: raw.byteLength, receivedAt };
    requests.push(rec);
    if (typeof body?.model === "string") modelIds.add(body.model);
    for (const waiter of waiters) if (requests.length >= waiter.count) waiter.done();

    if (protocol === "other") return errorResponse(protocol, 404, `fake provider: no route for ${req.method} ${path}`);
    const streaming = protocol === "gateway" ? headers["ai-language-model-streaming"] === "true" : body?.stream === true;
    if (!streaming) return errorResponse(protocol, 400, "fake provider: streaming is required (send stream: true)");
    if (strict) {
      const problem = echoProblem(protocol, body, ledger);
      if (problem) {
        rec.rejected = problem.message;
        const override = { type: problem.type ?? "invalid_request_error", ...(problem.code !== undefined ? { code: problem.code } : {}), ...(problem.param !== undefined ? { param: problem.param } : {}) };
        return errorResponse(protocol, problem.status, problem.message, undefined, override);
      }
    }
    const source = queue.length > 0 ? queue.shift() : options.fallback;
    if (source === undefined) return errorResponse(protocol, 500, "fake provider: script exhausted", { "retry-after-ms": "0" });
    let turn: FakeTurn;
    try {
      turn = typeof source === "function" ? source(rec) : source;
    } catch (error) {
      return errorResponse(protocol, 500, `fake provider: turn function threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (turn.kind === "error") {
      const override = { ...(turn.type !== undefined ? { type: turn.type } : {}), ...(turn.code !== undefined ? { code: turn.code } : {}) };
      return errorResponse(protocol, turn.status, turn.message ?? `fake provider: HTTP ${turn.status}`, turn.headers, override);
    }
    if (turn.kind === "stall") return stall(req);
    const response = reply(protocol, turn, rec);
    rec.answeredAt = performance.timeOrigin + performance.now();
    return response;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0, // stalls may outlast Bun's 10 s default
    fetch: handle,
    error: (error) => json(500, errorBody("other", 500, `fake provider: ${error.message}`)),
  });
  const port = server.port ?? 0;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    get strict() {
      return strict;
    },
    set strict(on: boolean) {
      strict = on;
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
      ledger.length = 0;
      strict = options.strict ?? false;
    },
    script(turns) {
      queue.push(...turns);
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          count,
          done: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`fake provider: waited ${timeoutMs} ms for ${count} request(s), saw ${requests.length}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const stopping = server.stop(true);
      for (const release of [...releases]) release();
      await stopping;
    },
  };
}
