import { APICallError } from "ai";
import type { ProviderErrorCategory } from "../protocol/events.ts";

/** A provider failure as data: what the loop reports instead of throwing. */
export type ProviderFailure = {
  category: ProviderErrorCategory;
  message: string;
  statusCode: number | null;
  retryAfterMs: number | null;
  retryable: boolean;
  /** The endpoint that failed, when known (never carries credentials: zero sends keys in headers). */
  url: string | null;
};

const CONTEXT_OVERFLOW = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|max_tokens.*exceed/i;

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

/** The provider's own error text from a JSON body, when it has one; short and single-line. */
function providerDetail(error: APICallError): string {
  const body = error.responseBody;
  let detail = error.message;
  if (body) {
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
      const candidate =
        typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
      if (typeof candidate === "string" && candidate.trim() !== "") detail = candidate;
    } catch {
      // Not JSON: keep the SDK's message.
    }
  }
  return detail.replace(/\s+/g, " ").trim().slice(0, 300);
}

function fromApiCallError(error: APICallError): ProviderFailure {
  const status = error.statusCode ?? null;
  const detail = providerDetail(error);
  const base = { statusCode: status, retryAfterMs: retryAfter(error.responseHeaders), message: detail, url: error.url ?? null };
  if (status === 401 || status === 403) {
    return { ...base, category: "auth", retryable: false, message: `authentication failed (HTTP ${status}): ${detail}` };
  }
  if (status === 429) {
    const wait = base.retryAfterMs === null || base.retryAfterMs < 1000 ? "" : ` (retry after ${Math.ceil(base.retryAfterMs / 1000)}s)`;
    return { ...base, category: "rate_limit", retryable: true, message: `rate limited (HTTP 429)${wait}: ${detail}` };
  }
  if (status !== null && status >= 500) {
    return { ...base, category: "unavailable", retryable: true, message: `provider unavailable (HTTP ${status}): ${detail}` };
  }
  if (status === null) {
    const cause = error.cause instanceof Error ? error.cause.message : detail;
    const where = error.url ? ` at ${error.url}` : "";
    return { ...base, category: "unavailable", retryable: true, message: `provider unreachable${where}: ${oneLine(cause)}` };
  }
  if ((status === 400 || status === 413) && CONTEXT_OVERFLOW.test(detail)) {
    return { ...base, category: "context_overflow", retryable: false, message: `context window exceeded (HTTP ${status}): ${detail}` };
  }
  return { ...base, category: "invalid_request", retryable: false, message: `request rejected (HTTP ${status}): ${detail}` };
}

const NETWORK = /ECONNREFUSED|ECONNRESET|ConnectionRefused|ConnectionClosed|socket|network|terminated|fetch failed|Unable to connect/i;

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 300);
}

/** Classifies anything the AI SDK threw or streamed as an error part. */
export function classifyProviderError(error: unknown): ProviderFailure {
  if (APICallError.isInstance(error)) return fromApiCallError(error);
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  const text = oneLine(`${message}${cause}`);
  if (NETWORK.test(text)) {
    return { category: "unavailable", message: `provider connection failed: ${text}`, statusCode: null, retryAfterMs: null, retryable: true, url: null };
  }
  return { category: "bad_response", message: `invalid provider response: ${text}`, statusCode: null, retryAfterMs: null, retryable: false, url: null };
}
