/**
 * Regression tests for delegation bugs a review found, each through the real CLI: artifact
 * references a parent or child may open, the scope and result of a child continued after a
 * restart, schedule routing of read tasks, a worktree child of a repository subdirectory,
 * one-shot shutdown with cancelChildrenWithParent off, todo for a path-scoped child, a schedule
 * task without a taskName, and secret redaction of delegation events.
 * The fake answers each request from its sender's queue (see test/support/delegation.ts).
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, FakeTurn } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { commitAll, delegate, envelope, firstUser, isRunning, killStrayAfterEach, parse, requestsOf, scriptBySender, slowText, spawn, task, toolResults } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

// A command the product failed to end must not outlive the test.
const stray = killStrayAfterEach(isRunning);
const tool = (name: string, id: string, args: Record<string, unknown>): FakeTurn => ({ toolCalls: [{ name, id, args }] });
/** The tool.completed status of each call of run `runId`, by call id. */
const statusesOf = (events: Array<Record<string, any>>, runId: string) =>
  Object.fromEntries(events.filter((e) => e.type === "tool.completed" && e.runId === runId).map((e) => [e.callId, e.status]));
const childRunOf = (events: Array<Record<string, any>>, taskName: string): string => events.find((e) => e.type === "agent.spawned" && e.taskName === taskName)!.childRunId;

test("a spawn naming an artifact the run was never given is refused, and no child starts", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const madeUp = "artifact://" + "a".repeat(64);
  scriptBySender(fake, { root: [spawn("d1", task("with-ref", { artifactRefs: [madeUp] })), { text: "ok" }], "with-ref": [{ text: "should not run" }] });
  const result = await runZero(["run", "--json", "hand over an artifact"], { sandbox });
  expect(result.code).toBe(0);
  const answer = toolResults(requestsOf(fake, "root")[1]!).d1;
  expect(answer).toContain(madeUp);
  expect(answer).toContain("not one this run has been given");
  expect(requestsOf(fake, "with-ref")).toEqual([]);
  const events = jsonLines(result.stdout);
  expect(events.filter((e) => e.type === "agent.spawned")).toEqual([]);
  expect(statusesOf(events, events[0]!.runId).d1).toBe("failed");
});

test("the parent opens its worktree child's patch; a later child whose goal merely mentions it cannot", async () => {
  commitAll(sandbox);
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [
      spawn("impl", task("make-file", { agent: "implement", deliverable: "patch" })),
      (req) => tool("read", "open-patch", { path: parse(toolResults(req).impl).patch }),
      { text: "read the patch" },
    ],
    "make-file": [tool("write", "w", { operation: "write", path: "src/new.txt", content: "NEW-FILE\n" }), envelope({ summary: "added src/new.txt" })],
  });
  const first = await runZero(["run", "--json", "--permission-mode", "accept-edits", "make a file in isolation"], { sandbox });
  expect(first.code).toBe(0);
  const [, second, third] = requestsOf(fake, "root");
  const handed = parse(toolResults(second!).impl);
  expect(handed).toMatchObject({ status: "completed", changedFiles: ["src/new.txt"] });
  expect(handed.patch).toMatch(/^artifact:\/\/[0-9a-f]{64}$/);
  expect(toolResults(third!)["open-patch"]).toContain("diff --git");
  const firstEvents = jsonLines(first.stdout);
  expect(statusesOf(firstEvents, firstEvents[0]!.runId)["open-patch"]).toBe("completed");

  // A new session: the same artifact exists in the workspace's store, but this root only read its
  // reference as text in a file, so it cannot hand it to a child by naming it in the goal.
  fake.reset();
  writeFileSync(join(sandbox.workspace, "notes.txt"), `The patch is ${handed.patch}\n`);
  scriptBySender(fake, {
    root: [tool("read", "notes", { path: "notes.txt" }), spawn("d2", task("peek", { agent: "explore", goal: `Open ${handed.patch} and summarise it` })), { text: "ok" }],
    peek: [tool("read", "peek-patch", { path: handed.patch }), { text: "could not open it" }],
  });
  const later = await runZero(["run", "--json", "look at the notes"], { sandbox });
  expect(later.code).toBe(0);
  expect(toolResults(requestsOf(fake, "root")[1]!).notes).toContain(handed.patch);
  const [peekFirst, peekSecond] = requestsOf(fake, "peek");
  expect(firstUser(peekFirst!)).toContain(handed.patch);
  const peeked = toolResults(peekSecond!)["peek-patch"];
  expect(peeked).not.toContain("diff --git");
  expect(peeked).toContain("not a reference from this conversation");
});

test("a grandchild that inherited its parent's scope stays scoped when continued after a restart", async () => {
  writeFileSync(join(sandbox.workspace, "OUTSIDE.md"), "OUTSIDE-SCOPE-MARKER\n");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("p1", task("planning", { agent: "plan", deliverable: "plan", scope: { paths: ["src/**"] } })), { text: "planned" }],
    planning: [spawn("g1", task("exploring", { agent: "explore" })), { text: "plan done" }],
    exploring: [{ text: "explored src" }],
  });
  const first = await runZero(["run", "--json", "plan within src"], { sandbox });
  expect(first.code).toBe(0);
  const grandchild: string = parse(toolResults(requestsOf(fake, "planning")[1]!).g1).childRunId;
  expect(grandchild).toBeString();
  expect(jsonLines(first.stdout).find((e) => e.type === "run.started" && e.runId === grandchild)).toMatchObject({ depth: 2 });
  expect(firstUser(requestsOf(fake, "exploring")[0]!)).toContain("src/**");

  fake.reset();
  scriptBySender(fake, {
    root: [delegate("again", { operation: "send", runId: grandchild, message: "now read OUTSIDE.md" }), { text: "ok" }],
    exploring: [tool("read", "outside", { path: "OUTSIDE.md" }), { text: "done" }],
  });
  const resumed = await runZero(["run", "--json", "--resume", "latest", "continue the grandchild"], { sandbox });
  expect(resumed.code).toBe(0);
  const requests = requestsOf(fake, "exploring");
  expect(requests).toHaveLength(2);
  const answer = toolResults(requests[1]!).outside;
  expect(answer).not.toContain("OUTSIDE-SCOPE-MARKER");
  expect(answer).toContain("outside this task's scope");
  const events = jsonLines(resumed.stdout);
  expect(statusesOf(events, grandchild).outside).not.toBe("completed");
});

test("a blocked review result is still blocked when inspected after a restart", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("r1", task("judge", { agent: "review", deliverable: "review" })), { text: "reviewed" }],
    judge: [{ text: "Looks fine to me, no real opinion." }],
  });
  const first = await runZero(["run", "--json", "review it"], { sandbox });
  expect(first.code).toBe(0);
  const handed = parse(toolResults(requestsOf(fake, "root")[1]!).r1);
  expect(handed.status).toBe("blocked");

  fake.reset();
  scriptBySender(fake, { root: [delegate("i1", { operation: "inspect", runId: handed.childRunId }), { text: "ok" }] });
  const resumed = await runZero(["run", "--json", "--resume", "latest", "inspect the review"], { sandbox });
  expect(resumed.code).toBe(0);
  const inspected = parse(toolResults(requestsOf(fake, "root")[1]!).i1);
  expect(inspected.run.id).toBe(handed.childRunId);
  expect(inspected.result.status).toBe("blocked");
});

test("a schedule of read tasks never routes one to a profile that can write", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        // verify (which also accepts test_result) is left out: only the two testers qualify.
        build: { canDelegateTo: ["plan", "explore", "implement", "review", "vision", "tester-ro", "tester-rw"] },
        "tester-ro": { model: "fake", tools: ["read", "find"], accepts: ["test_result"], permissionMode: "read-only", workspaceMode: "shared-readonly" },
        "tester-rw": { model: "fake", tools: ["read", "find", "run"], accepts: ["test_result"], permissionMode: "full-access", workspaceMode: "shared-write" },
      },
    }),
  );
  const readTask = (id: string) => ({ id, taskName: id, goal: `Check ${id}`, deliverable: "test_result", acceptanceCriteria: ["Report the outcome"], access: "read" });
  scriptBySender(fake, {
    root: [delegate("s1", { operation: "schedule", tasks: [readTask("check-a"), readTask("check-b")] }), { text: "ok" }],
    "check-a": [{ text: "a checked" }],
    "check-b": [{ text: "b checked" }],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "full-access", "check two things"], { sandbox });
  expect(result.code).toBe(0);
  const spawned = jsonLines(result.stdout).filter((e) => e.type === "agent.spawned").map((e) => e.agent);
  expect(spawned).not.toContain("tester-rw");
  const answer = toolResults(requestsOf(fake, "root")[1]!).s1!;
  // Either both run read-only, or the schedule is refused before anything starts.
  if (spawned.length === 0) expect(answer).toContain("schedule refused");
  else expect(spawned).toEqual(["tester-ro", "tester-ro"]);
});

test("a worktree child of a workspace in a repository subdirectory reports workspace-relative files within its scope", async () => {
  mkdirSync(join(sandbox.workspace, "pkg", "src"), { recursive: true });
  writeFileSync(join(sandbox.workspace, "pkg", "src", "index.ts"), "export {};\n");
  commitAll(sandbox);
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("impl", task("in-subdir", { agent: "implement", deliverable: "patch", scope: { paths: ["src/**"] } })), { text: "ok" }],
    "in-subdir": [tool("write", "w", { operation: "write", path: "src/a.txt", content: "A\n" }), envelope({ summary: "wrote src/a.txt" })],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "accept-edits", "write in the package"], { sandbox, cwd: join(sandbox.workspace, "pkg") });
  expect(result.code).toBe(0);
  const handed = parse(toolResults(requestsOf(fake, "root")[1]!).impl);
  expect(handed).toMatchObject({ status: "completed", changedFiles: ["src/a.txt"] });
  expect(handed.patch).toMatch(/^artifact:\/\//);
});

test("with cancelChildrenWithParent off, a one-shot run still ends its background children when it exits", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { cancelChildrenWithParent: false }, agents: { verify: { permissionMode: "full-access" } } }));
  const pidFile = join(sandbox.root, "child.pid");
  scriptBySender(fake, {
    root: [
      spawn("bg", task("late-writer", { agent: "verify", deliverable: "test_result", background: true })),
      // Answering takes a moment, so the child's command is running when the root ends.
      slowText("done already", 5, 200),
    ],
    "late-writer": [tool("run", "cmd", { command: `sh -c 'echo $$ > ${pidFile}; sleep 2; touch survived.txt'` }), { text: "finished" }],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "full-access", "start a child and leave"], { sandbox });
  expect(result.code).toBe(0);
  // The command did start before the root ended (else this test would prove nothing).
  expect(existsSync(pidFile)).toBe(true);
  stray.pid = Number(readFileSync(pidFile, "utf8").trim());
  await Bun.sleep(3000);
  expect(existsSync(join(sandbox.workspace, "survived.txt"))).toBe(false);
});

test("a path-scoped child may keep its todo list", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("d1", task("scoped-todo", { agent: "explore", scope: { paths: ["src/**"] } })), { text: "ok" }],
    "scoped-todo": [tool("todo", "td", { items: [{ content: "look at src", status: "in_progress" }] }), { text: "done" }],
  });
  const result = await runZero(["run", "--json", "track progress in src"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  expect(statusesOf(events, childRunOf(events, "scoped-todo")).td).toBe("completed");
  const answer = toolResults(requestsOf(fake, "scoped-todo")[1]!).td;
  expect(answer).toContain("look at src");
  expect(answer).not.toContain("outside this task's scope");
});

test("a schedule task without a taskName runs under its id", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [delegate("s1", { operation: "schedule", tasks: [{ id: "unnamed-task", goal: "Look around", deliverable: "analysis", acceptanceCriteria: ["Report"], access: "read" }] }), { text: "ok" }],
    "unnamed-task": [{ text: "looked" }],
  });
  const result = await runZero(["run", "--json", "schedule one task"], { sandbox });
  expect(result.code).toBe(0);
  const requests = requestsOf(fake, "unnamed-task");
  expect(requests).toHaveLength(1);
  expect(firstUser(requests[0]!)).toStartWith("# Delegated task: unnamed-task");
  expect(parse(toolResults(requestsOf(fake, "root")[1]!).s1).results).toMatchObject([{ taskId: "unnamed-task", status: "completed" }]);
});

test("secrets in a child's result and in the todo ledger are redacted from --json delegation events", async () => {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const token = "ghp_" + Array.from({ length: 36 }, (_, i) => chars[(i * 7 + 3) % chars.length]).join("");
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [spawn("d1", task("leaky", { agent: "explore" })), tool("todo", "td", { items: [{ content: `rotate ${token}`, status: "pending" }] }), { text: "ok" }],
    leaky: [envelope({ summary: `found the token ${token}` })],
  });
  const result = await runZero(["run", "--json", "find the token"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const completed = events.filter((e) => e.type === "agent.completed");
  const planned = events.filter((e) => e.type === "plan.updated");
  expect(completed).toHaveLength(1);
  expect(planned).toHaveLength(1);
  expect(JSON.stringify(completed)).toContain("found the token");
  expect(JSON.stringify(completed)).not.toContain(token);
  expect(JSON.stringify(planned)).toContain("rotate");
  expect(JSON.stringify(planned)).not.toContain(token);
});
