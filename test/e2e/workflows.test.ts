/**
 * Workflows (`zero run --workflow`): the application picks each phase's agent. Phases are child
 * runs of one coordinator run (one campaign), in dependency order, each handed its direct
 * dependencies' results; read-only phases overlap, a failed phase skips its dependants.
 */
import { expect, test } from "bun:test";
import type { FakeProvider, FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { allText, scriptBySender, senderOf } from "../support/delegation.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const three = { provider: "fake", capabilities: ["text", "tools"] };
/** Three aliases on the one fake, so the request's `model` says which phase sent it. */
const models = { planner: { ...three, model: "planner-1" }, coder: { ...three, model: "coder-1" }, reviewer: { ...three, model: "reviewer-1" } };

/** Answers every request by the phase that sent it (its task heading names the step id). */
function answerBy(replies: Record<string, FakeTurn | ((req: RecordedRequest) => FakeTurn)>, count: number): void {
  fake.script(
    Array.from({ length: count }, () => (req: RecordedRequest): FakeTurn => {
      const reply = replies[senderOf(req)] ?? { kind: "error", status: 400, message: `no reply for ${senderOf(req)}` };
      return typeof reply === "function" ? reply(req) : reply;
    }),
  );
}

test("a string-list workflow runs its phases in order, each on its own agent's model, each handed the previous result", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models,
      agents: { plan: { model: "planner" }, build: { model: "coder" }, review: { model: "reviewer" } },
      workflows: { feature: { steps: ["plan", "build", "review"] } },
    }),
  );
  scriptBySender(fake, {
    plan: [{ text: '{"summary": "PLAN: touch a.txt", "steps": [{"id": "s1", "description": "write a.txt", "dependencies": []}]}' }],
    build: [{ toolCalls: [{ name: "write", id: "w1", args: { operation: "write", path: "a.txt", content: "traced\n" } }] }, { text: '{"summary": "BUILD done"}' }],
    review: [{ text: '{"summary": "REVIEW ok", "verdict": "approve", "issues": []}' }],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "accept-edits", "-w", "feature", "add tracing"], { sandbox });
  expect(result.code).toBe(0);
  expect(readFileSync(join(sandbox.workspace, "a.txt"), "utf8")).toBe("traced\n");
  const events = jsonLines(result.stdout);
  const root = events[0]!;
  expect(root).toMatchObject({ type: "run.started", agent: "workflow:feature", parentRunId: null });
  expect(fake.requests.map((r) => r.body.model)).toEqual(["planner-1", "coder-1", "coder-1", "reviewer-1"]);
  // No overlap: each phase starts after the previous one answered.
  for (let i = 1; i < fake.requests.length; i++) expect(fake.requests[i]!.receivedAt).toBeGreaterThanOrEqual(fake.requests[i - 1]!.answeredAt!);
  // Handoffs: build sees the plan's result, review sees build's (its direct dependency) and not the plan's.
  expect(allText(fake.requests[1]!)).toContain("PLAN: touch a.txt");
  expect(allText(fake.requests[3]!)).toContain("BUILD done");
  expect(allText(fake.requests[3]!)).not.toContain("PLAN: touch a.txt");
  const spawned = events.filter((e) => e.type === "agent.spawned" && e.runId === root.runId);
  expect(spawned.map((e) => [e.taskName, e.agent])).toEqual([["plan", "plan"], ["build", "build"], ["review", "review"]]);
  const end = events.at(-1)!;
  expect(end).toMatchObject({ type: "run.completed", runId: root.runId, campaign: { runs: 4 } });
  expect(end.text).toContain("plan completed, build completed, review completed");
});

test("--model goes to every phase; --resume with --workflow is refused", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models, workflows: { pair: { steps: ["explore", "review"] } } }));
  answerBy({ explore: { text: "looked" }, review: { text: '{"summary": "fine", "verdict": "approve"}' } }, 2);
  const result = await runZero(["run", "-w", "pair", "-m", "coder", "look"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests.map((r) => r.body.model)).toEqual(["coder-1", "coder-1"]);
  const refused = await runZero(["run", "-w", "pair", "--resume", "latest", "again"], { sandbox });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("--workflow cannot be combined with --resume");
  const unknown = await runZero(["run", "-w", "nope", "x"], { sandbox });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("unknown workflow 'nope' (known: feature, pair)");
});

test("graph steps: independent read-only phases overlap, a failed phase is retried then skips its dependant", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      workflows: {
        g: {
          steps: [
            { id: "backend", agent: "explore" },
            { id: "tests", agent: "explore" },
            { id: "build", agent: "build", dependsOn: ["backend", "tests"], maxRetries: 1 },
            { id: "review", agent: "review", dependsOn: ["build"] },
          ],
        },
      },
    }),
  );
  answerBy(
    {
      backend: { text: ["backend ", "found"], chunkDelayMs: 150 },
      tests: { text: ["tests ", "found"], chunkDelayMs: 150 },
      // A patch phase that changes nothing does not complete (no observed change): retried once, then given up.
      build: { text: '{"summary": "nothing to do"}' },
      "build-retry-1": { text: '{"summary": "still nothing"}' },
    },
    4,
  );
  const result = await runZero(["run", "--json", "-w", "g", "x"], { sandbox });
  expect(result.code).toBe(1);
  const [a, b] = fake.requests;
  expect(b!.receivedAt).toBeLessThan(a!.answeredAt! + 300); // the second read-only phase started while the first streamed
  expect(fake.requests.map(senderOf)).toEqual(expect.arrayContaining(["backend", "tests", "build", "build-retry-1"]));
  expect(fake.requests.some((r) => senderOf(r) === "review")).toBe(false);
  const end = jsonLines(result.stdout).at(-1)!;
  expect(end).toMatchObject({ type: "run.completed", status: "failed" });
  expect(end.text).toContain("review skipped");
});

test("phases share one campaign budget: a phase the token cap cannot admit stops the workflow by a limit (exit 4)", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", { limits: { maxCampaignTokens: 6_000 }, workflows: { look: { steps: [{ id: "a", agent: "explore" }, { id: "b", agent: "explore", dependsOn: ["a"] }] } } }),
  );
  scriptBySender(fake, { a: [{ text: "a looked", usage: { input: 4_000, output: 1_000 } }], b: [{ text: "never" }] });
  const result = await runZero(["run", "--json", "-w", "look", "x"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests.map(senderOf)).toEqual(["a"]);
  const end = jsonLines(result.stdout).at(-1)!;
  expect(end).toMatchObject({ type: "run.completed", status: "limit", reason: "max_tokens", campaign: { tokens: 5_000 } });
});

test("independent phases that can write never overlap; a workflow's run cannot be resumed", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workflows: { two: { steps: [{ id: "w1", agent: "verify" }, { id: "w2", agent: "verify" }] } } }));
  const slow = (text: string) => ({ text: [text, " ", "done"], chunkDelayMs: 150 });
  scriptBySender(fake, { w1: [slow("first")], w2: [slow("second")] });
  const result = await runZero(["run", "--json", "-w", "two", "check twice"], { sandbox });
  const [a, b] = fake.requests;
  expect(fake.requests.map(senderOf)).toEqual(["w1", "w2"]);
  // The second shared-write phase starts only after the first one's whole answer (3 chunks × 150 ms).
  expect(b!.receivedAt).toBeGreaterThanOrEqual(a!.answeredAt! + 300);
  const root = jsonLines(result.stdout)[0]!;
  const refused = await runZero(["run", "--resume", root.sessionId, "again"], { sandbox });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("was a workflow run");
});
