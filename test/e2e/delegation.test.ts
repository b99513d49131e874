/**
 * Delegation as a user sees it: the real CLI, a scripted fake model, and the requests the fake
 * was sent. This file covers the task contract and its validation, routing, context modes,
 * work-depth limits, schedules and the result envelope; delegation-ops.test.ts covers background
 * children and wait/inspect/cancel/send; delegation-authority.test.ts permissions, scope, restarts.
 *
 * Children run concurrently with their parent, so the fake is scripted per sender: every request
 * is answered from the queue of whoever sent it (the root, or the child whose first user message
 * is `# Delegated task: <name>`), never by arrival order.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { allText, calls, commitAll, envelope, firstUser, parse, providerError, requestsOf, scriptBySender, senderOf, spawn, task as contract, toolNames, toolResults, type Turn } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** A task contract for spawn; its acceptance criterion asks for the file. */
const task = (taskName: string, extra: Record<string, unknown> = {}) => contract(taskName, { acceptanceCriteria: ["Name the file"], ...extra });

test("a foreground spawn hands the child's envelope to the parent's next request; child events carry the run tree", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { scout: { provider: "fake", model: "scout-model", capabilities: ["text", "tools"] } }, agents: { explore: { model: "scout" } } }));
  const criteria = ["Name the file that exports main", "Give the line number", "Say what main returns"];
  scriptBySender(fake, {
    root: [spawn("d1", { taskName: "find-main", goal: "Find the main module", deliverable: "analysis", agent: "explore", acceptanceCriteria: criteria }), { text: "The main module is src/main.ts." }],
    "find-main": [envelope({ summary: "main is in src/main.ts", findings: [{ path: "src/main.ts", line: 1, description: "exports main" }] })],
  });
  const result = await runZero(["run", "--json", "where is main?"], { sandbox });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);

  expect(fake.requests.map(senderOf)).toEqual(["root", "find-main", "root"]);
  const child = requestsOf(fake, "find-main")[0]!;
  for (const criterion of criteria) expect(firstUser(child)).toContain(`- ${criterion}`);
  expect(firstUser(child)).toContain("Goal: Find the main module");
  expect(firstUser(child)).toContain("Deliverable: analysis");
  // The profile fixes the model (DEL-24): the child asks for explore's model, the root for its own.
  expect(child.body.model).toBe("scout-model");
  expect(fake.requests[0]!.body.model).toBe("fake-1");

  const handed = parse(toolResults(fake.requests[2]!).d1);
  expect(handed.status).toBe("completed");
  expect(handed.summary).toBe("main is in src/main.ts");
  expect(handed.agent).toBe("explore");
  expect(handed.findings).toEqual([{ path: "src/main.ts", line: 1, description: "exports main" }]);
  expect(handed.changedFiles).toEqual([]);

  const events = jsonLines(result.stdout);
  const rootId = events[0]!.runId;
  const spawned = events.find((e) => e.type === "agent.spawned")!;
  expect(spawned).toMatchObject({ runId: rootId, taskName: "find-main", agent: "explore", deliverable: "analysis", background: false, childRunId: handed.childRunId });
  const childEvents = events.filter((e) => e.runId === handed.childRunId);
  expect(childEvents.length).toBeGreaterThan(3);
  for (const event of childEvents) expect(event).toMatchObject({ parentRunId: rootId, rootRunId: rootId });
  expect(childEvents[0]).toMatchObject({ type: "run.started", depth: 1, agent: "explore", permissionMode: "read-only" });
  expect(events.filter((e) => e.runId !== rootId && e.runId !== handed.childRunId)).toEqual([]);
  expect(events.find((e) => e.type === "agent.completed")).toMatchObject({ runId: rootId, childRunId: handed.childRunId, status: "completed" });
  expect(events.at(-1)).toMatchObject({ type: "run.completed", runId: rootId, status: "completed", text: "The main module is src/main.ts." });
});

test("invalid spawns are answered with errors the model can read, and start no child", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { canDelegateTo: ["explore", "review"] } } }));
  scriptBySender(fake, {
    root: [
      calls(
        ["no-criteria", { operation: "spawn", taskName: "a", goal: "Look around", deliverable: "analysis" }],
        ["empty-criteria", { operation: "spawn", taskName: "b", goal: "Look around", deliverable: "analysis", acceptanceCriteria: [] }],
        ["essay", { operation: "spawn", ...task("c", { deliverable: "essay" }) }],
        ["unknown", { operation: "spawn", ...task("d", { agent: "nosuch" }) }],
        ["not-allowed", { operation: "spawn", ...task("e", { agent: "implement", deliverable: "patch" }) }],
        ["dotdot", { operation: "spawn", ...task("f", { scope: { paths: ["../outside/**"] } }) }],
        ["model", { operation: "spawn", ...task("g", { model: "gpt-evil" }) }],
      ),
      { text: "none of that worked" },
    ],
  });
  const result = await runZero(["run", "--json", "try to delegate"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests.map(senderOf)).toEqual(["root", "root"]);
  const answers = toolResults(fake.requests[1]!);
  expect(answers["no-criteria"]).toContain("spawn needs at least one acceptance criterion");
  expect(answers["empty-criteria"]).toContain("spawn needs at least one acceptance criterion");
  expect(answers.essay).toContain("deliverable: Invalid option");
  expect(answers.unknown).toContain('unknown agent "nosuch"');
  expect(answers["not-allowed"]).toContain('may not delegate to "implement"');
  expect(answers.dotdot).toContain("'..'");
  expect(answers.model).toContain('Unrecognized key: "model"');
  const events = jsonLines(result.stdout);
  expect(events.filter((e) => e.type === "agent.spawned")).toEqual([]);
  const completed = events.filter((e) => e.type === "tool.completed");
  expect(completed.map((e) => e.status)).toEqual(Array(7).fill("failed"));
  expect(existsSync(join(sandbox.root, "outside"))).toBe(false);
});

test("auto routing sends each deliverable to its built-in profile", async () => {
  commitAll(sandbox);
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const deliverables = { analysis: "explore", plan: "plan", patch: "implement", test_result: "verify", review: "review" } as const;
  const turns: Record<string, Turn[]> = {
    root: [calls(...Object.keys(deliverables).map((d): [string, Record<string, unknown>] => [`call-${d}`, { operation: "spawn", ...task(`t-${d}`, { deliverable: d, agent: "auto" }) }])), { text: "done" }],
  };
  for (const d of Object.keys(deliverables)) turns[`t-${d}`] = [{ text: `nothing to report for ${d}` }];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "--json", "route everything"], { sandbox });
  expect(result.code).toBe(0);
  const spawned = jsonLines(result.stdout).filter((e) => e.type === "agent.spawned");
  expect(Object.fromEntries(spawned.map((e) => [e.deliverable, e.agent]))).toEqual(deliverables);
  const answers = toolResults(requestsOf(fake, "root")[1]!);
  for (const [d, agent] of Object.entries(deliverables)) expect(parse(answers[`call-${d}`]).agent).toBe(agent);
  // Each child got its own profile's tools (plus the todo ledger at medium depth).
  expect(toolNames(requestsOf(fake, "t-analysis")[0]!).sort()).toEqual(["find", "read", "todo"]);
  expect(toolNames(requestsOf(fake, "t-test_result")[0]!).sort()).toEqual(["find", "read", "run", "todo"]);
});

test("routing follows accepts, never a profile's name", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["review", "critic"] },
        review: { accepts: [] },
        critic: { model: "fake", tools: ["read", "find"], accepts: ["review"], permissionMode: "read-only", workspaceMode: "shared-readonly" },
      },
    }),
  );
  const verdict = envelope({ summary: "fine", verdict: "approve", issues: [] });
  scriptBySender(fake, {
    root: [calls(["r1", { operation: "spawn", ...task("rev-1", { deliverable: "review" }) }]), calls(["r2", { operation: "spawn", ...task("rev-2", { deliverable: "review", agent: "auto" }) }]), { text: "ok" }],
    "rev-1": [verdict],
    "rev-2": [verdict],
  });
  const result = await runZero(["run", "--json", "review it twice"], { sandbox });
  expect(result.code).toBe(0);
  const spawned = jsonLines(result.stdout).filter((e) => e.type === "agent.spawned");
  expect(spawned.map((e) => e.agent)).toEqual(["critic", "critic"]);
  expect(parse(toolResults(requestsOf(fake, "root")[1]!).r1)).toMatchObject({ agent: "critic", status: "completed", verdict: "approve" });
});

test("least-used routing alternates between eligible profiles; a reviewer that can write is never auto-chosen", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      agents: {
        build: { canDelegateTo: ["explore", "scout", "critic"] },
        scout: { model: "fake", tools: ["read", "find"], accepts: ["analysis"], permissionMode: "read-only", workspaceMode: "shared-readonly" },
        critic: { model: "fake", tools: ["read", "find"], accepts: ["review"], permissionMode: "read-only", workspaceMode: "git-worktree" },
      },
    }),
  );
  scriptBySender(fake, {
    root: [
      calls(["a1", { operation: "spawn", ...task("look-1") }]),
      calls(["a2", { operation: "spawn", ...task("look-2") }]),
      calls(["a3", { operation: "spawn", ...task("look-3") }]),
      calls(["r1", { operation: "spawn", ...task("rev", { deliverable: "review" }) }]),
      { text: "ok" },
    ],
    "look-1": [{ text: "1" }],
    "look-2": [{ text: "2" }],
    "look-3": [{ text: "3" }],
  });
  const result = await runZero(["run", "--json", "look three times"], { sandbox });
  expect(result.code).toBe(0);
  expect(jsonLines(result.stdout).filter((e) => e.type === "agent.spawned").map((e) => e.agent)).toEqual(["explore", "scout", "explore"]);
  expect(toolResults(requestsOf(fake, "root")[4]!).r1).toContain('no eligible profile for deliverable "review"');
  expect(requestsOf(fake, "rev")).toEqual([]);
});

test("context modes decide how much of the parent the child sees; explicit context always arrives", async () => {
  // pro: room for five analyses (medium holds its sixth run back for a review).
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "pro", multiAgent: { defaultContext: "none" } }));
  const modes: Record<string, unknown> = { "ctx-none": "none", "ctx-summary": "summary", "ctx-recent": { type: "recent", turns: 2 }, "ctx-full": "full", "ctx-default": undefined };
  const turns: Record<string, Turn[]> = {
    root: [
      calls(...Object.entries(modes).map(([name, mode]): [string, Record<string, unknown>] => [name, { operation: "spawn", ...task(name, { context: [`FACT-FOR-${name}`], ...(mode ? { contextMode: mode } : {}) }) }])),
      { text: "ok" },
    ],
  };
  for (const name of Object.keys(modes)) turns[name] = [{ text: `done ${name}` }];
  scriptBySender(fake, turns);
  const result = await runZero(["run", "PARENT-TASK-MARKER: find the entry point"], { sandbox });
  expect(result.code).toBe(0);
  const prompt = (name: string) => allText(requestsOf(fake, name)[0]!);
  for (const name of Object.keys(modes)) expect(prompt(name)).toContain(`FACT-FOR-${name}`);
  expect(prompt("ctx-none")).not.toContain("PARENT-TASK-MARKER");
  expect(prompt("ctx-default")).not.toContain("PARENT-TASK-MARKER");
  for (const name of ["ctx-summary", "ctx-recent", "ctx-full"]) expect(prompt(name)).toContain("PARENT-TASK-MARKER");
});

test("recent context sends only the last N turns of a resumed session", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, { root: [{ text: "first done" }] });
  expect((await runZero(["run", "TURN-ONE-MARKER"], { sandbox })).code).toBe(0);
  scriptBySender(fake, { root: [{ text: "second done" }] });
  expect((await runZero(["run", "--resume", "latest", "TURN-TWO-MARKER"], { sandbox })).code).toBe(0);
  scriptBySender(fake, { root: [spawn("d1", task("recent-one", { contextMode: { type: "recent", turns: 1 } })), { text: "ok" }], "recent-one": [{ text: "done" }] });
  expect((await runZero(["run", "--resume", "latest", "TURN-THREE-MARKER"], { sandbox })).code).toBe(0);
  const prompt = allText(requestsOf(fake, "recent-one")[0]!);
  expect(prompt).toContain("TURN-THREE-MARKER");
  expect(prompt).not.toContain("TURN-TWO-MARKER");
  expect(prompt).not.toContain("TURN-ONE-MARKER");
});

/** Where no child could start, the runtime may refuse the call or not offer delegate at all. */
const REFUSED_BY_DEPTH = /delegation depth exhausted|tool 'delegate' is not available/;

test("flash depth refuses delegation and offers no todo ledger; medium offers it", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, { root: [spawn("d1", task("too-deep")), { text: "ok" }] });
  const flash = await runZero(["run", "--json", "--depth", "flash", "delegate something"], { sandbox });
  expect(flash.code).toBe(0);
  expect(fake.requests.map(senderOf)).toEqual(["root", "root"]);
  expect(toolNames(fake.requests[0]!)).not.toContain("todo");
  expect(toolResults(fake.requests[1]!).d1).toMatch(REFUSED_BY_DEPTH);
  expect(jsonLines(flash.stdout).filter((e) => e.type === "agent.spawned")).toEqual([]);

  fake.reset();
  scriptBySender(fake, { root: [{ text: "ok" }] });
  expect((await runZero(["run", "hello"], { sandbox })).code).toBe(0);
  expect(toolNames(fake.requests[0]!)).toContain("todo");
  expect(toolNames(fake.requests[0]!)).toContain("delegate");
});

test("multiAgent.maxChildrenPerAgent 2 refuses the third spawn of one run", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { maxChildrenPerAgent: 2 } }));
  scriptBySender(fake, {
    root: [spawn("s1", task("one")), spawn("s2", task("two")), spawn("s3", task("three")), { text: "ok" }],
    one: [{ text: "1" }],
    two: [{ text: "2" }],
    three: [{ text: "3" }],
  });
  const result = await runZero(["run", "--json", "three children"], { sandbox });
  expect(result.code).toBe(0);
  expect(requestsOf(fake, "three")).toEqual([]);
  expect(requestsOf(fake, "one")).toHaveLength(1);
  expect(requestsOf(fake, "two")).toHaveLength(1);
  expect(toolResults(requestsOf(fake, "root")[3]!).s3).toContain("at most 2 children");
  expect(jsonLines(result.stdout).filter((e) => e.type === "agent.spawned")).toHaveLength(2);
});

test("legacy limits.maxDepth 1 refuses a grandchild; an explicit multiAgent.maxDepth wins", async () => {
  const planThenExplore = () => ({
    root: [spawn("p1", task("make-plan", { deliverable: "plan", agent: "plan" })), { text: "ok" }],
    "make-plan": [spawn("g1", task("dig", { agent: "explore" })), envelope({ summary: "plan", steps: [{ id: "s1", description: "do it", dependencies: [] }] })],
    dig: [{ text: "dug" }],
  });
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxDepth: 1 } }));
  scriptBySender(fake, planThenExplore());
  const legacy = await runZero(["run", "--json", "plan it"], { sandbox });
  expect(legacy.code).toBe(0);
  expect(requestsOf(fake, "dig")).toEqual([]);
  expect(toolResults(requestsOf(fake, "make-plan")[1]!).g1).toMatch(REFUSED_BY_DEPTH);

  fake.reset();
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { maxDepth: 1 }, multiAgent: { maxDepth: 3 } }));
  scriptBySender(fake, planThenExplore());
  const explicit = await runZero(["run", "--json", "plan it"], { sandbox });
  expect(explicit.code).toBe(0);
  expect(requestsOf(fake, "dig")).toHaveLength(1);
  expect(parse(toolResults(requestsOf(fake, "make-plan")[1]!).g1)).toMatchObject({ agent: "explore", status: "completed", summary: "dug" });
  const grandchild = jsonLines(explicit.stdout).find((e) => e.type === "run.started" && e.depth === 2)!;
  expect(grandchild.rootRunId).toBe(jsonLines(explicit.stdout)[0]!.runId);
});

test("a free-text answer becomes the summary; verification comes from the commands the child ran", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { verify: { permissionMode: "full-access" } } }));
  scriptBySender(fake, {
    root: [calls(["free", { operation: "spawn", ...task("free-text") }], ["tests", { operation: "spawn", ...task("run-checks", { deliverable: "test_result", agent: "verify" }) }]), { text: "ok" }],
    "free-text": [{ text: "Plain prose: main lives in src/main.ts." }],
    "run-checks": [
      { toolCalls: [{ name: "run", id: "ok", args: { command: "test -f README.md" } }] },
      { toolCalls: [{ name: "run", id: "bad", args: { command: "test -f missing.txt" } }] },
      envelope({ summary: "ran both", verification: [{ command: "made up", status: "passed" }] }),
    ],
  });
  const result = await runZero(["run", "--json", "-y", "check things"], { sandbox });
  expect(result.code).toBe(0);
  const answers = toolResults(requestsOf(fake, "root")[1]!);
  const free = parse(answers.free);
  expect(free).toMatchObject({ status: "completed", summary: "Plain prose: main lives in src/main.ts.", findings: [], verification: [] });
  const checks = parse(answers.tests);
  expect(checks.verification).toEqual([
    { command: "test -f README.md", status: "passed" },
    { command: "test -f missing.txt", status: "failed" },
  ]);
  // A test_result whose last command failed cannot be "completed".
  expect(checks.status).toBe("failed");
});
const scheduled = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  taskName: id,
  agent: "explore",
  goal: `Carry out ${id}`,
  deliverable: "analysis",
  acceptanceCriteria: ["Report what you saw"],
  dependencies: [],
  access: "read",
  ...extra,
});
const schedule = (id: string, ...tasks: unknown[]): [string, Record<string, unknown>] => [id, { operation: "schedule", tasks }];

test("a schedule with a cycle, a bad dependency, a false access claim or too many tasks is refused before any child runs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { maxChildrenPerAgent: 2 } }));
  scriptBySender(fake, {
    root: [
      calls(
        schedule("cycle", scheduled("alpha", { dependencies: ["beta"] }), scheduled("beta", { dependencies: ["alpha"] })),
        schedule("unknown-dep", scheduled("lonely", { dependencies: ["ghost"] })),
        schedule("writer-as-read", scheduled("tests", { agent: "verify", deliverable: "test_result" })),
        schedule("too-many", scheduled("one"), scheduled("two"), scheduled("three")),
      ),
      { text: "ok" },
    ],
  });
  const result = await runZero(["run", "--json", "schedule badly"], { sandbox });
  expect(result.code).toBe(0);
  expect(fake.requests.map(senderOf)).toEqual(["root", "root"]);
  const answers = toolResults(fake.requests[1]!);
  for (const answer of Object.values(answers)) expect(answer).toContain("nothing was started");
  expect(answers.cycle).toMatch(/dependency cycle: (alpha → beta → alpha|beta → alpha → beta)/);
  expect(answers["unknown-dep"]).toContain('unknown dependency "ghost"');
  expect(answers["writer-as-read"]).toContain('access "read" but profile verify can write');
  expect(answers["too-many"]).toContain("may start only 2 more children");
  const events = jsonLines(result.stdout);
  expect(events.filter((e) => e.type === "agent.spawned")).toEqual([]);
  expect(events.filter((e) => e.type === "tool.completed").map((e) => e.status)).toEqual(Array(4).fill("failed"));
});

test("a failed dependency skips its dependants; completed ones hand their results downstream", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptBySender(fake, {
    root: [
      calls(schedule("g1", scheduled("breaks"), scheduled("after-break", { dependencies: ["breaks"] }), scheduled("works"), scheduled("after-work", { dependencies: ["works"] }))),
      { text: "ok" },
    ],
    breaks: [providerError],
    works: [{ text: '```json\n{"summary": "WORKS-SUMMARY-MARKER"}\n```' }],
    "after-work": [{ text: "built on it" }],
  });
  const result = await runZero(["run", "--json", "schedule work"], { sandbox });
  expect(result.code).toBe(0);
  const { results } = parse(toolResults(requestsOf(fake, "root")[1]!).g1);
  expect(results.map((r: any) => [r.taskId, r.status])).toEqual([
    ["breaks", "failed"],
    ["after-break", "skipped"],
    ["works", "completed"],
    ["after-work", "completed"],
  ]);
  expect(results[1].childRunId).toBeNull();
  expect(results[1].summary).toContain("breaks");
  expect(requestsOf(fake, "after-break")).toEqual([]);
  const downstream = firstUser(requestsOf(fake, "after-work")[0]!);
  expect(downstream).toContain("Results of the tasks this one depends on");
  expect(downstream).toContain("WORKS-SUMMARY-MARKER");
  expect(jsonLines(result.stdout).filter((e) => e.type === "agent.spawned").map((e) => e.taskName).sort()).toEqual(["after-work", "breaks", "works"]);
});
