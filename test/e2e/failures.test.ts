import { describe, expect, test } from "bun:test";
import { UNRESOLVABLE_URL, startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { ZERO_BIN, fakeConfig, jsonLines, runZero, spawnZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

test("401 is an authentication failure: exit 3, no retry, no stack", async () => {
  fake.script([{ kind: "error", status: 401, message: "invalid api key" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(3);
  expect(result.stdout).toBe("");
  // The message names the model alias and the endpoint host (never the whole URL).
  expect(result.stderr).toContain(`authentication failed for model 'fake' at 127.0.0.1:${fake.port} (HTTP 401): invalid api key`);
  expect(result.stderr).not.toContain("    at ");
  expect(fake.requests).toHaveLength(1);
});

test("429 is retried as the provider asks, then reported as a rate limit", async () => {
  const limited = { kind: "error" as const, status: 429, message: "slow down", headers: { "retry-after": "0" } };
  fake.script([limited, limited, limited]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(3);
  expect(fake.requests).toHaveLength(3);
  const events = jsonLines(result.stdout);
  const failed = events.find((e) => e.type === "run.failed")!;
  expect(failed.error.category).toBe("rate_limit");
  expect(failed.error.statusCode).toBe(429);
  expect(failed.error.retryable).toBe(true);
  expect(failed.error.message).toContain("after 3 attempts");
  const retries = events.filter((e) => e.type === "provider.retry");
  expect(retries.map((e) => [e.attempt, e.maxAttempts, e.delayMs, e.error.category])).toEqual([
    [2, 3, 0, "rate_limit"],
    [3, 3, 0, "rate_limit"],
  ]);
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "failed", reason: "provider_error", exitCode: 3 });
});

test("a 429 that recovers lets the run finish", async () => {
  fake.script([{ kind: "error", status: 429, headers: { "retry-after": "0" } }, { text: "recovered" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("recovered\n");
  expect(result.stderr).toContain(`rate limited for model 'fake' at 127.0.0.1:${fake.port} (HTTP 429)`);
  expect(result.stderr).toContain("attempt 2 of 3");
});

test("500 and 503 are provider-unavailable errors", async () => {
  for (const status of [500, 503]) {
    fake.requests.length = 0;
    const down = { kind: "error" as const, status, message: "boom", headers: { "retry-after-ms": "1" } };
    fake.script([down, down, down]);
    const result = await runZero(["run", "x"], { sandbox });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`provider unavailable for model 'fake' at 127.0.0.1:${fake.port} (HTTP ${status})`);
  }
});

test("an unreachable provider is exit 3 with a clear message", async () => {
  const closed = await startFakeProvider();
  const url = closed.url;
  await closed.close();
  sandbox.writeUserConfig(fakeConfig(url));
  const result = await runZero(["run", "x"], { sandbox, timeoutMs: 30_000 });
  expect(result.code).toBe(3);
  expect(result.stderr).toContain(`provider unreachable for model 'fake' at 127.0.0.1:${closed.port}:`);
  expect(result.stderr).not.toContain("/chat/completions");
  expect(result.stderr).toContain("retrying in 2s (attempt 2 of 3)");
}, 30_000);

test("a name that does not resolve (no DNS, no network) is 'provider unreachable', retried, exit 3", async () => {
  // `.invalid` never resolves (RFC 6761): the resolver fails locally, at once.
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses", { models: { fake: { provider: "openai", model: "fake-1", baseURL: UNRESOLVABLE_URL, apiKeyEnv: "FAKE_KEY" } } }));
  const result = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" }, timeoutMs: 30_000 });
  expect(result.code).toBe(3);
  const events = jsonLines(result.stdout);
  const retries = events.filter((e) => e.type === "provider.retry");
  expect(retries.map((e) => [e.attempt, e.error.category, e.discardedOutput])).toEqual([
    [2, "unavailable", false],
    [3, "unavailable", false],
  ]);
  const failed = events.find((e) => e.type === "run.failed")!;
  expect(failed.error).toMatchObject({ kind: "provider", category: "unavailable", retryable: true, statusCode: null });
  expect(failed.error.message).toContain("provider unreachable for model 'fake' at fake-provider.invalid: getaddrinfo ENOTFOUND fake-provider.invalid");
  expect(failed.error.message).not.toContain("invalid provider response");
  expect(fake.requests).toHaveLength(0);
}, 30_000);

test("a 401 names the variable the key came from", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  fake.script([{ kind: "error", status: 401, message: "Incorrect API key provided" }]);
  const result = await runZero(["run", "x"], { sandbox, env: { FAKE_KEY: "sk-not-shown" } });
  expect(result.code).toBe(3);
  expect(result.stderr).toContain(`authentication failed for model 'fake' at 127.0.0.1:${fake.port} (HTTP 401, key from FAKE_KEY): Incorrect API key provided`);
  expect(result.stderr).not.toContain("sk-not-shown");
});

test("a spent quota (429 insufficient_quota) fails at once: no retry, a billing message", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  const quota = "You exceeded your current quota, please check your plan and billing details.";
  fake.script([{ kind: "error", status: 429, message: quota, type: "insufficient_quota", code: "insufficient_quota", headers: { "retry-after": "0" } }, { text: "never asked" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code).toBe(3);
  expect(fake.requests).toHaveLength(1);
  const events = jsonLines(result.stdout);
  expect(events.some((e) => e.type === "provider.retry")).toBe(false);
  const failed = events.find((e) => e.type === "run.failed")!;
  expect(failed.error).toMatchObject({ kind: "provider", category: "quota", statusCode: 429, retryable: false });
  expect(failed.error.message).toContain("quota or billing limit reached for model 'fake'");
  expect(failed.error.message).toContain("key from FAKE_KEY");
  expect(failed.error.message).toContain(quota);
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "failed", reason: "provider_error", exitCode: 3 });
});

test("an overloaded_error mid-stream is retried; the retry says the streamed output is discarded", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "anthropic"));
  fake.script([{ text: ["one ", "two ", "three"], streamError: { afterChunks: 1 } }, { text: "the whole answer" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code).toBe(0);
  expect(fake.requests).toHaveLength(2);
  const events = jsonLines(result.stdout);
  const types = events.map((e) => e.type);
  const retry = events.find((e) => e.type === "provider.retry")!;
  expect(retry).toMatchObject({ step: 1, attempt: 2, maxAttempts: 3, discardedOutput: true, error: { category: "unavailable" } });
  expect(retry.error.message).toContain("overloaded_error");
  // The discarded delta came before the retry; the answer is the second attempt's alone.
  expect(types.indexOf("message.delta")).toBeLessThan(types.indexOf("provider.retry"));
  expect(events.find((e) => e.type === "message.delta")!.text).toBe("one ");
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "completed", exitCode: 0, text: "the whole answer" });
});

test("exec stream-json: a discarded attempt is a recoverable error line before the retried text", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "anthropic"));
  fake.script([{ text: ["one ", "two ", "three"], streamError: { afterChunks: 1 } }, { text: "fresh" }]);
  const result = await runZero(["exec", "--output-format", "stream-json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code).toBe(0);
  const lines = jsonLines(result.stdout);
  const error = lines.find((l) => l.type === "error")!;
  expect(error).toMatchObject({ code: "provider_error", recoverable: true });
  expect(error.message).toContain("discarded");
  expect(lines.findIndex((l) => l.type === "error")).toBeLessThan(lines.findIndex((l) => l.type === "final"));
  expect(lines.find((l) => l.type === "final")!.text).toBe("fresh");
  expect(lines.at(-1)).toMatchObject({ type: "run_end", status: "success", exitCode: 0 });
});

describe("a refusal fails the run (exit 3) with the provider's explanation", () => {
  test("Anthropic stop_reason refusal: run.failed category refusal, reason refusal", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "anthropic"));
    fake.script([{ refusal: "This request asks for help with malware." }]);
    const result = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
    expect(result.code).toBe(3);
    const events = jsonLines(result.stdout);
    const failed = events.find((e) => e.type === "run.failed")!;
    expect(failed.error).toMatchObject({ kind: "provider", category: "refusal", retryable: false, statusCode: null });
    expect(failed.error.message).toBe("model 'fake' refused the request (refusal): This request asks for help with malware.");
    expect(events.find((e) => e.type === "step.completed")).toMatchObject({ finishReason: "content-filter" });
    expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "failed", reason: "refusal", exitCode: 3 });
    expect(fake.requests).toHaveLength(1);
  });

  test("Chat content_filter: the streamed refusal text is the explanation; human output says so on stderr", async () => {
    fake.script([{ refusal: "I can't help with that." }]);
    const result = await runZero(["run", "x"], { sandbox });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("zero: provider error: model 'fake' refused the request (content_filter): I can't help with that.");
  });

  test("exec stream-json: error provider_error, run_end exit 3, no final", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
    fake.script([{ refusal: "I'm sorry, but I can't assist with that." }]);
    const result = await runZero(["exec", "--output-format", "stream-json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
    expect(result.code).toBe(3);
    const lines = jsonLines(result.stdout);
    const error = lines.find((l) => l.type === "error")!;
    expect(error).toMatchObject({ code: "provider_error", recoverable: false });
    expect(error.message).toContain("I'm sorry, but I can't assist with that.");
    expect(lines.some((l) => l.type === "final")).toBe(false);
    expect(lines.at(-1)).toMatchObject({ type: "run_end", status: "error", exitCode: 3 });
  });

  test("host: final ERROR, not retryable, with the explanation", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "anthropic"));
    fake.script([{ refusal: "Declined by policy." }]);
    const request = { protocol_version: 1, type: "run", request_id: "r1", session_id: "s1", prompt: "x", idempotency_key: "k1" };
    const result = await runZero(["host", "--bridge-compat", "--single-request"], { sandbox, env: { FAKE_KEY: "k" }, stdin: `${JSON.stringify(request)}\n` });
    const final = jsonLines(result.stdout).at(-1)!;
    expect(final).toMatchObject({ type: "final", request_id: "r1", status: "ERROR", error: { code: "INTERNAL", retryable: false } });
    expect(final.error.message).toContain("Declined by policy.");
  });
});

test("a dropped connection mid-stream is a provider error", async () => {
  fake.script([{ text: ["one ", "two ", "three"], dropAfterChunks: 1 }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(3);
  const events = jsonLines(result.stdout);
  expect(events.at(-1)!.type).toBe("run.completed");
  expect(events.at(-1)!.status).toBe("failed");
});

test("a stalled provider is stopped by the run deadline (exit 4)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { runTimeoutMs: 1500 } }));
  fake.script([{ kind: "stall" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(4);
  expect(result.ms).toBeLessThan(10_000);
  const events = jsonLines(result.stdout);
  expect(events.some((e) => e.type === "guard.triggered" && e.guard === "deadline")).toBe(true);
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "limit", reason: "deadline", exitCode: 4 });
});

test("the agent's timeoutMs wins when it is smaller than limits.runTimeoutMs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { timeoutMs: 1000 } } }));
  fake.script([{ text: ["a", "b"], stallAfterChunks: 1 }]);
  const result = await runZero(["run", "--json", "x"], { sandbox });
  expect(result.code).toBe(4);
  const started = jsonLines(result.stdout)[0]!;
  expect(started.budgets.timeoutMs).toBe(1000);
});

test("SIGINT mid-stream cancels the run with exit 130", async () => {
  fake.script([{ text: ["partial ", "answer"], stallAfterChunks: 1 }]);
  const { proc, result } = spawnZero(["run", "--json", "x"], { sandbox });
  await fake.waitForRequests(1, 10_000);
  await Bun.sleep(200); // let the first chunk arrive
  proc.kill("SIGINT");
  const done = await result;
  expect(done.code).toBe(130);
  const events = jsonLines(done.stdout);
  expect(events.some((e) => e.type === "message.delta" && e.text === "partial ")).toBe(true);
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "cancelled", exitCode: 130 });
});

test("a silent provider is abandoned after limits.streamIdleTimeoutMs and retried", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { streamIdleTimeoutMs: 400 } }));
  fake.script([{ kind: "stall" }, { text: "recovered" }]);
  const recovered = await runZero(["run", "x"], { sandbox });
  expect(recovered.code).toBe(0);
  expect(recovered.stdout).toBe("recovered\n");
  expect(recovered.stderr).toContain("the provider sent nothing for 0.4 s");
  expect(fake.requests).toHaveLength(2);

  // Once text has streamed, a stall is retried too (no tool ran: nothing irreversible happened);
  // the retry event says the streamed text is discarded, and the answer is the new attempt's.
  fake.reset();
  fake.script([{ text: ["partial ", "rest"], stallAfterChunks: 1 }, { text: "whole" }]);
  const stalled = await runZero(["run", "--json", "x"], { sandbox, timeoutMs: 30_000 });
  expect(stalled.code).toBe(0);
  expect(fake.requests).toHaveLength(2);
  const events = jsonLines(stalled.stdout);
  expect(events.find((e) => e.type === "provider.retry")).toMatchObject({ discardedOutput: true, error: { category: "unavailable" } });
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "completed", text: "whole" });
}, 30_000);

test("a signal before the run starts still exits 130 (no half-started run)", async () => {
  // `zero run` with no task argument waits on an open stdin: the signal arrives before any run exists.
  const proc = Bun.spawn([ZERO_BIN, "run", "--json"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  // Long enough for the handlers to be installed on a loaded machine; stdin stays open, so no run starts.
  await Bun.sleep(1_000);
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(130);
  expect(await new Response(proc.stdout).text()).toBe("");
  expect(fake.requests).toHaveLength(0);
});

test("SIGTERM mid-run cancels like SIGINT", async () => {
  fake.script([{ text: ["partial ", "answer"], stallAfterChunks: 1 }]);
  const { proc, result } = spawnZero(["run", "--json", "x"], { sandbox });
  await fake.waitForRequests(1, 10_000);
  await Bun.sleep(200);
  proc.kill("SIGTERM");
  const done = await result;
  expect(done.code).toBe(130);
  expect(jsonLines(done.stdout).at(-1)!).toMatchObject({ type: "run.completed", status: "cancelled" });
});
