import { expect, test } from "bun:test";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
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
  expect(result.stderr).toContain("authentication failed (HTTP 401): invalid api key");
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
  expect(result.stderr).toContain("rate limited (HTTP 429)");
  expect(result.stderr).toContain("attempt 2 of 3");
});

test("500 and 503 are provider-unavailable errors", async () => {
  for (const status of [500, 503]) {
    fake.requests.length = 0;
    const down = { kind: "error" as const, status, message: "boom", headers: { "retry-after-ms": "1" } };
    fake.script([down, down, down]);
    const result = await runZero(["run", "x"], { sandbox });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`provider unavailable (HTTP ${status})`);
  }
});

test("an unreachable provider is exit 3 with a clear message", async () => {
  const closed = await startFakeProvider();
  const url = closed.url;
  await closed.close();
  sandbox.writeUserConfig(fakeConfig(url));
  const result = await runZero(["run", "x"], { sandbox, timeoutMs: 30_000 });
  expect(result.code).toBe(3);
  expect(result.stderr).toContain(`provider unreachable at ${url}/chat/completions`);
  expect(result.stderr).toContain("retrying in 2s (attempt 2 of 3)");
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

  // Once text has streamed, a stall is not retried (it could not be taken back): exit 3.
  fake.reset();
  fake.script([{ text: ["partial ", "rest"], stallAfterChunks: 1 }]);
  const stalled = await runZero(["run", "--json", "x"], { sandbox });
  expect(stalled.code).toBe(3);
  expect(fake.requests).toHaveLength(1);
  const failed = jsonLines(stalled.stdout).find((e) => e.type === "run.failed")!;
  expect(failed.error.category).toBe("unavailable");
});

test("a signal before the run starts still exits 130 (no half-started run)", async () => {
  // `zero run` with no task argument waits on an open stdin: the signal arrives before any run exists.
  const proc = Bun.spawn([ZERO_BIN, "run", "--json"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  await Bun.sleep(300);
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
