/**
 * What a delegated child may touch: permission narrowing by its parent (PERM-09), task path scope
 * (DEL-14), and both again for a child continued after a restart (`zero run --resume` in a new
 * process, then `delegate send` to a child run id from the earlier process; DEL-25): it keeps
 * the limits it was given and never gets more authority than the parent resuming it.
 * The fake answers each request from its sender's queue (see delegation.test.ts).
 */
import { expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, FakeTurn } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { allText, calls, commitAll, delegate, firstUser, parse, requestsOf, scriptBySender, spawn, task, textOf, toolNames, toolResults, type Turn } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const tool = (name: string, id: string, args: Record<string, unknown>): FakeTurn => ({ toolCalls: [{ name, id, args }] });
const run = (id: string, command: string): FakeTurn => tool("run", id, { command });
const send = (id: string, runId: string, message: string) => delegate(id, { operation: "send", runId, message });

/** Runs one root turn that spawns children; returns their run ids by the spawning call's id. */
async function firstProcess(turns: Record<string, Turn[]>, args: string[]): Promise<Record<string, string>> {
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", ...args, "start the children"], { sandbox });
  expect(result.code).toBe(0);
  const last = requestsOf(fake, "root").at(-1)!;
  const ids = Object.fromEntries(Object.entries(toolResults(last)).map(([call, text]) => [call, parse(text).childRunId as string]));
  fake.reset();
  return ids;
}

test("a read-only parent narrows a full-access child: its write is denied and nothing is written", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["writer"] },
        writer: { model: "fake", tools: ["read", "write", "find"], accepts: ["patch"], permissionMode: "full-access", workspaceMode: "shared-write" },
      },
    }),
  );
  const writeScript = () =>
    scriptBySender(fake, {
      root: [spawn("d1", task("write-file", { agent: "writer", deliverable: "patch" })), { text: "ok" }],
      "write-file": [tool("write", "w1", { operation: "write", path: "created.txt", content: "made by the child\n" }), { text: "done" }],
    });
  // The same child under a full-access parent does write: the denial below is the parent's narrowing.
  writeScript();
  const control = await runZero(["run", "--json", "-y", "make a file"], { sandbox });
  expect(control.code).toBe(0);
  expect(existsSync(join(sandbox.workspace, "created.txt"))).toBe(true);
  rmSync(join(sandbox.workspace, "created.txt"));

  fake.reset();
  writeScript();
  const result = await runZero(["run", "--json", "--permission-mode", "read-only", "make a file"], { sandbox });
  expect(result.code).toBe(0);
  expect(existsSync(join(sandbox.workspace, "created.txt"))).toBe(false);
  const [first, second] = requestsOf(fake, "write-file");
  expect(textOf(first!.body.messages[0])).toContain("Permission mode: read-only");
  expect(toolResults(second!).w1).toMatch(/denied|read-only/i);
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "agent.spawned")).toMatchObject({ agent: "writer", permissionMode: "read-only" });
  const childRun = events.find((e) => e.type === "run.started" && e.parentRunId)!;
  expect(childRun.permissionMode).toBe("read-only");
  const handed = parse(toolResults(requestsOf(fake, "root")[1]!).d1);
  expect(handed.changedFiles).toEqual([]);
  expect(handed.status).not.toBe("completed");
});

test("a path-scoped child reads only inside its scope and is not offered run", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["checker"] },
        checker: { model: "fake", tools: ["read", "find", "run", "search"], accepts: ["analysis"], permissionMode: "read-only", workspaceMode: "shared-readonly" },
      },
    }),
  );
  scriptBySender(fake, {
    root: [spawn("d1", task("scoped", { agent: "checker", scope: { paths: ["src/**"] } })), { text: "ok" }],
    scoped: [
      {
        toolCalls: [
          { name: "read", id: "readme", args: { path: "README.md" } },
          { name: "read", id: "main", args: { path: "src/main.ts" } },
          { name: "find", id: "find-all", args: { pattern: "answer" } },
          { name: "find", id: "find-src", args: { pattern: "hello", path: "src" } },
        ],
      },
      { text: "read what I could" },
    ],
  });
  const result = await runZero(["run", "--json", "look at src"], { sandbox });
  expect(result.code).toBe(0);
  const [first, second] = requestsOf(fake, "scoped");
  expect(firstUser(first!)).toContain("src/**");
  const offered = toolNames(first!);
  expect(offered).not.toContain("run");
  expect(offered).toEqual(expect.arrayContaining(["read", "find", "search"]));
  const answers = toolResults(second!);
  expect(answers.readme).toContain("outside this task's scope");
  expect(answers.readme).not.toContain("The answer is 42");
  expect(answers.main).toContain("export const main");
  expect(answers["find-all"]).toContain("outside this task's scope");
  expect(answers["find-all"]).not.toContain("README");
  expect(answers["find-src"]).toContain("main.ts");
});

test("a file-pattern scope also bounds find inside the directory it names", async () => {
  writeFileSync(join(sandbox.workspace, "src", "notes.md"), "NOTES-OUTSIDE-SCOPE\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("d1", task("ts-only", { scope: { paths: ["src/*.ts"] } })), { text: "ok" }],
    "ts-only": [
      {
        toolCalls: [
          { name: "read", id: "notes", args: { path: "src/notes.md" } },
          { name: "find", id: "find-src", args: { pattern: "NOTES", path: "src" } },
        ],
      },
      { text: "done" },
    ],
  });
  const result = await runZero(["run", "--json", "look at the ts files"], { sandbox });
  expect(result.code).toBe(0);
  const answers = toolResults(requestsOf(fake, "ts-only")[1]!);
  expect(answers.notes).toContain("outside this task's scope");
  // src/notes.md is outside src/*.ts, so searching src must not return its text.
  expect(answers["find-src"]).not.toContain("NOTES-OUTSIDE-SCOPE");
});

test("after a restart, a shared-workspace child continues by run id with its history; a worktree child cannot", async () => {
  commitAll(sandbox);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } } }));
  const ids = await firstProcess(
    {
      root: [
        calls(["shared", { operation: "spawn", ...task("checks", { agent: "verify", deliverable: "test_result" }) }], ["isolated", { operation: "spawn", ...task("in-worktree", { agent: "implement", deliverable: "patch" }) }]),
        { text: "started" },
      ],
      checks: [run("c1", "true"), { text: "FIRST-TURN-MARKER" }],
      "in-worktree": [{ text: "nothing changed" }],
    },
    ["-y"],
  );
  // The worktree went away with the process that made it.
  expect(Bun.spawnSync(["git", "-C", sandbox.workspace, "worktree", "list"]).stdout.toString().trim().split("\n")).toHaveLength(1);

  scriptBySender(fake, {
    root: [
      calls(["again", { operation: "send", runId: ids.shared, message: "SECOND-TURN-MARKER" }], ["wt", { operation: "send", runId: ids.isolated, message: "continue" }]),
      { text: "resumed" },
    ],
    checks: [run("c2", "test -f README.md"), { text: "still passing" }],
  });
  const resumed = await runZero(["run", "--json", "-y", "--resume", "latest", "continue the children"], { sandbox });
  expect(resumed.code).toBe(0);
  const answers = toolResults(requestsOf(fake, "root")[1]!);
  expect(parse(answers.again)).toMatchObject({ childRunId: ids.shared, status: "completed", summary: "still passing", verification: [{ command: "test -f README.md", status: "passed" }] });
  expect(answers.wt).toContain("cannot be resumed after a restart");
  expect(requestsOf(fake, "in-worktree")).toEqual([]);
  const history = allText(requestsOf(fake, "checks")[0]!);
  expect(history).toContain("FIRST-TURN-MARKER");
  expect(history.indexOf("FIRST-TURN-MARKER")).toBeLessThan(history.indexOf("SECOND-TURN-MARKER"));
  const events = jsonLines(resumed.stdout);
  expect(events.find((e) => e.type === "agent.spawned")).toMatchObject({ runId: events[0]!.runId, childRunId: ids.shared, followUp: true });
  for (const event of events.filter((e) => e.runId === ids.shared)) expect(typeof event.parentRunId).toBe("string");

  // Another session does not reach the child.
  fake.reset();
  scriptBySender(fake, { root: [send("other", ids.shared!, "hello"), { text: "no" }] });
  expect((await runZero(["run", "-y", "a new session"], { sandbox })).code).toBe(0);
  expect(toolResults(requestsOf(fake, "root")[1]!).other).toContain(`no child run ${ids.shared} in this session`);
  expect(requestsOf(fake, "checks")).toEqual([]);
});

test("a child continued after a restart gets no more authority than the parent that resumes it", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } } }));
  const ids = await firstProcess(
    { root: [spawn("d1", task("checks", { agent: "verify", deliverable: "test_result" })), { text: "ok" }], checks: [run("c1", "true"), { text: "passed" }] },
    ["-y"],
  );
  scriptBySender(fake, {
    root: [send("again", ids.d1!, "touch a file"), { text: "ok" }],
    checks: [run("c2", "touch pwned"), { text: "done" }],
  });
  const resumed = await runZero(["run", "--json", "--permission-mode", "read-only", "--resume", "latest", "read-only now"], { sandbox });
  expect(resumed.code).toBe(0);
  expect(existsSync(join(sandbox.workspace, "pwned"))).toBe(false);
  expect(textOf(requestsOf(fake, "checks")[0]!.body.messages[0])).toContain("Permission mode: read-only");
  expect(jsonLines(resumed.stdout).find((e) => e.type === "agent.spawned")).toMatchObject({ childRunId: ids.d1, permissionMode: "read-only" });
});

test("a path-scoped child stays scoped when continued after a restart", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["checker"] },
        checker: { model: "fake", tools: ["read", "find", "run"], accepts: ["analysis"], permissionMode: "read-only", workspaceMode: "shared-readonly" },
      },
    }),
  );
  const ids = await firstProcess(
    { root: [spawn("d1", task("scoped", { agent: "checker", scope: { paths: ["src/**"] } })), { text: "ok" }], scoped: [{ text: "looked at src" }] },
    [],
  );
  scriptBySender(fake, {
    root: [send("again", ids.d1!, "now read the README"), { text: "ok" }],
    scoped: [{ toolCalls: [{ name: "read", id: "readme", args: { path: "README.md" } }] }, { text: "done" }],
  });
  const resumed = await runZero(["run", "--json", "--resume", "latest", "continue"], { sandbox });
  expect(resumed.code).toBe(0);
  const [first, second] = requestsOf(fake, "scoped");
  expect(toolResults(second!).readme).not.toContain("The answer is 42");
  expect(toolResults(second!).readme).toContain("outside this task's scope");
  expect(toolNames(first!)).not.toContain("run");
});
