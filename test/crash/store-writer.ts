// A store writer for crash and concurrency tests:
//   bun test/crash/store-writer.ts <dir> <sessionId> <runId> <count|0 = until killed> [checkpointEvery]
// Creates its session and run, then appends events. After each append returns it prints
// "e <id> <sequence>", and after each checkpoint "c <version>", so the parent knows what
// was acknowledged (written to the database before the line was printed).
import { openStore } from "../../src/store/store.ts";

const [dir, sessionId, runId, countText, everyText] = process.argv.slice(2);
if (dir === undefined || sessionId === undefined || runId === undefined || countText === undefined) {
  process.stderr.write("usage: store-writer.ts <dir> <sessionId> <runId> <count> [checkpointEvery]\n");
  process.exit(2);
}
const count = Number(countText);
const checkpointEvery = Number(everyText ?? 0);
const now = () => new Date().toISOString();

const { store, notices } = openStore({ dir });
for (const notice of notices) process.stderr.write(`notice: ${notice}\n`);
store.createSession({ id: sessionId, surface: "exec", workspace: "/crash", title: "crash test", createdAt: now() });
store.createRun({
  id: runId,
  sessionId,
  rootId: runId,
  parentId: null,
  task: "append until killed",
  agent: "build",
  modelAlias: "default",
  provider: "fake",
  apiModel: "fake-1",
  status: "running",
  reason: null,
  depth: 0,
  workspace: "/crash",
  permissionMode: "ask",
  workDepth: "medium",
  budgets: {},
  usage: {},
  steps: 0,
  toolCalls: 0,
  deadline: now(),
  startedAt: now(),
  endedAt: null,
  pid: process.pid,
});
process.stdout.write("ready\n");

let messages = 0;
for (let sequence = 1; count === 0 || sequence <= count; sequence++) {
  // Mostly small deltas, now and then a large body that spans several pages.
  const text = sequence % 97 === 0 ? "x".repeat(20_000) : `delta ${sequence} \u2028 😀`;
  const id = store.appendEvent({ runId, sequence, type: "message.delta", timestamp: now(), step: 1, text });
  process.stdout.write(`e ${id} ${sequence}\n`);
  if (checkpointEvery > 0 && sequence % checkpointEvery === 0) {
    const message = { role: "assistant" as const, parts: [{ type: "text" as const, text }, { type: "file" as const, mediaType: "image/png", data: Buffer.from([sequence % 256, 0, 255]).toString("base64") }] };
    store.writeMessages(sessionId, runId, [{ position: messages, message }]);
    messages += 1;
    const version = sequence / checkpointEvery;
    store.saveCheckpoint({ runId, sessionId, version, createdAt: now(), messageCount: messages, meta: { sequence } });
    process.stdout.write(`c ${version}\n`);
  }
}
store.updateRun(runId, { status: "completed", endedAt: now() });
store.close();
