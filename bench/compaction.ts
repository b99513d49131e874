// Compaction benchmark: `node_modules/.bin/bun bench/compaction.ts` (after a build).
// One long session against a 32k-token window (models.fake contextWindow 32000, work depth ultra):
// BENCH_COMPACTION_STEPS model steps in all (default 200), as turns of BENCH_COMPACTION_STEPS_PER_TURN
// steps (default 10; `zero run --json`, then `--resume latest`), each step but the last of a turn
// reading a ~20 KB workspace file whole. Baseline in the same run, turn by turn alternately: the
// same session with `context.compaction.enabled: false` and a 10,000,000-token window. The instant fake answers with
// realistic usage (input ≈ request bytes / 4) and answers checkpoint calls with a valid checkpoint.
// Reported: (1) the largest request — asserted under the window on every request; (2) compaction
// latency without the model call (medians); (3) peak RSS per process (GNU time) of both sessions;
// (4) request bytes sent per turn. A broken run (non-zero exit, a step that did not complete, a
// fallback summary, a request over the window) stops the bench before any figure is printed.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeConfig, makeSandbox, ZERO_BIN, type Sandbox } from "../test/support/cli.ts";
import { startFakeProvider, type FakeProvider, type FakeTurn, type RecordedRequest } from "../test/support/fake-provider.ts";
import { checkedEvents } from "./checked-run.ts";
import { median } from "./stats.ts";

const TOTAL_STEPS = Math.max(2, Number(process.env.BENCH_COMPACTION_STEPS ?? 200));
const STEPS_PER_TURN = Math.max(2, Number(process.env.BENCH_COMPACTION_STEPS_PER_TURN ?? 10));
// Another build to compare with: BENCH_ZERO_BIN=/path/bin/zero.
const BIN = process.env.BENCH_ZERO_BIN ?? ZERO_BIN;
const WINDOW = 32_000;
const BASELINE_WINDOW = 10_000_000;
const FILES = 4; // cycled: the same call three times in a row would trip the repetition guard
const FILE_BYTES = 20 * 1024;
const LATENCY_TARGET_MS = 50;
const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
const CHECKPOINT = JSON.stringify({ task: "read the big files, one per step", decisions: [], filesTouched: [], openQuestions: [], nextSteps: ["keep reading"] });

const isCheckpointCall = (req: RecordedRequest) => JSON.stringify(req.body?.messages?.[0] ?? "").includes("checkpoint");
/** What a real provider would report for the request: about four bytes per input token. */
const usage = (req: RecordedRequest) => ({ input: Math.round(req.bodyBytes / 4), output: 20 });

type Turn = {
  steps: number;
  rssMiB: number | undefined;
  bytesSent: number;
  checkpointBytes: number;
  largestBytes: number;
  gaps: number[]; // answer → next request, over ordinary steps (neither side a checkpoint call)
  compactions: number;
  // Per compaction right after a tool result (event clock, ms): tool.completed → the next context.updated,
  // less the checkpoint call's time at the fake; and its parts around the checkpoint call.
  compactMs: number[];
  beforeCallMs: number[]; // tool.completed → the checkpoint request arrives
  afterCallMs: number[]; // the checkpoint answered → context.compacted
  prepareMs: number[]; // an ordinary step: tool.completed → context.updated (persisting, building the view)
  replyReadMs: number[]; // an ordinary step: the fake answered → usage.updated (the client reading the reply)
  midTurnMs: number[]; // fake clocks: the answer before a checkpoint call → the next request, less the checkpoint call
};
type Session = { name: string; sandbox: Sandbox; fake: FakeProvider; compacted: boolean; turns: Turn[] };

async function session(name: string, compacted: boolean): Promise<Session> {
  const sandbox = makeSandbox();
  const fake = await startFakeProvider();
  const model = { provider: "fake", model: "fake-1", capabilities: ["text", "tools"], contextWindow: compacted ? WINDOW : BASELINE_WINDOW };
  // The build agent's 200k-token run budget would stop the uncompacted baseline: lifted for both.
  const agents = { build: { maxTokens: 1_000_000_000 } };
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra", models: { fake: model }, agents, context: { compaction: { enabled: compacted } } }));
  for (let f = 0; f < FILES; f++) {
    const lines: string[] = [];
    for (let i = 1, size = 0; size < FILE_BYTES; i++) {
      const line = `big-${f} line ${i}: the quick brown fox jumps over the lazy dog, step by step`.padEnd(79, ".");
      lines.push(line);
      size += line.length + 1;
    }
    writeFileSync(join(sandbox.workspace, `big-${f}.txt`), `${lines.join("\n")}\n`);
  }
  return { name, sandbox, fake, compacted, turns: [] };
}

/** Spawns zero under GNU time with stdout captured; returns the checked `--json` events and the peak RSS. */
async function runZeroTimed(s: Session, args: string[]): Promise<{ events: Array<Record<string, any>>; rssMiB: number | undefined }> {
  const out = join(tmpdir(), `zero-bench-compaction-${process.pid}`);
  const cmd = GNU_TIME ? [GNU_TIME, "-f", "%M", "-o", out, BIN, ...args] : [BIN, ...args];
  const started = performance.now();
  const proc = Bun.spawn(cmd, { env: s.sandbox.env, cwd: s.sandbox.workspace, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 180_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  const events = checkedEvents({ code, stdout, stderr, ms: performance.now() - started }, `${s.name}: zero ${args.join(" ")}`);
  if (!GNU_TIME) return { events, rssMiB: undefined };
  const rssKb = Number(readFileSync(out, "utf8").trim().split(/\s+/).at(-1));
  rmSync(out, { force: true });
  return { events, rssMiB: rssKb / 1024 };
}

async function runTurn(s: Session, index: number, steps: number): Promise<void> {
  const fail = (why: string) => new Error(`broken run: ${s.name}, turn ${index + 1}: ${why}`);
  let step = 0;
  const answer = (req: RecordedRequest): FakeTurn => {
    if (isCheckpointCall(req)) return { text: CHECKPOINT, usage: usage(req) };
    step += 1;
    if (step < steps) return { toolCalls: [{ name: "read", args: { path: `big-${(index * STEPS_PER_TURN + step) % FILES}.txt` } }], usage: usage(req) };
    return { text: `turn ${index + 1} done`, usage: usage(req) };
  };
  s.fake.reset();
  s.fake.script(Array.from({ length: steps * 3 + 4 }, () => answer));
  const task = `turn ${index + 1}: read the big files`;
  const { events, rssMiB } = await runZeroTimed(s, index === 0 ? ["run", "--json", task] : ["run", "--json", "--resume", "latest", task]);

  const requests = s.fake.requests;
  const last = events.at(-1);
  if (last?.type !== "run.completed" || last.status !== "completed") throw fail(`ended ${last?.status ?? last?.type}`);
  const reads = events.filter((e) => e.type === "tool.completed");
  if (reads.length !== steps - 1 || reads.some((e) => e.status !== "completed")) throw fail(`${reads.filter((e) => e.status === "completed").length} of ${steps - 1} reads completed`);
  const ordinary = requests.filter((r) => !isCheckpointCall(r));
  if (ordinary.length !== steps) throw fail(`${ordinary.length} model steps, expected ${steps}`);
  const compactions = events.filter((e) => e.type === "context.compacted");
  const checkpoints = requests.filter(isCheckpointCall);
  if (!s.compacted && compactions.length + checkpoints.length > 0) throw fail("compacted with compaction disabled");
  if (compactions.some((e) => e.fallback || e.reason !== "auto")) throw fail("a compaction fell back or was not `auto`");
  if (compactions.length !== checkpoints.length) throw fail(`${compactions.length} compactions, ${checkpoints.length} checkpoint calls`);
  if (s.compacted) {
    // The window holds on every request (checkpoint calls included) and every estimate the run made.
    for (const r of requests) {
      const step = requests.slice(0, requests.indexOf(r) + 1).filter((q) => !isCheckpointCall(q)).length;
      if (r.bodyBytes / 4 >= WINDOW) throw fail(`model step ${step}: a request of ${r.bodyBytes} bytes (≈${Math.round(r.bodyBytes / 4)} tokens) ≥ the ${WINDOW}-token window`);
    }
    for (const e of events) if (e.type === "context.updated" && e.tokens >= WINDOW) throw fail(`context.updated reports ${e.tokens} tokens ≥ ${WINDOW}`);
  }

  // The first step after a process starts pays first-use costs (80-150 ms, compacted or not): left out.
  const gaps: number[] = [];
  const midTurnMs: number[] = [];
  requests.forEach((r, k) => {
    const prev = requests[k - 1];
    const next = requests[k + 1];
    if (!prev || prev === ordinary[0] || isCheckpointCall(prev)) return;
    if (!isCheckpointCall(r)) gaps.push(r.receivedAt - prev.answeredAt!);
    else if (next && !isCheckpointCall(next)) midTurnMs.push(next.receivedAt - prev.answeredAt! - (r.answeredAt! - r.receivedAt));
  });
  const at = (e: Record<string, any>) => Date.parse(e.timestamp);
  const times = { compactMs: [] as number[], beforeCallMs: [] as number[], afterCallMs: [] as number[], prepareMs: [] as number[], replyReadMs: [] as number[] };
  let n = 0;
  let results = 0;
  events.forEach((e, i) => {
    const before = events[i - 1];
    const call = e.type === "context.compacted" ? checkpoints[n++]! : undefined;
    if (e.type === "usage.updated") times.replyReadMs.push(at(e) - ordinary[e.step - 1]!.answeredAt!);
    if (e.type === "tool.completed") results += 1;
    // A run's first view also loads the session; the view after its first tool result pays first-use costs.
    if (before?.type !== "tool.completed" || results === 1) return;
    if (e.type === "context.updated") times.prepareMs.push(at(e) - at(before));
    if (!call) return;
    const updated = events.slice(i).find((u) => u.type === "context.updated")!;
    times.compactMs.push(at(updated) - at(before) - (call.answeredAt! - call.receivedAt));
    times.beforeCallMs.push(call.receivedAt - at(before));
    times.afterCallMs.push(at(e) - call.answeredAt!);
  });
  const sum = (rs: RecordedRequest[]) => rs.reduce((a, r) => a + r.bodyBytes, 0);
  s.turns.push({
    steps,
    rssMiB,
    bytesSent: sum(requests),
    checkpointBytes: sum(checkpoints),
    largestBytes: Math.max(...requests.map((r) => r.bodyBytes)),
    gaps,
    compactions: compactions.length,
    ...times,
    midTurnMs,
  });
}

const fmt = (v: number | undefined, digits = 1) => (v === undefined || Number.isNaN(v) ? "n/a" : v.toFixed(digits));
const kib = (bytes: number) => (bytes / 1024).toFixed(1);

const compacted = await session("compacted", true);
const baseline = await session("baseline (compaction off)", false);
try {
  const turnSteps: number[] = [];
  for (let left = TOTAL_STEPS; left > 0; left -= STEPS_PER_TURN) turnSteps.push(Math.min(STEPS_PER_TURN, Math.max(2, left)));
  for (let t = 0; t < turnSteps.length; t++) {
    // Alternating which session goes first keeps machine drift out of the comparison.
    const order = t % 2 === 0 ? [compacted, baseline] : [baseline, compacted];
    for (const s of order) await runTurn(s, t, turnSteps[t]!);
  }
  const steps = turnSteps.reduce((a, b) => a + b, 0);
  const c = compacted.turns;
  const b = baseline.turns;
  const all = (f: (t: Turn) => number[]) => c.flatMap(f);
  const largest = Math.max(...c.map((t) => t.largestBytes));
  const m = (f: (t: Turn) => number[]) => median(all(f));
  const prepare = m((t) => t.prepareMs);
  const extra = m((t) => t.compactMs) - prepare;
  const midTurn = m((t) => t.midTurnMs) - m((t) => t.gaps);
  const compactions = c.reduce((a, t) => a + t.compactions, 0);
  if (compactions === 0) throw new Error("broken run: the compacted session never compacted");
  // "Flat": the median peak RSS of the last three turns against that of the first three.
  const edge = Math.min(3, c.length);
  const rssGrowth = (ts: Turn[]) => {
    const rss = ts.map((t) => t.rssMiB).filter((v): v is number => v !== undefined);
    return rss.length < ts.length ? undefined : { first: median(rss.slice(0, edge)), last: median(rss.slice(-edge)) };
  };
  const verdict = (g: { first: number; last: number } | undefined) => (g === undefined ? "n/a" : g.last <= g.first * 1.05 ? "flat, within 5%" : "grows with the session");
  const rc = rssGrowth(c);
  const rb = rssGrowth(b);
  const perTurn = (ts: Turn[], f: (t: Turn) => number) => ts.reduce((a, t) => a + f(t), 0) / ts.length;
  const sentC = perTurn(c, (t) => t.bytesSent);
  const sentB = perTurn(b, (t) => t.bytesSent);

  const lines = [
    `compaction: one session, ${steps} model steps (${c.length} turns × ≤${STEPS_PER_TURN}, --resume latest), a ~${FILE_BYTES / 1024} KiB file read whole per step, instant fake`,
    `window ${WINDOW} tokens (work depth ultra); baseline in the same run, alternating turns: compaction off, window ${BASELINE_WINDOW.toLocaleString("en-US")}`,
    "",
    "        ---------------- compacted (32k window) ---------------   ------------ baseline (compaction off) -----------",
    "turn   largest KiB  compactions  sent KiB  step gap ms  RSS MiB   largest KiB  sent KiB  step gap ms  RSS MiB",
    ...c.map((t, i) => {
      const u = b[i]!;
      return `${String(i + 1).padStart(4)} ${kib(t.largestBytes).padStart(13)} ${String(t.compactions).padStart(12)} ${kib(t.bytesSent).padStart(9)} ${fmt(median(t.gaps), 2).padStart(12)} ${fmt(t.rssMiB).padStart(8)} ${kib(u.largestBytes).padStart(13)} ${kib(u.bytesSent).padStart(9)} ${fmt(median(u.gaps), 2).padStart(12)} ${fmt(u.rssMiB).padStart(8)}`;
    }),
    "",
    `(1) largest request, compacted: ${largest.toLocaleString("en-US")} bytes ≈ ${Math.round(largest / 4).toLocaleString("en-US")} tokens, ${((largest / 4 / WINDOW) * 100).toFixed(1)}% of the ${WINDOW}-token window (every request checked under it); baseline: ${Math.max(...b.map((t) => t.largestBytes)).toLocaleString("en-US")} bytes ≈ ${Math.round(Math.max(...b.map((t) => t.largestBytes)) / 4).toLocaleString("en-US")} tokens`,
    `(2) ${compactions} compactions, all checkpoints valid (no fallback); ${all((t) => t.compactMs).length} right after a tool result (not a run's first), medians (event clock, ms):`,
    `    compaction latency without the model call: ${fmt(extra)} ms — ${extra < LATENCY_TARGET_MS ? "under" : "NOT under"} ${LATENCY_TARGET_MS} ms ` +
      `(tool.completed → context.updated ${fmt(m((t) => t.compactMs))} ms, the fake's answer time taken out, vs ${fmt(prepare)} ms for an ordinary step)`,
    `    of it: tool.completed → checkpoint request ${fmt(m((t) => t.beforeCallMs))} ms; checkpoint answered → context.compacted ${fmt(m((t) => t.afterCallMs))} ms ` +
      `(an ordinary step's answered → usage.updated, the SDK reading a reply: ${fmt(m((t) => t.replyReadMs))} ms)`,
    `    fake clocks: answer before a checkpoint call → next request, less that call and the median step gap: ${fmt(midTurn)} ms (${all((t) => t.midTurnMs).length} compactions)`,
    `(3) peak RSS, median of the first ${edge} turns → last ${edge}: compacted ${fmt(rc?.first)} → ${fmt(rc?.last)} MiB (×${fmt(rc && rc.last / rc.first, 2)}, ${verdict(rc)}), ` +
      `baseline ${fmt(rb?.first)} → ${fmt(rb?.last)} MiB (×${fmt(rb && rb.last / rb.first, 2)}, ${verdict(rb)})`,
    `(4) request bytes sent per turn: compacted ${kib(sentC)} KiB (checkpoint calls ${kib(perTurn(c, (t) => t.checkpointBytes))} KiB of it), baseline ${kib(sentB)} KiB (×${fmt(sentC / sentB, 3)}); ` +
      `last turn ${kib(c.at(-1)!.bytesSent)} vs ${kib(b.at(-1)!.bytesSent)} KiB`,
    `step gap (answer → next request), median: compacted ${fmt(m((t) => t.gaps), 2)} ms, baseline ${fmt(median(b.flatMap((t) => t.gaps)), 2)} ms; last turn ${fmt(median(c.at(-1)!.gaps), 2)} vs ${fmt(median(b.at(-1)!.gaps), 2)} ms`,
  ];
  console.log(lines.join("\n"));
} finally {
  for (const s of [compacted, baseline]) {
    await s.fake.close();
    s.sandbox.cleanup();
  }
}
