// Crash safety of the store: a child process appends events (and now and then a checkpoint)
// and is killed with SIGKILL at a random moment; the parent reopens the same database and
// checks that it is intact and holds every write the child had acknowledged.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";

const ITERATIONS = Number(process.env.STORE_CRASH_ITERATIONS ?? 25);
const WRITER = join(import.meta.dir, "store-writer.ts");
const root = mkdtempSync(join(tmpdir(), "zero-store-crash-"));
const dir = join(root, "state");
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Acknowledged = { events: Map<number, number>; checkpoint: number };

/** Reads the child's stdout until it ends; only complete lines count. */
async function readAcknowledged(stream: ReadableStream<Uint8Array>): Promise<Acknowledged> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  const acknowledged: Acknowledged = { events: new Map(), checkpoint: 0 };
  const lines = text.split("\n");
  lines.pop(); // an unterminated last line may have been cut by the kill
  for (const line of lines) {
    const [kind, a, b] = line.split(" ");
    if (kind === "e") acknowledged.events.set(Number(a), Number(b));
    if (kind === "c") acknowledged.checkpoint = Number(a);
  }
  return acknowledged;
}

/** What is wrong with the database after one crash, or [] when nothing is. */
function verify(runId: string, acknowledged: Acknowledged): string[] {
  const problems: string[] = [];
  const { store, notices } = openStore({ dir });
  try {
    if (notices.length > 0) problems.push(`notices on reopen: ${notices.join(" | ")}`);
    const raw = new Database(store.path, { readonly: true });
    try {
      const integrity = raw.query("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>;
      if (integrity.length !== 1 || integrity[0]?.integrity_check !== "ok") problems.push(`integrity_check: ${JSON.stringify(integrity.slice(0, 3))}`);
      const rows = raw.query("SELECT id, sequence FROM events WHERE run_id = ? ORDER BY id").all(runId) as Array<{ id: number; sequence: number }>;
      const stored = new Map(rows.map((row) => [row.id, row.sequence]));
      for (const [id, sequence] of acknowledged.events) {
        if (stored.get(id) !== sequence) problems.push(`acknowledged event ${id} (sequence ${sequence}) is missing`);
      }
      // Commits are ordered, so what survived is a prefix: sequences 1..k with no gaps.
      rows.forEach((row, index) => {
        if (row.sequence !== index + 1) problems.push(`event ${row.id} has sequence ${row.sequence}, expected ${index + 1}`);
      });
    } finally {
      raw.close();
    }
    if (acknowledged.checkpoint > 0) {
      const latest = store.latestCheckpoint({ runId });
      if (latest === undefined || latest.version < acknowledged.checkpoint) {
        problems.push(`checkpoint ${acknowledged.checkpoint} was acknowledged, latest stored is ${latest?.version ?? "none"}`);
      } else if (latest.messageCount !== latest.version || store.loadMessages(latest.sessionId, latest.messageCount).at(-1)?.parts[1]?.type !== "file") {
        problems.push(`checkpoint ${latest.version} came back malformed`);
      }
    }
    // The killed child's run was left "running" with a dead pid: reopening marks it interrupted.
    const run = store.getRun(runId);
    if (run !== undefined && run.status !== "interrupted") problems.push(`run ${runId} is ${run.status} after the crash, expected interrupted`);
  } finally {
    store.close();
  }
  return problems;
}

test(
  "the store survives SIGKILL at random moments with every acknowledged write present",
  async () => {
    let passed = 0;
    let failed = 0;
    let acknowledgedTotal = 0;
    for (let i = 1; i <= ITERATIONS; i++) {
      const runId = `run_crash_${i}`;
      const child = Bun.spawn([process.execPath, WRITER, dir, `zero_crash_${i}`, runId, "0", "50"], { stdout: "pipe", stderr: "pipe" });
      const acknowledged = readAcknowledged(child.stdout);
      const delay = 20 + Math.floor(Math.random() * 281);
      await Bun.sleep(delay);
      child.kill("SIGKILL");
      await child.exited;
      const seen = await acknowledged;
      acknowledgedTotal += seen.events.size;
      const problems = verify(runId, seen);
      if (problems.length === 0) passed++;
      else {
        failed++;
        console.error(`iteration ${i} (killed after ${delay} ms, ${seen.events.size} acknowledged):\n  ${problems.slice(0, 5).join("\n  ")}`);
      }
    }
    console.log(`store crash test: ${ITERATIONS} kills, ${acknowledgedTotal} acknowledged events checked`);
    // Prefixed, so it is never mistaken for the suite's own closing "N passed, N failed" line in CI logs.
    console.log(`store crash test — ${passed} passed, ${failed} failed`);
    expect(failed).toBe(0);
  },
  60_000,
);
