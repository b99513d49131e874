import { afterEach, expect, test } from "bun:test";
import { openStore, type Store } from "../store/store.ts";
import { runRow, sessionRow, tempDirs } from "../store/store-test-support.ts";
import { userMessage, type Message } from "../protocol/messages.ts";
import { loadConfig } from "../config/load.ts";
import { createRunRecorder } from "./recorder.ts";
import { loadHistory, resolveRunResume } from "./resume.ts";

const dirs = tempDirs();
let store: Store;
afterEach(() => {
  store.close();
  dirs.cleanup();
});

const assistantWithCall = (callId: string): Message => ({ role: "assistant", parts: [{ type: "tool-call", callId, tool: "run", input: { command: "git push" }, state: "pending" }] });

test("--resume-run refuses a run that is not its session's latest: the session went on after it", () => {
  store = openStore({ dir: dirs.make(), isAlive: () => false }).store;
  store.createSession(sessionRow());
  store.createRun(runRow({ id: "run_20250101_first", status: "interrupted", startedAt: "2025-01-01T00:00:01.000Z" }));
  store.createRun(runRow({ id: "run_20250101_later", status: "completed", startedAt: "2025-01-01T00:05:00.000Z" }));
  const config = loadConfig({ workspace: "/work/project", env: { HOME: dirs.make() } }).config;
  expect(() => resolveRunResume(store, "run_20250101_first", { workspace: "/work/project", surface: "cli", config })).toThrow(
    "is not the latest run of session zero_20250101000000_aaaaaaaaaa (run_20250101_later came after it); continue the session with --resume",
  );
});

test("a run that dies before its first write loses nothing: rows past the checkpoint are replaced only by that write", () => {
  store = openStore({ dir: dirs.make() }).store;
  store.createSession(sessionRow());
  store.createRun(runRow());
  const id = sessionRow().id;
  // An earlier run left a call past its last marker (it died while the call ran).
  const earlier = [userMessage("push it"), assistantWithCall("c1")];
  store.writeMessages(id, runRow().id, earlier.map((message, position) => ({ position, message })));
  store.saveCheckpoint({ runId: runRow().id, sessionId: id, version: 2, createdAt: "2025-01-01T00:00:02.000Z", messageCount: 1, meta: {} });
  const { history, stored } = loadHistory(store, id, store.latestCheckpoint({ sessionId: id }));
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  // The next run starts, and dies before writing anything: the call is still on disk.
  createRunRecorder(store, runRow({ id: "run_20250101_next" }), { surface: "cli", title: "t" }, stored);
  expect(store.loadMessages(id)).toEqual(earlier);
  // Its first write replaces the tail with the repaired history, in one transaction.
  const recorder = createRunRecorder(store, runRow({ id: "run_20250101_next" }), { surface: "cli", title: "t" }, stored);
  recorder.messages([...history, userMessage("go on")]);
  expect(store.loadMessages(id).map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
});

test("a history with fewer rows than its checkpoint covers is refused, not silently shortened", () => {
  store = openStore({ dir: dirs.make() }).store;
  store.createSession(sessionRow());
  store.createRun(runRow());
  const id = sessionRow().id;
  store.writeMessages(id, runRow().id, [{ position: 0, message: userMessage("hi") }]);
  store.saveCheckpoint({ runId: runRow().id, sessionId: id, version: 2, createdAt: "2025-01-01T00:00:02.000Z", messageCount: 3, meta: {} });
  expect(() => loadHistory(store, id, store.latestCheckpoint({ sessionId: id }))).toThrow("its history is incomplete");
});
