import type { Message } from "../protocol/messages.ts";
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { StoreError } from "./errors.ts";
import { processIsAlive } from "./records.ts";
import { openStore, type Checkpoint, type Store } from "./store.ts";
import { runRow, sessionRow, tempDirs } from "./store-test-support.ts";

const dirs = tempDirs();
const open: Store[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
  dirs.cleanup();
});

function storeIn(dir: string, options: { isAlive?: (pid: number) => boolean; checkpointsPerSession?: number; maxCheckpointBytes?: number } = {}): Store {
  const { store, notices } = openStore({ dir, ...options });
  expect(notices).toEqual([]);
  open.push(store);
  return store;
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof StoreError ? error.code : `not a StoreError: ${String(error)}`;
  }
  return "no error";
}

const W = "/work/project";

describe("sessions", () => {
  test("listed newest activity first, filtered by workspace and surface, with the status of the latest root run", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow({ id: "s-old", createdAt: "2025-01-01T00:00:00.000Z" }));
    store.createSession(sessionRow({ id: "s-mid", createdAt: "2025-01-02T00:00:00.000Z", surface: "tui" }));
    store.createSession(sessionRow({ id: "s-new", createdAt: "2025-01-03T00:00:00.000Z" }));
    store.createSession(sessionRow({ id: "s-other", createdAt: "2025-01-04T00:00:00.000Z", workspace: "/elsewhere" }));
    expect(store.listSessions({ workspace: W }).map((s) => s.id)).toEqual(["s-new", "s-mid", "s-old"]);

    store.touchSession("s-old", "2025-01-05T00:00:00.000Z");
    store.touchSession("s-old", "2024-12-31T00:00:00.000Z"); // never backwards
    expect(store.listSessions({ workspace: W }).map((s) => s.id)).toEqual(["s-old", "s-new", "s-mid"]);
    expect(store.getSession("s-old")?.updatedAt).toBe("2025-01-05T00:00:00.000Z");
    expect(store.listSessions({ workspace: W, surface: "tui" }).map((s) => s.id)).toEqual(["s-mid"]);
    expect(store.listSessions({ workspace: W, limit: 2 }).map((s) => s.id)).toEqual(["s-old", "s-new"]);
    expect(store.listSessions({ workspace: W, limit: 2, offset: 2 }).map((s) => s.id)).toEqual(["s-mid"]);
    expect(store.listSessions({ workspace: W, offset: 3 })).toEqual([]);

    expect(store.getSession("s-new")?.status).toBe("idle");
    store.createRun(runRow({ id: "r1", sessionId: "s-new", status: "completed", startedAt: "2025-01-06T00:00:00.000Z" }));
    store.createRun(runRow({ id: "r2", sessionId: "s-new", status: "running", startedAt: "2025-01-06T00:01:00.000Z" }));
    // A newer child run does not speak for the session.
    store.createRun(runRow({ id: "r3", sessionId: "s-new", rootId: "r2", parentId: "r2", depth: 1, status: "failed", startedAt: "2025-01-06T00:02:00.000Z" }));
    const listed = store.listSessions({ workspace: W })[0];
    expect(listed).toEqual({
      id: "s-new",
      surface: "cli",
      workspace: W,
      title: "fix the tests",
      createdAt: "2025-01-03T00:00:00.000Z",
      updatedAt: "2025-01-06T00:02:00.000Z", // creating a run is activity
      status: "running",
      parentSessionId: null,
      // What its runs spent: the child run r3 (rootId r2) included; no cost without priced usage.
      tokens: 0,
      costMicroUsd: null,
    });
    // A delegated child's conversation belongs to its parent session: never listed on its own.
    store.createSession({ id: "s-child", surface: "cli", workspace: W, title: "explore: find", createdAt: "2025-01-07T00:00:00.000Z", parentSessionId: "s-new" });
    expect(store.listSessions({ workspace: W }).map((row) => row.id)).not.toContain("s-child");
    expect(store.getSession("s-child")?.parentSessionId).toBe("s-new");
    // What the session spent includes its children's runs, recorded in their own conversation.
    store.updateRun("r1", { usage: { totalTokens: 100, costMicroUsd: 5 } });
    store.createRun(runRow({ id: "r4", sessionId: "s-child", rootId: "r2", parentId: "r2", depth: 1, status: "completed", usage: { totalTokens: 50, costMicroUsd: 7 }, startedAt: "2025-01-07T00:00:01.000Z" }));
    expect(store.listSessions({ workspace: W }).find((row) => row.id === "s-new")).toMatchObject({ tokens: 150, costMicroUsd: 12 });
    store.updateRun("r2", { status: "cancelled", endedAt: "2025-01-06T00:03:00.000Z" });
    expect(store.getSession("s-new")).toMatchObject({ status: "cancelled", updatedAt: "2025-01-06T00:03:00.000Z" });
    expect(store.getSession("nope")).toBeUndefined();
    expect(code(() => store.touchSession("nope", "2025-01-01T00:00:00.000Z"))).toBe("not_found");
  });
});

describe("runs", () => {
  test("round trip, partial updates, explicit nulls, and unknown ids", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow());
    const root = runRow({ budgets: { maxSteps: 3, nested: { a: [1, "x"] }, none: null } });
    store.createRun(root);
    expect(store.getRun(root.id)).toEqual(root);
    const child = runRow({ id: "run_child", rootId: root.id, parentId: root.id, depth: 1, agent: "explore" });
    store.createRun(child);
    expect(store.getRun("run_child")).toEqual(child);

    store.updateRun(root.id, { status: "limit", reason: "max_steps", usage: { inputTokens: 10, outputTokens: 5 }, steps: 3, toolCalls: 7 });
    expect(store.getRun(root.id)).toEqual({
      ...root,
      status: "limit",
      reason: "max_steps",
      usage: { inputTokens: 10, outputTokens: 5 },
      steps: 3,
      toolCalls: 7,
    });
    store.updateRun(root.id, { reason: null, endedAt: "2025-01-01T00:10:00.000Z", pid: 4242 });
    expect(store.getRun(root.id)).toMatchObject({ status: "limit", reason: null, endedAt: "2025-01-01T00:10:00.000Z", pid: 4242, steps: 3 });
    expect(store.getRun("nope")).toBeUndefined();
    expect(code(() => store.updateRun("nope", { steps: 1 }))).toBe("not_found");
    expect(() => store.createRun(runRow({ id: "orphan", sessionId: "no-such-session" }))).toThrow("FOREIGN KEY");
  });

  test("on open, running runs of dead processes become interrupted; live ones and our own stay running", () => {
    const dir = dirs.make();
    const first = storeIn(dir);
    first.createSession(sessionRow({ id: "s-cli" }));
    first.createSession(sessionRow({ id: "s-tui", surface: "tui", createdAt: "2025-01-01T00:00:01.000Z" }));
    const rows = [
      runRow({ id: "dead-root", sessionId: "s-cli", pid: 111, startedAt: "2025-01-01T00:00:01.000Z" }),
      runRow({ id: "dead-child", sessionId: "s-cli", rootId: "dead-root", parentId: "dead-root", depth: 1, pid: 111 }),
      runRow({ id: "alive-root", sessionId: "s-cli", pid: 222, startedAt: "2025-01-01T00:00:00.500Z" }),
      runRow({ id: "own-root", sessionId: "s-cli", pid: process.pid, startedAt: "2025-01-01T00:00:00.100Z" }),
      runRow({ id: "done-root", sessionId: "s-cli", pid: 111, status: "completed", startedAt: "2025-01-01T00:00:00.000Z" }),
      runRow({ id: "dead-tui", sessionId: "s-tui", pid: 333, startedAt: "2025-01-01T00:00:05.000Z" }),
    ];
    for (const row of rows) first.createRun(row);

    const asked: number[] = [];
    const second = storeIn(dir, {
      isAlive: (pid) => {
        asked.push(pid);
        return pid === 222;
      },
    });
    expect(asked.sort()).toEqual([111, 111, 222, 333]); // our own pid is never asked about
    const status = (id: string) => second.getRun(id)?.status;
    expect([status("dead-root"), status("dead-child"), status("alive-root"), status("own-root"), status("done-root"), status("dead-tui")]).toEqual([
      "interrupted",
      "interrupted",
      "running",
      "running",
      "completed",
      "interrupted",
    ]);
    expect(second.getRun("dead-root")?.reason).toBe("process_exited");
    expect(second.listInterruptedRuns({ workspace: W }).map((r) => r.id)).toEqual(["dead-tui", "dead-root"]);
    expect(second.listInterruptedRuns({ workspace: W, surface: "cli" }).map((r) => r.id)).toEqual(["dead-root"]);
    expect(second.listInterruptedRuns({ workspace: W, limit: 1 }).map((r) => r.id)).toEqual(["dead-tui"]);
    expect(second.listInterruptedRuns({ workspace: "/elsewhere" })).toEqual([]);
    expect(second.getSession("s-tui")?.status).toBe("interrupted");
    expect(second.getSession("s-cli")?.status).toBe("interrupted"); // dead-root is its latest root run
  });

  test("a dead process's run that stored run.completed is finished from that event, never offered for resume", () => {
    const dir = dirs.make();
    const first = storeIn(dir);
    first.createSession(sessionRow({ id: "s-cli" }));
    first.createRun(runRow({ id: "finished-late", sessionId: "s-cli", pid: 111 }));
    first.appendEvent({ runId: "finished-late", sequence: 1, type: "run.completed", status: "limit", reason: "max_steps", timestamp: "2025-01-01T00:00:09.000Z" });
    const second = storeIn(dir, { isAlive: () => false });
    expect(second.getRun("finished-late")).toMatchObject({ status: "limit", reason: "max_steps" });
    expect(second.listInterruptedRuns({ workspace: W })).toEqual([]);
    expect(second.claimInterruptedRun("finished-late", process.pid)).toBe(false);
  });

  test("claimInterruptedRun: exactly one claimer wins an interrupted run", () => {
    const dir = dirs.make();
    const first = storeIn(dir);
    first.createSession(sessionRow({ id: "s-cli" }));
    first.createRun(runRow({ id: "crashed", sessionId: "s-cli", pid: 111 }));
    const a = storeIn(dir, { isAlive: () => false });
    const b = storeIn(dir, { isAlive: () => false });
    expect(a.getRun("crashed")?.status).toBe("interrupted");
    expect(a.claimInterruptedRun("crashed", 4242)).toBe(true);
    expect(b.claimInterruptedRun("crashed", 4343)).toBe(false);
    expect(b.getRun("crashed")).toMatchObject({ status: "running", pid: 4242 });
    expect(a.claimInterruptedRun("no-such-run", 4242)).toBe(false);
  });

  test("the default liveness check: our pid is alive, a finished child is not, group pids never are", async () => {
    expect(processIsAlive(process.pid)).toBe(true);
    expect(processIsAlive(1)).toBe(true); // init exists (EPERM for non-root counts as alive)
    expect(processIsAlive(0)).toBe(false);
    expect(processIsAlive(-1)).toBe(false);
    const child = Bun.spawn(["true"]);
    await child.exited;
    expect(processIsAlive(child.pid)).toBe(false);
  });
});

describe("events", () => {
  test("database-owned order: increasing across two handles writing alternately, stable across reopen", () => {
    const dir = dirs.make();
    const a = storeIn(dir);
    const b = storeIn(dir);
    a.createSession(sessionRow());
    a.createRun(runRow({ id: "ra" }));
    b.createRun(runRow({ id: "rb" }));
    const ids: number[] = [];
    const written: Array<Record<string, unknown>> = [];
    for (let i = 1; i <= 50; i++) {
      const event = { runId: i % 2 ? "ra" : "rb", sequence: Math.ceil(i / 2), type: "message.delta", step: 1, text: `t${i} \u2028 😀` };
      ids.push((i % 2 ? a : b).appendEvent(event));
      written.push(event);
    }
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1] as number);

    a.close();
    b.close();
    open.splice(0);
    const reopened = storeIn(dir);
    expect(reopened.eventsOf("ra")).toEqual(written.filter((e) => e.runId === "ra"));
    expect(reopened.eventsOf("rb")).toEqual(written.filter((e) => e.runId === "rb"));
    const next = reopened.appendEvent({ runId: "ra", sequence: 26, type: "run.completed" });
    expect(next).toBeGreaterThan(ids[ids.length - 1] as number);
  });

  test("two processes appending at once get distinct, increasing ids, and nothing is lost", async () => {
    const dir = dirs.make();
    storeIn(dir).close(); // create and migrate first, so the writers race only on appends
    open.splice(0);
    const writer = join(import.meta.dir, "../../test/crash/store-writer.ts");
    const children = ["a", "b"].map((name) =>
      Bun.spawn([process.execPath, writer, dir, `zero_proc_${name}`, `run_proc_${name}`, "400"], { stdout: "pipe", stderr: "pipe" }),
    );
    const outputs = await Promise.all(children.map((child) => new Response(child.stdout).text()));
    expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0]);
    const idsOf = (text: string) => text.split("\n").filter((line) => line.startsWith("e ")).map((line) => Number(line.split(" ")[1]));
    const [a, b] = outputs.map(idsOf) as [number[], number[]];
    expect(a).toHaveLength(400);
    expect(b).toHaveLength(400);
    for (const ids of [a, b]) for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1] as number);
    expect(new Set([...a, ...b]).size).toBe(800);
    const store = storeIn(dir);
    expect(store.eventsOf("run_proc_a").map((e) => e.sequence)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(store.getRun("run_proc_b")?.status).toBe("completed");
  });

  test("events come back exactly as given, in stored (not sequence) order", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow());
    store.createRun(runRow());
    const runId = runRow().id;
    const late = { runId, sequence: 5, type: "tool.requested", input: { $bytes: "AA==", nested: [null, 1.5, "\ud800"] } };
    const early = { type: "step.started", runId, sequence: 2, timestamp: "2025-01-01T00:00:02.000Z", step: 1 };
    store.appendEvent(late);
    store.appendEvent(early);
    const events = store.eventsOf(runId);
    expect(events).toEqual([late, early]);
    expect(Object.keys(events[1] as object)).toEqual(["type", "runId", "sequence", "timestamp", "step"]);
    expect(store.eventsOf("other")).toEqual([]);
  });

  test("a repeated event is idempotent; a different event under a taken sequence is refused; unknown runs are refused", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow());
    store.createRun(runRow());
    const event = { runId: runRow().id, sequence: 1, type: "step.started", step: 1 };
    const id = store.appendEvent(event);
    expect(store.appendEvent({ ...event })).toBe(id);
    expect(code(() => store.appendEvent({ ...event, step: 2 }))).toBe("duplicate_event");
    expect(store.eventsOf(runRow().id)).toEqual([event]);
    expect(() => store.appendEvent({ runId: "missing", sequence: 1, type: "x" })).toThrow("FOREIGN KEY");
    expect(() => store.appendEvent({ runId: runRow().id, sequence: 1.5, type: "x" })).toThrow("integer");
  });
});

function checkpoint(overrides: Partial<Checkpoint> = {}): Checkpoint {
  return {
    runId: runRow().id,
    sessionId: sessionRow().id,
    version: 2,
    createdAt: "2025-01-01T00:05:00.000Z",
    messageCount: 1,
    meta: { mode: "agent" },
    ...overrides,
  };
}

describe("messages and checkpoints", () => {
  const history: Message[] = [
    { role: "user", parts: [{ type: "text", text: "look 👀 at this 🇳🇱 image \ud83d line\u2028separator" }, { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=", filename: "a.png" }] },
    {
      role: "assistant",
      parts: [
        { type: "reasoning", text: "hmm", provider: { anthropic: { signature: "sig-1" } } },
        { type: "tool-call", callId: "c1", tool: "read", input: { $bytes: "not bytes" }, state: "completed", provider: { openai: { itemId: "fc_1" } } },
      ],
    },
    { role: "tool", parts: [{ type: "tool-result", callId: "c1", tool: "read", output: { type: "text", value: "x\u0000y" } }] },
  ];

  test("messages round-trip exactly (provider data, U+2028, emoji, lone surrogates, look-alike objects) and the checkpoint is a marker", () => {
    const dir = dirs.make();
    const store = storeIn(dir);
    store.createSession(sessionRow());
    store.createRun(runRow());
    const written = store.writeMessages(sessionRow().id, runRow().id, history.map((message, position) => ({ position, message })));
    expect(written).toBeGreaterThan(0);
    const meta = { mode: "agent", usage: { inputTokens: 1200 }, attachment: Buffer.from([1, 2, 3]) };
    store.saveCheckpoint(checkpoint({ messageCount: 3, meta }));
    store.close();
    open.splice(0);

    const reopened = storeIn(dir);
    const restored = reopened.latestCheckpoint({ sessionId: sessionRow().id });
    expect(restored).toEqual({ runId: runRow().id, sessionId: sessionRow().id, version: 2, createdAt: "2025-01-01T00:05:00.000Z", messageCount: 3, meta: { ...meta, attachment: new Uint8Array([1, 2, 3]) } });
    expect(reopened.loadMessages(sessionRow().id)).toEqual(history);
    expect(reopened.loadMessages(sessionRow().id, 1)).toEqual(history.slice(0, 1));
    expect(reopened.messageCount(sessionRow().id)).toBe(3);
  });

  test("a replaced message is rewritten alone; truncation drops what an interrupted step left", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow());
    store.createRun(runRow());
    const id = sessionRow().id;
    store.writeMessages(id, runRow().id, history.map((message, position) => ({ position, message })));
    const settled: Message = { role: "assistant", parts: [{ type: "text", text: "changed" }] };
    const bytes = store.writeMessages(id, runRow().id, [{ position: 1, message: settled }]);
    expect(bytes).toBe(JSON.stringify(settled).length);
    expect(store.loadMessages(id)[1]).toEqual(settled);
    // Truncation happens in the same transaction as the writes that follow it.
    store.writeMessages(id, runRow().id, [{ position: 1, message: settled }], 1);
    expect(store.loadMessages(id)).toEqual([history[0]!, settled]);
  });

  test("a malformed stored message is refused with where and what", () => {
    const store = storeIn(dirs.make());
    store.createSession(sessionRow());
    store.createRun(runRow());
    store.writeMessages(sessionRow().id, runRow().id, [{ position: 0, message: history[0]! }]);
    const raw = new Database(store.path);
    raw.run("UPDATE messages SET body = ? WHERE position = 0", [JSON.stringify({ role: "user", parts: [{ type: "tool-call" }] })]);
    raw.close();
    expect(() => store.loadMessages(sessionRow().id)).toThrow(`message 0 of session ${sessionRow().id} is malformed`);
  });

  test("keeps the newest N checkpoints per session and the newest of every run, pruning in the same transaction", () => {
    const dir = dirs.make();
    const store = storeIn(dir, { checkpointsPerSession: 3 });
    store.createSession(sessionRow());
    store.createRun(runRow({ id: "root" }));
    store.createRun(runRow({ id: "child", rootId: "root", parentId: "root", depth: 1 }));
    store.saveCheckpoint(checkpoint({ runId: "child", messageCount: 1 }));
    store.saveCheckpoint(checkpoint({ runId: "child", messageCount: 2 }));
    for (let i = 1; i <= 6; i++) store.saveCheckpoint(checkpoint({ runId: "root", messageCount: 10 + i }));

    const raw = new Database(store.path, { readonly: true });
    const kept = raw.query("SELECT run_id AS run, message_count AS count FROM checkpoints ORDER BY id").all();
    raw.close();
    expect(kept).toEqual([
      { run: "child", count: 2 },
      { run: "root", count: 14 },
      { run: "root", count: 15 },
      { run: "root", count: 16 },
    ]);
    expect(store.latestCheckpoint({ sessionId: sessionRow().id })?.messageCount).toBe(16);
    expect(store.latestCheckpoint({ runId: "child" })?.messageCount).toBe(2);
    expect(store.latestCheckpoint({ runId: "child", sessionId: sessionRow().id })?.messageCount).toBe(2);
    expect(store.latestCheckpoint({ runId: "child", sessionId: "other" })).toBeUndefined();
    expect(store.latestCheckpoint({ runId: "nope" })).toBeUndefined();
    expect(() => store.latestCheckpoint({})).toThrow("sessionId or a runId");
  });

  test("an oversized checkpoint is refused with a clear error and nothing is stored; a mismatched session is refused", () => {
    const store = storeIn(dirs.make(), { maxCheckpointBytes: 1024 * 1024 });
    store.createSession(sessionRow());
    store.createSession(sessionRow({ id: "other-session" }));
    store.createRun(runRow());
    let caught: unknown;
    try {
      store.saveCheckpoint(checkpoint({ meta: { note: "x".repeat(1024 * 1024) } }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StoreError);
    expect((caught as StoreError).code).toBe("too_large");
    expect((caught as StoreError).message).toBe(`the checkpoint of run ${runRow().id} is 1.0 MiB, over the 1.0 MiB limit; it was not saved`);
    expect(store.latestCheckpoint({ runId: runRow().id })).toBeUndefined();
    expect(() => store.saveCheckpoint(checkpoint({ sessionId: "other-session" }))).toThrow("FOREIGN KEY");
  });
});

describe("session owners", () => {
  test("one live holder owns a session; a dead holder's claim is taken over; only the holder's release frees it", () => {
    const alive = new Set<number>([4242]);
    const store = storeIn(dirs.make(), { isAlive: (pid) => alive.has(pid) });
    store.createSession(sessionRow());
    const id = sessionRow().id;
    const a = { pid: 4242, token: "a" };
    const b = { pid: 777, token: "b" };
    expect(store.claimSession(id, a)).toEqual({ ok: true });
    expect(store.claimSession(id, a)).toEqual({ ok: true }); // already ours
    expect(store.claimSession(id, b)).toEqual({ ok: false, ownerPid: 4242 });
    // The same pid with another token (another session object, pid 1 in another container) waits too.
    expect(store.claimSession(id, { pid: 4242, token: "a2" })).toEqual({ ok: false, ownerPid: 4242 });
    alive.delete(4242); // the holder died without releasing
    expect(store.claimSession(id, b)).toEqual({ ok: true });
    alive.add(777);
    store.releaseSession(id, a); // a stale release changes nothing
    expect(store.claimSession(id, { pid: 999, token: "c" })).toEqual({ ok: false, ownerPid: 777 });
    store.releaseSession(id, b);
    expect(store.claimSession(id, { pid: 999, token: "c" })).toEqual({ ok: true });
    expect(() => store.claimSession("nope", a)).toThrow("no session nope");
  });
});

describe("lifecycle", () => {
  test("a closed store refuses further use; close is idempotent", () => {
    const { store } = openStore({ dir: dirs.make() });
    store.close();
    store.close();
    expect(code(() => store.listSessions({ workspace: W }))).toBe("closed");
  });
});
