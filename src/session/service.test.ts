import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "../../test/support/cli.ts";
import { useFakeProviderAndSandbox } from "../../test/support/e2e-hooks.ts";
import type { FakeProvider } from "../../test/support/fake-provider.ts";
import { lazyWorkspaceStore } from "../../test/support/workspace-store.ts";
import { loadConfig } from "../config/load.ts";
import type { RuntimeEvent } from "../protocol/events.ts";
import { createSessionService, type SessionServiceOptions } from "./service.ts";

// The session service with the real model runner against the fake provider over HTTP,
// and the real store: what every surface runs on.

let fake: FakeProvider;
let sandbox: Sandbox;
let stores: ReturnType<typeof lazyWorkspaceStore> | undefined;
/** The store, once a run opened it. */
const store = () => stores?.current();

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });
afterEach(() => {
  stores?.close();
  stores = undefined;
});

function service(overrides: Partial<SessionServiceOptions> = {}) {
  const loaded = loadConfig({ workspace: sandbox.workspace, env: sandbox.env });
  stores ??= lazyWorkspaceStore(sandbox.env, sandbox.workspace);
  return createSessionService({
    config: loaded.config,
    env: sandbox.env,
    workspace: sandbox.workspace,
    extraDirs: [],
    surface: "tui",
    overrides: {},
    store: stores.access,
    ...overrides,
  });
}

const write = (path: string, content: string) => ({ name: "write", args: { operation: "write", path, content } });

test("'always' lasts for the session: the next turn's same call is not asked again, another target is", async () => {
  const sessions = service({ interactive: true });
  const session = sessions.open({ kind: "new" });
  const asked: string[] = [];
  // An interactive surface: it sees permission requests as events and answers through the service.
  session.subscribe((event) => {
    if (event.type !== "permission.requested") return;
    asked.push(event.target ?? "");
    queueMicrotask(() => session.answerApproval(event.callId, "always"));
  });
  fake.script([
    { toolCalls: [write("notes.txt", "one")] },
    { text: "wrote it" },
    { toolCalls: [write("notes.txt", "two")] },
    { text: "wrote it again" },
    { toolCalls: [write("other.txt", "three")] },
    { text: "and another" },
  ]);
  const first = await session.send("write notes").done;
  expect(first.exitCode).toBe(0);
  const events: RuntimeEvent[] = [];
  const second = await session.send("write notes again", { listeners: [(event) => events.push(event)] }).done;
  expect(second.exitCode).toBe(0);
  expect(readFileSync(join(sandbox.workspace, "notes.txt"), "utf8")).toBe("two");
  // Turn 2 was allowed by turn 1's "always", without asking.
  expect(events.filter((e) => e.type === "permission.requested")).toHaveLength(0);
  expect(events.find((e) => e.type === "permission.decided")).toMatchObject({ decision: "allow", source: "session" });
  // Another file is another target: asked again.
  expect((await session.send("write another").done).exitCode).toBe(0);
  expect(asked).toEqual(["notes.txt", "other.txt"]);
  // A new session asks again.
  const fresh = sessions.open({ kind: "new" });
  const freshEvents: RuntimeEvent[] = [];
  fake.script([{ toolCalls: [write("notes.txt", "four")] }, { text: "done" }]);
  fresh.subscribe((event) => {
    if (event.type === "permission.requested") queueMicrotask(() => fresh.answerApproval(event.callId, "deny"));
  });
  await fresh.send("write notes", { listeners: [(event) => freshEvents.push(event)] }).done;
  expect(freshEvents.filter((e) => e.type === "permission.requested")).toHaveLength(1);
  expect(readFileSync(join(sandbox.workspace, "notes.txt"), "utf8")).toBe("two");
});

test("turns of one session run one at a time, in order, each continuing the last", async () => {
  const session = service().open({ kind: "new" });
  fake.script([{ text: "first answer", chunkDelayMs: 30 }, { text: "second answer" }]);
  const [a, b] = [session.send("first task"), session.send("second task")];
  const [one, two] = await Promise.all([a.done, b.done]);
  expect([one.text, two.text]).toEqual(["first answer", "second answer"]);
  const second = JSON.stringify(fake.requests[1]!.body);
  expect(second).toContain("first task");
  expect(second).toContain("first answer");
  expect(second.indexOf("first answer")).toBeLessThan(second.indexOf("second task"));
});

test("a queued turn cancelled before it starts never runs", async () => {
  const session = service().open({ kind: "new" });
  fake.script([{ text: "slow", chunkDelayMs: 50 }]);
  const first = session.send("one");
  const second = session.send("two");
  second.cancel();
  expect((await first.done).exitCode).toBe(0);
  expect(second.done).rejects.toThrow("cancelled before the run started");
  expect(fake.requests).toHaveLength(1);
});

test("the history is written incrementally: bytes per step stay flat as the session grows", async () => {
  const session = service().open({ kind: "new" });
  // Different arguments each step: identical consecutive calls would trip the repetition guard.
  const read = (step: number) => ({ name: "read", args: { path: "README.md", limit: step + 1 } });
  const perStep: number[][] = [];
  const turns = 6;
  for (let turn = 0; turn < turns; turn++) {
    const steps: number[] = [];
    let before = store()?.bytesWritten() ?? 0;
    const measure = (event: RuntimeEvent) => {
      // A step's writes are done by the next step's start (its messages, checkpoint and events).
      if (event.type !== "step.started" && event.type !== "run.completed") return;
      const now = store()?.bytesWritten() ?? 0;
      if (event.type === "run.completed" || (event.type === "step.started" && event.step > 1)) steps.push(now - before);
      before = now;
    };
    fake.script([...Array.from({ length: 8 }, (_, step) => ({ toolCalls: [read(step)] })), { text: `turn ${turn} done` }]);
    const outcome = await session.send(`turn ${turn}`, { listeners: [measure] }).done;
    expect(outcome.exitCode).toBe(0);
    perStep.push(steps.slice(0, 8));
  }
  const average = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const firstTurn = average(perStep[0]!);
  const lastTurn = average(perStep.at(-1)!);
  // Writing the whole history each step would make the last turn's steps about six times as big.
  expect(lastTurn / firstTurn).toBeLessThan(1.25);
  expect(store()!.loadMessages(session.id)).toHaveLength(turns * 18);
});

test("subscribe replays a session's stored events after a point, then goes on live", async () => {
  const sessions = service();
  const session = sessions.open({ kind: "new" });
  fake.script([{ text: "one" }, { text: "two" }]);
  await session.send("first").done;
  const replayed: RuntimeEvent[] = [];
  const unsubscribe = session.subscribe((event) => replayed.push(event), { after: 0 });
  expect(replayed[0]?.type).toBe("run.started");
  expect(replayed.at(-1)?.type).toBe("run.completed");
  const before = replayed.length;
  await session.send("second").done;
  expect(replayed.slice(before).map((e) => e.type)).toContain("run.completed");
  expect(new Set(replayed.map((e) => e.runId)).size).toBe(2);
  unsubscribe();
});

test("an idle headless session is forgotten after its turn (a long-lived host does not grow); an interactive one is kept", async () => {
  fake.script([{ text: "a" }, { text: "b" }]);
  const headless = service({ surface: "host" });
  const first = headless.open({ kind: "named", sessionId: "room-1" });
  await first.send("hi").done;
  expect(headless.open({ kind: "named", sessionId: "room-1" })).not.toBe(first);
  const interactive = service({ interactive: true });
  const kept = interactive.open({ kind: "new" });
  await kept.send("hi").done;
  expect(interactive.open({ kind: "named", sessionId: kept.id })).toBe(kept);
});

test("compact() asks for a compaction before the next turn's first request; the next turn continues from it", async () => {
  const isCheckpoint = (body: any) => JSON.stringify(body.messages[0] ?? "").includes("checkpoint");
  fake.script([
    { text: "first answer" },
    { text: "second answer" },
    (req) => (isCheckpoint(req.body) ? { text: '{"task": "TASK FROM CHECKPOINT", "decisions": [], "filesTouched": [], "openQuestions": [], "nextSteps": []}' } : { kind: "error", status: 400 }),
    { text: "third answer" },
    { text: "fourth answer" },
  ]);
  const sessions = service();
  const session = sessions.open({ kind: "new" });
  await session.send("one").done;
  await session.send("two").done;
  session.compact();
  const events: RuntimeEvent[] = [];
  await session.send("three", { listeners: [(event) => events.push(event)] }).done;
  expect(events.find((e) => e.type === "context.compacted")).toMatchObject({ reason: "manual", fallback: false });
  const third = fake.requests[3]!.body;
  expect(JSON.stringify(third.messages)).toContain("TASK FROM CHECKPOINT");
  expect(JSON.stringify(third.messages)).not.toContain("first answer");
  // The next turn (no compaction asked) continues from the durable record.
  await session.send("four").done;
  expect(JSON.stringify(fake.requests[4]!.body.messages)).toContain("TASK FROM CHECKPOINT");
  sessions.shutdownSync();
});

test("onApprovalPending tells a surface when an approval waits, with what pendingApprovals lists; answering it lets the call run", async () => {
  const sessions = service({ interactive: true });
  const session = sessions.open({ kind: "new" });
  const seen: string[] = [];
  const stop = session.onApprovalPending((pending) => {
    seen.push(`${pending.tool} ${pending.target}`);
    expect(session.pendingApprovals().map((p) => p.callId)).toContain(pending.callId);
    session.answerApproval(pending.callId, "once");
  });
  fake.script([{ toolCalls: [write("pending.txt", "yes")] }, { text: "done" }]);
  expect((await session.send("write it").done).exitCode).toBe(0);
  expect(seen).toEqual(["write pending.txt"]);
  expect(readFileSync(join(sandbox.workspace, "pending.txt"), "utf8")).toBe("yes");
  stop();
  session.close();
});
