// Benchmark of workflows and campaign budgets through the real CLI: `node_modules/.bin/bun bench/workflow.ts`
// (after a build). Medians over BENCH_WORKFLOW_RUNS runs (default 7) after a warm-up, against an instant
// scripted fake, the two sides of each comparison alternating:
// 1. coordinator overhead: `zero run --json -w trio` over `["explore", "review", "explore"]` (phases
//    explore, review, explore-2; each 3 `read` calls then its answer, review's a verdict) vs the baseline
//    of three separate `zero run --json` processes doing the same (root agent explore, review, explore
//    via ZERO_CLI_CONFIG); wall and CPU of the workflow vs the three processes' sum;
// 2. admission queue: at work depth ultra a root spawns 8 background explore children (10 reads + an
//    answer each) and waits for them, without a cap vs with `limits.maxCampaignTokens` set far above
//    what the run spends (every model call of the campaign then passes one queue, one at a time).
// Every run must exit 0 with a completed root (and completed phases/children), or the bench stops.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeTurn, type RecordedRequest } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, spawnZero, type Sandbox } from "../test/support/cli.ts";
import { checkedEvents } from "./checked-run.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_WORKFLOW_RUNS ?? 7));
const PHASE_READS = 3;
const CHILD_READS = 10;
const FAN_OUT = 8;
/** Far above what case 2 spends (~1,400 tokens at the fake's 15 per call): the cap never stops a run. */
const CAP = 100_000_000;
/** The workflow's phases (a string list names the repeated agent's second step `explore-2`) and their agents. */
const PHASES: Array<[id: string, agent: string]> = [["explore", "explore"], ["review", "review"], ["explore-2", "explore"]];

const textOf = (message: any): string =>
  typeof message?.content === "string" ? message.content : Array.isArray(message?.content) ? message.content.map((p: any) => p.text ?? "").join("") : "";
/** The task name (phase id) of the child that sent `req`, or "root" (a child's first user message is its task). */
const senderOf = (req: RecordedRequest): string => /^# Delegated task: (\S+)/.exec(textOf(req.body.messages.find((m: any) => m.role === "user")))?.[1] ?? "root";
const stepOf = (req: RecordedRequest): number => req.body.messages.filter((m: any) => m.role === "assistant").length;
const toolResults = (req: RecordedRequest): string[] => req.body.messages.filter((m: any) => m.role === "tool").map(textOf);
// Offsets cycle, as in run.ts: the same call over and over would trip the repetition guard.
const read = (step: number): FakeTurn => ({ toolCalls: [{ name: "read", args: { path: "README.md", offset: (step % 3) + 1 } }] });
const answer = (agent: string): FakeTurn => ({ text: "```json\n" + JSON.stringify(agent === "review" ? { summary: "ok", verdict: "approve" } : { summary: "ok" }) + "\n```" });
/** `reads` reads, then the agent's answer. */
const readsThenAnswer = (agent: string, reads: number) => (req: RecordedRequest): FakeTurn => (stepOf(req) < reads ? read(stepOf(req)) : answer(agent));

type Fake = Awaited<ReturnType<typeof startFakeProvider>>;
type Route = (req: RecordedRequest) => FakeTurn;
type Outcome = { wallMs: number; cpuMs: number; startedAt: number; events: Array<Record<string, any>>; requests: RecordedRequest[] };

/** What answers the fake's requests in the current run (its fallback, so no turn count is scripted). */
let route: Route = () => ({ kind: "error", status: 500, message: "bench: no route" });

/** One `zero run --json` process with `answerWith` answering; throws unless it exited 0 with a completed root run. */
async function runOnce(sandbox: Sandbox, fake: Fake, args: string[], answerWith: Route, env: Record<string, string> = {}): Promise<Outcome> {
  fake.reset();
  route = answerWith;
  const startedAt = performance.timeOrigin + performance.now();
  const run = spawnZero(["run", "--json", ...args], { sandbox, env, timeoutMs: 120_000 });
  const result = await run.result;
  const events = checkedEvents(result, args.join(" "));
  const fail = (why: string) => new Error(`broken run of ${args.join(" ")}: ${why}`);
  const rootDone = events.find((e) => e.type === "run.completed" && e.runId === events[0]?.runId);
  if (rootDone?.status !== "completed") throw fail(`root ended ${rootDone?.status ?? "without run.completed"}`);
  if (fake.requests.some((r) => r.answeredAt === undefined)) throw fail("a model request was not answered");
  const cpuMs = Number(run.proc.resourceUsage()?.cpuTime.total ?? 0n) / 1000;
  return { wallMs: result.ms, cpuMs, startedAt, events, requests: [...fake.requests] };
}

const completedChildren = (events: Array<Record<string, any>>) => events.filter((e) => e.type === "agent.completed" && e.status === "completed").length;

/** Case 1: the three-phase workflow vs three separate runs, alternating. */
async function coordinator(sandbox: Sandbox, fake: Fake) {
  const agentOf = new Map(PHASES);
  const configs = Object.fromEntries(
    ["explore", "review"].map((agent) => {
      const path = join(sandbox.root, `root-${agent}.jsonc`);
      writeFileSync(path, JSON.stringify({ version: 2, defaultAgent: agent }));
      return [agent, path];
    }),
  );
  const workflow = async () => {
    const out = await runOnce(sandbox, fake, ["-w", "trio", "look around"], (req) => readsThenAnswer(agentOf.get(senderOf(req)) ?? "none", PHASE_READS)(req));
    const root = out.events[0]!;
    const end = out.events.filter((e) => e.type === "run.completed" && e.runId === root.runId).at(-1);
    if (root.agent !== "workflow:trio" || end !== out.events.at(-1) || end?.status !== "completed") throw new Error(`workflow: root ${root.agent}, final run.completed ${JSON.stringify(end).slice(0, 300)}`);
    if (completedChildren(out.events) !== PHASES.length) throw new Error(`workflow: ${completedChildren(out.events)} of ${PHASES.length} phases completed`);
    const byPhase = PHASES.map(([id]) => out.requests.filter((r) => senderOf(r) === id));
    if (out.requests.length !== PHASES.length * (PHASE_READS + 1) || byPhase.some((list) => list.length !== PHASE_READS + 1)) {
      throw new Error(`workflow: requests per phase ${JSON.stringify(byPhase.map((l) => l.length))}, ${out.requests.length} in all`);
    }
    // Handoff: a phase's answer → the next phase's first model request (the coordinator's share between phases).
    const handoffs = byPhase.slice(1).map((list, i) => list[0]!.receivedAt - byPhase[i]!.at(-1)!.answeredAt!);
    if (handoffs.some((gap) => gap < 0)) throw new Error("workflow: phases overlapped");
    return { wallMs: out.wallMs, cpuMs: out.cpuMs, firstMs: out.requests[0]!.receivedAt - out.startedAt, handoffMs: median(handoffs) };
  };
  const threeRuns = async () => {
    const runs: Outcome[] = [];
    for (const [, agent] of PHASES) {
      const out = await runOnce(sandbox, fake, ["look around"], readsThenAnswer(agent, PHASE_READS), { ZERO_CLI_CONFIG: configs[agent]! });
      if (out.events[0]?.agent !== agent || out.requests.length !== PHASE_READS + 1) throw new Error(`baseline ${agent}: root agent ${out.events[0]?.agent}, ${out.requests.length} requests`);
      runs.push(out);
    }
    const sum = (f: (o: Outcome) => number) => runs.reduce((n, o) => n + f(o), 0);
    return { wallMs: sum((o) => o.wallMs), cpuMs: sum((o) => o.cpuMs), firstMs: median(runs.map((o) => o.requests[0]!.receivedAt - o.startedAt)) };
  };
  await workflow(); // warm-up
  await threeRuns();
  const wf: Array<Awaited<ReturnType<typeof workflow>>> = [];
  const base: Array<Awaited<ReturnType<typeof threeRuns>>> = [];
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      wf.push(await workflow());
      base.push(await threeRuns());
    } else {
      base.push(await threeRuns());
      wf.push(await workflow());
    }
  }
  return {
    wf: { wallMs: median(wf.map((s) => s.wallMs)), cpuMs: median(wf.map((s) => s.cpuMs)), firstMs: median(wf.map((s) => s.firstMs)), handoffMs: median(wf.map((s) => s.handoffMs)) },
    base: { wallMs: median(base.map((s) => s.wallMs)), cpuMs: median(base.map((s) => s.cpuMs)), firstMs: median(base.map((s) => s.firstMs)) },
    ratios: wf.map((s, i) => s.wallMs / base[i]!.wallMs),
  };
}

/** Case 2's root: spawns FAN_OUT background children in one step, waits for them all, answers. */
function fanOutRoute(req: RecordedRequest): FakeTurn {
  const who = senderOf(req);
  if (who !== "root") return readsThenAnswer("explore", CHILD_READS)(req);
  const step = stepOf(req);
  if (step === 0) {
    return {
      toolCalls: Array.from({ length: FAN_OUT }, (_, i) => ({
        name: "delegate",
        args: { operation: "spawn", taskName: `reader-${i + 1}`, agent: "explore", goal: `Read README.md (reader-${i + 1})`, deliverable: "analysis", acceptanceCriteria: ["Say what README.md states"], background: true },
      })),
    };
  }
  if (step === 1) return { toolCalls: [{ name: "delegate", args: { operation: "wait", runIds: toolResults(req).map((t) => JSON.parse(t).childRunId as string), timeoutMs: 120_000 } }] };
  return { text: "done" };
}

/** Case 2: the fan-out without a cap vs with a never-reached `limits.maxCampaignTokens`, alternating. */
async function admission(sandbox: Sandbox, fake: Fake) {
  const capConfig = join(sandbox.root, "cap.jsonc");
  writeFileSync(capConfig, JSON.stringify({ version: 2, limits: { maxCampaignTokens: CAP } }));
  type Sample = { wallMs: number; cpuMs: number; childSpanMs: number; tokens: number };
  const one = async (capped: boolean): Promise<Sample> => {
    const label = capped ? "capped" : "uncapped";
    const out = await runOnce(sandbox, fake, ["delegate the reading"], fanOutRoute, capped ? { ZERO_CLI_CONFIG: capConfig } : {});
    if (completedChildren(out.events) !== FAN_OUT) throw new Error(`${label}: ${completedChildren(out.events)} of ${FAN_OUT} children completed`);
    const childReqs = out.requests.filter((r) => senderOf(r) !== "root");
    if (childReqs.length !== FAN_OUT * (CHILD_READS + 1)) throw new Error(`${label}: expected ${FAN_OUT * (CHILD_READS + 1)} child requests, saw ${childReqs.length}`);
    const waited = JSON.parse(toolResults(out.requests.filter((r) => senderOf(r) === "root")[2]!).at(-1) ?? "{}");
    if (waited.completed?.length !== FAN_OUT || waited.pending?.length !== 0) throw new Error(`${label}: wait returned ${JSON.stringify(waited).slice(0, 300)}`);
    // The queue's allowance shows on the wire: a capped call carries an output limit, an uncapped one none.
    const limited = out.requests.filter((r) => r.body.max_tokens !== undefined || r.body.max_completion_tokens !== undefined).length;
    if (limited !== (capped ? out.requests.length : 0)) throw new Error(`${label}: ${limited} of ${out.requests.length} requests carried an output limit`);
    // With the queue, no request arrives before the previous one was answered.
    const sorted = [...out.requests].sort((a, b) => a.receivedAt - b.receivedAt);
    if (capped && sorted.some((r, i) => i > 0 && r.receivedAt < sorted[i - 1]!.answeredAt!)) throw new Error("capped: model calls overlapped");
    const first = Math.min(...childReqs.map((r) => r.receivedAt));
    const last = Math.max(...childReqs.map((r) => r.answeredAt!));
    return { wallMs: out.wallMs, cpuMs: out.cpuMs, childSpanMs: last - first, tokens: out.events.at(-1)?.campaign?.tokens ?? NaN };
  };
  await one(false); // warm-up
  await one(true);
  const uncapped: Sample[] = [];
  const capped: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      uncapped.push(await one(false));
      capped.push(await one(true));
    } else {
      capped.push(await one(true));
      uncapped.push(await one(false));
    }
  }
  const sum = (samples: Sample[]) => ({
    wallMs: median(samples.map((s) => s.wallMs)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    childSpanMs: median(samples.map((s) => s.childSpanMs)),
    tokens: median(samples.map((s) => s.tokens)),
  });
  return { uncapped: sum(uncapped), capped: sum(capped), ratios: capped.map((s, i) => s.wallMs / uncapped[i]!.wallMs) };
}

const range = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

async function main(): Promise<void> {
  const sandbox = makeSandbox();
  const fake = await startFakeProvider({ fallback: (req) => route(req) });
  try {
    sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workflows: { trio: { steps: ["explore", "review", "explore"] } } }));
    const co = await coordinator(sandbox, fake);
    // Ultra: 8 concurrent children (multiAgent.maxConcurrent defaults to 8).
    sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra" }));
    const adm = await admission(sandbox, fake);

    const ratio = co.wf.wallMs / co.base.wallMs;
    const queue = adm.capped.wallMs / adm.uncapped.wallMs;
    const rows: string[][] = [
      ["measure", "median", "baseline (same run)", "note"],
      [
        `workflow, 3 phases × ${PHASE_READS} reads, wall`,
        `${co.wf.wallMs.toFixed(0)} ms`,
        `3 separate runs: ${co.base.wallMs.toFixed(0)} ms`,
        `×${ratio.toFixed(2)} (per pair ${range(co.ratios)}); target < 1: ${ratio < 1 ? "met" : "NOT met"}`,
      ],
      ["workflow, CPU", `${co.wf.cpuMs.toFixed(0)} ms`, `3 separate runs: ${co.base.cpuMs.toFixed(0)} ms`, `×${(co.wf.cpuMs / co.base.cpuMs).toFixed(2)}`],
      ["phase answered → next phase's 1st request", `${co.wf.handoffMs.toFixed(1)} ms`, `process start → 1st request: ${co.base.firstMs.toFixed(1)} ms`, `workflow start → 1st request ${co.wf.firstMs.toFixed(1)} ms`],
      [`${FAN_OUT} children × ${CHILD_READS} reads, no cap, wall`, `${adm.uncapped.wallMs.toFixed(0)} ms`, "", `CPU ${adm.uncapped.cpuMs.toFixed(0)} ms; children's span ${adm.uncapped.childSpanMs.toFixed(0)} ms`],
      [
        `same, maxCampaignTokens ${CAP.toLocaleString("en-US")}, wall`,
        `${adm.capped.wallMs.toFixed(0)} ms`,
        `×${queue.toFixed(2)} no cap (per pair ${range(adm.ratios)})`,
        `CPU ${adm.capped.cpuMs.toFixed(0)} ms; children's span ${adm.capped.childSpanMs.toFixed(0)} ms; ${adm.capped.tokens} tokens spent`,
      ],
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    console.log(`workflow and admission queue, instant fake provider: medians over ${RUNS} runs after a warm-up (alternating)`);
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd());
  } finally {
    await fake.close();
    sandbox.cleanup();
  }
}

await main();
