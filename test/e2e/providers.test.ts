import { expect, test } from "bun:test";
import { UNRESOLVABLE_URL, type FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, makeSandbox, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

function withModel(model: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return fakeConfig(fake.url, "chat", { models: { fake: model }, ...extra });
}

test("Vercel AI Gateway: key, model id and a full tool loop", async () => {
  sandbox.writeUserConfig(withModel({ provider: "gateway", model: "openai/gpt-5.3-codex", baseURL: fake.url }));
  fake.script([{ reasoning: "hm", toolCalls: [{ name: "read", args: { path: "README.md" } }] }, { text: "via gateway" }]);
  const result = await runZero(["run", "x"], { sandbox, env: { AI_GATEWAY_API_KEY: "gw-key-123" } });
  expect(result.stderr).toContain("• read README.md");
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("via gateway\n");
  expect(fake.requests).toHaveLength(2);
  const [first, second] = fake.requests;
  expect(first!.protocol).toBe("gateway");
  expect(first!.headers.authorization).toBe("Bearer gw-key-123");
  expect(first!.headers["ai-language-model-id"]).toBe("openai/gpt-5.3-codex");
  // The second request carries the tool result in the SDK's own prompt format.
  expect(JSON.stringify(second!.body.prompt)).toContain("The answer is 42.");
});

test("the built-in default alias uses the gateway and ZERO_CLI_MODEL changes its model", async () => {
  // Only the endpoint is redirected to the fake: the alias keeps the built-in provider and model.
  sandbox.writeUserConfig({ version: 2, models: { default: { provider: "gateway", model: "openai/gpt-5.3-codex", baseURL: fake.url } } });
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox, env: { AI_GATEWAY_API_KEY: "k" } });
  expect(result.code).toBe(0);
  expect(fake.requests[0]!.headers["ai-language-model-id"]).toBe("openai/gpt-5.3-codex");
  const plain = makeSandbox();
  try {
    const agents = await runZero(["agents"], { sandbox: plain, env: { ZERO_CLI_MODEL: "anthropic/claude-x" } });
    expect(agents.stdout).toContain("model: default → gateway anthropic/claude-x");
  } finally {
    plain.cleanup();
  }
});

test("kimi sends its key and a real zero-cli User-Agent", async () => {
  sandbox.writeUserConfig(withModel({ provider: "kimi", model: "kimi-for-coding", baseURL: fake.url }));
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox, env: { KIMI_API_KEY: "kimi-key" } });
  expect(result.code).toBe(0);
  const request = fake.requests[0]!;
  expect(request.protocol).toBe("chat");
  expect(request.headers.authorization).toBe("Bearer kimi-key");
  expect(request.headers["user-agent"]).toContain("zero-cli/0.1.0");
  expect(request.body.model).toBe("kimi-for-coding");
});

test("nebius reads NEBIUS_API_KEY", async () => {
  sandbox.writeUserConfig(withModel({ provider: "nebius", model: "Qwen/Qwen3", baseURL: fake.url }));
  fake.script([{ text: "ok" }]);
  const missing = await runZero(["run", "x"], { sandbox });
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("NEBIUS_API_KEY");
  const result = await runZero(["run", "x"], { sandbox, env: { NEBIUS_API_KEY: "neb-key" } });
  expect(result.code).toBe(0);
  expect(fake.requests[0]!.headers.authorization).toBe("Bearer neb-key");
});

test("profiles: headers combine with the model winning; settings reach the request; apiKeyEnv beats the canonical variable", async () => {
  sandbox.writeUserConfig({
    version: 2,
    providers: { company: { type: "openai", baseURL: "http://127.0.0.1:9/never-used", apiKeyEnv: "COMPANY_KEY", headers: { "X-A": "1", "X-B": "1" } } },
    models: { fake: { provider: "company", model: "fake-1", baseURL: fake.url, headers: { "X-B": "2" }, settings: { temperature: 0.1 } } },
    agents: { build: { model: "fake" } },
  });
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox, env: { COMPANY_KEY: "company-key", OPENAI_API_KEY: "canonical-key" } });
  expect(result.code).toBe(0);
  const request = fake.requests[0]!;
  expect(request.protocol).toBe("responses");
  expect(request.headers["x-a"]).toBe("1");
  expect(request.headers["x-b"]).toBe("2");
  expect(request.headers.authorization).toBe("Bearer company-key");
  expect(request.body.temperature).toBe(0.1);

  // Named but unset: an error naming the variable, even though the canonical one is set.
  const unset = await runZero(["run", "x"], { sandbox, env: { OPENAI_API_KEY: "canonical-key" } });
  expect(unset.code).toBe(2);
  expect(unset.stderr).toContain("COMPANY_KEY");
});

test("openai-codex models are refused clearly, before any request", async () => {
  sandbox.writeUserConfig(withModel({ provider: "openai-codex", model: "default" }));
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("does not support yet");
  expect(fake.requests).toHaveLength(0);
});

test("OpenAI Responses: a commentary message and the final answer are separate paragraphs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  fake.script([{ commentary: ["Let me look ", "at the README."], text: ["It is a ", "sample project."] }]);
  const human = await runZero(["run", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(human.code).toBe(0);
  expect(human.stdout).toBe("Let me look at the README.\n\nIt is a sample project.\n");

  fake.script([{ commentary: "Checking.", text: "Done." }]);
  const json = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  const events = jsonLines(json.stdout);
  const streamed = events.filter((e) => e.type === "message.delta").map((e) => e.text as string);
  expect(streamed.join("")).toBe("Checking.\n\nDone.");
  // The break rides on the first delta of the second message: surfaces need no extra event.
  expect(streamed.some((text) => text.startsWith("\n\n"))).toBe(true);
  expect(events.at(-1)!).toMatchObject({ type: "run.completed", status: "completed", text: "Checking.\n\nDone." });
});

test("Anthropic: two text blocks of one reply are separate paragraphs too", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "anthropic"));
  fake.script([{ commentary: "First block.", text: "Second block." }]);
  const result = await runZero(["run", "x"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("First block.\n\nSecond block.\n");
});

test("Vercel AI Gateway: a name that does not resolve is 'provider unreachable', not an invalid response", async () => {
  // The gateway wraps the DNS failure as "Gateway request failed" with a made-up 500. The run
  // deadline ends the test during the first backoff; the retry event shows the classification.
  sandbox.writeUserConfig(withModel({ provider: "gateway", model: "openai/gpt-5.3-codex", baseURL: UNRESOLVABLE_URL }, { limits: { runTimeoutMs: 1500 } }));
  const result = await runZero(["run", "--json", "x"], { sandbox, env: { AI_GATEWAY_API_KEY: "gw-key" } });
  const events = jsonLines(result.stdout);
  const retry = events.find((e) => e.type === "provider.retry")!;
  expect(retry.error).toMatchObject({ category: "unavailable", statusCode: null });
  expect(retry.error.message).toBe("provider unreachable for model 'fake' at fake-provider.invalid: Gateway request failed: getaddrinfo ENOTFOUND fake-provider.invalid");
  expect(result.code).toBe(4); // the deadline, not an invalid-response failure
  expect(fake.requests).toHaveLength(0);
});
