/**
 * Campaign budgets through the real CLI (BUD-01..04, 06, 07): `limits.maxCampaignTokens` and
 * `limits.maxCostUsd` against the scripted fake provider, whose replies report whatever usage the
 * test chooses. What is checked: how many requests the fake received, the output-token control they
 * carried, the run's end (exit 4, reason, guard message), and the cost every surface reports.
 *
 * Our first request is about 10 KB (system prompt, tool schemas), which the admission estimates at
 * roughly 2,400 tokens; the caps below are sized so that estimate matters.
 */
import { expect, test } from "bun:test";
import type { FakeProvider, FakeReply, FakeTurn, FakeUsage, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero } from "../support/cli.ts";
import type { Sandbox } from "../support/cli.ts";
import { calls, delegate, parse, requestsOf, senderOf, slowText, task, toolResults } from "../support/delegation.ts";
import { outputEventSchema } from "../../src/protocol/stream-json.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const PRICING = { inputPerMillionUsd: 2, outputPerMillionUsd: 8 };
/** The default model alias every agent uses, with prices. */
const pricedModel = (pricing: Record<string, number> = PRICING) => ({ fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools"], pricing } });

/**
 * The config for cost tests: the build agent's own per-run ceiling (maxTokens 200,000 by default)
 * lifted, since these replies report a million tokens and more.
 */
const costConfig = (extra: Record<string, unknown> = {}) => fakeConfig(fake.url, "chat", { agents: { build: { maxTokens: 100_000_000 } }, ...extra });

/** Turns that never stop calling tools (each read differs, so the repetition guard stays quiet). */
function endlessReads(usage: { input: number; output: number; cached?: number }, count = 6): Array<() => FakeTurn> {
  let n = 0;
  return Array.from({ length: count }, () => () => ({ toolCalls: [{ name: "read", args: { path: "README.md", offset: ++n } }], usage }));
}

/** The request's input size as our admission roughly sees it: about four bytes a token. */
const bodyTokens = (req: RecordedRequest) => Math.ceil(req.bodyBytes / 4);

// ---- BUD-01 / BUD-07: the token cap ------------------------------------------------------------

test("maxCampaignTokens: 12000 with 5000 spent per call → two requests, the third is not admitted, exit 4 max_tokens (BUD-01)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxCampaignTokens: 12_000 } }));
  fake.script(endlessReads({ input: 4_000, output: 1_000 }));
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  // After two calls 2,000 tokens are left: less than the next request's input alone.
  expect(fake.requests).toHaveLength(2);
  const events = jsonLines(result.stdout);
  const last = events.at(-1)!;
  expect(last).toMatchObject({ type: "run.completed", status: "limit", reason: "max_tokens", exitCode: 4, steps: 2 });
  expect(last.usage.totalTokens).toBe(10_000);
  expect(last.campaign).toEqual({ runs: 1, tokens: 10_000 });
  // An unpriced model: no cost anywhere.
  expect(last.costUsd).toBeUndefined();
  const guard = events.filter((e) => e.type === "guard.triggered");
  expect(guard).toHaveLength(1);
  expect(guard[0]).toMatchObject({ guard: "max_tokens" });
  expect(guard[0]!.message).toContain("limits.maxCampaignTokens");
  expect(guard[0]!.message).toContain("2000 of 12000 tokens left");
  // The refused step never started.
  expect(events.filter((e) => e.type === "step.started")).toHaveLength(2);
});

test("the campaign cap is checked after each call: one call past it stops the run before the next request", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxCampaignTokens: 12_000 } }));
  // The provider overruns the allowance it was given (the control is advisory for some).
  fake.script(endlessReads({ input: 10_000, output: 3_000 }));
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(1);
  const events = jsonLines(result.stdout);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "max_tokens" });
  expect(events.at(-1)!.campaign).toEqual({ runs: 1, tokens: 13_000 });
  const guard = events.find((e) => e.type === "guard.triggered");
  expect(guard).toMatchObject({ guard: "max_tokens" });
  expect(guard!.message).toContain("limits.maxCampaignTokens");
});

test("every request under a token cap carries max_tokens ≤ what is left, less its own input (BUD-07)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxCampaignTokens: 12_000 } }));
  fake.script(endlessReads({ input: 4_000, output: 1_000 }));
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  const [first, second] = fake.requests;
  // The openai-compatible adapter sends the output control as `max_tokens`.
  expect(first!.body.max_completion_tokens).toBeUndefined();
  const left = [12_000, 12_000 - 5_000];
  for (const [i, req] of [first!, second!].entries()) {
    const max = req.body.max_tokens;
    expect(Number.isInteger(max)).toBe(true);
    expect(max).toBeGreaterThan(0);
    expect(max).toBeLessThanOrEqual(left[i]!);
    // What is left, less the estimated input (the estimate is near the body's size / 4).
    expect(max).toBeLessThanOrEqual(left[i]! - Math.floor(bodyTokens(req) * 0.8));
    expect(max).toBeGreaterThanOrEqual(left[i]! - Math.ceil(bodyTokens(req) * 1.1));
  }
  // The allowance shrank with what the first call spent.
  expect(second!.body.max_tokens).toBeLessThan(first!.body.max_tokens - 4_000);
});

test("without a budget the requests carry no output-token control", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }] }, { text: "done" }]);
  const result = await runZero(["run", "--json", "look"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests).toHaveLength(2);
  for (const req of fake.requests) {
    expect(req.body.max_tokens).toBeUndefined();
    expect(req.body.max_completion_tokens).toBeUndefined();
  }
});

// ---- BUD-02 / BUD-07: cost ---------------------------------------------------------------------

test("pricing 2/8 USD per M, 1M in + 0.5M out → costUsd 6 on usage.updated, run.completed and the campaign (BUD-02)", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel() }));
  fake.script([{ text: "expensive answer", usage: { input: 1_000_000, output: 500_000 } }]);
  const result = await runZero(["run", "--json", "answer"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const usage = events.filter((e) => e.type === "usage.updated");
  expect(usage).toHaveLength(1);
  expect(usage[0]!.costUsd).toBe(6);
  const done = events.at(-1)!;
  expect(done).toMatchObject({ type: "run.completed", status: "completed", costUsd: 6 });
  expect(done.campaign).toEqual({ runs: 1, tokens: 1_500_000, costUsd: 6 });
  // No cap, no output control.
  expect(fake.requests[0]!.body.max_tokens).toBeUndefined();
});

test("costs accumulate over steps: 6 USD then 2 more → usage.updated 6, 8; run.completed 8", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel() }));
  fake.script([
    { toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 1_000_000, output: 500_000 } },
    { text: "done", usage: { input: 600_000, output: 100_000 } },
  ]);
  const result = await runZero(["run", "--json", "two steps"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  expect(events.filter((e) => e.type === "usage.updated").map((e) => e.costUsd)).toEqual([6, 8]);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", costUsd: 8, campaign: { runs: 1, tokens: 2_200_000, costUsd: 8 } });
});

test("maxCostUsd 5: a first call costing 6 USD stops the run before the next request, exit 4 max_cost (BUD-02)", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel(), limits: { maxCostUsd: 5 } }));
  fake.script(endlessReads({ input: 1_000_000, output: 500_000 }));
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(1);
  const events = jsonLines(result.stdout);
  const last = events.at(-1)!;
  expect(last).toMatchObject({ type: "run.completed", status: "limit", reason: "max_cost", exitCode: 4, costUsd: 6 });
  expect(last.campaign).toMatchObject({ runs: 1, costUsd: 6 });
  const guard = events.filter((e) => e.type === "guard.triggered");
  expect(guard).toHaveLength(1);
  expect(guard[0]).toMatchObject({ guard: "max_cost" });
  expect(guard[0]!.message).toContain("limits.maxCostUsd");
  // The first request's allowance: what 5 USD buys at 8/M once its input is paid for.
  const max = fake.requests[0]!.body.max_tokens;
  expect(max).toBeLessThanOrEqual(625_000);
  expect(max).toBeGreaterThanOrEqual(Math.floor((5_000_000 - bodyTokens(fake.requests[0]!) * 1.1 * 2) / 8));
});

test("maxCostUsd 5 after a 4 USD call: the second request's max_tokens fits the 1 USD left (BUD-07)", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel(), limits: { maxCostUsd: 5 } }));
  // 1M × 2 + 0.25M × 8 = 4 USD; then the model overruns its allowance (1M in + 0.5M out = 6 USD).
  fake.script([
    { toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 1_000_000, output: 250_000 } },
    ...endlessReads({ input: 1_000_000, output: 500_000 }),
  ]);
  const result = await runZero(["run", "--json", "loop forever"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(2);
  const second = fake.requests[1]!;
  // 1 USD left, less the input's estimated cost, at 8 USD per million output tokens: under 125,000.
  expect(second.body.max_tokens).toBeLessThanOrEqual(125_000);
  expect(second.body.max_tokens).toBeGreaterThanOrEqual(Math.floor((1_000_000 - bodyTokens(second) * 1.1 * 2) / 8));
  const events = jsonLines(result.stdout);
  // The recorded cost stays exact even though the provider overran.
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "max_cost", costUsd: 10 });
});

// ---- BUD-03: a cost cap needs prices ---------------------------------------------------------

test("maxCostUsd with an unpriced agent model is a config error naming it; nothing is sent (BUD-03)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxCostUsd: 5 } }));
  fake.script([{ text: "never" }]);
  const result = await runZero(["run", "--json", "hello"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("limits.maxCostUsd");
  expect(result.stderr).toContain("models.fake");
  expect(fake.requests).toHaveLength(0);
});

test("maxCostUsd: only the unpriced model is named, even when it is not the root's", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      limits: { maxCostUsd: 5 },
      models: { ...pricedModel(), cheap: { provider: "fake", model: "fake-2", capabilities: ["text", "tools"] } },
      agents: { explore: { model: "cheap" } },
    }),
  );
  fake.script([{ text: "never" }]);
  const result = await runZero(["run", "--json", "hello"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("models.cheap");
  expect(result.stderr).not.toContain("models.fake");
  expect(fake.requests).toHaveLength(0);
});

test("maxCostUsd and --model naming an unpriced alias no agent uses: refused before any request, naming it (BUD-03)", async () => {
  sandbox.writeUserConfig(costConfig({ limits: { maxCostUsd: 5 }, models: { ...pricedModel(), other: { provider: "fake", model: "fake-2", capabilities: ["text", "tools"] } } }));
  fake.script([{ text: "never" }]);
  const result = await runZero(["run", "--json", "--model", "other", "hello"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("'other' has no pricing");
  expect(result.stderr).toContain("limits.maxCostUsd");
  expect(fake.requests).toHaveLength(0);
});

test("without a cost cap an unpriced model runs; its usage is reported without any cost (BUD-03)", async () => {
  sandbox.writeUserConfig(costConfig());
  fake.script([{ text: "fine", usage: { input: 1_000_000, output: 500_000 } }]);
  const result = await runZero(["run", "--json", "hello"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const usage = events.find((e) => e.type === "usage.updated")!;
  expect(usage.usage.totalTokens).toBe(1_500_000);
  expect("costUsd" in usage).toBe(false);
  const done = events.at(-1)!;
  expect(done).toMatchObject({ type: "run.completed", status: "completed" });
  expect("costUsd" in done).toBe(false);
  expect(done.campaign).toEqual({ runs: 1, tokens: 1_500_000 });
});

// ---- BUD-04: cached input ----------------------------------------------------------------------

test("reported cache reads are priced at cachedInputPerMillionUsd; a step without them at the full input price (BUD-04)", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel({ ...PRICING, cachedInputPerMillionUsd: 0.5 }) }));
  fake.script([
    // 600k × 2 + 400k × 0.5 + 0 = 1.4 USD
    { toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 1_000_000, output: 0, cached: 400_000 } },
    // 1M × 2 = 2 USD: no cache reads reported, no discount
    { text: "done", usage: { input: 1_000_000, output: 0 } },
  ]);
  const result = await runZero(["run", "--json", "cache"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const usage = events.filter((e) => e.type === "usage.updated");
  expect(usage[0]!.stepUsage.cachedInputTokens).toBe(400_000);
  expect(usage.map((e) => e.costUsd)).toEqual([1.4, 3.4]);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", costUsd: 3.4, campaign: { costUsd: 3.4 } });
});

test("cache reads without a cached price cost the full input price (BUD-04)", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel() }));
  fake.script([{ text: "done", usage: { input: 1_000_000, output: 0, cached: 400_000 } }]);
  const result = await runZero(["run", "--json", "cache"], { sandbox });
  expect(result.code).toBe(0);
  expect(jsonLines(result.stdout).at(-1)).toMatchObject({ type: "run.completed", costUsd: 2 });
});

// ---- BUD-06: one admission queue for the whole campaign -------------------------------------

const CHILDREN = ["look-a", "look-b", "look-c"];
const PIECES = 6;
const DELAY_MS = 120;

/** A scripted reply (the delegation helpers build them) reporting `usage`. */
const withUsage = (turn: FakeTurn, usage: FakeUsage): FakeTurn => ({ ...(turn as FakeReply), usage });

/** Root: spawn three background explore children at once, wait for them all, then answer. */
function rootTurns(): Array<FakeTurn | ((req: RecordedRequest) => FakeTurn)> {
  const small = { input: 100, output: 10 };
  return [
    withUsage(calls(...CHILDREN.map((name, i): [string, Record<string, unknown>] => [`s${i}`, { operation: "spawn", ...task(name, { background: true }) }])), small),
    (req) => withUsage(delegate("w", { operation: "wait", runIds: CHILDREN.map((_, i) => parse(toolResults(req)[`s${i}`]).childRunId), timeoutMs: 20_000 }), small),
    { text: "all looked", usage: small },
  ];
}
/** A child's only reply: slow (PIECES chunks DELAY_MS apart), and expensive. */
const childTurn = (name: string): FakeTurn => withUsage(slowText("```json\n" + JSON.stringify({ summary: `${name} looked` }) + "\n```", PIECES, DELAY_MS), { input: 4_000, output: 500 });

/** Scripts the fake per sender (root, or a child by task name), recording who was answered. */
function scriptCampaign(): void {
  const queues: Record<string, Array<FakeTurn | ((req: RecordedRequest) => FakeTurn)>> = { root: rootTurns() };
  for (const name of CHILDREN) queues[name] = [childTurn(name)];
  fake.script(
    Array.from({ length: 10 }, () => (req: RecordedRequest): FakeTurn => {
      const next = queues[senderOf(req)]?.shift();
      if (next === undefined) return { kind: "error", status: 400, message: `test: no turn for ${senderOf(req)}` };
      return typeof next === "function" ? next(req) : next;
    }),
  );
}

/** When a reply ended at the earliest: a child's streams PIECES content chunks, each after DELAY_MS. */
const earliestEnd = (req: RecordedRequest) => req.answeredAt! + (senderOf(req) === "root" ? 0 : PIECES * DELAY_MS);

/** Pairs of requests where one arrived before the previous could have finished streaming. */
function overlaps(requests: RecordedRequest[]): string[] {
  const sorted = [...requests].sort((a, b) => a.receivedAt - b.receivedAt);
  const found: string[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1]!;
    // A few ms of slack: timer granularity between the fake's clock and the sleeps.
    if (sorted[i]!.receivedAt < earliestEnd(previous) - 10) found.push(`${senderOf(previous)} → ${senderOf(sorted[i]!)}`);
  }
  return found;
}

test("without a cap, three background children's model calls overlap (the control for BUD-06)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { maxRetries: 0 } }));
  scriptCampaign();
  const result = await runZero(["run", "--json", "look three ways"], { sandbox, timeoutMs: 30_000 });
  expect(result.code).toBe(0);
  const children = fake.requests.filter((req) => senderOf(req) !== "root");
  expect(children).toHaveLength(3);
  expect(overlaps(children).length).toBeGreaterThan(0);
});

test("a token cap serializes the campaign's model calls and admits only the children it fits (BUD-06)", async () => {
  // Root calls spend 110 each, children 4,500: after two children at most 890 tokens are left,
  // less than any request's input (a child's is about 1,300 tokens, the root's 2,500).
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxCampaignTokens: 10_000 }, multiAgent: { maxRetries: 0 } }));
  scriptCampaign();
  const result = await runZero(["run", "--json", "look three ways"], { sandbox, timeoutMs: 30_000 });
  const events = jsonLines(result.stdout);
  const models = fake.requests.filter((req) => req.protocol === "chat");
  // No two calls of the campaign were ever in flight together.
  expect(overlaps(models)).toEqual([]);
  // Exactly two children were admitted; the third never reached the provider.
  const admitted = CHILDREN.filter((name) => requestsOf(fake, name).length > 0);
  expect(admitted).toHaveLength(2);
  const refused = CHILDREN.find((name) => !admitted.includes(name))!;
  const spawned = events.filter((e) => e.type === "agent.spawned");
  expect(spawned).toHaveLength(3);
  const childEnds = events.filter((e) => e.type === "run.completed" && e.parentRunId !== null && e.parentRunId !== undefined);
  expect(childEnds).toHaveLength(3);
  expect(childEnds.filter((e) => e.status === "completed")).toHaveLength(2);
  const limited = childEnds.filter((e) => e.status === "limit");
  expect(limited).toHaveLength(1);
  expect(limited[0]).toMatchObject({ reason: "max_tokens", steps: 0 });
  const refusal = events.find((e) => e.type === "guard.triggered" && e.runId === limited[0]!.runId);
  expect(refusal).toMatchObject({ guard: "max_tokens" });
  expect(refusal!.message).toContain("limits.maxCampaignTokens");
  // The refused child is the one the fake never heard from.
  const refusedStart = events.find((e) => e.type === "run.started" && e.runId === limited[0]!.runId);
  expect(refusedStart!.task).toContain(refused);
  // The root's next call (its wait, or its answer after it) does not fit either: where it queued
  // among the children decides which; either way it ends on the budget, with the campaign's totals.
  const rootCalls = requestsOf(fake, "root").length;
  expect([1, 2]).toContain(rootCalls);
  const rootEnd = events.at(-1)!;
  expect(result.code).toBe(4);
  expect(rootEnd).toMatchObject({ type: "run.completed", status: "limit", reason: "max_tokens", steps: rootCalls });
  expect(rootEnd.campaign).toEqual({ runs: 4, tokens: rootCalls * 110 + 2 * 4_500 });
  // Every admitted call was told how much it may still produce.
  for (const req of models) expect(req.body.max_tokens).toBeLessThanOrEqual(10_000 - bodyTokens(req) * 0.8);
});

// ---- Surfaces: stream-json and host ------------------------------------------------------------

test("zero exec stream-json: usage lines carry costUsd for a priced model, none for an unpriced one", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel() }));
  fake.script([{ text: "priced", usage: { input: 1_000_000, output: 500_000 } }]);
  const priced = await runZero(["exec", "--output-format", "stream-json", "x"], { sandbox });
  expect(priced.code).toBe(0);
  const lines = priced.stdout.trim().split("\n").map((line) => JSON.parse(line));
  for (const line of lines) expect(outputEventSchema.safeParse(line).success).toBe(true);
  const usage = lines.filter((l) => l.type === "usage");
  expect(usage).toHaveLength(1);
  expect(usage[0]).toMatchObject({ promptTokens: 1_000_000, completionTokens: 500_000, totalTokens: 1_500_000, costUsd: 6 });

  fake.reset();
  sandbox.writeUserConfig(costConfig());
  fake.script([{ text: "unpriced", usage: { input: 1_000_000, output: 500_000 } }]);
  const unpriced = await runZero(["exec", "--output-format", "stream-json", "x"], { sandbox });
  expect(unpriced.code).toBe(0);
  const plain = unpriced.stdout.trim().split("\n").map((line) => JSON.parse(line)).filter((l) => l.type === "usage");
  expect(plain).toHaveLength(1);
  expect("costUsd" in plain[0]).toBe(false);
});

test("zero host: USAGE events carry cost_usd for a priced model", async () => {
  sandbox.writeUserConfig(costConfig({ models: pricedModel() }));
  fake.script([{ text: "priced", usage: { input: 1_000_000, output: 500_000 } }]);
  const line = JSON.stringify({ protocol_version: 1, type: "run", request_id: "r1", session_id: "s1", prompt: "hello", idempotency_key: "idem-r1", stream: true });
  const result = await runZero(["host", "--single-request"], { sandbox, stdin: `${line}\n` });
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const usage = lines.filter((l) => l.event_type === "USAGE");
  expect(usage.length).toBeGreaterThanOrEqual(1);
  expect(usage.at(-1)!.payload).toMatchObject({ prompt_tokens: 1_000_000, completion_tokens: 500_000, total_tokens: 1_500_000, cost_usd: 6 });
});
