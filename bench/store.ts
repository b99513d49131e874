// Benchmark of the persistence store: `node_modules/.bin/bun bench/store.ts`.
// 1. appendEvent throughput: one run streaming small message.delta events through the Store API.
// 2. Opening a database of 1,000 sessions and 1,000,000 events and listing its sessions
//    (generated once in a temp dir; medians over BENCH_STORE_RUNS opens, page cache warm).
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type RunRow } from "../src/store/store.ts";
import { median } from "./stats.ts";

const RUNS = Number(process.env.BENCH_STORE_RUNS ?? 7);
const APPENDS = Number(process.env.BENCH_STORE_APPENDS ?? 50_000);
const SESSIONS = 1_000;
const EVENTS = 1_000_000;
const WORKSPACE = "/work/project";


function run(id: string, sessionId: string, startedAt: string): RunRow {
  return {
    id,
    sessionId,
    rootId: id,
    parentId: null,
    task: "benchmark task",
    agent: "build",
    modelAlias: "default",
    provider: "openai",
    apiModel: "gpt-5",
    status: "completed",
    reason: null,
    depth: 0,
    workspace: WORKSPACE,
    permissionMode: "ask",
    workDepth: "medium",
    budgets: { maxSteps: 50 },
    usage: { inputTokens: 1000, outputTokens: 200 },
    steps: 3,
    toolCalls: 4,
    deadline: startedAt,
    startedAt,
    endedAt: startedAt,
    pid: process.pid,
  };
}

function delta(runId: string, sequence: number, timestamp: string) {
  return { eventId: crypto.randomUUID(), sequence, timestamp, runId, type: "message.delta", step: 1, text: `token ${sequence} ` };
}

function benchAppends(root: string): { perSecond: number; bytesPerEvent: number } {
  const rates: number[] = [];
  let bytesPerEvent = 0;
  for (let r = 0; r < 3; r++) {
    const dir = join(root, `append-${r}`);
    const { store } = openStore({ dir });
    const at = new Date().toISOString();
    store.createSession({ id: "s", surface: "cli", workspace: WORKSPACE, title: "bench", createdAt: at });
    store.createRun({ ...run("r", "s", at), status: "running", endedAt: null });
    // Each event is built just before it is written, as the emitter does.
    const started = performance.now();
    for (let i = 1; i <= APPENDS; i++) store.appendEvent(delta("r", i, at));
    const seconds = (performance.now() - started) / 1000;
    rates.push(APPENDS / seconds);
    store.close();
    bytesPerEvent = statSync(join(dir, "zero-cli.db")).size / APPENDS;
  }
  return { perSecond: median(rates), bytesPerEvent };
}

/** Builds the large database with raw inserts in one transaction (the schema comes from openStore). */
function buildLarge(dir: string): string {
  const { store } = openStore({ dir });
  const path = store.path;
  store.close();
  const db = new Database(path);
  db.run("PRAGMA journal_mode = WAL");
  const insertSession = db.prepare("INSERT INTO sessions (id, surface, workspace, title, created_at, updated_at) VALUES (?, 'cli', ?, ?, ?, ?)");
  const insertRun = db.prepare(
    `INSERT INTO runs VALUES (?, ?, ?, NULL, 'task', 'build', 'default', 'openai', 'gpt-5', 'completed', NULL, 0, ?, 'ask', 'medium',
     '{}', '{"inputTokens":1000}', 3, 4, ?, ?, ?, 1)`,
  );
  const insertEvent = db.prepare("INSERT INTO events (run_id, sequence, type, created_at, body) VALUES (?, ?, 'message.delta', ?, ?)");
  const perSession = EVENTS / SESSIONS;
  db.transaction(() => {
    for (let s = 0; s < SESSIONS; s++) {
      const at = new Date(Date.UTC(2025, 0, 1) + s * 60_000).toISOString();
      const sessionId = `zero_bench_${String(s).padStart(4, "0")}`;
      const runId = `run_bench_${String(s).padStart(4, "0")}`;
      insertSession.run(sessionId, WORKSPACE, `session ${s}`, at, at);
      insertRun.run(runId, sessionId, runId, WORKSPACE, at, at, at);
      for (let i = 1; i <= perSession; i++) insertEvent.run(runId, i, at, JSON.stringify(delta(runId, i, at)));
    }
  })();
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return path;
}

function benchOpenList(dir: string, path: string) {
  const open: number[] = [];
  const list: number[] = [];
  const quickCheck: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    const { store } = openStore({ dir });
    const t1 = performance.now();
    const sessions = store.listSessions({ workspace: WORKSPACE, limit: 1000 });
    const t2 = performance.now();
    if (sessions.length !== SESSIONS) throw new Error(`listed ${sessions.length} sessions`);
    store.close();
    open.push(t1 - t0);
    list.push(t2 - t1);
    const raw = new Database(path, { readonly: true });
    const t3 = performance.now();
    raw.query("PRAGMA quick_check").all();
    quickCheck.push(performance.now() - t3);
    raw.close();
  }
  return { open: median(open), list: median(list), quickCheck: median(quickCheck) };
}

const root = mkdtempSync(join(tmpdir(), "zero-bench-store-"));
try {
  const appends = benchAppends(root);
  const largeDir = join(root, "large");
  const buildStarted = performance.now();
  const path = buildLarge(largeDir);
  const buildSeconds = (performance.now() - buildStarted) / 1000;
  const sizeMiB = statSync(path).size / (1024 * 1024);
  const timings = benchOpenList(largeDir, path);

  const rows: Array<[string, string]> = [
    [`appendEvent, one run, ${APPENDS.toLocaleString("en-US")} small deltas (median of 3)`, `${Math.round(appends.perSecond).toLocaleString("en-US")} events/s`],
    ["  database bytes per small event", `${Math.round(appends.bytesPerEvent)} B`],
    [`large DB: ${SESSIONS.toLocaleString("en-US")} sessions, ${EVENTS.toLocaleString("en-US")} events`, `${sizeMiB.toFixed(0)} MiB (built in ${buildSeconds.toFixed(1)} s)`],
    [`  openStore (header + catalog quick_check), median of ${RUNS}`, `${timings.open.toFixed(1)} ms`],
    ["  listSessions (1,000 rows)", `${timings.list.toFixed(1)} ms`],
    ["  open + list", `${(timings.open + timings.list).toFixed(1)} ms`],
    ["  a full PRAGMA quick_check, for comparison", `${timings.quickCheck.toFixed(1)} ms`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`store benchmark (bun ${Bun.version})`);
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
