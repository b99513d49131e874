/**
 * Work depth takes effect (RUN-05, WD-01, WD-02, WD-09): the preset bounds a run's model steps,
 * `--depth` changes it for one run only, a profile's own lower ceiling still wins, and the run's
 * deadline is the campaign's duration at that depth.
 */
import { expect, test } from "bun:test";
import type { FakeProvider, FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, type Sandbox } from "../support/cli.ts";
import { senderOf } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** A model that never stops calling tools (the reads differ, so the repetition guard stays out of it). */
const endless = (count: number): FakeTurn[] =>
  Array.from({ length: count }, (_, i) => ({ toolCalls: [{ name: "read", id: `c${i}`, args: { path: "README.md", offset: (i % 3) + 1 } }] }));

test("--depth flash stops a run at 8 model steps; the next run without it gets medium's 24", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "medium" }));
  fake.script(endless(40));
  const flash = await runZero(["run", "--json", "--depth", "flash", "keep reading"], { sandbox });
  expect(flash.code).toBe(4);
  expect(fake.requests).toHaveLength(8);
  const flashEvents = jsonLines(flash.stdout);
  expect(flashEvents[0]).toMatchObject({ type: "run.started", workDepth: "flash", budgets: { maxSteps: 8, maxToolCalls: 32, timeoutMs: 120_000 } });
  expect(flashEvents.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "max_steps" });

  fake.reset();
  fake.script(endless(40));
  const medium = await runZero(["run", "--json", "keep reading"], { sandbox });
  expect(medium.code).toBe(4);
  expect(fake.requests).toHaveLength(24);
  expect(jsonLines(medium.stdout)[0]).toMatchObject({ workDepth: "medium", budgets: { maxSteps: 24, maxToolCalls: 96, timeoutMs: 30 * 60_000 } });
}, 60_000);

test("a profile's own lower ceiling wins over the preset (maxSteps 5 at ultra)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra", agents: { build: { maxSteps: 5 } } }));
  fake.script(endless(20));
  const result = await runZero(["run", "--json", "keep reading"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(5);
  expect(jsonLines(result.stdout)[0]).toMatchObject({ workDepth: "ultra", budgets: { maxSteps: 5, maxToolCalls: 500 } });
}, 60_000);

test("a resumed run keeps its campaign: the children it started and their tokens still count, the deadline stays (WD-12)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { runTimeoutMs: 600_000 } }));
  const child = (req: RecordedRequest) => senderOf(req) !== "root";
  fake.script([
    { toolCalls: [{ name: "delegate", id: "d1", args: { operation: "spawn", taskName: "look", goal: "Look", deliverable: "analysis", acceptanceCriteria: ["Say it"] } }], usage: { input: 100, output: 10 } },
    (req) => (child(req) ? { text: "looked", usage: { input: 1_000, output: 100 } } : { kind: "error", status: 400 }),
    { text: ["partial ", "never finished"], stallAfterChunks: 1 },
  ]);
  const { proc, result } = spawnZero(["run", "--json", "long task"], { sandbox });
  await fake.waitForRequests(3, 10_000);
  await Bun.sleep(300);
  proc.kill("SIGKILL");
  const killed = jsonLines((await result).stdout);
  const started = killed[0]!;

  fake.script([{ text: "finished now", usage: { input: 50, output: 5 } }]);
  const resumed = await runZero(["run", "--json", "--resume-run", "latest", "please continue"], { sandbox });
  expect(resumed.code).toBe(0);
  const events = jsonLines(resumed.stdout);
  expect(events[0]).toMatchObject({ runId: started.runId, budgets: { deadline: started.budgets.deadline } });
  // The campaign counts the root and its child (2 runs) and every token, the child's 1,100 included.
  expect(events.at(-1)).toMatchObject({ type: "run.completed", campaign: { runs: 2, tokens: 110 + 1_100 + 55 } });
});
