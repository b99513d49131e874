// Benchmark of delegation through the real CLI: `node_modules/.bin/bun bench/delegation.ts` (after a build).
// Medians over BENCH_DELEGATION_RUNS runs (default 7) after a warm-up, against an instant scripted fake:
// 1. spawn latency: the fake's answer to a foreground `delegate` spawn of an explore child → the child's
//    first model request, next to the normal per-step overhead in the same process (a `read` call's
//    answer → the parent's next request, over the root's earlier steps); also the child's answer → the
//    parent's next request;
// 2. fan-out: a root that spawns one background explore child doing 10 `read` calls then an answer and
//    waits for it, vs a root that spawns eight such children at once (ultra work depth, 8 concurrent),
//    run alternately; wall time per process, the children's span and how many ran at once.
// Every run must exit 0 with a completed root and completed children, or the bench stops.
import { startFakeProvider, type FakeTurn, type RecordedRequest } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, spawnZero, type Sandbox } from "../test/support/cli.ts";
import { checkedEvents } from "./checked-run.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_DELEGATION_RUNS ?? 7));
const CHILD_READS = 10;
/** `read` steps the root takes before it delegates: the per-step baseline, at the same warmth. */
const WARM_READS = 4;
const FAN_OUT = 8;
const LATENCY_TARGET_MS = 20;
const HEADING = /^# Delegated task: (\S+)/;

const textOf = (message: any): string =>
  typeof message?.content === "string" ? message.content : Array.isArray(message?.content) ? message.content.map((p: any) => p.text ?? "").join("") : "";
/** The task name of the child that sent `req`, or "root" (a child's first user message is its task). */
const senderOf = (req: RecordedRequest): string => HEADING.exec(textOf(req.body.messages.find((m: any) => m.role === "user")))?.[1] ?? "root";
/** How many model steps the sender has taken before this request (its history's assistant messages). */
const stepOf = (req: RecordedRequest): number => req.body.messages.filter((m: any) => m.role === "assistant").length;
const toolResults = (req: RecordedRequest): string[] => req.body.messages.filter((m: any) => m.role === "tool").map(textOf);

// Offsets cycle, as in run.ts: the same call over and over would trip the repetition guard.
const read = (step = 0): FakeTurn => ({ toolCalls: [{ name: "read", args: { path: "README.md", offset: (step % 3) + 1 } }] });
const envelope = (name: string): FakeTurn => ({ text: `\`\`\`json\n{"summary": "${name} read the README"}\n\`\`\`` });
const spawnCall = (taskName: string, background: boolean) => ({
  name: "delegate",
  args: { operation: "spawn", taskName, agent: "explore", goal: `Read README.md (${taskName})`, deliverable: "analysis", acceptanceCriteria: ["Say what README.md states"], background },
});
/** A child's turns: CHILD_READS reads, then its envelope. */
const childTurn = (req: RecordedRequest, name: string): FakeTurn => (stepOf(req) < CHILD_READS ? read(stepOf(req)) : envelope(name));

type Outcome = { wallMs: number; cpuMs: number; requests: RecordedRequest[] };
type Fake = Awaited<ReturnType<typeof startFakeProvider>>;
type Route = (req: RecordedRequest) => FakeTurn;

/** What answers the fake's requests in the current run (its fallback, so no turn count is scripted). */
let route: Route = () => ({ kind: "error", status: 500, message: "bench: no route" });

/** One `zero run --json` against the fake with `route` answering; throws unless the root and `children` children completed. */
async function runOnce(sandbox: Sandbox, fake: Fake, answer: Route, children: number): Promise<Outcome> {
  fake.reset();
  route = answer;
  const run = spawnZero(["run", "--json", "delegate the reading"], { sandbox, timeoutMs: 120_000 });
  const result = await run.result;
  const events = checkedEvents(result, "delegate the reading");
  const fail = (why: string) => new Error(`broken delegation run: ${why}`);
  const rootId = events[0]?.runId;
  const rootDone = events.find((e) => e.type === "run.completed" && e.runId === rootId);
  if (rootDone?.status !== "completed") throw fail(`root ended ${rootDone?.status ?? "without run.completed"}`);
  const done = events.filter((e) => e.type === "agent.completed");
  if (done.length !== children || done.some((e) => e.status !== "completed")) throw fail(`child statuses: ${JSON.stringify(done.map((e) => e.status))}, expected ${children} completed`);
  if (fake.requests.some((r) => r.answeredAt === undefined)) throw fail("a model request was not answered");
  const cpuMs = Number(run.proc.resourceUsage()?.cpuTime.total ?? 0n) / 1000;
  return { wallMs: result.ms, cpuMs, requests: [...fake.requests] };
}

/** Case 1: WARM_READS reads, a foreground spawn, an answer; the child answers at once. */
async function spawnLatency(sandbox: Sandbox, fake: Fake) {
  const answer = (req: RecordedRequest): FakeTurn => {
    const who = senderOf(req);
    if (who !== "root") return envelope(who);
    const step = stepOf(req);
    if (step < WARM_READS) return read(step);
    return step === WARM_READS ? { toolCalls: [spawnCall("latency", false)] } : { text: "done" };
  };
  const samples: Array<{ spawnMs: number; stepMs: number; returnMs: number }> = [];
  for (let i = 0; i <= RUNS; i++) {
    const { requests } = await runOnce(sandbox, fake, answer, 1);
    const roots = requests.filter((r) => senderOf(r) === "root");
    const child = requests.filter((r) => senderOf(r) !== "root");
    if (roots.length !== WARM_READS + 2 || child.length !== 1) throw new Error(`spawn latency: expected ${WARM_READS + 2} root and 1 child request, saw ${roots.length} and ${child.length}`);
    const spawned = roots[WARM_READS]!;
    const after = roots[WARM_READS + 1]!;
    if (JSON.parse(toolResults(after).at(-1) ?? "{}").status !== "completed") throw new Error("spawn latency: the parent did not receive a completed envelope");
    if (i === 0) continue; // warm-up
    // The first read's gap is left out: the first step of a process runs colder code.
    const readGaps = roots.slice(2, WARM_READS + 1).map((r, j) => r.receivedAt - roots[j + 1]!.answeredAt!);
    samples.push({ spawnMs: child[0]!.receivedAt - spawned.answeredAt!, stepMs: median(readGaps), returnMs: after.receivedAt - child[0]!.answeredAt! });
  }
  return {
    spawnMs: median(samples.map((s) => s.spawnMs)),
    stepMs: median(samples.map((s) => s.stepMs)),
    returnMs: median(samples.map((s) => s.returnMs)),
    spawnRange: [Math.min(...samples.map((s) => s.spawnMs)), Math.max(...samples.map((s) => s.spawnMs))],
  };
}

/** The most children with overlapping [first request, last answer] spans. */
function peakOverlap(requests: RecordedRequest[]): number {
  const spans = new Map<string, [number, number]>();
  for (const req of requests) {
    const who = senderOf(req);
    if (who === "root") continue;
    const span = spans.get(who) ?? [req.receivedAt, req.answeredAt!];
    spans.set(who, [Math.min(span[0], req.receivedAt), Math.max(span[1], req.answeredAt!)]);
  }
  const edges = [...spans.values()].flatMap(([from, to]) => [[from, 1], [to, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of edges) peak = Math.max(peak, (now += delta));
  return peak;
}

/** Case 2: one root spawning `count` background children in one step, then waiting for them all. */
function fanOutRoute(count: number) {
  const names = Array.from({ length: count }, (_, i) => `reader-${i + 1}`);
  return (req: RecordedRequest): FakeTurn => {
    const who = senderOf(req);
    if (who !== "root") return childTurn(req, who);
    const step = stepOf(req);
    if (step === 0) return { toolCalls: names.map((name) => spawnCall(name, true)) };
    if (step === 1) {
      const runIds = toolResults(req).map((t) => JSON.parse(t).childRunId as string);
      return { toolCalls: [{ name: "delegate", args: { operation: "wait", runIds, timeoutMs: 120_000 } }] };
    }
    return { text: "done" };
  };
}

async function fanOut(sandbox: Sandbox, fake: Fake) {
  type Sample = { wallMs: number; cpuMs: number; childSpanMs: number; peak: number };
  const one = async (count: number): Promise<Sample> => {
    const { wallMs, cpuMs, requests } = await runOnce(sandbox, fake, fanOutRoute(count), count);
    const childReqs = requests.filter((r) => senderOf(r) !== "root");
    if (childReqs.length !== count * (CHILD_READS + 1)) throw new Error(`fan-out ×${count}: expected ${count * (CHILD_READS + 1)} child requests, saw ${childReqs.length}`);
    const wait = requests.filter((r) => senderOf(r) === "root")[2];
    const waited = wait ? JSON.parse(toolResults(wait).at(-1) ?? "{}") : {};
    if (waited.completed?.length !== count || waited.pending?.length !== 0) throw new Error(`fan-out ×${count}: wait returned ${JSON.stringify(waited).slice(0, 300)}`);
    const first = Math.min(...childReqs.map((r) => r.receivedAt));
    const last = Math.max(...childReqs.map((r) => r.answeredAt!));
    return { wallMs, cpuMs, childSpanMs: last - first, peak: peakOverlap(requests) };
  };
  const single: Sample[] = [];
  const many: Sample[] = [];
  await one(1); // warm-up
  await one(FAN_OUT);
  for (let i = 0; i < RUNS; i++) {
    // Alternating order, so drift on the shared machine affects both alike.
    if (i % 2 === 0) {
      single.push(await one(1));
      many.push(await one(FAN_OUT));
    } else {
      many.push(await one(FAN_OUT));
      single.push(await one(1));
    }
  }
  const sum = (samples: Sample[]) => ({
    wallMs: median(samples.map((s) => s.wallMs)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    childSpanMs: median(samples.map((s) => s.childSpanMs)),
    peak: Math.min(...samples.map((s) => s.peak)),
  });
  return { single: sum(single), many: sum(many) };
}

async function main(): Promise<void> {
  const sandbox = makeSandbox();
  const fake = await startFakeProvider({ fallback: (req) => route(req) });
  try {
    sandbox.writeUserConfig(fakeConfig(fake.url));
    const latency = await spawnLatency(sandbox, fake);
    // Ultra: 64 runs, 8 concurrent children; multiAgent.maxConcurrent defaults to 8.
    sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra" }));
    const fan = await fanOut(sandbox, fake);

    const met = latency.spawnMs < LATENCY_TARGET_MS;
    const rows: string[][] = [
      ["measure", "median", "baseline (same run)", "note"],
      ["delegate answered → child's 1st request", `${latency.spawnMs.toFixed(1)} ms`, `read answered → next request ${latency.stepMs.toFixed(1)} ms (steps 2-${WARM_READS})`, `target < ${LATENCY_TARGET_MS} ms: ${met ? "met" : "NOT met"} (range ${latency.spawnRange.map((v) => v.toFixed(1)).join("–")})`],
      ["child answered → parent's next request", `${latency.returnMs.toFixed(1)} ms`, "", ""],
      [`1 child × ${CHILD_READS} reads, wall`, `${fan.single.wallMs.toFixed(0)} ms`, "", `CPU ${fan.single.cpuMs.toFixed(0)} ms; children's span ${fan.single.childSpanMs.toFixed(0)} ms`],
      [`${FAN_OUT} children × ${CHILD_READS} reads, wall`, `${fan.many.wallMs.toFixed(0)} ms`, `×${(fan.many.wallMs / fan.single.wallMs).toFixed(2)} one child`, `CPU ${fan.many.cpuMs.toFixed(0)} ms; children's span ${fan.many.childSpanMs.toFixed(0)} ms (×${(fan.many.childSpanMs / fan.single.childSpanMs).toFixed(2)}); at once: ${fan.many.peak} of ${FAN_OUT} (fewest in any run)`],
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    console.log(`delegation, instant fake provider: medians over ${RUNS} runs after a warm-up (fan-out runs alternating)`);
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd());
    if (fan.many.peak < FAN_OUT) console.log(`warning: only ${fan.many.peak} of ${FAN_OUT} children ever ran at the same time`);
  } finally {
    await fake.close();
    sandbox.cleanup();
  }
}

await main();
