import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { latestVersion, MIGRATIONS } from "../../src/store/migrations.ts";
import { openStore } from "../../src/store/store.ts";
import { workspaceStateDir } from "../../src/store/state.ts";

/**
 * The session runtime as a whole program: one run at a time per session across
 * processes, the per-run token ceiling, a schema-2 database carried forward,
 * refusals that leave no state behind, and interrupted tool calls on record.
 */

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

/** Chat Completions messages as [role, text] (system prompt left out; tool-call-only turns have empty text). */
function turns(body: any): Array<[string, string]> {
  return body.messages
    .filter((m: any) => m.role !== "system")
    .map((m: any) => [m.role, typeof m.content === "string" ? m.content : (m.content ?? []).map((p: any) => p.text ?? "").join("")]);
}

/** The user/assistant turns that carry text, in order. */
function spoken(body: any): Array<[string, string]> {
  return turns(body).filter(([role, text]) => (role === "user" || role === "assistant") && text !== "");
}

function lastUserText(req: RecordedRequest): string {
  return spoken(req.body).filter(([role]) => role === "user").at(-1)![1];
}

const WAITING = /zero: session (\S+) is running in another process \(pid (\d+)\); waiting for it to finish/;

test("two processes resuming one session at once: the second waits, then continues the first one's history", async () => {
  // The first resumed run to reach the model runs a command that blocks until the test opens the
  // gate, which it does only once the other process said it is waiting: the overlap is certain.
  const gate = join(sandbox.root, "gate");
  let gated = false;
  const turn = (req: RecordedRequest): FakeTurn => {
    const task = lastUserText(req);
    if (req.body.messages.at(-1).role === "user" && task.startsWith("task ") && !gated) {
      gated = true;
      return { toolCalls: [{ name: "run", args: { command: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo gate open` } }] };
    }
    return { text: `answer to ${task}` };
  };
  fake.script(Array.from({ length: 8 }, () => turn));

  const first = await runZero(["run", "first task"], { sandbox });
  expect(first.code).toBe(0);
  expect(first.stdout).toBe("answer to first task\n");

  const a = spawnZero(["run", "-y", "--resume", "latest", "task A"], { sandbox, timeoutMs: 120_000 });
  const b = spawnZero(["run", "-y", "--resume", "latest", "task B"], { sandbox, timeoutMs: 120_000 });
  try {
    await waitUntil("one of the two runs to say it waits", () => WAITING.test(a.stderrSoFar()) || WAITING.test(b.stderrSoFar()), 90_000);
  } finally {
    await Bun.write(gate, "");
  }
  const [ra, rb] = await Promise.all([a.result, b.result]);
  expect([ra.code, rb.code, ra.stderr, rb.stderr]).toEqual([0, 0, expect.any(String), expect.any(String)]);

  // Exactly one waited, and it named the other process.
  const waitedA = WAITING.exec(ra.stderr);
  const waitedB = WAITING.exec(rb.stderr);
  expect([waitedA, waitedB].filter(Boolean)).toHaveLength(1);
  const [holder, waiter, notice] = waitedA ? [{ task: "task B", proc: b.proc }, { task: "task A", proc: a.proc }, waitedA] : [{ task: "task A", proc: a.proc }, { task: "task B", proc: b.proc }, waitedB!];
  expect(Number(notice[2])).toBe(holder.proc.pid);
  expect(notice[0]).not.toContain("\n");
  expect((waitedA ? ra : rb).stderr.match(new RegExp(WAITING.source, "g"))).toHaveLength(1); // said once, not per poll

  // The fake never saw the two runs overlap: every request of the waiting run came after the
  // holder's last response had been answered (its final answer streams in one write).
  const of = (task: string) => fake.requests.slice(1).filter((req) => lastUserText(req) === task);
  const holderRequests = of(holder.task);
  const waiterRequests = of(waiter.task);
  expect(holderRequests).toHaveLength(2); // the gated command, then the answer
  expect(waiterRequests).toHaveLength(1);
  expect(fake.requests).toHaveLength(4);
  const holderDone = Math.max(...holderRequests.map((req) => req.answeredAt!));
  expect(waiterRequests[0]!.receivedAt).toBeGreaterThan(holderDone);

  // No forked history: the waiting run's first request holds the holder's whole turn.
  expect(turns(waiterRequests[0]!.body).map(([role]) => role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant", "user"]);
  expect(spoken(waiterRequests[0]!.body)).toEqual([
    ["user", "first task"],
    ["assistant", "answer to first task"],
    ["user", holder.task],
    ["assistant", `answer to ${holder.task}`],
    ["user", waiter.task],
  ]);

  const sessions = await runZero(["sessions"], { sandbox });
  expect(sessions.code).toBe(0);
  const lines = sessions.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith(`${notice[1]}  `);

  const third = await runZero(["run", "--resume", "latest", "third task"], { sandbox });
  expect(third.code).toBe(0);
  expect(third.stderr).not.toMatch(WAITING);
  expect(spoken(fake.requests.at(-1)!.body)).toEqual([
    ["user", "first task"],
    ["assistant", "answer to first task"],
    ["user", holder.task],
    ["assistant", `answer to ${holder.task}`],
    ["user", waiter.task],
    ["assistant", `answer to ${waiter.task}`],
    ["user", "third task"],
  ]);
}, 180_000);

test("maxTokens stops a run at the step that passes it, before that step's tool calls run", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { maxTokens: 100 } } }));
  const write = { toolCalls: [{ name: "write", args: { operation: "write", path: "must-not-exist.txt", content: "x\n" }, id: "call_w" }], usage: { input: 80, output: 40 } };
  fake.script([write, write, write]);
  // Full access: nothing but the token ceiling stands between the call and the file.
  const result = await runZero(["run", "-y", "--json", "write the file"], { sandbox });
  expect(result.code).toBe(4);
  const events = jsonLines(result.stdout);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "max_tokens", exitCode: 4 });
  expect(events.at(-1)!.usage).toMatchObject({ inputTokens: 80, outputTokens: 40, totalTokens: 120 });
  const guard = events.find((e) => e.type === "guard.triggered");
  expect(guard).toMatchObject({ guard: "max_tokens" });
  expect(guard!.message).toContain("100");
  expect(events.some((e) => e.type === "tool.started")).toBe(false);
  const answered = events.find((e) => e.type === "tool.completed" && e.callId === "call_w");
  expect(answered?.output).toContain("not executed");
  expect(existsSync(join(sandbox.workspace, "must-not-exist.txt"))).toBe(false);
  expect(fake.requests).toHaveLength(1); // no further step
}, 60_000);

test("a database of schema version 2 (histories in the AI SDK's shape) is migrated and resumed", async () => {
  const dir = workspaceStateDir(sandbox.env, sandbox.workspace);
  const file = join(dir, "zero-cli.db");
  const sessionId = "zero_20240101000000_oldsession";
  const runId = "run_20240101000000_oldrun";
  const startedAt = "2024-01-01T00:00:00.000Z";
  const { store } = openStore({ dir, migrations: MIGRATIONS.filter((m) => m.version <= 2) });
  try {
    store.createSession({ id: sessionId, surface: "cli", workspace: sandbox.workspace, title: "remember 42", createdAt: startedAt });
    store.createRun({
      id: runId,
      sessionId,
      rootId: runId,
      parentId: null,
      task: "remember 42",
      agent: "build",
      modelAlias: "fake",
      provider: "openai-compatible",
      apiModel: "fake-1",
      status: "completed",
      reason: null,
      depth: 0,
      workspace: sandbox.workspace,
      permissionMode: "ask",
      workDepth: "medium",
      budgets: { maxSteps: 100, maxToolCalls: 1000, maxTokens: null, timeoutMs: 28_800_000 },
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, reasoningTokens: 0, cachedInputTokens: 0 },
      steps: 1,
      toolCalls: 0,
      deadline: "2024-01-01T08:00:00.000Z",
      startedAt,
      endedAt: "2024-01-01T00:00:01.000Z",
      pid: 1,
    });
  } finally {
    store.close();
  }
  const meta = {
    mode: "agent",
    surface: "cli",
    workspace: sandbox.workspace,
    agent: "build",
    model: { alias: "fake", provider: "openai-compatible", model: "fake-1" },
    workDepth: "medium",
    permissionMode: "ask",
    deadline: "2024-01-01T08:00:00.000Z",
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, reasoningTokens: 0, cachedInputTokens: 0 },
    steps: 1,
    toolCalls: 0,
  };
  const oldHistory = [
    { role: "user", content: "remember 42" },
    { role: "assistant", content: [{ type: "text", text: "ok, 42" }] },
  ];
  const raw = new Database(file);
  try {
    raw.run("INSERT INTO checkpoints (session_id, run_id, version, created_at, history, meta) VALUES (?, ?, 1, ?, ?, ?)", [
      sessionId,
      runId,
      "2024-01-01T00:00:01.000Z",
      JSON.stringify(oldHistory),
      JSON.stringify(meta),
    ]);
    expect((raw.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(2);
  } finally {
    raw.close();
  }

  fake.script([{ text: "It is 42." }]);
  const result = await runZero(["run", "--resume", "latest", "what number?"], { sandbox });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("It is 42.\n");
  expect(turns(fake.requests[0]!.body)).toEqual([
    ["user", "remember 42"],
    ["assistant", "ok, 42"],
    ["user", "what number?"],
  ]);

  const db = new Database(file, { readonly: true });
  try {
    expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(latestVersion(MIGRATIONS));
    const rows = db.query("SELECT position, run_id AS runId, role, body FROM messages WHERE session_id = ? ORDER BY position").all(sessionId) as Array<{
      position: number;
      runId: string;
      role: string;
      body: string;
    }>;
    expect(rows.map((row) => [row.position, row.role, JSON.parse(row.body)])).toEqual([
      [0, "user", { role: "user", parts: [{ type: "text", text: "remember 42" }] }],
      [1, "assistant", { role: "assistant", parts: [{ type: "text", text: "ok, 42" }] }],
      [2, "user", { role: "user", parts: [{ type: "text", text: "what number?" }] }],
      [3, "assistant", { role: "assistant", parts: [expect.objectContaining({ type: "text", text: "It is 42." })] }],
    ]);
    expect(rows.slice(0, 2).every((row) => row.runId === runId)).toBe(true);
    expect(rows[2]!.runId).not.toBe(runId);
    // The old checkpoint became a marker over the migrated rows; its copy of the history is gone.
    const old = db.query("SELECT history, message_count AS messageCount FROM checkpoints WHERE run_id = ?").get(runId) as { history: string; messageCount: number };
    expect(old).toEqual({ history: "[]", messageCount: 2 });
    const runs = db.query("SELECT count(*) AS n FROM runs WHERE session_id = ?").get(sessionId) as { n: number };
    expect(runs.n).toBe(2); // the new run joined the old session
  } finally {
    db.close();
  }
}, 60_000);

test("a run refused before it starts creates no state directory (run and exec; missing key, unknown --model)", async () => {
  // A model that needs FAKE_KEY, which the sandbox does not set.
  sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
  const base = join(sandbox.stateHome, "zero-cli");
  for (const args of [["run", "x"], ["exec", "x"]]) {
    const result = await runZero(args, { sandbox });
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr).toContain("FAKE_KEY");
    expect(existsSync(base)).toBe(false);
  }

  // An unknown --model alias, with the state base given explicitly (it exists, and stays empty).
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const custom = join(sandbox.root, "custom-state");
  mkdirSync(custom, { mode: 0o700 });
  for (const args of [["run", "--model", "no-such-alias", "x"], ["exec", "--model", "no-such-alias", "x"]]) {
    const result = await runZero(args, { sandbox, env: { ZERO_CLI_STATE_DIR: custom } });
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr).toContain("no-such-alias");
    expect(readdirSync(custom)).toEqual([]);
  }
  expect(existsSync(base)).toBe(false);
  expect(fake.requests).toHaveLength(0);
}, 60_000);

/**
 * Starts `zero run -y --json …args` whose model calls `run` with a command that records its pid
 * and one line in cmd.log, then sleeps; kills zero with SIGKILL while the command runs.
 * `cleanup` ends the orphaned command's process group (the shell execs sleep, keeping the pid).
 */
async function killDuringCommand(args: string[]) {
  const pidFile = join(sandbox.workspace, "cmd.pid");
  const log = join(sandbox.workspace, "cmd.log");
  const command = "echo $$ > cmd.pid; echo ran >> cmd.log; exec sleep 30";
  fake.script([{ toolCalls: [{ name: "run", args: { command }, id: "call_sleep" }] }]);
  const { proc, result, stdoutSoFar } = spawnZero(["run", "-y", "--json", ...args], { sandbox, timeoutMs: 60_000 });
  let commandPid: number | undefined;
  const cleanup = () => {
    if (commandPid === undefined) return;
    try {
      process.kill(-commandPid, "SIGKILL");
    } catch {}
  };
  try {
    await waitUntil("the command to start", () => existsSync(log) && /^\d+\n$/.test(readFileSync(pidFile, "utf8")), 30_000);
    commandPid = Number(readFileSync(pidFile, "utf8"));
    await waitUntil("zero to report the call started", () => stdoutSoFar().includes('"tool.started"'), 30_000);
  } catch (error) {
    proc.kill("SIGKILL");
    cleanup();
    throw error;
  }
  proc.kill("SIGKILL");
  const killed = await result;
  expect(killed.code).not.toBe(0);
  const started = jsonLines(killed.stdout)[0]!;
  expect(started.type).toBe("run.started");
  return { command, log, started, cleanup };
}

/** Asserts a request's tool exchange: the killed call, answered "outcome unknown" by zero. */
function expectInterruptedCall(messages: any[], command: string): void {
  const call = messages.find((m) => m.role === "assistant" && m.tool_calls)!;
  expect(call.tool_calls).toEqual([expect.objectContaining({ id: "call_sleep", function: expect.objectContaining({ name: "run" }) })]);
  expect(JSON.parse(call.tool_calls[0].function.arguments)).toEqual({ command });
  const answer = messages.find((m) => m.role === "tool")!;
  expect(answer.tool_call_id).toBe("call_sleep");
  expect(JSON.stringify(answer.content)).toContain("outcome is unknown");
}

test("kill -9 during a tool call: --resume-run shows the call answered 'outcome is unknown' and does not run it again", async () => {
  const { command, log, started, cleanup } = await killDuringCommand(["start the long command"]);
  try {
    fake.script([{ text: "I will check whether it ran." }]);
    const resumed = await runZero(["run", "--json", "--resume-run", "latest", "go on"], { sandbox });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    const events = jsonLines(resumed.stdout);
    expect(new Set(events.map((e) => e.runId))).toEqual(new Set([started.runId]));
    expect(events.some((e) => e.type === "tool.started" || e.type === "tool.requested")).toBe(false);

    expect(fake.requests).toHaveLength(2);
    const body = fake.requests[1]!.body;
    expect(turns(body).map(([role]) => role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(spoken(body)).toEqual([
      ["user", "start the long command"],
      ["user", "go on"],
    ]);
    expectInterruptedCall(body.messages, command);
    // The command ran once: in the killed process, never again by zero.
    expect(readFileSync(log, "utf8")).toBe("ran\n");
  } finally {
    cleanup();
  }
}, 120_000);

test("kill -9 in a later run of a session, before its first checkpoint: --resume-run keeps the earlier turns", async () => {
  fake.script([{ text: "answer one" }]);
  expect((await runZero(["run", "first task"], { sandbox })).code).toBe(0);
  const { command, cleanup } = await killDuringCommand(["--resume", "latest", "second task"]);
  try {
    fake.script([{ text: "continued" }, { text: "all there" }]);
    const resumed = await runZero(["run", "--resume-run", "latest", "go on"], { sandbox });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    const continued = fake.requests.at(-1)!.body;
    expect(turns(continued).map(([role]) => role)).toEqual(["user", "assistant", "user", "assistant", "tool", "user"]);
    expect(spoken(continued)).toEqual([
      ["user", "first task"],
      ["assistant", "answer one"],
      ["user", "second task"],
      ["user", "go on"],
    ]);
    expectInterruptedCall(continued.messages, command);

    // Nothing of the session was lost from the store: a later turn sees all of it.
    const later = await runZero(["run", "--resume", "latest", "and now?"], { sandbox });
    expect(later.code).toBe(0);
    expect(spoken(fake.requests.at(-1)!.body)).toEqual([
      ["user", "first task"],
      ["assistant", "answer one"],
      ["user", "second task"],
      ["user", "go on"],
      ["assistant", "continued"],
      ["user", "and now?"],
    ]);
  } finally {
    cleanup();
  }
}, 120_000);

test("Ctrl-C while waiting for a session another process runs: exit 130, nothing recorded, the other run unaffected", async () => {
  const gate = join(sandbox.root, "gate");
  fake.script([
    { text: "answer one" },
    { toolCalls: [{ name: "run", args: { command: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo gate open` } }] },
    { text: "holder done" },
  ]);
  expect((await runZero(["run", "first task"], { sandbox })).code).toBe(0);
  const holder = spawnZero(["run", "-y", "--resume", "latest", "holder task"], { sandbox, timeoutMs: 120_000 });
  let waiter: ReturnType<typeof spawnZero> | undefined;
  try {
    await fake.waitForRequests(2, 60_000); // the holder has the session
    waiter = spawnZero(["run", "--resume", "latest", "waiter task"], { sandbox, timeoutMs: 120_000 });
    await waitUntil("the second run to say it waits", () => WAITING.test(waiter!.stderrSoFar()), 60_000);
    waiter.proc.kill("SIGINT");
    const cancelled = await waiter.result;
    expect(cancelled.code).toBe(130);
    expect(cancelled.stderr).toContain("cancelled while waiting for session");
    expect(cancelled.stdout).toBe("");
  } finally {
    await Bun.write(gate, "");
  }
  const done = await holder.result;
  expect(done.code).toBe(0);
  expect(done.stdout).toBe("holder done\n");
  expect(fake.requests).toHaveLength(3);
  expect(fake.requests.some((req) => JSON.stringify(req.body).includes("waiter task"))).toBe(false);
  const db = new Database(join(workspaceStateDir(sandbox.env, sandbox.workspace), "zero-cli.db"), { readonly: true });
  try {
    const tasks = db.query("SELECT task FROM runs ORDER BY rowid").all() as Array<{ task: string }>;
    expect(tasks.map((row) => row.task)).toEqual(["first task", "holder task"]);
  } finally {
    db.close();
  }
}, 180_000);
