// Benchmarks: `npm run bench` (or `node_modules/.bin/bun bench/run.ts`).
// Medians over repeated runs, each next to a baseline measured in the same run.
// Peak RSS comes from GNU time (/usr/bin/time); without it RSS is reported as n/a,
// because a child's rusage from Bun's spawn includes the parent's memory.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startFakeProvider, type FakeTurn } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, ZERO_BIN } from "../test/support/cli.ts";
import { median } from "./stats.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const LOOP_RUNS = Number(process.env.BENCH_LOOP_RUNS ?? 7);
const LOOP_STEPS = 50;
const BUN = resolve(import.meta.dir, "../node_modules/.bin/bun");
const GNU_TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

type Sample = { wallMs: number; cpuMs: number; rssMiB: number | undefined };


/** Runs a command once and measures wall time (here), CPU and peak RSS (GNU time). */
async function measure(cmd: string[], env: Record<string, string>, cwd: string): Promise<Sample & { startedAt: number }> {
  const out = join(tmpdir(), `zero-bench-time-${process.pid}`);
  const full = GNU_TIME ? [GNU_TIME, "-f", "%U %S %M", "-o", out, ...cmd] : cmd;
  const startedAt = performance.timeOrigin + performance.now();
  const proc = Bun.spawn(full, { env, cwd, stdout: "ignore", stderr: "pipe" });
  const code = await proc.exited;
  const wallMs = performance.timeOrigin + performance.now() - startedAt;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${await new Response(proc.stderr).text()}`);
  if (!GNU_TIME) {
    const usage = proc.resourceUsage();
    return { wallMs, cpuMs: Number(usage?.cpuTime.total ?? 0n) / 1000, rssMiB: undefined, startedAt };
  }
  const [user, system, rssKb] = readFileSync(out, "utf8").trim().split(/\s+/).map(Number);
  rmSync(out, { force: true });
  return { wallMs, cpuMs: ((user ?? 0) + (system ?? 0)) * 1000, rssMiB: (rssKb ?? 0) / 1024, startedAt };
}

function summarize(samples: Sample[]) {
  const rss = samples.map((s) => s.rssMiB).filter((v): v is number => v !== undefined);
  return {
    wallMs: median(samples.map((s) => s.wallMs)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    rssMiB: rss.length ? median(rss) : undefined,
  };
}

async function repeat(cmd: string[], env: Record<string, string>, cwd: string, runs: number) {
  const samples: Sample[] = [];
  await measure(cmd, env, cwd); // warm the file cache
  for (let i = 0; i < runs; i++) samples.push(await measure(cmd, env, cwd));
  return summarize(samples);
}

function fmt(value: number | undefined, digits = 1): string {
  return value === undefined ? "n/a" : value.toFixed(digits);
}

const sandbox = makeSandbox();
const results: Record<string, unknown> = { date: new Date().toISOString(), runs: RUNS, loopRuns: LOOP_RUNS };
try {
  // 1. Startup: bare Bun running an empty script (the floor any Bun CLI pays) vs zero --version / --help.
  const emptyScript = join(sandbox.root, "empty.js");
  writeFileSync(emptyScript, "\n");
  const bare = await repeat([BUN, "--config=/dev/null", "--no-env-file", emptyScript], sandbox.env, sandbox.workspace, RUNS);
  const version = await repeat([ZERO_BIN, "--version"], sandbox.env, sandbox.workspace, RUNS);
  const help = await repeat([ZERO_BIN, "--help"], sandbox.env, sandbox.workspace, RUNS);
  results.startup = { bareBun: bare, version, help };

  // 2. The headless loop: 50 tool calls against an instant fake provider, then an answer.
  const fake = await startFakeProvider();
  // Ultra: the work depth allows 100 steps per run (medium stops at 24).
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { workDepth: "ultra" }));
  const turns = (): FakeTurn[] => [
    ...Array.from({ length: LOOP_STEPS }, (_, i): FakeTurn => ({
      toolCalls: [{ name: "read", args: { path: "README.md", offset: (i % 3) + 1 } }],
    })),
    { text: "done" },
  ];
  const loopSamples: Array<Sample & { firstRequestMs: number; gapMs: number; firstRequestBytes: number }> = [];
  const task = ["run", "read README.md fifty times"];
  for (let i = 0; i <= LOOP_RUNS; i++) {
    fake.reset();
    fake.script(turns());
    const sample = await measure([ZERO_BIN, ...task], sandbox.env, sandbox.workspace);
    if (fake.requests.length !== LOOP_STEPS + 1) throw new Error(`expected ${LOOP_STEPS + 1} requests, saw ${fake.requests.length}`);
    const gaps = fake.requests.slice(1).map((r, j) => r.receivedAt - fake.requests[j]!.answeredAt!);
    if (i === 0) continue; // warm-up
    loopSamples.push({
      ...sample,
      firstRequestMs: fake.requests[0]!.receivedAt - sample.startedAt,
      gapMs: median(gaps),
      firstRequestBytes: fake.requests[0]!.bodyBytes,
    });
  }

  // Baseline for the loop: a fresh Bun process doing the same 51 HTTP round trips with no agent.
  const rawScript = join(sandbox.root, "raw-loop.ts");
  writeFileSync(
    rawScript,
    `const body = JSON.stringify({ model: "fake-1", stream: true, stream_options: { include_usage: true }, messages: [] });
for (let i = 0; i < ${LOOP_STEPS + 1}; i++) {
  const res = await fetch(process.argv[2] + "/chat/completions", { method: "POST", body, headers: { "content-type": "application/json" } });
  await res.text();
}
`,
  );
  const rawSamples: Sample[] = [];
  for (let i = 0; i <= LOOP_RUNS; i++) {
    fake.reset();
    fake.script(turns());
    const sample = await measure([BUN, "--config=/dev/null", "--no-env-file", rawScript, fake.url], sandbox.env, sandbox.workspace);
    if (i > 0) rawSamples.push(sample);
  }
  await fake.close();
  const loop = {
    ...summarize(loopSamples),
    firstRequestMs: median(loopSamples.map((s) => s.firstRequestMs)),
    gapMs: median(loopSamples.map((s) => s.gapMs)),
    firstRequestBytes: median(loopSamples.map((s) => s.firstRequestBytes)),
  };
  const raw = summarize(rawSamples);
  results.loop = { zero: loop, rawHttpBaseline: raw };

  const lines = [
    `zero benchmarks (${new Date().toISOString().slice(0, 10)}, medians; startup ×${RUNS}, loop ×${LOOP_RUNS})`,
    "",
    "startup                      wall ms   cpu ms   peak RSS MiB",
    `bare bun (empty script)    ${fmt(bare.wallMs).padStart(8)} ${fmt(bare.cpuMs).padStart(8)} ${fmt(bare.rssMiB).padStart(14)}`,
    `zero --version             ${fmt(version.wallMs).padStart(8)} ${fmt(version.cpuMs).padStart(8)} ${fmt(version.rssMiB).padStart(14)}   ×${fmt(version.wallMs / bare.wallMs, 2)} bare`,
    `zero --help                ${fmt(help.wallMs).padStart(8)} ${fmt(help.cpuMs).padStart(8)} ${fmt(help.rssMiB).padStart(14)}   ×${fmt(help.wallMs / bare.wallMs, 2)} bare`,
    "",
    `headless loop: ${LOOP_STEPS} read calls + answer, instant fake provider`,
    `zero run                   ${fmt(loop.wallMs).padStart(8)} ${fmt(loop.cpuMs).padStart(8)} ${fmt(loop.rssMiB).padStart(14)}   ×${fmt(loop.wallMs / raw.wallMs, 2)} raw`,
    `raw HTTP baseline          ${fmt(raw.wallMs).padStart(8)} ${fmt(raw.cpuMs).padStart(8)} ${fmt(raw.rssMiB).padStart(14)}`,
    `start → first request      ${fmt(loop.firstRequestMs)} ms`,
    `answer → next request gap  ${fmt(loop.gapMs, 2)} ms (median over steps)`,
    `first request size         ${(loop.firstRequestBytes / 1024).toFixed(2)} KiB (system prompt + tool schemas + task)`,
  ];
  console.log(lines.join("\n"));
  mkdirSync(resolve(import.meta.dir, "../.bench-results"), { recursive: true });
  writeFileSync(resolve(import.meta.dir, "../.bench-results/latest.json"), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  sandbox.cleanup();
}
