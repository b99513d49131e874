// Wire encoders for the fake model provider (see fake-provider.ts): turn one
// scripted reply into the SSE events of the OpenAI Responses API, OpenAI Chat
// Completions, Anthropic Messages and the Vercel AI Gateway (which streams the
// SDK's own LanguageModelV4 stream parts), plus each protocol's error JSON.
//
// Every event carries the fields the AI SDK's zod chunk schemas require
// (@ai-sdk/openai openaiResponsesChunkSchema / openaiChatChunkSchema,
// @ai-sdk/openai-compatible chunkBaseSchema, @ai-sdk/anthropic
// anthropicChunkSchema), plus the usual extra fields of the real APIs.
import type { FakeUsage } from "./fake-provider.ts";

export type Protocol = "responses" | "chat" | "anthropic" | "gateway" | "other";

/** One write on the wire: one or more SSE events. `content` marks a delta. */
export type Chunk = { text: string; content: boolean };

export type Plan = {
  model: string;
  n: number; // per-server sequence number, used in response/item ids
  created: number; // unix seconds
  reasoning: string[];
  text: string[];
  /** A separate text block before `text` (Responses: a "commentary" message item). */
  commentary: string[];
  /** The model refuses with this explanation (see FakeReply.refusal). */
  refusal?: string;
  /** Anthropic/gateway: an opaque redacted_thinking block with this `data` (see FakeReply.redactedThinking). */
  redactedThinking?: string;
  /** Responses: reasoning items carry `encrypted_content` (asked for with include, or forced by the turn). */
  encryptedReasoning: boolean;
  /** Gateway: whose provider metadata the stream parts carry (the model id's prefix: "anthropic/…", "openai/…"). */
  family?: "anthropic" | "openai";
  calls: Array<{ id: string; name: string; args: string; pieces: string[]; thoughtSignature?: string }>;
  usage: FakeUsage;
  includeUsage: boolean; // chat: body.stream_options.include_usage
};

// ---- The provider data a reply hands out, which must come back exactly on later requests ----

/** Anthropic: the signature of reply n's thinking block (sent as a signature_delta). */
export const signatureOf = (n: number) => `fake-signature-${n}`;
/** Responses: reply n's reasoning item id. */
export const reasoningItemIdOf = (n: number) => `rs_${n}`;
/** Responses: reply n's output message item id (the commentary message has its own). */
export const messageItemIdOf = (n: number, commentary = false) => (commentary ? `msg_${n}_commentary` : `msg_${n}`);
/** Responses: the item id of reply n's i-th function_call (its call_id is the call's own id). */
export const functionItemIdOf = (n: number, i: number) => `fc_${n}_${i}`;
/** Responses: reply n's opaque `encrypted_content` (Fernet-looking, like the real one). */
export const encryptedContentOf = (n: number) => `gAAAAAB${btoa(`fake-encrypted-reasoning-${n}`)}`;

/**
 * The gateway's provider metadata for reply n (what an upstream Anthropic or OpenAI adapter
 * attaches to its stream parts, passed through as is): reasoning (signature, or item id and
 * encrypted content), redacted thinking, and each tool call (OpenAI: its function_call item id).
 */
export function gatewayMetadata(p: Pick<Plan, "n" | "family">) {
  const family = p.family;
  return {
    reasoning:
      family === "anthropic"
        ? { anthropic: { signature: signatureOf(p.n) } }
        : family === "openai"
          ? { openai: { itemId: reasoningItemIdOf(p.n), reasoningEncryptedContent: encryptedContentOf(p.n) } }
          : undefined,
    redacted: (data: string) => ({ anthropic: { redactedData: data } }),
    call: (i: number) => (family === "openai" ? { openai: { itemId: functionItemIdOf(p.n, i) } } : undefined),
  };
}

/** A string becomes 3 roughly equal chunks (by code point); an array is kept as is. */
export function split(value: string | string[] | undefined): string[] {
  if (value == null) return [];
  if (Array.isArray(value)) return value;
  const points = Array.from(value);
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const piece = points.slice(Math.round((i * points.length) / 3), Math.round(((i + 1) * points.length) / 3)).join("");
    if (piece) out.push(piece);
  }
  return out;
}

/**
 * Collects SSE events. Structural events (`ev`) are glued to the next delta
 * (`delta`), so a content chunk is "everything up to and including one delta";
 * `cut()` flushes pending structural events as a chunk of their own.
 */
class Sse {
  readonly chunks: Chunk[] = [];
  private pending = "";
  constructor(private readonly named: boolean) {}
  private fmt(event: Record<string, unknown>): string {
    return (this.named ? `event: ${event.type}\n` : "") + `data: ${JSON.stringify(event)}\n\n`;
  }
  ev(event: Record<string, unknown>): void {
    this.pending += this.fmt(event);
  }
  raw(text: string): void {
    this.pending += text;
  }
  delta(event: Record<string, unknown>): void {
    this.chunks.push({ text: this.pending + this.fmt(event), content: true });
    this.pending = "";
  }
  cut(): Chunk[] {
    if (this.pending) this.chunks.push({ text: this.pending, content: false });
    this.pending = "";
    return this.chunks;
  }
}

export function encodeReply(protocol: Protocol, plan: Plan): Chunk[] {
  if (protocol === "anthropic") return anthropic(plan);
  if (protocol === "gateway") return gateway(plan);
  if (protocol === "chat") return chat(plan);
  return responses(plan);
}

/** AI Gateway: `data:` lines of LanguageModelV4 stream parts (the model id travels in a header). */
function gateway(p: Plan): Chunk[] {
  const b = new Sse(false);
  b.ev({ type: "stream-start", warnings: [] });
  b.ev({ type: "response-metadata", id: `gw_${p.n}`, modelId: p.model, timestamp: new Date(p.created * 1000).toISOString() });
  const meta = gatewayMetadata(p);
  const withMeta = (providerMetadata: unknown) => (providerMetadata ? { providerMetadata } : {});
  if (p.reasoning.length > 0) {
    // OpenAI's adapter puts the item id (and encrypted content) on the start and the end;
    // Anthropic's sends the signature as an empty reasoning delta before the block ends.
    const openaiMeta = p.family === "openai" ? withMeta(meta.reasoning) : {};
    b.ev({ type: "reasoning-start", id: "r0", ...openaiMeta });
    for (const delta of p.reasoning) b.delta({ type: "reasoning-delta", id: "r0", delta });
    if (p.family === "anthropic") b.ev({ type: "reasoning-delta", id: "r0", delta: "", providerMetadata: meta.reasoning });
    b.ev({ type: "reasoning-end", id: "r0", ...openaiMeta });
  }
  if (p.redactedThinking !== undefined) {
    b.ev({ type: "reasoning-start", id: "r1", providerMetadata: meta.redacted(p.redactedThinking) });
    b.ev({ type: "reasoning-end", id: "r1" });
  }
  const refusal = split(p.refusal);
  const blocks: Array<[id: string, deltas: string[]]> = [["tc", p.commentary], ["t0", [...p.text, ...refusal]]];
  for (const [id, deltas] of blocks) {
    if (deltas.length === 0) continue;
    b.ev({ type: "text-start", id });
    for (const delta of deltas) b.delta({ type: "text-delta", id, delta });
    b.ev({ type: "text-end", id });
  }
  p.calls.forEach((call, i) => {
    b.ev({ type: "tool-input-start", id: call.id, toolName: call.name });
    for (const delta of call.pieces) b.delta({ type: "tool-input-delta", id: call.id, delta });
    b.ev({ type: "tool-input-end", id: call.id });
    b.ev({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args, ...withMeta(meta.call(i)) });
  });
  const cached = p.usage.cached ?? 0;
  const reasoning = p.usage.reasoning ?? 0;
  b.ev({
    type: "finish",
    finishReason:
      p.refusal !== undefined
        ? { unified: "content-filter", raw: "refusal" }
        : { unified: p.calls.length > 0 ? "tool-calls" : "stop", raw: p.calls.length > 0 ? "tool_calls" : "stop" },
    usage: {
      inputTokens: { total: p.usage.input, noCache: p.usage.input - cached, cacheRead: cached, cacheWrite: 0 },
      outputTokens: { total: p.usage.output, text: p.usage.output - reasoning, reasoning },
    },
  });
  return b.cut();
}

function responses(p: Plan): Chunk[] {
  const b = new Sse(true);
  let seq = 0;
  const ev = (e: Record<string, unknown>) => b.ev({ type: e.type, sequence_number: seq++, ...e });
  const delta = (e: Record<string, unknown>) => b.delta({ type: e.type, sequence_number: seq++, ...e });
  const base = { id: `resp_${p.n}`, object: "response", created_at: p.created, model: p.model, status: "in_progress", output: [] as unknown[], usage: null };
  ev({ type: "response.created", response: base });
  ev({ type: "response.in_progress", response: base });
  b.cut();
  const output: unknown[] = [];
  const item = (output_index: number, added: Record<string, unknown>, done: Record<string, unknown>, body: () => void) => {
    ev({ type: "response.output_item.added", output_index, item: added });
    body();
    ev({ type: "response.output_item.done", output_index, item: done });
    output.push(done);
  };
  if (p.reasoning.length) {
    const id = reasoningItemIdOf(p.n), at = { item_id: id, output_index: output.length, summary_index: 0 };
    const text = p.reasoning.join("");
    const encrypted = p.encryptedReasoning ? { encrypted_content: encryptedContentOf(p.n) } : {};
    const added = { id, type: "reasoning", summary: [], ...encrypted };
    item(at.output_index, added, { id, type: "reasoning", summary: [{ type: "summary_text", text }], ...encrypted }, () => {
      ev({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } });
      for (const d of p.reasoning) delta({ type: "response.reasoning_summary_text.delta", ...at, delta: d });
      ev({ type: "response.reasoning_summary_text.done", ...at, text });
      ev({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text } });
    });
  }
  // Each text block is its own output message item (commentary first, like a real Responses stream).
  const message = (id: string, deltas: string[], phase: "commentary" | "final_answer" | undefined) => {
    const at = { item_id: id, output_index: output.length, content_index: 0 };
    const text = deltas.join("");
    const msg = { id, type: "message", role: "assistant", ...(phase ? { phase } : {}) };
    const part = (t: string) => ({ type: "output_text", text: t, annotations: [], logprobs: [] });
    item(at.output_index, { ...msg, status: "in_progress", content: [] }, { ...msg, status: "completed", content: [part(text)] }, () => {
      ev({ type: "response.content_part.added", ...at, part: part("") });
      for (const d of deltas) delta({ type: "response.output_text.delta", ...at, delta: d, logprobs: [] });
      ev({ type: "response.output_text.done", ...at, text, logprobs: [] });
      ev({ type: "response.content_part.done", ...at, part: part(text) });
    });
  };
  if (p.commentary.length) message(messageItemIdOf(p.n, true), p.commentary, "commentary");
  if (p.text.length) message(messageItemIdOf(p.n), p.text, p.commentary.length ? "final_answer" : undefined);
  if (p.refusal !== undefined) {
    // A refusal is a message whose content part has type "refusal" (streamed as refusal deltas).
    const id = `msg_${p.n}_refusal`, at = { item_id: id, output_index: output.length, content_index: 0 };
    const msg = { id, type: "message", role: "assistant" };
    const part = (t: string) => ({ type: "refusal", refusal: t });
    item(at.output_index, { ...msg, status: "in_progress", content: [] }, { ...msg, status: "completed", content: [part(p.refusal)] }, () => {
      ev({ type: "response.content_part.added", ...at, part: part("") });
      for (const d of split(p.refusal)) delta({ type: "response.refusal.delta", ...at, delta: d });
      ev({ type: "response.refusal.done", ...at, refusal: p.refusal! });
      ev({ type: "response.content_part.done", ...at, part: part(p.refusal!) });
    });
  }
  p.calls.forEach((call, i) => {
    const id = functionItemIdOf(p.n, i), at = { item_id: id, output_index: output.length };
    const fc = { id, type: "function_call", call_id: call.id, name: call.name };
    item(at.output_index, { ...fc, arguments: "", status: "in_progress" }, { ...fc, arguments: call.args, status: "completed" }, () => {
      for (const d of call.pieces) delta({ type: "response.function_call_arguments.delta", ...at, delta: d });
      ev({ type: "response.function_call_arguments.done", ...at, arguments: call.args });
    });
  });
  const u = p.usage;
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: u.input + u.output,
  };
  ev({ type: "response.completed", response: { ...base, status: "completed", output, usage } });
  return b.cut();
}

function chat(p: Plan): Chunk[] {
  const b = new Sse(false);
  const base = { id: `chatcmpl-${p.n}`, object: "chat.completion.chunk", created: p.created, model: p.model, system_fingerprint: "fp_fake" };
  const c = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  b.ev(c({ role: "assistant", content: p.text.length ? "" : null }));
  b.cut();
  for (const d of p.reasoning) b.delta(c({ reasoning_content: d }));
  // Chat has one text stream: commentary is just more content before the text.
  for (const d of [...p.commentary, ...p.text]) b.delta(c({ content: d }));
  for (const d of split(p.refusal)) b.delta(c({ refusal: d }));
  p.calls.forEach((call, index) => {
    // Gemini's OpenAI-compatible endpoint attaches a thought signature to the call's first delta.
    const extra = call.thoughtSignature !== undefined ? { extra_content: { google: { thought_signature: call.thoughtSignature } } } : {};
    b.ev(c({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" }, ...extra }] }));
    for (const d of call.pieces) b.delta(c({ tool_calls: [{ index, function: { arguments: d } }] }));
  });
  b.ev(c({}, p.refusal !== undefined ? "content_filter" : p.calls.length ? "tool_calls" : "stop"));
  if (p.includeUsage) {
    const u = p.usage;
    b.ev({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: u.input,
        completion_tokens: u.output,
        total_tokens: u.input + u.output,
        prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
        completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
      },
    });
  }
  b.raw("data: [DONE]\n\n");
  return b.cut();
}

function anthropic(p: Plan): Chunk[] {
  const b = new Sse(true);
  const cached = p.usage.cached ?? 0;
  // Anthropic's input_tokens excludes cache reads; the SDK adds them back.
  const input = { input_tokens: Math.max(0, p.usage.input - cached), cache_creation_input_tokens: 0, cache_read_input_tokens: cached };
  const message = { id: `msg_${p.n}`, type: "message", role: "assistant", model: p.model, content: [], stop_reason: null, stop_sequence: null };
  b.ev({ type: "message_start", message: { ...message, usage: { ...input, output_tokens: 1 } } });
  b.ev({ type: "ping" });
  b.cut();
  let index = 0;
  const block = (content_block: Record<string, unknown>, deltas: Array<Record<string, unknown>>, after?: Record<string, unknown>) => {
    b.ev({ type: "content_block_start", index, content_block });
    for (const delta of deltas) b.delta({ type: "content_block_delta", index, delta });
    if (after) b.ev({ type: "content_block_delta", index, delta: after });
    b.ev({ type: "content_block_stop", index: index++ });
  };
  if (p.reasoning.length) {
    const deltas = p.reasoning.map((thinking) => ({ type: "thinking_delta", thinking }));
    block({ type: "thinking", thinking: "", signature: "" }, deltas, { type: "signature_delta", signature: signatureOf(p.n) });
  }
  // A redacted_thinking block arrives whole in its content_block_start: opaque data, no deltas.
  if (p.redactedThinking !== undefined) block({ type: "redacted_thinking", data: p.redactedThinking }, []);
  for (const deltas of [p.commentary, p.text]) if (deltas.length) block({ type: "text", text: "" }, deltas.map((text) => ({ type: "text_delta", text })));
  for (const call of p.calls) {
    const deltas = call.pieces.map((partial_json) => ({ type: "input_json_delta", partial_json }));
    block({ type: "tool_use", id: call.id, name: call.name, input: {} }, deltas);
  }
  const usage: Record<string, unknown> = { ...input, output_tokens: p.usage.output };
  if (p.usage.reasoning != null) usage.output_tokens_details = { thinking_tokens: p.usage.reasoning };
  // A refusal sends no text of its own: its explanation rides in stop_details.
  const stop = p.refusal !== undefined
    ? { stop_reason: "refusal", stop_sequence: null, stop_details: { type: "refusal", category: "cyber", explanation: p.refusal } }
    : { stop_reason: p.calls.length ? "tool_use" : "end_turn", stop_sequence: null };
  b.ev({ type: "message_delta", delta: stop, usage });
  b.ev({ type: "message_stop" });
  return b.cut();
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};
const OPENAI_ERRORS: Record<number, [type: string, code: string | null]> = {
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["permission_error", "unsupported_country_region_territory"],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
};

/**
 * Error JSON in the protocol's real shape ("other" uses the OpenAI shape). `override` replaces the
 * error's type and code (e.g. OpenAI's `insufficient_quota` 429; Anthropic has no code).
 */
export function errorBody(protocol: Protocol, status: number, message: string, override: { type?: string; code?: string | null; param?: string | null } = {}): unknown {
  if (protocol === "anthropic") {
    const type = override.type ?? ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message }, request_id: "req_fake" };
  }
  const [type, code] = OPENAI_ERRORS[status] ?? (status >= 500 ? ["server_error", null] : ["invalid_request_error", null]);
  return { error: { message, type: override.type ?? type, param: override.param ?? null, code: override.code !== undefined ? override.code : code } };
}

/** An error reported inside a stream that already started (the HTTP status was 200). */
export type StreamErrorSpec = { type?: string; message?: string; code?: string | null };

/**
 * The protocol's in-stream error event: Anthropic `event: error` (default `overloaded_error`),
 * Responses `error`, Chat `{"error": …}`, the gateway's `error` stream part.
 */
export function streamErrorEvent(protocol: Protocol, spec: StreamErrorSpec): string {
  const type = spec.type ?? (protocol === "anthropic" ? "overloaded_error" : "server_error");
  const message = spec.message ?? (type === "overloaded_error" ? "Overloaded" : "fake provider: stream error");
  if (protocol === "anthropic") return `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`;
  if (protocol === "responses") {
    const event = { type: "error", sequence_number: 10_000, error: { type, code: spec.code ?? null, message, param: null } };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
  if (protocol === "gateway") return `data: ${JSON.stringify({ type: "error", error: { type, message } })}\n\n`;
  return `data: ${JSON.stringify({ error: { message, type, param: null, code: spec.code ?? null } })}\n\n`;
}

/** GET /v1/models: OpenAI list shape, with Anthropic's fields mixed in. */
export function modelList(ids: string[]): unknown {
  const data = ids.map((id) => ({ id, object: "model", created: 0, owned_by: "fake", type: "model", display_name: id, created_at: "1970-01-01T00:00:00Z" }));
  return { object: "list", data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
}
