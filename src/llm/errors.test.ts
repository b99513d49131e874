import { describe, expect, test } from "bun:test";
import { GatewayInternalServerError, GatewayResponseError } from "@ai-sdk/gateway";
import { APICallError, RetryError, StreamProviderError } from "ai";
import { classifyProviderError, refusalFailure, type FailureContext } from "./errors.ts";

const context: FailureContext = { alias: "fast", host: "api.openai.com", keyEnv: "OPENAI_API_KEY" };

function httpError(status: number, body: unknown, options: { headers?: Record<string, string>; url?: string } = {}): APICallError {
  const responseBody = typeof body === "string" ? body : JSON.stringify(body);
  return new APICallError({
    message: "provider said no",
    url: options.url ?? "https://api.openai.com/v1/responses",
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: options.headers ?? {},
    responseBody,
    isRetryable: status === 429 || status >= 500,
  });
}

/** What Bun's fetch throws for a name that does not resolve (the SDK passes it on unwrapped). */
function dnsFailure(host = "api.openai.com"): TypeError {
  return Object.assign(new TypeError(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND", errno: 4, syscall: "getaddrinfo", hostname: host });
}

describe("HTTP failures name the model, the host and (for auth) the key variable", () => {
  test("401 is auth, not retried, with the key variable", () => {
    const failure = classifyProviderError(httpError(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }), context);
    expect(failure).toMatchObject({ category: "auth", retryable: false, statusCode: 401 });
    expect(failure.message).toBe("authentication failed for model 'fast' at api.openai.com (HTTP 401, key from OPENAI_API_KEY): Incorrect API key provided");
  });

  test("403 is auth too; without a key variable the message does not invent one", () => {
    const failure = classifyProviderError(httpError(403, { error: { message: "forbidden" } }), { alias: "local" });
    expect(failure.category).toBe("auth");
    expect(failure.message).toBe("authentication failed for model 'local' at api.openai.com (HTTP 403): forbidden");
  });

  test("the host comes from the failing request's URL, never the whole URL (no path, query or credentials)", () => {
    const url = "https://user:secret@proxy.example.com:8443/v1/responses?api-key=abc";
    const failure = classifyProviderError(httpError(500, { error: { message: "boom" } }, { url }), { alias: "fast", host: "configured.example.com" });
    expect(failure.message).toBe("provider unavailable for model 'fast' at proxy.example.com:8443 (HTTP 500): boom");
    expect(failure.message).not.toContain("secret");
    expect(failure.message).not.toContain("api-key");
    expect(failure.url).toBe("https://proxy.example.com:8443/v1/responses");
  });

  test("a 429 rate limit is retryable and keeps retry-after", () => {
    const failure = classifyProviderError(httpError(429, { error: { message: "slow down", type: "requests", code: "rate_limit_exceeded" } }, { headers: { "retry-after": "3" } }), context);
    expect(failure).toMatchObject({ category: "rate_limit", retryable: true, retryAfterMs: 3000 });
    expect(failure.message).toBe("rate limited for model 'fast' at api.openai.com (HTTP 429, retry after 3s): slow down");
  });

  test("a 429 for a spent quota is not retried and says so", () => {
    const body = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } };
    const failure = classifyProviderError(httpError(429, body), context);
    expect(failure).toMatchObject({ category: "quota", retryable: false, statusCode: 429 });
    expect(failure.message).toContain("quota or billing limit reached for model 'fast' at api.openai.com (HTTP 429, key from OPENAI_API_KEY)");
    expect(failure.message).toContain("billing");
  });

  test("quota by message alone (a provider without the code), and Anthropic's credit balance 400", () => {
    expect(classifyProviderError(httpError(429, { error: { message: "You exceeded your current quota" } }), context).category).toBe("quota");
    const anthropic = { type: "error", error: { type: "invalid_request_error", message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing." } };
    expect(classifyProviderError(httpError(400, anthropic), context)).toMatchObject({ category: "quota", retryable: false });
    expect(classifyProviderError(httpError(402, { error: { message: "payment required" } }), context).category).toBe("quota");
  });

  test("5xx is unavailable; context overflow and other 4xx are not retried", () => {
    expect(classifyProviderError(httpError(503, { error: { message: "busy" } }), context)).toMatchObject({ category: "unavailable", retryable: true });
    const overflow = classifyProviderError(httpError(400, { error: { message: "This model's maximum context length is 128000 tokens" } }), context);
    expect(overflow).toMatchObject({ category: "context_overflow", retryable: false });
    expect(classifyProviderError(httpError(404, { error: { message: "no such model" } }), context)).toMatchObject({ category: "invalid_request", retryable: false });
  });

  test("an Anthropic overloaded_error before any output (APICallError 529) is unavailable", () => {
    const failure = classifyProviderError(httpError(529, { type: "overloaded_error", message: "Overloaded" }), context);
    expect(failure).toMatchObject({ category: "unavailable", retryable: true });
  });
});

describe("no network: DNS failures and refused connections are 'provider unreachable', retried", () => {
  test("a bare getaddrinfo ENOTFOUND (the SDK does not wrap it) names the configured host", () => {
    const failure = classifyProviderError(dnsFailure("api.openai.com"), context);
    expect(failure).toMatchObject({ category: "unavailable", retryable: true, statusCode: null });
    expect(failure.message).toBe("provider unreachable for model 'fast' at api.openai.com: getaddrinfo ENOTFOUND api.openai.com");
  });

  test.each(["EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"])("%s is unreachable too", (code) => {
    const error = Object.assign(new Error(`connect ${code} 1.2.3.4:443`), { code });
    expect(classifyProviderError(error, context)).toMatchObject({ category: "unavailable", retryable: true });
  });

  test("a refused connection (status-less APICallError) names the host only", () => {
    const error = new APICallError({
      message: "Cannot connect to API: Unable to connect",
      url: "http://127.0.0.1:9/v1/chat/completions",
      requestBodyValues: {},
      cause: Object.assign(new Error("Unable to connect. Is the computer able to access the url?"), { code: "ConnectionRefused" }),
      isRetryable: true,
    });
    const failure = classifyProviderError(error, { alias: "fake" });
    expect(failure).toMatchObject({ category: "unavailable", retryable: true });
    expect(failure.message).toBe("provider unreachable for model 'fake' at 127.0.0.1:9: Unable to connect. Is the computer able to access the url?");
  });

  test("the AI Gateway's wrapped 'Gateway request failed' (a made-up 500) is unreachable, not an invalid response", () => {
    const dns = new GatewayResponseError({ message: `Invalid error response format: Gateway request failed: getaddrinfo ENOTFOUND ai-gateway.vercel.sh`, statusCode: 500, cause: dnsFailure("ai-gateway.vercel.sh") });
    const failure = classifyProviderError(dns, { alias: "default", host: "ai-gateway.vercel.sh" });
    expect(failure).toMatchObject({ category: "unavailable", retryable: true, statusCode: null });
    expect(failure.message).toBe("provider unreachable for model 'default' at ai-gateway.vercel.sh: Gateway request failed: getaddrinfo ENOTFOUND ai-gateway.vercel.sh");

    const refused = new GatewayResponseError({
      message: "Invalid error response format: Gateway request failed",
      statusCode: 500,
      cause: new APICallError({ message: "Cannot connect to API: ECONNREFUSED", url: "https://ai-gateway.vercel.sh/v4/ai/language-model", requestBodyValues: {}, isRetryable: true }),
    });
    expect(classifyProviderError(refused, context)).toMatchObject({ category: "unavailable", retryable: true });
  });

  test("a gateway error for a real HTTP answer keeps its status", () => {
    const cause = httpError(502, { error: { message: "bad gateway" } });
    const failure = classifyProviderError(new GatewayInternalServerError({ message: "bad gateway", statusCode: 502, cause }), { alias: "default" });
    expect(failure).toMatchObject({ category: "unavailable", statusCode: 502 });
  });

  test("a connection dropped mid-stream (APICallError with status 200) is retryable, not an invalid request", () => {
    const error = new APICallError({
      message: "Failed to process successful response",
      url: "http://127.0.0.1:1/v1/messages",
      requestBodyValues: {},
      statusCode: 200,
      cause: Object.assign(new Error("socket closed"), { code: "ECONNRESET" }),
      isRetryable: true,
    });
    expect(classifyProviderError(error, context)).toMatchObject({ category: "unavailable", retryable: true });
  });
});

describe("errors inside a started stream", () => {
  test("Anthropic overloaded_error mid-stream is unavailable and retryable", () => {
    const error = new StreamProviderError({ message: "Overloaded", type: "overloaded_error", statusCode: 529, isRetryable: true, data: {} });
    const failure = classifyProviderError(error, { alias: "claude", host: "api.anthropic.com", keyEnv: "ANTHROPIC_API_KEY" });
    expect(failure).toMatchObject({ category: "unavailable", retryable: true });
    expect(failure.message).toBe("provider unavailable for model 'claude' at api.anthropic.com (overloaded_error in the stream, status 529): Overloaded");
  });

  test("an overloaded error without a status (an OpenAI-compatible server) is still unavailable", () => {
    const error = new StreamProviderError({ message: "model is overloaded", type: "overloaded_error", data: {} });
    expect(classifyProviderError(error, context)).toMatchObject({ category: "unavailable", retryable: true });
  });

  test("insufficient_quota in the stream is a quota failure", () => {
    const error = new StreamProviderError({ message: "You exceeded your current quota", code: "insufficient_quota", statusCode: 429, isRetryable: false, data: {} });
    expect(classifyProviderError(error, context)).toMatchObject({ category: "quota", retryable: false });
  });

  test("an unknown stream error without a status is an invalid response", () => {
    const error = new StreamProviderError({ message: "something odd", type: "weird_error", data: {} });
    expect(classifyProviderError(error, context)).toMatchObject({ category: "bad_response", retryable: false });
  });

  test("anything else is an invalid response; a RetryError is classified by its last error", () => {
    expect(classifyProviderError(new Error("Type validation failed"), context)).toMatchObject({ category: "bad_response", retryable: false });
    const retry = new RetryError({ message: "gave up", reason: "maxRetriesExceeded", errors: [httpError(401, { error: { message: "nope" } })] });
    expect(classifyProviderError(retry, context).category).toBe("auth");
  });
});

describe("refusals", () => {
  test("carry the provider's explanation and the model alias", () => {
    const failure = refusalFailure("I can't help with that.", "refusal", { alias: "claude" });
    expect(failure).toEqual({ category: "refusal", message: "model 'claude' refused the request (refusal): I can't help with that.", statusCode: null, retryAfterMs: null, retryable: false, url: null });
  });

  test("without an explanation the message says so", () => {
    expect(refusalFailure(null, undefined, {}).message).toBe("the model refused the request: no explanation given");
  });
});
