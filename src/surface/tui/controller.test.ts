import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeConfig, type Sandbox } from "../../../test/support/cli.ts";
import { waitUntil } from "../../../test/support/cli.ts";
import { useFakeProviderAndSandbox } from "../../../test/support/e2e-hooks.ts";
import type { FakeProvider } from "../../../test/support/fake-provider.ts";
import { lazyWorkspaceStore } from "../../../test/support/workspace-store.ts";
import { loadConfig } from "../../config/load.ts";
import { createSessionService } from "../../session/service.ts";
import { createController, FRAME_MS, initialState, type TuiState } from "./controller.ts";
import { visibleRows } from "./timeline.ts";

// The controller over the real session service, model runner, fake provider (HTTP) and store.

let fake: FakeProvider;
let sandbox: Sandbox;
let stores: ReturnType<typeof lazyWorkspaceStore> | undefined;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });
afterEach(() => {
  stores?.close();
  stores = undefined;
});

function setup(resume?: string, onUpdate: () => void = () => {}, extra: Partial<Parameters<typeof createController>[0]> = {}) {
  const loaded = loadConfig({ workspace: sandbox.workspace, env: sandbox.env });
  stores ??= lazyWorkspaceStore(sandbox.env, sandbox.workspace);
  const service = createSessionService({
    config: loaded.config,
    env: sandbox.env,
    workspace: sandbox.workspace,
    extraDirs: [],
    surface: "tui",
    overrides: {},
    interactive: true,
    store: stores.access,
  });
  let state: TuiState = initialState("");
  const controller = createController({ service, config: loaded.config, workspace: sandbox.workspace, update: (change) => (onUpdate(), change(state)), read: () => state, ...extra, ...(resume ? { resume } : {}) });
  state = initialState(controller.session.id);
  return { controller, state: () => state, service };
}

test("send, stream, queue two during a run (both run in order in the same conversation), then resume the session into a new controller", async () => {
  const { controller, state } = setup();
  fake.script([{ kind: "stall" }]);
  expect(controller.submit("first task")).toBe("sent");
  await fake.waitForRequests(1);
  expect(state().running).toBe(true);
  expect(controller.submit("second")).toBe("queued");
  expect(controller.submit("third")).toBe("queued");
  expect(state().queue.items.map((m) => m.text)).toEqual(["second", "third"]);
  fake.script([{ text: "answer two" }, { text: "answer three" }]);
  expect(controller.cancel()).toBe(true);
  await waitUntil("the queue to drain", () => !state().running && state().queue.items.length === 0 && fake.requests.length >= 3, 15_000);
  expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("answer two");
  const users = state().timeline.entries.filter((e) => e.kind === "user").map((e) => (e as { text: string }).text);
  expect(users).toEqual(["first task", "second", "third"]);
  const answers = visibleRows(state().timeline).flatMap((r) => (r.kind === "entry" && r.entry.kind === "assistant" ? [r.entry.text] : []));
  expect(answers).toEqual(["answer two", "answer three"]);
  const id = controller.session.id;
  controller.close();

  // A new TUI resuming it shows the same turns again.
  const again = setup(id);
  again.controller.replay();
  expect(again.state().timeline.entries.filter((e) => e.kind === "assistant").map((e) => (e as { text: string }).text)).toEqual(["answer two", "answer three"]);
  expect(again.state().started).toBe(true);
}, 30_000);

test("approvals: A allows for the session (the decision is in the timeline); N denies", async () => {
  const { controller, state } = setup();
  const write = (path: string, id: string) => ({ toolCalls: [{ name: "write", args: { operation: "write", path, content: "x" }, id }] });
  fake.script([write("a.txt", "c1"), { text: "done" }]);
  controller.submit("write a");
  await waitUntil("the approval", () => state().approvals.length === 1);
  expect(state().approvals[0]).toMatchObject({ tool: "write", operation: "write-edit" });
  controller.answer("always");
  await waitUntil("the run to end", () => !state().running);
  expect(existsSync(join(sandbox.workspace, "a.txt"))).toBe(true);
  expect(state().timeline.entries.some((e) => e.kind === "decision" && e.answer === "always")).toBe(true);
  fake.script([write("b.txt", "c2"), { text: "refused" }]);
  controller.submit("write b");
  await waitUntil("the second approval", () => state().approvals.length === 1);
  controller.answer("deny");
  await waitUntil("the second run to end", () => !state().running);
  expect(existsSync(join(sandbox.workspace, "b.txt"))).toBe(false);
  controller.close();
}, 30_000);

test("slash commands: choices apply to the next run; bad values name the allowed ones; pickers, help, clear, new", async () => {
  const { controller, state } = setup();
  controller.submit("/depth flash");
  controller.submit("/depth bottomless");
  expect(state().choices).toEqual({ depth: "flash" });
  const notices = state().timeline.entries.filter((e) => e.kind === "notice").map((e) => (e as { text: string }).text);
  expect(notices.at(-1)).toContain("flash, medium, pro, ultra");
  // Efforts and speeds are the next model's, by the runtime's rule: "max" needs a declaration.
  controller.submit("/reasoning max");
  controller.submit("/speed fast");
  expect(state().choices).toEqual({ depth: "flash" });
  controller.submit("/model");
  expect(state().popup).toMatchObject({ kind: "picker", command: "model", current: "auto" });
  controller.submit("/help");
  expect(state().popup?.kind).toBe("help");
  fake.script([{ text: "quick" }]);
  controller.submit("hello");
  await waitUntil("the run", () => !state().running && state().timeline.entries.some((e) => e.kind === "assistant"));
  // flash: no todo or delegate tool was offered.
  const tools = (fake.requests.at(-1)!.body.tools ?? []).map((t: { function?: { name: string } }) => t.function?.name);
  expect(tools).not.toContain("todo");
  controller.submit("/clear");
  expect(state().timeline.entries).toEqual([]);
  const before = controller.session.id;
  controller.submit("/new");
  expect(controller.session.id).not.toBe(before);
  expect(state().sessionId).toBe(controller.session.id);
  expect(state().choices).toEqual({ depth: "flash" });
  controller.submit("/quit");
  expect(state().quitting).toBe(true);
  controller.close();
}, 30_000);

test("closing (quit, a signal) never starts a queued message", async () => {
  const { controller, state } = setup();
  fake.script([{ kind: "stall" }, { text: "must never be asked for" }]);
  controller.submit("first task");
  await fake.waitForRequests(1);
  expect(controller.submit("queued one")).toBe("queued");
  controller.close();
  await waitUntil("the run to end", () => !state().running, 10_000);
  await Bun.sleep(200);
  expect(fake.requests).toHaveLength(1);
  expect(state().timeline.entries.filter((e) => e.kind === "user")).toHaveLength(1);
}, 30_000);

test("streamed deltas reach the view at most once a frame, in order with the other events; an edited queued message keeps its place", async () => {
  let updates = 0;
  const { controller, state: current } = setup(undefined, () => updates++);
  const chunks = Array.from({ length: 400 }, (_, i) => `w${i} `);
  fake.script([{ text: chunks, toolCalls: [{ name: "find", args: { pattern: "*.md" } }] }, { kind: "stall" }]);
  const started = performance.now();
  controller.submit("stream a lot");
  await fake.waitForRequests(2);
  const elapsedFrames = Math.ceil((performance.now() - started) / FRAME_MS) + 1;
  const state = current();
  const entries = state.timeline.entries;
  const answer = entries.find((e) => e.kind === "assistant") as { text: string };
  expect(answer.text).toBe(chunks.join(""));
  // The answer's text comes before the tool row it asked for, as it streamed.
  expect(entries.findIndex((e) => e.kind === "assistant")).toBeLessThan(entries.findIndex((e) => e.kind === "tool"));
  // 400 deltas, far fewer store updates: bounded by the frames the stream took (plus the other events).
  expect(updates).toBeLessThan(Math.min(200, elapsedFrames + 30));
  // The queue editor: E takes a message out to the composer, Enter puts the edit back in its place.
  controller.submit("queued A");
  controller.submit("queued B");
  const [a] = state.queue.items;
  expect(controller.editQueued(a!.id)).toBe("queued A");
  expect(controller.submit("queued A, edited")).toBe("edited");
  expect(state.queue.items.map((m) => m.text)).toEqual(["queued A, edited", "queued B"]);
  // A command typed while editing runs; the queued message stays as it was.
  expect(controller.editQueued(a!.id)).toBe("queued A, edited");
  expect(controller.submit("/depth flash")).toBe("command");
  expect(state.editing).toBeUndefined();
  expect(state.choices.depth).toBe("flash");
  expect(state.queue.items.map((m) => m.text)).toEqual(["queued A, edited", "queued B"]);
  controller.moveQueued(a!.id, 1);
  controller.deleteQueued(state.queue.items[0]!.id);
  expect(state.queue.items.map((m) => m.text)).toEqual(["queued A, edited"]);
  controller.close();
}, 30_000);

test("a queued message being edited is held: the queue runs the others, and the edit runs once it is put back", async () => {
  const { controller, state } = setup();
  fake.script([{ kind: "stall" }, { text: "ran B" }, { text: "ran A edited" }]);
  controller.submit("first task");
  await fake.waitForRequests(1);
  controller.submit("A");
  controller.submit("B");
  const a = state().queue.items[0]!;
  expect(controller.editQueued(a.id)).toBe("A");
  controller.cancel();
  await waitUntil("B to run while A is edited", () => fake.requests.length >= 2 && !state().running, 15_000);
  expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain('"B"');
  expect(state().queue.items.map((m) => m.text)).toEqual(["A"]);
  expect(controller.submit("A edited")).toBe("edited");
  await waitUntil("the edit to run", () => fake.requests.length >= 3 && !state().running, 15_000);
  expect(JSON.stringify(fake.requests[2]!.body.messages)).toContain("A edited");
  expect(state().queue.items).toEqual([]);
  controller.close();
}, 30_000);

test("/model <alias> and /workflow off clear the model history: the next run is a new conversation (the old session stays); /model auto does not", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { alt: { provider: "fake", model: "fake-2", capabilities: ["text", "tools"] } } }));
  const { controller, state } = setup();
  fake.script([{ text: "first answer" }, { text: "second answer" }, { text: "third answer" }]);
  controller.submit("remember the word kiwi");
  await waitUntil("the first run", () => !state().running && fake.requests.length === 1);
  const firstSession = controller.session.id;
  controller.submit("/model alt");
  expect(state().timeline.entries.at(-1)).toMatchObject({ kind: "notice", text: expect.stringContaining("fresh conversation") });
  controller.submit("what was the word?");
  await waitUntil("the second run", () => !state().running && fake.requests.length === 2);
  const second = JSON.stringify(fake.requests[1]!.body.messages);
  expect(fake.requests[1]!.body.model).toBe("fake-2");
  expect(second).not.toContain("kiwi");
  expect(controller.session.id).not.toBe(firstSession);
  expect(state().sessionId).toBe(controller.session.id);
  // The timeline keeps what was shown.
  expect(state().timeline.entries.some((e) => e.kind === "user" && e.text.includes("kiwi"))).toBe(true);
  // /model alt then /model auto before a run: back to the configured model, nothing cleared.
  controller.submit("/model alt");
  controller.submit("/model auto");
  controller.submit("and now?");
  await waitUntil("the third run", () => !state().running && fake.requests.length === 3);
  expect(JSON.stringify(fake.requests[2]!.body.messages)).toContain("what was the word?");
  // /workflow off: direct agent mode, and a fresh conversation again.
  fake.script([{ text: "fourth answer" }]);
  controller.submit("/workflow off");
  expect(state().timeline.entries.at(-1)).toMatchObject({ kind: "notice", text: expect.stringContaining("fresh conversation") });
  controller.submit("last one");
  await waitUntil("the fourth run", () => !state().running && fake.requests.length === 4);
  expect(JSON.stringify(fake.requests[3]!.body.messages)).not.toContain("and now?");
  controller.close();
}, 30_000);

test("/skills lists the root agent's skills; /skills <name> shows where one comes from and its instructions (drawn cleaned: composer.test.tsx)", () => {
  const file = join(sandbox.root, "SKILL.md");
  writeFileSync(file, "---\nname: release-notes\ndescription: write release notes\n---\nStep one: read the log.\n\u001b]0;evil\u0007Step two.\n");
  const skills = [{ id: "release-notes", description: "write release notes", provenance: "user", file }];
  const { controller, state } = setup(undefined, () => {}, { skills: () => skills, skillText: (path) => readFileSync(path, "utf8") });
  controller.submit("/skills");
  expect(state().popup).toMatchObject({ kind: "text", title: "/skills (1)" });
  expect((state().popup as { lines: string[] }).lines[0]).toBe("$release-notes  write release notes  (user)");
  controller.submit("/skills release-notes");
  const lines = (state().popup as { lines: string[] }).lines;
  expect(lines[0]).toBe(`${file}  (user)`);
  expect(lines).toContain("Step one: read the log.");
  controller.submit("/skills nope");
  expect(state().timeline.entries.at(-1)).toMatchObject({ kind: "notice", text: "skills: no skill 'nope' for the root agent; it has release-notes" });
  controller.close();
});
