/**
 * Delegation operations through the real CLI: background children and their injected
 * completions, wait, inspect, cancel (also by the parent's end or SIGINT), concurrency and the
 * writer lock, send. The fake answers each request from its sender's queue (see
 * delegation.test.ts), since children run alongside their parent.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { allText, conversationOf, delegate, INJECTED, injected, isAlive, killStrayAfterEach, parse, providerError, requestsOf, scriptBySender, slowText, spawn as spawnContract, task, toolResults, type Turn } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** One assistant turn spawning the task `taskName` (see task); `extra` adds to its contract. */
const spawn = (id: string, taskName: string, extra: Record<string, unknown> = {}): FakeTurn => spawnContract(id, task(taskName, extra));
/** A call on the child whose id the `from` call's result (in this request) named. */
const onChild = (id: string, from: string, args: Record<string, unknown>) => (req: RecordedRequest) => {
  const runId = parse(toolResults(req)[from]).childRunId;
  const withId = "runIds" in args ? { ...args, runIds: [runId] } : { ...args, runId };
  return delegate(id, withId);
};
/**
 * Root turns that keep waiting briefly on the child `from` named until `ready()` holds (each wait
 * differs, so the repetition guard stays quiet); the turn after them runs once it does.
 */
const waitUntilReady = (from: string, ready: () => boolean): Turn[] =>
  Array.from({ length: 20 }, (_, n) => (req: RecordedRequest) => (ready() ? null : onChild(`poll-${n}`, from, { operation: "wait", runIds: [], timeoutMs: 200 + n })(req)));
const SLEEPER = "echo $$ > sleeper.pid; exec sleep 100";
const sleeperStarted = () => existsSync(join(sandbox.workspace, "sleeper.pid")) && readFileSync(join(sandbox.workspace, "sleeper.pid"), "utf8").trim() !== "";

// A sleeper the product failed to kill must not outlive the test.
const stray = killStrayAfterEach(isAlive);

test("a background spawn answers at once; its completion is injected before the parent's next step", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [
      spawn("bg", "slow-look", { background: true }),
      // The parent stays busy (a slow reply) while the child finishes.
      { toolCalls: [{ name: "read", id: "r1", args: { path: "README.md" } }], chunkDelayMs: 500 },
      { text: "all done" },
    ],
    "slow-look": [slowText('```json\n{"summary": "BG-SUMMARY-MARKER"}\n```', 6, 150)],
  });
  const result = await runZero(["run", "--json", "look in the background"], { sandbox });
  expect(result.code).toBe(0);
  const roots = requestsOf(fake, "root");
  expect(roots).toHaveLength(3);
  const queued = parse(toolResults(roots[1]!).bg);
  expect(queued).toMatchObject({ status: "queued", agent: "explore", workspaceMode: "shared-readonly", permissionMode: "read-only" });
  expect(queued.childRunId).toMatch(/^run_/);
  expect(queued.taskId).toStartWith("slow-look");

  // The spawn's result reached the parent before the child's model call finished.
  const events = jsonLines(result.stdout);
  const spawnDone = events.findIndex((e) => e.type === "tool.completed" && e.callId === "bg");
  const childDone = events.findIndex((e) => e.type === "run.completed" && e.runId === queued.childRunId);
  expect(spawnDone).toBeGreaterThan(-1);
  expect(childDone).toBeGreaterThan(spawnDone);
  // The child's reply streams for about a second; the parent asked again long before it ended.
  expect(roots[1]!.receivedAt).toBeLessThan(requestsOf(fake, "slow-look")[0]!.receivedAt + 600);

  expect(injected(roots[1]!)).toEqual([]);
  const handed = injected(roots[2]!);
  expect(handed).toHaveLength(1);
  expect(handed[0]).toStartWith(`${INJECTED} ${queued.childRunId} (task ${queued.taskId}) finished:`);
  const completion = JSON.parse(handed[0]!.slice(handed[0]!.indexOf("\n") + 1));
  expect(completion).toMatchObject({ childRunId: queued.childRunId, taskId: queued.taskId, status: "completed", summary: "BG-SUMMARY-MARKER", findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [] });
  expect(events.find((e) => e.type === "agent.spawned")).toMatchObject({ background: true, childRunId: queued.childRunId });
});

test("wait with a short timeout leaves a slow child pending; a later wait returns it, and it is not injected again", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [
      spawn("bg", "slow-child", { background: true }),
      onChild("w1", "bg", { operation: "wait", runIds: [], timeoutMs: 100 }),
      onChild("w2", "bg", { operation: "wait", runIds: [], timeoutMs: 20_000 }),
      { toolCalls: [{ name: "read", id: "r1", args: { path: "README.md" } }] },
      { text: "done" },
    ],
    "slow-child": [slowText("SLOW-CHILD-ANSWER", 8, 150)],
  });
  const result = await runZero(["run", "--json", "wait for it"], { sandbox });
  expect(result.code).toBe(0);
  const roots = requestsOf(fake, "root");
  expect(roots).toHaveLength(5);
  const childRunId = parse(toolResults(roots[1]!).bg).childRunId;
  const first = parse(toolResults(roots[2]!).w1);
  expect(first.completed).toEqual([]);
  expect(first.pending).toHaveLength(1);
  expect(first.pending[0]).toMatchObject({ childRunId });
  expect(["queued", "running"]).toContain(first.pending[0].status);
  const second = parse(toolResults(roots[3]!).w2);
  expect(second.pending).toEqual([]);
  expect(second.completed).toHaveLength(1);
  expect(second.completed[0]).toMatchObject({ childRunId, status: "completed" });
  expect(second.completed[0].summary).toStartWith("SLOW-CHILD-ANSWER");
  // The timeout did not cancel the child, and the wait consumed its completion.
  expect(requestsOf(fake, "slow-child")).toHaveLength(1);
  for (const req of roots) expect(injected(req)).toEqual([]);
  expect(jsonLines(result.stdout).find((e) => e.type === "run.completed" && e.runId === childRunId)).toMatchObject({ status: "completed" });
});

test("inspect reports the child's run, task and message count without its transcript", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("d1", "look-around"), onChild("i1", "d1", { operation: "inspect" }), { text: "ok" }],
    "look-around": [
      { text: "INTERMEDIATE-THOUGHT-MARKER", toolCalls: [{ name: "read", id: "r1", args: { path: "README.md" } }] },
      { text: '```json\n{"summary": "short summary"}\n```' },
    ],
  });
  const result = await runZero(["run", "--json", "look"], { sandbox });
  expect(result.code).toBe(0);
  const roots = requestsOf(fake, "root");
  const childRunId = parse(toolResults(roots[1]!).d1).childRunId;
  const raw = toolResults(roots[2]!).i1!;
  const inspected = parse(raw);
  expect(inspected.run).toMatchObject({ id: childRunId, agent: "explore", status: "completed", depth: 1, permissionMode: "read-only", rootRunId: jsonLines(result.stdout)[0]!.runId });
  expect(inspected.task).toMatchObject({ taskName: "look-around", acceptanceCriteria: ["Report what you saw"] });
  expect(inspected.result).toMatchObject({ status: "completed", summary: "short summary" });
  // user task, assistant call, tool result, final answer
  expect(inspected.retainedMessages).toBeGreaterThanOrEqual(4);
  expect(raw).not.toContain("INTERMEDIATE-THOUGHT-MARKER");
  expect(raw).not.toContain("The answer is 42");
  expect(raw).not.toContain("# Delegated task");
});

test("cancel stops a running child and kills the command it started; a send continues it without a retry", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } }, multiAgent: { maxRetries: 0 } }));
  const pidFile = join(sandbox.workspace, "sleeper.pid");
  let aliveAfterCancel: boolean | undefined;
  const sleeperPid = () => Number(readFileSync(pidFile, "utf8").trim());
  scriptBySender(fake, {
    root: [
      spawn("bg", "sleeper", { background: true, agent: "verify", deliverable: "test_result" }),
      // Waits until the child's command runs; a wait that times out cancels nothing.
      ...waitUntilReady("bg", sleeperStarted),
      onChild("c1", "bg", { operation: "cancel" }),
      (req) => {
        stray.pid = sleeperPid();
        aliveAfterCancel = isAlive(stray.pid);
        return onChild("i1", "bg", { operation: "inspect" })(req);
      },
      onChild("s1", "bg", { operation: "send", message: "RESUME-AFTER-CANCEL" }),
      { text: "cancelled it" },
    ],
    sleeper: [{ toolCalls: [{ name: "run", id: "sleep", args: { command: SLEEPER } }] }, { text: "resumed after the cancel" }],
  });
  const result = await runZero(["run", "--json", "-y", "start and stop"], { sandbox, timeoutMs: 20_000 });
  expect(result.code).toBe(0);
  const last = requestsOf(fake, "root").at(-1)!;
  const answers = toolResults(last);
  const childRunId = parse(answers.bg).childRunId;
  expect(parse(answers.c1)).toEqual({ childRunId, status: "cancelled" });
  expect(existsSync(pidFile)).toBe(true);
  expect(aliveAfterCancel).toBe(false);
  expect(isAlive(sleeperPid())).toBe(false);
  expect(parse(answers.i1).run.status).toBe("cancelled");
  // A cancelled child is continued, not retried: maxRetries 0 does not stop it.
  expect(parse(answers.s1)).toMatchObject({ childRunId, summary: "resumed after the cancel" });
  expect(requestsOf(fake, "sleeper")).toHaveLength(2);
  expect(allText(requestsOf(fake, "sleeper")[1]!)).toContain("RESUME-AFTER-CANCEL");
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "agent.completed")).toMatchObject({ childRunId, status: "cancelled" });
  expect(events.find((e) => e.type === "run.completed" && e.runId === childRunId)).toMatchObject({ status: "cancelled" });
});

test("ending the parent cancels its unfinished background child and kills its command", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } } }));
  const pidFile = join(sandbox.workspace, "sleeper.pid");
  scriptBySender(fake, {
    root: [spawn("bg", "left-behind", { background: true, agent: "verify", deliverable: "test_result" }), ...waitUntilReady("bg", sleeperStarted), { text: "leaving now" }],
    "left-behind": [{ toolCalls: [{ name: "run", id: "sleep", args: { command: SLEEPER } }] }, { text: "never" }],
  });
  const result = await runZero(["run", "--json", "-y", "start and leave"], { sandbox, timeoutMs: 20_000 });
  expect(result.code).toBe(0);
  expect(existsSync(pidFile)).toBe(true);
  stray.pid = Number(readFileSync(pidFile, "utf8").trim());
  expect(isAlive(stray.pid)).toBe(false);
  const childRunId = parse(toolResults(requestsOf(fake, "root")[1]!).bg).childRunId;
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "run.completed" && e.runId === childRunId)).toMatchObject({ status: "cancelled" });
  expect(events.at(-1)).toMatchObject({ type: "run.completed", runId: events[0]!.runId, status: "completed", text: "leaving now" });
});

test("SIGINT during a background child cancels it and kills its command", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } } }));
  const pidFile = join(sandbox.workspace, "sleeper.pid");
  scriptBySender(fake, {
    root: [spawn("bg", "interrupted", { background: true, agent: "verify", deliverable: "test_result" }), onChild("w1", "bg", { operation: "wait", runIds: [], timeoutMs: 30_000 }), { text: "unreachable" }],
    interrupted: [{ toolCalls: [{ name: "run", id: "sleep", args: { command: SLEEPER } }] }, { text: "never" }],
  });
  const zero = spawnZero(["run", "--json", "-y", "start and be interrupted"], { sandbox, timeoutMs: 20_000 });
  await waitUntil("the child's command to start", sleeperStarted, 10_000);
  stray.pid = Number(readFileSync(pidFile, "utf8").trim());
  zero.proc.kill("SIGINT");
  const result = await zero.result;
  expect(result.code).toBe(130);
  expect(isAlive(stray.pid)).toBe(false);
  const events = jsonLines(result.stdout);
  const childRunId = events.find((e) => e.type === "agent.spawned")!.childRunId;
  expect(events.find((e) => e.type === "run.completed" && e.runId === childRunId)).toMatchObject({ status: "cancelled" });
  expect(events.at(-1)).toMatchObject({ type: "run.completed", runId: events[0]!.runId, status: "cancelled" });
});

test("medium depth runs at most 3 children at once; ordinary fan-out leaves the 6th run to a review (WD-11)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  // 6 runs at medium: the root, four analyses, and one held back for a review: the fifth analysis is refused.
  const names = ["c1", "c2", "c3", "c4", "c5", "r1"];
  const turns: Record<string, Array<FakeTurn | ((req: RecordedRequest) => FakeTurn)>> = {
    root: [
      {
        toolCalls: names.map((name) => ({
          name: "delegate",
          id: name,
          args: { operation: "spawn", taskName: name, goal: `Carry out ${name}`, deliverable: name === "r1" ? "review" : "analysis", acceptanceCriteria: ["Report"], background: true },
        })),
      },
      (req) => {
        const ids = Object.values(toolResults(req)).flatMap((text) => (text.startsWith("{") ? [parse(text).childRunId] : []));
        return delegate("w1", { operation: "wait", runIds: ids, timeoutMs: 20_000 });
      },
      { text: "ok" },
    ],
  };
  for (const name of names) turns[name] = [name === "r1" ? { text: '{"summary": "fine", "verdict": "approve"}', chunkDelayMs: 150 } : slowText(`done ${name}`, 4, 150)];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", "fan out"], { sandbox });
  expect(result.code).toBe(0);
  const answers = toolResults(requestsOf(fake, "root")[1]!);
  expect(answers.c5).toContain("1 reserved for a review");
  const waited = parse(toolResults(requestsOf(fake, "root")[2]!).w1);
  expect(waited.completed.map((r: any) => r.status)).toEqual(Array(5).fill("completed"));
  expect(names.filter((name) => requestsOf(fake, name).length > 0)).toEqual(["c1", "c2", "c3", "c4", "r1"]);

  // Replay the children's lifecycle from the event stream: never more than 3 at once, and 3 really did overlap.
  let running = 0;
  let peak = 0;
  for (const event of jsonLines(result.stdout)) {
    if (event.parentRunId === null || event.parentRunId === undefined) continue;
    if (event.type === "run.started") peak = Math.max(peak, ++running);
    if (event.type === "run.completed") running--;
  }
  expect(peak).toBe(3);
});

test("shared-write children on one checkout take turns while read-only children overlap", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  // Six slots at pro depth: without the writer lock both writers would start at once.
  const children = { "write-a": "verify", "write-b": "verify", "read-a": "explore", "read-b": "explore" } as const;
  const turns: Record<string, Array<FakeTurn | ((req: RecordedRequest) => FakeTurn)>> = {
    root: [
      {
        toolCalls: Object.entries(children).map(([name, agent]) => ({
          name: "delegate",
          id: name,
          args: { operation: "spawn", taskName: name, agent, goal: `Carry out ${name}`, deliverable: agent === "verify" ? "test_result" : "analysis", acceptanceCriteria: ["Report"], background: true },
        })),
      },
      (req) => delegate("w1", { operation: "wait", runIds: Object.values(toolResults(req)).map((text) => parse(text).childRunId), timeoutMs: 20_000 }),
      { text: "ok" },
    ],
  };
  for (const name of Object.keys(children)) turns[name] = [slowText(`done ${name}`, 4, 150)];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", "--depth", "pro", "fan out"], { sandbox });
  expect(result.code).toBe(0);
  expect(parse(toolResults(requestsOf(fake, "root")[2]!).w1).completed).toHaveLength(4);
  const events = jsonLines(result.stdout);
  const agentOf = new Map(events.filter((e) => e.type === "agent.spawned").map((e) => [e.childRunId, e.agent]));
  const live = new Set<string>();
  let writersAtOnce = 0;
  let readersAtOnce = 0;
  for (const event of events) {
    if (!agentOf.has(event.runId)) continue;
    if (event.type === "run.started") live.add(event.runId);
    if (event.type === "run.completed") live.delete(event.runId);
    const agents = [...live].map((id) => agentOf.get(id));
    writersAtOnce = Math.max(writersAtOnce, agents.filter((a) => a === "verify").length);
    readersAtOnce = Math.max(readersAtOnce, agents.filter((a) => a === "explore").length);
  }
  expect(writersAtOnce).toBe(1);
  expect(readersAtOnce).toBe(2);
});

test("writers queued behind the checkout lock leave the concurrency budget to other work", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const writer = (name: string) => ({ name: "delegate", id: name, args: { operation: "spawn", taskName: name, agent: "verify", goal: "Check", deliverable: "test_result", acceptanceCriteria: ["Report"], background: true } });
  scriptBySender(fake, {
    root: [
      // Three writers on one checkout fill the three medium-depth slots only if the queued two hold theirs.
      { toolCalls: [writer("write-a"), writer("write-b"), writer("write-c")] },
      spawn("reader", "read-a", { background: true }),
      (req) => delegate("w1", { operation: "wait", runIds: Object.values(toolResults(req)).map((text) => parse(text).childRunId), timeoutMs: 20_000 }),
      { text: "ok" },
    ],
    "write-a": [slowText("a", 4, 250)],
    "write-b": [slowText("b", 4, 250)],
    "write-c": [slowText("c", 4, 250)],
    "read-a": [{ text: "read" }],
  });
  const result = await runZero(["run", "--json", "fan out"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const spawned = new Map(events.filter((e) => e.type === "agent.spawned").map((e) => [e.taskName, e.childRunId]));
  const readerStarted = events.findIndex((e) => e.type === "run.started" && e.runId === spawned.get("read-a"));
  const firstWriterDone = events.findIndex((e) => e.type === "run.completed" && [spawned.get("write-a"), spawned.get("write-b"), spawned.get("write-c")].includes(e.runId));
  expect(readerStarted).toBeGreaterThan(-1);
  expect(readerStarted).toBeLessThan(firstWriterDone);
});

test("send refuses a running child, then continues it with its own history once it finished", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { maxRetries: 0 } }));
  scriptBySender(fake, {
    root: [
      spawn("bg", "remember", { background: true }),
      onChild("s1", "bg", { operation: "send", message: "too early" }),
      onChild("w1", "bg", { operation: "wait", runIds: [], timeoutMs: 20_000 }),
      onChild("s2", "bg", { operation: "send", message: "FOLLOW-UP-ONE" }),
      onChild("s3", "bg", { operation: "send", message: "FOLLOW-UP-TWO" }),
      { text: "ok" },
    ],
    remember: [slowText("FIRST-ANSWER-MARKER", 5, 120), { text: "SECOND-ANSWER-MARKER" }, { text: "THIRD-ANSWER-MARKER" }],
  });
  const result = await runZero(["run", "--json", "talk to a child"], { sandbox });
  expect(result.code).toBe(0);
  const roots = requestsOf(fake, "root");
  expect(toolResults(roots[2]!).s1).toContain("still running");
  expect(parse(toolResults(roots[3]!).w1).completed[0].status).toBe("completed");
  // Successful follow-ups are continuations, not retries: maxRetries 0 allows both.
  expect(parse(toolResults(roots[4]!).s2)).toMatchObject({ status: "completed", summary: "SECOND-ANSWER-MARKER" });
  expect(parse(toolResults(roots[5]!).s3)).toMatchObject({ status: "completed", summary: "THIRD-ANSWER-MARKER" });

  const child = requestsOf(fake, "remember");
  expect(child).toHaveLength(3);
  const second = conversationOf(child[1]!);
  expect(second[0]).toStartWith("user: # Delegated task: remember");
  expect(second.slice(1)).toEqual([expect.stringContaining("assistant: FIRST-ANSWER-MARKER"), "user: FOLLOW-UP-ONE"]);
  expect(conversationOf(child[2]!).slice(-3)).toEqual(["user: FOLLOW-UP-ONE", "assistant: SECOND-ANSWER-MARKER", "user: FOLLOW-UP-TWO"]);
  const spawned = jsonLines(result.stdout).filter((e) => e.type === "agent.spawned");
  expect(spawned.map((e) => e.followUp)).toEqual([false, true, true]);
  expect(new Set(spawned.map((e) => e.childRunId)).size).toBe(1);
});

test("a failed child may be resumed only multiAgent.maxRetries times", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { maxRetries: 1 } }));
  scriptBySender(fake, {
    root: [
      spawn("d1", "flaky"),
      onChild("s1", "d1", { operation: "send", message: "try again" }),
      onChild("s2", "d1", { operation: "send", message: "and again" }),
      { text: "gave up" },
    ],
    flaky: [providerError, providerError],
  });
  const result = await runZero(["run", "--json", "use a flaky child"], { sandbox });
  expect(result.code).toBe(0);
  const roots = requestsOf(fake, "root");
  expect(parse(toolResults(roots[1]!).d1).status).toBe("failed");
  expect(parse(toolResults(roots[2]!).s1).status).toBe("failed");
  expect(toolResults(roots[3]!).s2).toContain("already used 1 of multiAgent.maxRetries 1");
  // Never retried on its own: the one spawn and the one allowed retry.
  expect(requestsOf(fake, "flaky")).toHaveLength(2);
  expect(jsonLines(result.stdout).filter((e) => e.type === "agent.spawned")).toHaveLength(2);
});
