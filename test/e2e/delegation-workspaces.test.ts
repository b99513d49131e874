/**
 * Where delegated children work, through the real CLI and real git: a git-worktree child sees
 * only the committed HEAD, leaves the parent checkout alone and hands back a patch artifact that
 * `git apply` accepts (DEL-19, WF-09); a scratch child starts in an empty private directory; both
 * are removed when the process ends, also on Ctrl-C, which cancels the children and kills their
 * commands (DEL-20, DEL-22, LOOP-09); concurrency and writer limits hold (DEL-21, WD-02); and a
 * shared-write child continues after a restart while a worktree child cannot (DEL-25).
 *
 * Children run alongside their parent, so the fake answers each request from its sender's queue
 * (the root, or the child whose first user message is `# Delegated task: <name>`).
 * Each test points TMPDIR at a private directory of its sandbox, so every isolated workspace the
 * program makes can be found (and must be gone) afterwards.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, spawnZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { commitAll, conversationOf, delegate, envelope, git, isRunning, killStrayAfterEach, parse, requestsOf, scriptBySender, slowText, task, toolResults, type Turn } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** spawn's arguments for the task `taskName` (see task), whose criterion asks what was done. */
const spawnArgs = (taskName: string, extra: Record<string, unknown> = {}) => ({ operation: "spawn", ...task(taskName, { acceptanceCriteria: ["Report what you did"], ...extra }) });

const worktreeList = (): string[] => git(sandbox, ["worktree", "list", "--porcelain"]).split("\n").filter((line) => line.startsWith("worktree "));

/** Every file of the workspace (outside .git) with its bytes, to prove nothing in it changed. */
function snapshot(root = sandbox.workspace): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (relative(root, path) !== ".git") walk(path);
      } else files[relative(root, path)] = readFileSync(path).toString("base64");
    }
  };
  walk(root);
  return files;
}
/** The state of the parent repository that a child must not move: status, HEAD, refs. */
const repoState = () => ({ status: git(sandbox, ["status", "--porcelain", "--untracked-files=all"]), head: git(sandbox, ["rev-parse", "HEAD"]), refs: git(sandbox, ["for-each-ref"]) });

/** The private temporary directory this test's zero processes use (TMPDIR). */
const tmpOf = () => join(sandbox.root, "tmp");
function zeroEnv(): Record<string, string> {
  mkdirSync(tmpOf(), { recursive: true });
  return { TMPDIR: tmpOf() };
}
/** Isolated workspaces left in the private temporary directory. */
const leftoverWorkspaces = () => readdirSync(tmpOf()).filter((name) => name.startsWith("zero-worktree-") || name.startsWith("zero-scratch-"));

/** The file of the artifact store holding `uri` (its name is the SHA-256), searched under the sandbox's state home. */
function artifactFile(uri: string): string {
  const sha = /^artifact:\/\/([0-9a-f]{64})$/.exec(uri)?.[1];
  if (sha === undefined) throw new Error(`not an artifact reference: ${uri}`);
  const found = (readdirSync(sandbox.stateHome, { recursive: true }) as string[]).filter((path) => path.endsWith(sha) && path.includes("artifacts"));
  if (found.length !== 1) throw new Error(`artifact ${sha} found ${found.length} times under ${sandbox.stateHome}`);
  return join(sandbox.stateHome, found[0]!);
}

// A sleeper the product failed to kill must not outlive the test. A killed process its parent
// has not reaped yet is a zombie: no longer running.
const stray = killStrayAfterEach(isRunning);

/** Bytes git treats as binary (NUL bytes), as the write tool stores a string: UTF-8. */
const BINARY_BEFORE = Uint8Array.from({ length: 64 }, (_, i) => (i * 7) % 256);
const BINARY_AFTER_TEXT = "PNGISH\u0000\u0001\u0002 changed by the child \u0000\u0003";
const BINARY_NEW_TEXT = "\u0000new binary\u0000\u0007\u0000";

test("a git-worktree child sees only committed HEAD, leaves the parent untouched and returns a patch that git apply accepts", async () => {
  mkdirSync(join(sandbox.workspace, "assets"));
  writeFileSync(join(sandbox.workspace, "assets", "logo.bin"), BINARY_BEFORE);
  commitAll(sandbox);
  // Uncommitted parent work: an untracked file and a modified tracked file.
  writeFileSync(join(sandbox.workspace, "draft.txt"), "UNCOMMITTED-DRAFT-MARKER\n");
  writeFileSync(join(sandbox.workspace, "README.md"), "# Sample project\n\nUNCOMMITTED-README-EDIT\n");
  const before = snapshot();
  const stateBefore = repoState();
  expect(stateBefore.status).toBe(" M README.md\n?? draft.txt\n");

  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [
      delegate("impl", spawnArgs("change-main", { agent: "implement", deliverable: "patch", goal: "Change main and add files" })),
      (req) => delegate("again", { operation: "send", runId: parse(toolResults(req).impl).childRunId, message: "FOLLOW-UP: check your new file is still there" }),
      { text: "patch received" },
    ],
    "change-main": [
      {
        toolCalls: [
          { name: "read", id: "draft", args: { path: "draft.txt" } },
          { name: "read", id: "readme", args: { path: "README.md" } },
        ],
      },
      {
        toolCalls: [
          { name: "write", id: "edit-main", args: { operation: "edit", path: "src/main.ts", oldText: '"hello"', newText: '"hello from the worktree"' } },
          { name: "write", id: "add-file", args: { operation: "write", path: "src/added.ts", content: "export const added = true;\n" } },
          { name: "write", id: "binary-change", args: { operation: "write", path: "assets/logo.bin", content: BINARY_AFTER_TEXT } },
          { name: "write", id: "binary-new", args: { operation: "write", path: "assets/new.bin", content: BINARY_NEW_TEXT } },
        ],
      },
      envelope({ summary: "changed main, added two files" }),
      // The follow-up turn: the same worktree, with the earlier change still in it.
      { toolCalls: [{ name: "read", id: "reread", args: { path: "src/added.ts" } }] },
      envelope({ summary: "still there" }),
    ],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "accept-edits", "make the change in isolation"], { sandbox, env: zeroEnv() });
  expect(result.code).toBe(0);

  // The worktree holds the committed HEAD only: no untracked draft, the committed README.
  const [, second, , , afterReread] = requestsOf(fake, "change-main");
  const seen = toolResults(second!);
  expect(seen.draft).not.toContain("UNCOMMITTED-DRAFT-MARKER");
  expect(seen.draft).toMatch(/draft\.txt does not exist/);
  expect(seen.readme).toContain("The answer is 42.");
  expect(seen.readme).not.toContain("UNCOMMITTED-README-EDIT");
  const events = jsonLines(result.stdout);
  const childRunId = events.find((e) => e.type === "agent.spawned")!.childRunId;
  const toolStatus = Object.fromEntries(events.filter((e) => e.type === "tool.completed" && e.runId === childRunId).map((e) => [e.callId, e.status]));
  expect(toolStatus).toMatchObject({ draft: "failed", readme: "completed", "edit-main": "completed", "add-file": "completed", "binary-change": "completed", "binary-new": "completed", reread: "completed" });
  // A follow-up continues in the same, still existing worktree (DEL-20).
  expect(toolResults(afterReread!).reread).toContain("export const added = true;");

  const childStarts = events.filter((e) => e.type === "run.started" && e.runId === childRunId);
  // One run.started per turn: the spawn and the follow-up, both in the same worktree.
  expect(childStarts).toHaveLength(2);
  const cwd: string = childStarts[0]!.cwd;
  expect(childStarts.every((e) => e.cwd === cwd)).toBe(true);
  expect(childStarts[0]).toMatchObject({ depth: 1, agent: "implement", permissionMode: "accept-edits" });
  expect(cwd.startsWith(tmpOf())).toBe(true);
  expect(relative(sandbox.workspace, cwd).startsWith("..")).toBe(true);

  // The parent checkout is byte-identical, its status, HEAD and refs unchanged: nothing was merged.
  expect(snapshot()).toEqual(before);
  expect(repoState()).toEqual(stateBefore);

  const handed = parse(toolResults(requestsOf(fake, "root")[1]!).impl);
  expect(handed).toMatchObject({ childRunId, agent: "implement", status: "completed", summary: "changed main, added two files" });
  expect(handed.changedFiles).toEqual(["assets/logo.bin", "assets/new.bin", "src/added.ts", "src/main.ts"]);
  expect(handed.patch).toMatch(/^artifact:\/\/[0-9a-f]{64}$/);
  expect(handed.artifacts).toContain(handed.patch);
  const followed = parse(toolResults(requestsOf(fake, "root")[2]!).again);
  expect(followed).toMatchObject({ childRunId, status: "completed", summary: "still there" });

  // The patch is a binary-safe git diff that applies to the parent checkout.
  const patchFile = artifactFile(handed.patch);
  const patchText = readFileSync(patchFile, "utf8");
  expect(patchText).toContain("GIT binary patch");
  git(sandbox, ["apply", "--check", patchFile]);
  git(sandbox, ["apply", patchFile]);
  expect(readFileSync(join(sandbox.workspace, "src", "main.ts"), "utf8")).toBe('export const main = () => "hello from the worktree";\n');
  expect(readFileSync(join(sandbox.workspace, "src", "added.ts"), "utf8")).toBe("export const added = true;\n");
  expect(Buffer.from(readFileSync(join(sandbox.workspace, "assets", "logo.bin"))).equals(Buffer.from(BINARY_AFTER_TEXT, "utf8"))).toBe(true);
  expect(Buffer.from(readFileSync(join(sandbox.workspace, "assets", "new.bin"))).equals(Buffer.from(BINARY_NEW_TEXT, "utf8"))).toBe(true);
  // The uncommitted parent work survived the apply.
  expect(readFileSync(join(sandbox.workspace, "draft.txt"), "utf8")).toBe("UNCOMMITTED-DRAFT-MARKER\n");
  expect(readFileSync(join(sandbox.workspace, "README.md"), "utf8")).toContain("UNCOMMITTED-README-EDIT");

  // The process ended: its worktree is gone and git no longer lists it (DEL-20).
  expect(existsSync(cwd)).toBe(false);
  expect(leftoverWorkspaces()).toEqual([]);
  expect(worktreeList()).toEqual([`worktree ${sandbox.workspace}`]);
  expect(git(sandbox, ["worktree", "prune", "--dry-run", "-v"])).toBe("");
});

test("a scratch child starts in an empty private directory outside the workspace, removed after exit", async () => {
  commitAll(sandbox);
  const before = snapshot();
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["plan", "explore", "implement", "verify", "review", "vision", "scratchy"] },
        scratchy: { model: "fake", tools: ["read", "write", "find"], accepts: ["analysis"], permissionMode: "accept-edits", workspaceMode: "scratch" },
      },
    }),
  );
  scriptBySender(fake, {
    root: [delegate("s1", spawnArgs("try-in-scratch", { agent: "scratchy" })), { text: "ok" }],
    "try-in-scratch": [
      {
        toolCalls: [
          { name: "read", id: "list", args: { path: "." } },
          { name: "read", id: "readme", args: { path: "README.md" } },
        ],
      },
      { toolCalls: [{ name: "write", id: "note", args: { operation: "write", path: "scratch-note.txt", content: "SCRATCH-NOTE\n" } }] },
      { toolCalls: [{ name: "read", id: "relist", args: { path: "." } }] },
      envelope({ summary: "tried it in scratch" }),
    ],
  });
  const result = await runZero(["run", "--json", "--permission-mode", "accept-edits", "try something in scratch"], { sandbox, env: zeroEnv() });
  expect(result.code).toBe(0);

  const events = jsonLines(result.stdout);
  const childRunId = events.find((e) => e.type === "agent.spawned")!.childRunId;
  expect(events.find((e) => e.type === "agent.spawned")).toMatchObject({ agent: "scratchy", workspaceMode: "scratch" });
  const started = events.find((e) => e.type === "run.started" && e.runId === childRunId)!;
  expect(started.parentRunId).toBe(events[0]!.runId);
  const cwd: string = started.cwd;
  expect(cwd.startsWith(join(tmpOf(), "zero-scratch-"))).toBe(true);
  expect(relative(sandbox.workspace, cwd).startsWith("..")).toBe(true);
  expect(started.roots).toEqual([cwd]);

  const [, second, , fourth] = requestsOf(fake, "try-in-scratch");
  const first = toolResults(second!);
  // Empty at the start: no README, no src.
  expect(first.list).not.toContain("README.md");
  expect(first.list).not.toContain("src");
  expect(first.readme).not.toContain("The answer is 42");
  const statuses = Object.fromEntries(events.filter((e) => e.type === "tool.completed" && e.runId === childRunId).map((e) => [e.callId, e.status]));
  expect(statuses).toMatchObject({ list: "completed", readme: "failed", note: "completed", relist: "completed" });
  expect(toolResults(fourth!).relist).toContain("scratch-note.txt");

  // The write stayed in scratch, and the scratch directory went away with the process.
  expect(snapshot()).toEqual(before);
  expect(existsSync(cwd)).toBe(false);
  expect(leftoverWorkspaces()).toEqual([]);
});

test("Ctrl-C while a worktree child runs a command: exit 130, the child cancelled, its command killed, its worktree removed", async () => {
  commitAll(sandbox);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { implement: { permissionMode: "full-access" } } }));
  const pidFile = join(sandbox.root, "sleeper.pid");
  scriptBySender(fake, {
    root: [
      delegate("bg", spawnArgs("sleeper", { agent: "implement", deliverable: "patch", background: true })),
      (req) => delegate("w1", { operation: "wait", runIds: [parse(toolResults(req).bg).childRunId], timeoutMs: 60_000 }),
      { text: "unreachable" },
    ],
    sleeper: [{ toolCalls: [{ name: "run", id: "sleep", args: { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 100'` } }] }, { text: "never" }],
  });
  const zero = spawnZero(["run", "--json", "--permission-mode", "full-access", "start a child and be interrupted"], { sandbox, env: zeroEnv(), timeoutMs: 25_000 });
  await waitUntil("the child's command to start", () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 15_000);
  stray.pid = Number(readFileSync(pidFile, "utf8").trim());
  expect(isRunning(stray.pid)).toBe(true);
  const sofar = jsonLines(zero.stdoutSoFar().split("\n").slice(0, -1).join("\n"));
  const childStart = sofar.find((e) => e.type === "run.started" && e.parentRunId);
  expect(childStart).toBeDefined();
  const worktree: string = childStart!.cwd;
  expect(existsSync(worktree)).toBe(true);
  expect(worktreeList()).toHaveLength(2);

  zero.proc.kill("SIGINT");
  const result = await zero.result;
  expect(result.code).toBe(130);
  const pid = stray.pid;
  // The product must have killed it; a sleep it missed would live for 100 s.
  await waitUntil(`sleep ${pid} to be gone`, () => !isRunning(pid), 3000).catch(() => undefined);
  expect(isRunning(pid)).toBe(false);

  const events = jsonLines(result.stdout);
  const childRunId = events.find((e) => e.type === "agent.spawned")!.childRunId;
  expect(childStart!.runId).toBe(childRunId);
  expect(events.find((e) => e.type === "run.completed" && e.runId === childRunId)).toMatchObject({ status: "cancelled", parentRunId: events[0]!.runId });
  expect(events.at(-1)).toMatchObject({ type: "run.completed", runId: events[0]!.runId, status: "cancelled", exitCode: 130 });

  expect(existsSync(worktree)).toBe(false);
  expect(leftoverWorkspaces()).toEqual([]);
  expect(worktreeList()).toEqual([`worktree ${sandbox.workspace}`]);
  expect(git(sandbox, ["worktree", "prune", "--dry-run", "-v"])).toBe("");
  expect(git(sandbox, ["status", "--porcelain"])).toBe("");
});

/** [start, end] of each child's model work as the fake saw it: its first request to its last. */
function requestSpans(names: string[]): Array<{ name: string; start: number; end: number }> {
  return names.map((name) => {
    const requests = requestsOf(fake, name);
    if (requests.length < 2) throw new Error(`child ${name} sent ${requests.length} requests, expected 2`);
    return { name, start: requests[0]!.receivedAt, end: requests.at(-1)!.receivedAt };
  });
}
/** The most spans open at one instant. */
function peakOverlap(spans: Array<{ start: number; end: number }>): number {
  let peak = 0;
  for (const span of spans) peak = Math.max(peak, spans.filter((other) => other.start <= span.start && span.start < other.end).length);
  return peak;
}

test("medium depth: four background read-only children run at most three at once, and do overlap", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "medium" }));
  // Four: medium's six runs are the root, four analyses, and one held back for a review.
  const names = ["look-1", "look-2", "look-3", "look-4"];
  const turns: Record<string, Turn[]> = {
    root: [
      { toolCalls: names.map((name) => ({ name: "delegate", id: name, args: spawnArgs(name, { agent: "explore", background: true }) })) },
      (req) => delegate("w1", { operation: "wait", runIds: names.map((name) => parse(toolResults(req)[name]).childRunId), timeoutMs: 25_000 }),
      { text: "all looked" },
    ],
  };
  // Each child: a slow first reply (a tool call), then its answer; it holds its slot in between.
  for (const name of names) turns[name] = [{ toolCalls: [{ name: "read", id: `r-${name}`, args: { path: "README.md" } }], chunkDelayMs: 120 }, { text: `done ${name}` }];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", "fan out five"], { sandbox, timeoutMs: 30_000 });
  expect(result.code).toBe(0);

  const spawned = toolResults(requestsOf(fake, "root")[1]!);
  for (const name of names) expect(parse(spawned[name])).toMatchObject({ status: "queued", agent: "explore" });
  const waited = parse(toolResults(requestsOf(fake, "root")[2]!).w1);
  expect(waited.completed.map((r: any) => r.status)).toEqual(Array(4).fill("completed"));

  const spans = requestSpans(names);
  for (const span of spans) expect(span.end - span.start).toBeGreaterThan(100);
  const peak = peakOverlap(spans);
  expect(peak).toBeLessThanOrEqual(3);
  expect(peak).toBeGreaterThanOrEqual(2);
  // The fourth waited for a slot: it started only after some earlier child's work ended.
  const byStart = [...spans].sort((a, b) => a.start - b.start);
  for (const late of byStart.slice(3)) expect(byStart.slice(0, 3).some((early) => early.end <= late.start)).toBe(true);

  // The event stream agrees: never more than three child runs live at once.
  let live = 0;
  let livePeak = 0;
  for (const event of jsonLines(result.stdout)) {
    if (!event.parentRunId) continue;
    if (event.type === "run.started") livePeak = Math.max(livePeak, ++live);
    if (event.type === "run.completed") live--;
  }
  expect(livePeak).toBe(3);
});

test("two background shared-write children on one checkout never overlap", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const names = ["check-a", "check-b"];
  const turns: Record<string, Turn[]> = {
    root: [
      { toolCalls: names.map((name) => ({ name: "delegate", id: name, args: spawnArgs(name, { agent: "verify", deliverable: "test_result", background: true }) })) },
      (req) => delegate("w1", { operation: "wait", runIds: names.map((name) => parse(toolResults(req)[name]).childRunId), timeoutMs: 25_000 }),
      { text: "both checked" },
    ],
  };
  for (const name of names) turns[name] = [{ toolCalls: [{ name: "read", id: `r-${name}`, args: { path: "README.md" } }], chunkDelayMs: 120 }, slowText(`done ${name}`, 3, 120)];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", "check twice"], { sandbox, timeoutMs: 30_000 });
  expect(result.code).toBe(0);
  const spawned = toolResults(requestsOf(fake, "root")[1]!);
  for (const name of names) expect(parse(spawned[name])).toMatchObject({ status: "queued", agent: "verify", workspaceMode: "shared-write" });
  expect(parse(toolResults(requestsOf(fake, "root")[2]!).w1).completed).toHaveLength(2);

  const [first, second] = requestSpans(names).sort((a, b) => a.start - b.start);
  // The second writer's first request came only after the first writer's last one.
  expect(second!.start).toBeGreaterThanOrEqual(first!.end);
  expect(peakOverlap([first!, second!])).toBe(1);
});

test("after a restart, send continues a shared-write child with its history; a worktree child of the earlier process cannot be resumed", async () => {
  commitAll(sandbox);
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["plan", "explore", "implement", "verify", "review", "vision", "scribe"] },
        scribe: { model: "fake", tools: ["read", "write", "find"], accepts: ["analysis"], permissionMode: "accept-edits", workspaceMode: "shared-write" },
      },
    }),
  );
  scriptBySender(fake, {
    root: [
      {
        toolCalls: [
          { name: "delegate", id: "shared", args: spawnArgs("checker", { agent: "scribe", goal: "FIRST-TASK-GOAL" }) },
          { name: "delegate", id: "isolated", args: spawnArgs("in-worktree", { agent: "implement", deliverable: "patch" }) },
        ],
      },
      { text: "both finished" },
    ],
    checker: [{ text: "FIRST-ANSWER-MARKER" }],
    "in-worktree": [{ toolCalls: [{ name: "write", id: "w", args: { operation: "write", path: "src/new.ts", content: "export {};\n" } }] }, envelope({ summary: "wrote src/new.ts" })],
  });
  const first = await runZero(["run", "--json", "--permission-mode", "accept-edits", "start two children"], { sandbox, env: zeroEnv() });
  expect(first.code).toBe(0);
  const answers = toolResults(requestsOf(fake, "root")[1]!);
  const shared = parse(answers.shared);
  const isolated = parse(answers.isolated);
  expect(shared).toMatchObject({ agent: "scribe", status: "completed", summary: "FIRST-ANSWER-MARKER" });
  expect(isolated).toMatchObject({ agent: "implement", status: "completed", changedFiles: ["src/new.ts"] });
  expect(worktreeList()).toEqual([`worktree ${sandbox.workspace}`]);
  expect(existsSync(join(sandbox.workspace, "src", "new.ts"))).toBe(false);

  fake.reset();
  scriptBySender(fake, {
    root: [
      {
        toolCalls: [
          { name: "delegate", id: "again", args: { operation: "send", runId: shared.childRunId, message: "SECOND-MESSAGE-MARKER" } },
          { name: "delegate", id: "wt", args: { operation: "send", runId: isolated.childRunId, message: "continue in your worktree" } },
        ],
      },
      { text: "resumed" },
    ],
    checker: [{ text: "SECOND-ANSWER-MARKER" }],
  });
  const second = await runZero(["run", "--json", "--permission-mode", "accept-edits", "--resume", "latest", "continue the children"], { sandbox, env: zeroEnv() });
  expect(second.code).toBe(0);

  // The shared-write child's new request carries its earlier turn, then the new message.
  const checkerRequests = requestsOf(fake, "checker");
  expect(checkerRequests).toHaveLength(1);
  const said = conversationOf(checkerRequests[0]!);
  expect(said[0]).toStartWith("user: # Delegated task: checker");
  expect(said[0]).toContain("FIRST-TASK-GOAL");
  expect(said.slice(1)).toEqual([expect.stringContaining("assistant: FIRST-ANSWER-MARKER"), "user: SECOND-MESSAGE-MARKER"]);

  const resumed = toolResults(requestsOf(fake, "root")[1]!);
  expect(parse(resumed.again)).toMatchObject({ childRunId: shared.childRunId, agent: "scribe", status: "completed", summary: "SECOND-ANSWER-MARKER" });
  expect(resumed.wt).toContain("cannot be resumed after a restart");
  expect(requestsOf(fake, "in-worktree")).toEqual([]);
  const events = jsonLines(second.stdout);
  const statuses = Object.fromEntries(events.filter((e) => e.type === "tool.completed" && e.runId === events[0]!.runId).map((e) => [e.callId, e.status]));
  expect(statuses).toEqual({ again: "completed", wt: "failed" });
  expect(events.filter((e) => e.type === "agent.spawned").map((e) => e.childRunId)).toEqual([shared.childRunId]);
  expect(worktreeList()).toEqual([`worktree ${sandbox.workspace}`]);
  expect(leftoverWorkspaces()).toEqual([]);
});
