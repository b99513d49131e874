import { APICallError, RetryError, StreamProviderError } from "ai";
import type { ProviderErrorCategory } from "../protocol/events.ts";

/** A provider failure as data: what the loop reports instead of throwing. */
export type ProviderFailure = {
  category: ProviderErrorCategory;
  message: string;
  statusCode: number | null;
  retryAfterMs: number | null;
  retryable: boolean;
  /** The endpoint that failed, when known: origin and path only (no credentials, no query). */
  url: string | null;
};

/**
 * What is known about the request that failed, so a message says which model,
 * which endpoint and which key variable were involved. Never a secret.
 */
export type FailureContext = {
  /** The model alias the run uses. */
  alias?: string;
  /** host[:port] of the configured endpoint; the failing request's own URL wins when the error carries one. */
  host?: string;
  /** The environment variable the API key was read from (named on 401/403 and quota errors). */
  keyEnv?: string;
};

const CONTEXT_OVERFLOW = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|max_tokens.*exceed/i;
/** Not transient: retrying a spent quota or a billing problem only burns time. */
const QUOTA = /insufficient[_ ]quota|exceeded your (current )?quota|billing|credit balance|payment required/i;
const OVERLOADED = /overloaded/i;
/** A connection that never got an HTTP answer: refused, reset, DNS failure, no route, timeout. */
const NETWORK =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL|getaddrinfo|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENETDOWN|EPIPE|ConnectionRefused|ConnectionClosed|FailedToOpenSocket|UND_ERR_|socket|network|terminated|fetch failed|Unable to connect|Cannot connect to API|Gateway request failed/i;

function oneLine(text: string, max = 300): string {
  return text.replace(/\s+/g, " ").trim().slice(0, max);
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

function retryAfter(headers: Record<string, string> | undefined): number | null {
  const ms = headerValue(headers, "retry-after-ms");
  if (ms !== undefined && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const seconds = headerValue(headers, "retry-after");
  if (seconds === undefined) return null;
  if (Number.isFinite(Number(seconds))) return Math.max(0, Number(seconds) * 1000);
  const date = Date.parse(seconds);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** A URL without credentials or query: origin and path. */
function safeUrl(url: string | undefined | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return null;
  }
}

function hostOf(url: string | undefined | null): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** " for model 'fast' at api.openai.com": what a user needs to find the failing configuration. */
function where(context: FailureContext, url?: string | null): string {
  const host = hostOf(url) ?? context.host;
  return `${context.alias ? ` for model '${context.alias}'` : ""}${host ? ` at ${host}` : ""}`;
}

/** The provider's own error text and its type/code from a JSON body, when it has one. */
function bodyFacts(body: string | undefined, fallback: string): { detail: string; kind: string } {
  let detail = fallback;
  const kinds: string[] = [];
  if (body) {
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown; type?: unknown; code?: unknown } | string; message?: unknown; type?: unknown; code?: unknown };
      const inner = typeof parsed.error === "object" && parsed.error !== null ? parsed.error : undefined;
      const candidate = typeof parsed.error === "string" ? parsed.error : (inner?.message ?? parsed.message);
      if (typeof candidate === "string" && candidate.trim() !== "") detail = candidate;
      for (const value of [inner?.type, inner?.code, parsed.type, parsed.code]) if (typeof value === "string") kinds.push(value);
    } catch {
      // Not JSON: keep the SDK's message.
    }
  }
  return { detail: oneLine(detail), kind: kinds.join(" ") };
}

/** An HTTP-level failure (a status, maybe a provider error type or code), classified. */
type HttpFacts = {
  status: number | null;
  detail: string;
  /** The provider's error type and code, space-separated ("insufficient_quota", "overloaded_error"). */
  kind: string;
  retryAfterMs: number | null;
  url: string | null;
  /** Reported inside an already streaming response (an SSE error event), not as an HTTP status. */
  inStream: boolean;
};

function fromHttp(facts: HttpFacts, context: FailureContext): ProviderFailure {
  const { status, detail, kind } = facts;
  const at = where(context, facts.url);
  const key = context.keyEnv ? `, key from ${context.keyEnv}` : "";
  const label = facts.inStream ? `${kind ? `${kind.split(" ")[0]} ` : ""}in the stream${status !== null ? `, status ${status}` : ""}` : `HTTP ${status}`;
  const base = { statusCode: status, retryAfterMs: facts.retryAfterMs, url: safeUrl(facts.url) };
  const fail = (category: ProviderErrorCategory, retryable: boolean, message: string): ProviderFailure => ({ ...base, category, retryable, message });
  if (status === 401 || status === 403 || /authentication|permission_error|invalid_api_key/i.test(kind)) {
    return fail("auth", false, `authentication failed${at} (${label}${key}): ${detail}`);
  }
  if (status === 402 || QUOTA.test(kind) || ((status === 429 || status === 400 || status === 403) && QUOTA.test(detail))) {
    return fail("quota", false, `quota or billing limit reached${at} (${label}${key}): ${detail} (check the account's plan and billing; not retried)`);
  }
  if (status === 429 || /rate_limit/i.test(kind)) {
    const wait = base.retryAfterMs === null || base.retryAfterMs < 1000 ? "" : `, retry after ${Math.ceil(base.retryAfterMs / 1000)}s`;
    return fail("rate_limit", true, `rate limited${at} (${label}${wait}): ${detail}`);
  }
  const serverSide = status === null || status >= 500;
  if (OVERLOADED.test(kind) || (serverSide && (status !== null || OVERLOADED.test(detail) || /api_error|server_error/i.test(kind)))) {
    return fail("unavailable", true, `provider unavailable${at} (${label}): ${detail}`);
  }
  if (status === null || status < 400) {
    return fail("bad_response", false, `invalid provider response${at} (${label}): ${detail}`);
  }
  if ((status === 400 || status === 413) && (CONTEXT_OVERFLOW.test(detail) || /context_length|request_too_large/i.test(kind))) {
    return fail("context_overflow", false, `context window exceeded${at} (${label}): ${detail}`);
  }
  return fail("invalid_request", false, `request rejected${at} (${label}): ${detail}`);
}

/** The messages and codes along an error's cause chain (a few levels), for network detection. */
function causeChain(error: unknown): { texts: string[]; statusless: boolean; httpStatus: number | undefined } {
  const texts: string[] = [];
  let statusless = false;
  let httpStatus: number | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (typeof current === "object") {
      const record = current as { message?: unknown; code?: unknown; cause?: unknown };
      if (typeof record.message === "string") texts.push(record.message);
      if (typeof record.code === "string") texts.push(record.code);
      if (APICallError.isInstance(current)) {
        if (current.statusCode === undefined || current.statusCode === null) statusless = true;
        else httpStatus ??= current.statusCode;
      }
      current = record.cause;
    } else {
      texts.push(String(current));
      break;
    }
  }
  return { texts, statusless, httpStatus };
}

function unreachable(text: string, context: FailureContext, url: string | null): ProviderFailure {
  return { category: "unavailable", message: `provider unreachable${where(context, url)}: ${oneLine(text)}`, statusCode: null, retryAfterMs: null, retryable: true, url: safeUrl(url) };
}

function fromApiCallError(error: APICallError, context: FailureContext): ProviderFailure {
  const status = error.statusCode ?? null;
  const url = error.url ?? null;
  if (status === null) {
    const cause = error.cause instanceof Error ? error.cause.message : error.message;
    return unreachable(cause, context, url);
  }
  if (status < 400) {
    // A response that started fine and then broke (a dropped connection mid-stream).
    const chain = causeChain(error);
    const text = oneLine(`${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}`);
    if (error.isRetryable || NETWORK.test(chain.texts.join(" "))) {
      return { category: "unavailable", message: `provider connection failed${where(context, url)}: ${text}`, statusCode: null, retryAfterMs: null, retryable: true, url: safeUrl(url) };
    }
    return { category: "bad_response", message: `invalid provider response${where(context, url)}: ${text}`, statusCode: null, retryAfterMs: null, retryable: false, url: safeUrl(url) };
  }
  const { detail, kind } = bodyFacts(error.responseBody, error.message);
  return fromHttp({ status, detail, kind, retryAfterMs: retryAfter(error.responseHeaders), url, inStream: false }, context);
}

/** An error object with provider metadata (the SDK's StreamProviderError, a GatewayError, a raw stream error payload). */
type ProviderShaped = { message: string; statusCode?: unknown; type?: unknown; code?: unknown; name?: unknown };

function isProviderShaped(error: unknown): error is ProviderShaped {
  if (typeof error !== "object" || error === null) return false;
  const record = error as ProviderShaped;
  return typeof record.message === "string" && (typeof record.statusCode === "number" || typeof record.type === "string" || typeof record.code === "string");
}

/**
 * Classifies anything the AI SDK threw or streamed as an error part. `context`
 * names the model, endpoint host and key variable in the message.
 */
export function classifyProviderError(error: unknown, context: FailureContext = {}): ProviderFailure {
  if (RetryError.isInstance(error) && error.lastError !== undefined) return classifyProviderError(error.lastError, context);
  if (APICallError.isInstance(error)) return fromApiCallError(error, context);
  const chain = causeChain(error);
  const chainText = chain.texts.join(" ");
  const hasStatus = typeof (error as { statusCode?: unknown } | null)?.statusCode === "number";
  // A connection that never got an answer, however it is wrapped (a DNS failure arrives as a bare
  // TypeError; the AI Gateway reports one as "Gateway request failed" with a made-up 500):
  // unreachable, retried like a refused connection.
  const network = chain.statusless || (NETWORK.test(chainText) && (!hasStatus || /Gateway request failed/i.test(chainText)));
  if (network && chain.httpStatus === undefined) {
    // The innermost message says what happened ("getaddrinfo ENOTFOUND host"); a bare code does not.
    const root = chain.texts.filter((text) => !/^E[A-Z_]+$/.test(text)).at(-1) ?? chain.texts[0] ?? String(error);
    const gateway = /Gateway request failed/i.test(chainText) && !/Gateway request failed/i.test(root) ? "Gateway request failed: " : "";
    return unreachable(`${gateway}${root}`, context, null);
  }
  if (isProviderShaped(error)) {
    const status = typeof error.statusCode === "number" ? error.statusCode : null;
    const kind = [error.type, error.code].filter((value) => typeof value === "string").join(" ");
    const streamError = StreamProviderError.isInstance(error) || !(error instanceof Error);
    return fromHttp({ status, detail: oneLine(error.message), kind, retryAfterMs: null, url: null, inStream: streamError }, context);
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  const text = oneLine(`${message}${cause}`);
  return { category: "bad_response", message: `invalid provider response${where(context)}: ${text}`, statusCode: null, retryAfterMs: null, retryable: false, url: null };
}

/** A refusal (Anthropic stop_reason "refusal", a content filter) as a failure: the provider's explanation, when it sent one. */
export function refusalFailure(explanation: string | null, rawReason: string | undefined, context: FailureContext = {}): ProviderFailure {
  const model = context.alias ? `model '${context.alias}'` : "the model";
  const reason = rawReason ? ` (${rawReason})` : "";
  const text = explanation && explanation.trim() !== "" ? oneLine(explanation, 1000) : "no explanation given";
  return { category: "refusal", message: `${model} refused the request${reason}: ${text}`, statusCode: null, retryAfterMs: null, retryable: false, url: null };
}
