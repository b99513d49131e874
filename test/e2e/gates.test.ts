/**
 * Work-depth gates (WD-05, WD-06, WD-07, WD-08): at pro/ultra a root run that changed the
 * workspace finishes only after a verification child passes and a review child approves the
 * current revision; review findings send the model back to work; greetings spawn nothing.
 */
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { allText, commitAll, git, requestsOf, scriptBySender } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** pro depth, with a verify profile that may run its checks headless (the runs below are full-access: a child never has more than its parent). */
function gatedConfig(): void {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "pro", agents: { verify: { permissionMode: "full-access" } } }));
}

const write = (id: string, path: string, content: string) => ({ toolCalls: [{ name: "write", id, args: { operation: "write", path, content } }] });
/** A verification child's turns (fresh arrays: scripting consumes them). */
const passingCheck = () => [{ toolCalls: [{ name: "run", id: "t1", args: { command: "true" } }] }, { text: '{"summary": "checks pass"}' }];

test("a greeting at ultra spawns nothing: one model call, no children", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra" }));
  commitAll(sandbox);
  scriptBySender(fake, { root: [{ text: "hi" }] });
  const result = await runZero(["run", "--json", "hello"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests).toHaveLength(1);
  expect(jsonLines(result.stdout).filter((e) => e.type === "agent.spawned")).toEqual([]);
});

test("pro: a run that wrote a file is verified, then reviewed; review findings send the model back; it ends approved", async () => {
  gatedConfig();
  commitAll(sandbox);
  scriptBySender(fake, {
    root: [write("w1", "feature.txt", "v1\n"), { text: "done" }, write("w2", "feature.txt", "v2\n"), { text: "fixed" }],
    "gate-verify-1": passingCheck(),
    "gate-review-1": [{ text: '{"summary": "needs v2", "verdict": "request_changes", "issues": [{"severity": "high", "path": "feature.txt", "description": "must say v2"}]}' }],
    "gate-verify-2": passingCheck(),
    "gate-review-2": [{ text: '{"summary": "good", "verdict": "approve", "issues": []}' }],
  });
  const result = await runZero(["run", "--json", "-y", "add the feature"], { sandbox });
  expect(result.code).toBe(0);
  const root = requestsOf(fake, "root");
  expect(root).toHaveLength(4);
  // The review's finding came back to the model as its next input.
  expect(allText(root[2]!)).toContain("[gate] The independent review did not approve");
  expect(allText(root[2]!)).toContain("must say v2");
  const spawned = jsonLines(result.stdout).filter((e) => e.type === "agent.spawned").map((e) => [e.taskName, e.agent]);
  expect(spawned).toEqual([
    ["gate-verify-1", "verify"],
    ["gate-review-1", "review"],
    ["gate-verify-2", "verify"],
    ["gate-review-2", "review"],
  ]);
  expect(jsonLines(result.stdout).at(-1)).toMatchObject({ type: "run.completed", status: "completed" });
});

test("pro: a failing verification keeps the run going; unmet gates end it by a limit after the repair rounds", async () => {
  gatedConfig();
  commitAll(sandbox);
  const failingCheck = () => [{ toolCalls: [{ name: "run", id: "t1", args: { command: "false" } }] }, { text: '{"summary": "checks fail"}' }];
  const turns: Record<string, object[]> = { root: [write("w1", "a.txt", "x\n")] };
  // pro allows 6 repair rounds: the model keeps answering, the verification keeps failing; the 7th finish ends it.
  for (let round = 1; round <= 6; round++) {
    turns.root!.push({ text: `attempt ${round}` });
    turns[`gate-verify-${round}`] = failingCheck();
  }
  turns.root!.push({ text: "attempt 7" });
  scriptBySender(fake, turns as never);
  const result = await runZero(["run", "--json", "-y", "change a"], { sandbox });
  expect(result.code).toBe(4);
  const events = jsonLines(result.stdout);
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "gates" });
  expect(events.some((e) => e.type === "guard.triggered" && e.guard === "gates" && /6 repair rounds/.test(e.message))).toBe(true);
  expect(allText(requestsOf(fake, "root")[2]!)).toContain("the verification did not pass");
  // No review is asked for while the changes are unverified.
  expect(events.some((e) => e.type === "agent.spawned" && e.agent === "review")).toBe(false);
}, 60_000);

test("a shell change git can see counts as a change (the gates apply); outside git it is not seen", async () => {
  gatedConfig();
  commitAll(sandbox);
  const shell = { toolCalls: [{ name: "run", id: "s1", args: { command: "echo x > made-by-shell.txt" } }] };
  scriptBySender(fake, {
    root: [shell, { text: "done" }],
    "gate-verify-1": passingCheck(),
    "gate-review-1": [{ text: '{"summary": "ok", "verdict": "approve"}' }],
  });
  const inGit = await runZero(["run", "--json", "-y", "make a file"], { sandbox });
  expect(inGit.code).toBe(0);
  expect(jsonLines(inGit.stdout).filter((e) => e.type === "agent.spawned")).toHaveLength(2);

  // The same in a directory that is not a repository: nothing observed, no gates.
  fake.reset();
  const plain = join(sandbox.root, "plain");
  await Bun.$`mkdir -p ${plain}`.quiet();
  writeFileSync(join(plain, "README.md"), "plain\n");
  scriptBySender(fake, { root: [shell, { text: "done" }] });
  const outside = await runZero(["run", "--json", "-y", "--cwd", plain, "make a file"], { sandbox });
  expect(outside.code).toBe(0);
  expect(jsonLines(outside.stdout).filter((e) => e.type === "agent.spawned")).toHaveLength(0);
});

test("the gates' fingerprint never runs a hostile repository's filter programs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "pro" }));
  const marker = join(sandbox.root, "FILTER-RAN");
  writeFileSync(join(sandbox.workspace, ".gitattributes"), "*.txt filter=evil\n");
  writeFileSync(join(sandbox.workspace, "a.txt"), "one\n");
  commitAll(sandbox);
  // Planted after the commit (so setting it up ran nothing): a clean filter that leaves a marker.
  git(sandbox, ["config", "filter.evil.clean", `sh -c 'touch ${marker}; cat'`]);
  writeFileSync(join(sandbox.workspace, "a.txt"), "two\n");
  scriptBySender(fake, { root: [{ text: "hi" }] });
  const result = await runZero(["run", "--json", "hello"], { sandbox });
  expect(result.code).toBe(0);
  expect(existsSync(marker)).toBe(false);
});
