// Long-session benchmark: one session, TURNS consecutive `zero run --resume latest` turns of
// STEPS tool calls each, against the instant fake provider. Per turn: wall time, the median
// gap between a model answer and the next request (per-step cost), and the payload bytes the
// turn wrote to the database per step (message rows, events, checkpoint markers), read back
// from the database. Baseline in the same run: the bytes per step a checkpoint that stores
// the whole history (the design before message rows) would have written for the same turns.
import { Database } from "bun:sqlite";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fakeConfig, makeSandbox, ZERO_BIN } from "../test/support/cli.ts";
import { startFakeProvider, type FakeTurn } from "../test/support/fake-provider.ts";
import { median } from "./stats.ts";

const TURNS = Number(process.env.BENCH_TURNS ?? 12);
// Another build to compare with (e.g. a checkout of an older commit): BENCH_ZERO_BIN=/path/bin/zero.
const BIN = process.env.BENCH_ZERO_BIN ?? ZERO_BIN;
const STEPS = Number(process.env.BENCH_STEPS ?? 50);


function databaseOf(stateHome: string): string {
  const base = join(stateHome, "zero-cli");
  const [hash] = readdirSync(base);
  return join(base, hash!, "zero-cli.db");
}

type Turn = { turn: number; wallMs: number; gapMs: number; bytesPerStep: number; wholeHistoryBytesPerStep: number };

const sandbox = makeSandbox();
const fake = await startFakeProvider();
try {
  // Ultra: the work depth allows 100 steps per run (medium stops at 24).
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra" }));
  const script = (turn: number): FakeTurn[] => [
    ...Array.from({ length: STEPS }, (_, i): FakeTurn => ({ toolCalls: [{ name: "read", args: { path: "README.md", offset: (i % 3) + 1 } }] })),
    { text: `turn ${turn} done` },
  ];
  const turns: Turn[] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    fake.reset();
    fake.script(script(turn));
    const args = turn === 1 ? ["run", `turn ${turn}`] : ["run", "--resume", "latest", `turn ${turn}`];
    const started = performance.now();
    const proc = Bun.spawn([BIN, ...args], { env: sandbox.env, cwd: sandbox.workspace, stdout: "ignore", stderr: "pipe" });
    const code = await proc.exited;
    const wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`turn ${turn} exited ${code}: ${await new Response(proc.stderr).text()}`);
    const gaps = fake.requests.slice(1).map((r, j) => r.receivedAt - fake.requests[j]!.answeredAt!);

    const db = new Database(databaseOf(sandbox.stateHome), { readonly: true });
    if (db.query("SELECT name FROM sqlite_master WHERE name = 'messages'").get() === null) {
      // A build from before message rows: wall and per-step figures only.
      db.close();
      turns.push({ turn, wallMs, gapMs: median(gaps), bytesPerStep: Number.NaN, wholeHistoryBytesPerStep: Number.NaN });
      continue;
    }
    const run = db.query("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1").get() as { id: string };
    const sum = (sql: string) => (db.query(sql).get(run.id) as { n: number | null }).n ?? 0;
    const written =
      sum("SELECT sum(length(body)) AS n FROM events WHERE run_id = ?") +
      sum("SELECT sum(length(body)) AS n FROM messages WHERE run_id = ?") +
      sum("SELECT sum(length(meta)) AS n FROM checkpoints WHERE run_id = ?");
    // What storing the whole history at every step would have cost for the same turn.
    const sizes = (db.query("SELECT length(body) AS n FROM messages ORDER BY position").all() as Array<{ n: number }>).map((r) => r.n);
    const before = sizes.length - (2 * STEPS + 2);
    let wholeHistory = 0;
    for (let step = 1; step <= STEPS; step++) wholeHistory += sizes.slice(0, before + 1 + 2 * step).reduce((a, b) => a + b, 0);
    db.close();
    turns.push({ turn, wallMs, gapMs: median(gaps), bytesPerStep: written / STEPS, wholeHistoryBytesPerStep: wholeHistory / STEPS });
  }

  const first = turns[0]!;
  const last = turns.at(-1)!;
  const lines = [
    `long session: ${TURNS} turns × ${STEPS} read calls, one session (--resume latest), instant fake provider`,
    "",
    "turn   wall ms   answer→request ms   DB bytes/step   whole-history bytes/step (baseline)",
    ...turns.map(
      (t) =>
        `${String(t.turn).padStart(4)} ${t.wallMs.toFixed(0).padStart(9)} ${t.gapMs.toFixed(2).padStart(19)} ${t.bytesPerStep.toFixed(0).padStart(15)} ${t.wholeHistoryBytesPerStep.toFixed(0).padStart(28)}`,
    ),
    "",
    `turn ${TURNS} vs turn 1: wall ×${(last.wallMs / first.wallMs).toFixed(2)}, per-step gap ×${(last.gapMs / first.gapMs).toFixed(2)}, DB bytes/step ×${(last.bytesPerStep / first.bytesPerStep).toFixed(2)} (whole-history baseline ×${(last.wholeHistoryBytesPerStep / first.wholeHistoryBytesPerStep).toFixed(2)})`,
  ];
  console.log(lines.join("\n"));
} finally {
  await fake.close();
  sandbox.cleanup();
}
