// The TUI's benchmarks (issue 19): `node_modules/.bin/bun bench/tui.ts` (figures and how to read
// them: docs/performance.md, "The TUI").
//
// The real program, built first into a private directory, in a tmux pane (120x40) against the
// scripted fake provider over HTTP on 127.0.0.1. Figures from inside the process come from
// ZERO_TUI_TRACE (src/surface/tui/trace.ts); medians over repeated runs, each beside a baseline
// measured in the same run:
// 1. launch to an interactive composer (trace marks, and wall time from the command line being
//    sent to the composer's placeholder in the pane) vs bare `bun -e`, `zero --version` and a
//    bare OpenTUI program;
// 2. a paced stream of BENCH_TUI_DELTAS (10,000) text deltas into one message: CPU, frame time,
//    event-loop lag, RSS after it; vs `zero run` printing the same stream into the same pane;
// 3. keystroke → next frame with a resumed session of ~1,000 timeline entries (vs the empty
//    start screen);
// 4. resuming a ~3,000-entry session to its first frame.
// BENCH_TUI_BEFORE=<another build's dist/> also measures that build's launch and resume,
// alternating with this one (A/B). BENCH_TUI_DIST=<dist/> skips the build and measures that one;
// BENCH_TUI_PARTS=launch,stream,keys,resume picks parts; BENCH_TUI_RUNS, BENCH_TUI_STREAM_RUNS,
// BENCH_TUI_DELTAS, BENCH_TUI_CHUNK_DELAY_MS change the counts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fakeConfig, makeSandbox } from "../test/support/cli.ts";
import { startFakeProvider, type FakeTurn } from "../test/support/fake-provider.ts";
import { median } from "./stats.ts";
import { BUN, buildBareOpenTui, buildPrivate, growSession, Pane, processCpuMs, readTrace, ROOT, shellLine, waitForTrace, zeroCommand, type Trace } from "./tui-support.ts";

const RUNS = Number(process.env.BENCH_TUI_RUNS ?? 9);
const STREAM_RUNS = Number(process.env.BENCH_TUI_STREAM_RUNS ?? 3);
const DELTAS = Number(process.env.BENCH_TUI_DELTAS ?? 10_000);
const CHUNK_DELAY_MS = Number(process.env.BENCH_TUI_CHUNK_DELAY_MS ?? 1);
const PARTS = new Set((process.env.BENCH_TUI_PARTS ?? "launch,stream,keys,resume").split(","));
const KEY_ENTRIES = 1_000;
const RESUME_ENTRIES = 3_000;
const TYPED = "the quick brown fox jumps over the lazy dog";
const PLACEHOLDER = "Ask zero to do something";
const VERSION = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")).version as string;
const GNU_TIME = "/usr/bin/time";

/**
 * One word a delta, a line break every 16 words and a paragraph every 64: a long answer as a model
 * streams it. (One paragraph of 10,000 words is the Markdown lexer's worst case: it re-reads the
 * whole paragraph on every frame.)
 */
const PIECES = Array.from({ length: DELTAS }, (_, i) => `w${i}${i % 64 === 63 ? "\n\n" : i % 16 === 15 ? "\n" : " "}`);

// tmux drives the terminal and GNU time measures the baselines: say so plainly when one is missing.
for (const [tool, path] of [["tmux", "tmux"], ["GNU time", GNU_TIME]] as const) {
  if (Bun.spawnSync(["sh", "-c", `command -v ${path}`]).exitCode !== 0) {
    console.error(`bench/tui.ts needs ${tool} (${path}); on Debian: apt-get install -y tmux time`);
    process.exit(2);
  }
}

const dist = process.env.BENCH_TUI_DIST ? resolve(process.env.BENCH_TUI_DIST) : buildPrivate(resolve(ROOT, ".bench-results/tui-build/dist"));
const before = process.env.BENCH_TUI_BEFORE ? resolve(process.env.BENCH_TUI_BEFORE) : undefined;
const sandbox = makeSandbox();
const fake = await startFakeProvider();
sandbox.writeUserConfig(fakeConfig(fake.url));
const env = { ...sandbox.env, TERM: "xterm-256color" };
const pane = new Pane("zero-bench-tui", sandbox.workspace, join(sandbox.root, "pane-output"));
const traceFile = join(sandbox.root, "trace");
const timeFile = join(sandbox.root, "time");

type Launch = { wallMs: number; cpuMs: number | undefined; trace: Trace; text: string };

/** Starts the TUI of `build` in the pane and waits until its output shows `ready`. */
async function launch(build: string, args: string[], ready: string, options: { timed?: boolean } = {}): Promise<Launch> {
  rmSync(traceFile, { force: true });
  rmSync(timeFile, { force: true });
  const command = [...(options.timed ? [GNU_TIME, "-f", "%U %S %M", "-o", timeFile] : []), ...zeroCommand(build), ...args];
  const from = pane.outputLength();
  const sent = pane.run(`${shellLine({ ...env, ZERO_TUI_TRACE: traceFile }, command)}; echo EXIT=$?`);
  const seen = await pane.waitForOutput((text) => text.includes(ready), from);
  // Idle once its first frame is out: its CPU so far is what the launch cost (both builds alike).
  const pid = options.timed ? undefined : pane.childPid();
  const cpuMs = pid === undefined ? undefined : processCpuMs(pid);
  // Plain `zero` draws before the runtime is attached (controller-ready comes after the frame).
  const trace = await waitForTrace(traceFile, (t) => "first-frame" in t.marks && "controller-ready" in t.marks);
  return { wallMs: seen.at - sent, cpuMs, trace, text: seen.text };
}

/** Ctrl-C twice; the exit code and the terminal back; returns the pane after exit. */
async function quit(): Promise<string> {
  pane.keys("C-c");
  await Bun.sleep(150);
  pane.keys("C-c");
  const { text } = await pane.waitFor((t) => /EXIT=\d+/.test(t), 20_000, 20);
  const code = /EXIT=(\d+)/.exec(text)![1];
  if (code !== "0") throw new Error(`the TUI exited ${code}:\n${text}`);
  return text;
}

/** A command line in the pane, up to its EXIT= line; GNU time's user+system ms and peak RSS. */
async function timed(command: string[], ready: RegExp): Promise<{ wallMs: number; cpuMs: number; rssMiB: number }> {
  rmSync(timeFile, { force: true });
  const from = pane.outputLength();
  const sent = pane.run(`${shellLine(env, [GNU_TIME, "-f", "%U %S %M", "-o", timeFile, ...command])}; echo EXIT=$?`);
  const seen = await pane.waitForOutput((t) => ready.test(t), from, 600_000);
  const { text } = await pane.waitFor((t) => /EXIT=\d+/.test(t), 600_000, 10);
  if (!/EXIT=0/.test(text)) throw new Error(`${command.join(" ")} failed:\n${text}`);
  return { wallMs: seen.at - sent, ...readTime() };
}

function readTime(): { cpuMs: number; rssMiB: number } {
  const [user, system, rssKb] = readFileSync(timeFile, "utf8").trim().split(/\s+/).map(Number);
  return { cpuMs: ((user ?? 0) + (system ?? 0)) * 1000, rssMiB: (rssKb ?? 0) / 1024 };
}

const nonNegative = (value: number) => (value < 0 ? NaN : value);
const fmt = (value: number | undefined, digits = 1) => (value === undefined || Number.isNaN(value) ? "n/a" : value.toFixed(digits));
const med = (values: Array<number | undefined>) => {
  const known = values.filter((v): v is number => typeof v === "number" && !Number.isNaN(v));
  return known.length ? median(known) : NaN;
};
const results: Record<string, unknown> = { date: new Date().toISOString(), runs: RUNS, streamRuns: STREAM_RUNS, deltas: DELTAS, chunkDelayMs: CHUNK_DELAY_MS, dist, before };
const lines: string[] = [];
const load = () => loadavg()[0]!.toFixed(1);
const say = (line = "") => {
  lines.push(line);
  console.log(line);
};

try {
  await pane.open();
  say(`zero TUI benchmarks (${new Date().toISOString().slice(0, 10)}; medians; tmux 120x40; launch ×${RUNS}, stream ×${STREAM_RUNS}; load average ${load()})`);
  say(`build: ${dist}${before ? `; before: ${before}` : ""}`);
  if (PARTS.has("launch")) await launchPart();
  if (PARTS.has("stream")) await streamPart();
  if (PARTS.has("keys") || PARTS.has("resume")) {
    const sessionId = await seedSession();
    if (PARTS.has("keys")) await keysPart(sessionId);
    if (PARTS.has("resume")) await resumePart(sessionId);
  }
  say("");
  say("Claude Code, Codex and opencode are not installed here and there is no network: no ratio against them.");
  say(`load average at the end ${load()}`);

  mkdirSync(resolve(ROOT, ".bench-results"), { recursive: true });
  writeFileSync(resolve(ROOT, ".bench-results/tui.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(resolve(ROOT, ".bench-results/tui.txt"), `${lines.join("\n")}\n`);
} finally {
  pane.close();
  await fake.close();
  sandbox.cleanup();
}

/** 1. Launch: bare Bun, `zero --version`, the TUI (and the other build's), alternating. */
async function launchPart(): Promise<void> {
  const PHASES: Array<[string, string | undefined, string]> = [
    // Plain `zero` (since 2 December): the screen first, then the runtime.
    ["Bun start → screen opening (index.js)", undefined, "index-open"],
    ["TUI bundle import (dist/tui.js)", "index-open", "tui-start"],
    ["runtime bundle (main.js) after the frame", "first-frame", "tui-command"],
    // Both orders.
    ["Bun start + runtime bundle (main.js)", undefined, "tui-command"],
    ["config + session service", "tui-command", "service-built"],
    ["waiting for the TUI bundle (dist/tui.js)", "service-built", "tui-module-loaded"],
    ["store + controller", "tui-module-loaded", "controller-ready"],
    ["renderer set-up", "controller-ready", "renderer-created"],
    ["first render (Solid tree, layout)", "renderer-created", "rendered"],
    ["→ first frame out", "rendered", "first-frame"],
  ];
  const MARKS = ["index-open", "interactive", "tui-command", "config-loaded", "service-built", "tui-module-loaded", "tui-start", "controller-ready", "renderer-created", "rendered", "first-frame"];
  type Round = { bare: number; version: number; opentui: number; tui: Launch; before?: Launch };
  const rounds: Round[] = [];
  const bareOpenTui = await buildBareOpenTui(resolve(ROOT, ".bench-results/tui-build/bare"));
  for (let i = 0; i <= RUNS; i++) {
    await pane.clear();
    const marker = `READY-${i}`;
    let from = pane.outputLength();
    const sentBare = pane.run(shellLine(env, [BUN, "--config=/dev/null", "--no-env-file", "-e", `console.log("READY-" + ${i})`]));
    const bare = (await pane.waitForOutput((t) => t.includes(marker), from)).at - sentBare;
    await pane.clear();
    from = pane.outputLength();
    const sentVersion = pane.run(shellLine(env, [...zeroCommand(dist), "--version"]));
    const version = (await pane.waitForOutput((t) => t.includes(`\n${VERSION}\n`), from)).at - sentVersion;
    await pane.clear();
    from = pane.outputLength();
    const sentOpenTui = pane.run(`${shellLine(env, [BUN, "--config=/dev/null", "--no-env-file", bareOpenTui])}; echo EXIT=$?`);
    const opentui = (await pane.waitForOutput((t) => t.includes("bare OpenTUI ready"), from)).at - sentOpenTui;
    await quit();
    // This build and the other one in turn, each first every other round (no order bias).
    const order = before && i % 2 === 1 ? [before, dist] : before ? [dist, before] : [dist];
    const launched = new Map<string, Launch>();
    for (const build of order) {
      await pane.clear();
      launched.set(build, await launch(build, [], PLACEHOLDER));
      await quit();
    }
    const tui = launched.get(dist)!;
    const other = before ? launched.get(before) : undefined;
    if (i > 0) rounds.push({ bare, version, opentui, tui, ...(other ? { before: other } : {}) }); // round 0 warms the caches
  }
  const launchSummary = (pick: (r: Round) => Launch | undefined) => ({
    wallMs: med(rounds.map((r) => pick(r)?.wallMs)),
    cpuMs: med(rounds.map((r) => pick(r)?.cpuMs)),
    marks: Object.fromEntries(MARKS.map((mark) => [mark, med(rounds.map((r) => pick(r)?.trace.marks[mark]))])),
    // Each phase as the median of its own per-run durations (steadier than differences of medians).
    phases: Object.fromEntries(
      // A phase whose marks come in the other order belongs to the other start path: n/a.
      PHASES.map(([name, from, to]) => [name, med(rounds.map((r) => (pick(r) ? nonNegative((pick(r)!.trace.marks[to] ?? NaN) - (from ? (pick(r)!.trace.marks[from] ?? NaN) : 0)) : undefined)))]),
    ),
  });
  const tuiLaunch = launchSummary((r) => r.tui);
  const beforeLaunch = before ? launchSummary((r) => r.before) : undefined;
  const bareMs = med(rounds.map((r) => r.bare));
  const versionMs = med(rounds.map((r) => r.version));
  const openTuiMs = med(rounds.map((r) => r.opentui));
  results.launch = { bareBunMs: bareMs, versionMs, bareOpenTuiMs: openTuiMs, tui: tuiLaunch, before: beforeLaunch };

  say("");
  say(`1. launch, command line sent → in the pane (wall ms; load average ${load()})`);
  say(`bare bun -e                         ${fmt(bareMs).padStart(8)}`);
  say(`zero --version                      ${fmt(versionMs).padStart(8)}`);
  say(`bare OpenTUI program (one text)     ${fmt(openTuiMs).padStart(8)}`);
  say(`zero (TUI) → composer placeholder   ${fmt(tuiLaunch.wallMs).padStart(8)}   ×${fmt(tuiLaunch.wallMs / bareMs, 2)} bare bun  (target < 150 ms); CPU ${fmt(tuiLaunch.cpuMs)} ms`);
  if (beforeLaunch) say(`before build → composer placeholder ${fmt(beforeLaunch.wallMs).padStart(8)}   ×${fmt(beforeLaunch.wallMs / bareMs, 2)} bare bun; CPU ${fmt(beforeLaunch.cpuMs)} ms`);
  say("   in process (ZERO_TUI_TRACE), ms" + (beforeLaunch ? "                 this build   before" : ""));
  for (const [name] of PHASES) say(`   ${name.padEnd(42)} ${fmt(tuiLaunch.phases[name]).padStart(8)}${beforeLaunch ? ` ${fmt(beforeLaunch.phases[name]).padStart(8)}` : ""}`);
  say(`   ${"process start → first frame".padEnd(42)} ${fmt(tuiLaunch.marks["first-frame"]).padStart(8)}${beforeLaunch ? ` ${fmt(beforeLaunch.marks["first-frame"]).padStart(8)}` : ""}`);
  // Keys typed before this wait (in the terminal) and are handled then: nothing is lost.
  const attachedAt = (marks: Record<string, number | undefined>) => marks["interactive"] ?? marks["first-frame"];
  say(`   ${"process start → runtime attached".padEnd(42)} ${fmt(attachedAt(tuiLaunch.marks)).padStart(8)}${beforeLaunch ? ` ${fmt(attachedAt(beforeLaunch.marks)).padStart(8)}` : ""}`);
}

/** 2. The 10,000-delta stream: the TUI vs `zero run` into the same pane, alternating. */
async function streamPart(): Promise<void> {
  const streamTurn = (): FakeTurn[] => [{ text: PIECES, chunkDelayMs: CHUNK_DELAY_MS }];
  const lastWord = new RegExp(`w${DELTAS - 1}\\b`);
  type StreamRound = { tui: Record<string, number>; tuiTotal: { cpuMs: number; rssMiB: number }; run: { wallMs: number; cpuMs: number; rssMiB: number }; floor: { cpuMs: number } };
  const streams: StreamRound[] = [];
  for (let i = 0; i < STREAM_RUNS; i++) {
    await pane.clear();
    fake.reset();
    fake.script(streamTurn());
    await launch(dist, [], PLACEHOLDER, { timed: true });
    pane.type("stream the answer");
    pane.keys("Enter");
    const trace = await waitForTrace(traceFile, (t) => "run-end" in t.data, 600_000);
    await pane.waitFor((t) => lastWord.test(t), 30_000, 20);
    await quit();
    const tuiTotal = readTime();
    await pane.clear();
    fake.reset();
    fake.script(streamTurn());
    const run = await timed([...zeroCommand(dist), "run", "stream the answer"], lastWord);
    await pane.clear();
    fake.reset();
    fake.script([{ text: "ok" }]);
    const floor = await timed([...zeroCommand(dist), "run", "answer ok"], /\nok\n/);
    streams.push({ tui: trace.data["run-end"], tuiTotal, run, floor });
  }
  const s = (pick: (r: StreamRound) => number | undefined) => med(streams.map(pick));
  const stream = {
    tuiRunCpuMs: s((r) => r.tui.cpuMs),
    tuiRunWallMs: s((r) => r.tui.wallMs),
    tuiProcessCpuMs: s((r) => r.tuiTotal.cpuMs),
    tuiPeakRssMiB: s((r) => r.tuiTotal.rssMiB),
    frames: s((r) => r.tui.frames),
    frameAvgMs: s((r) => r.tui.frameAvgMs),
    frameP95Ms: s((r) => r.tui.frameP95Ms),
    frameMaxMs: s((r) => r.tui.frameMaxMs),
    lagMaxMs: s((r) => r.tui.lagMaxMs),
    lagP99Ms: s((r) => r.tui.lagP99Ms),
    lagMaxBeforeEndMs: s((r) => r.tui.lagMaxBeforeEndMs),
    rssAfterMiB: s((r) => r.tui.rssMiB),
    runProcessCpuMs: s((r) => r.run.cpuMs),
    runFloorCpuMs: s((r) => r.floor.cpuMs),
    runStreamCpuMs: s((r) => r.run.cpuMs - r.floor.cpuMs),
    runPeakRssMiB: s((r) => r.run.rssMiB),
  };
  results.stream = { ...stream, samples: streams };
  say("");
  say(`2. ${DELTAS}-delta stream into one message (fake provider, ${CHUNK_DELAY_MS} ms between deltas; load average ${load()})`);
  say(`CPU of the stream: TUI (run start → end, in process)      ${fmt(stream.tuiRunCpuMs).padStart(8)} ms`);
  say(`CPU of the stream: zero run printing it (minus a 1-delta run) ${fmt(stream.runStreamCpuMs).padStart(6)} ms   TUI ×${fmt(stream.tuiRunCpuMs / stream.runStreamCpuMs, 2)}  (target ≤ ×2)`);
  say(`whole process CPU: TUI ${fmt(stream.tuiProcessCpuMs)} ms vs zero run ${fmt(stream.runProcessCpuMs)} ms (×${fmt(stream.tuiProcessCpuMs / stream.runProcessCpuMs, 2)}); run wall ${fmt(stream.tuiRunWallMs)} ms`);
  say(`frames ${fmt(stream.frames, 0)}: average ${fmt(stream.frameAvgMs, 2)} ms (target < 5), p95 ${fmt(stream.frameP95Ms, 2)}, max ${fmt(stream.frameMaxMs, 2)}`);
  say(`event-loop lag: max ${fmt(stream.lagMaxMs)} ms (target < 50; ${fmt(stream.lagMaxBeforeEndMs, 0)} ms before the run's end), p99 ${fmt(stream.lagP99Ms)} ms`);
  say(`RSS after the stream ${fmt(stream.rssAfterMiB)} MiB (target < 200; peak ${fmt(stream.tuiPeakRssMiB)}; zero run peak ${fmt(stream.runPeakRssMiB)})`);
}

/** A saved TUI session to grow: one real run (a tool call and an answer); returns its id. */
async function seedSession(): Promise<string> {
  await pane.clear();
  fake.reset();
  fake.script([
    { text: ["Reading ", "the README for SEEDMARK."], toolCalls: [{ name: "read", args: { path: "README.md" } }] },
    { text: ["The answer ", "is 42 (SEEDMARK)."] },
  ]);
  await launch(dist, [], PLACEHOLDER);
  pane.type("seed task SEEDMARK");
  pane.keys("Enter");
  await pane.waitFor((t) => t.includes("is 42 (SEEDMARK)."), 30_000, 20);
  const sessionId = /resume with: zero --resume (\S+)/.exec(await quit())?.[1];
  if (!sessionId) throw new Error("the seed session printed no resume hint");
  return sessionId;
}

/** 3. Keystroke → frame with ~1,000 entries. */
async function keysPart(sessionId: string): Promise<void> {
  const keysSession = growSession(sandbox.env, sandbox.workspace, sessionId, KEY_ENTRIES);
  type KeyRound = { p50: number; p95: number; max: number; count: number; firstFrame: number };
  /** Types TYPED one character at a time into the TUI already on screen; quits; the trace's latencies. */
  const typeAndMeasure = async (firstFrame: number): Promise<KeyRound> => {
    await Bun.sleep(300);
    for (const char of TYPED) {
      pane.type(char);
      await Bun.sleep(50);
    }
    await pane.waitFor((t) => t.includes(TYPED), 10_000);
    await quit();
    const keys = (readTrace(traceFile).data.keys ?? []) as number[];
    // Two characters read together share a frame (one sample): most must still be there.
    if (keys.length < TYPED.length * 0.8) throw new Error(`expected about ${TYPED.length} keystroke samples, got ${keys.length}`);
    const sorted = [...keys].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
    return { p50: at(0.5), p95: at(0.95), max: sorted.at(-1)!, count: keys.length, firstFrame };
  };
  const fresh: KeyRound[] = [];
  const resumed: KeyRound[] = [];
  for (let i = 0; i < STREAM_RUNS; i++) {
    await pane.clear();
    fresh.push(await typeAndMeasure((await launch(dist, [], PLACEHOLDER)).trace.marks["first-frame"]!));
    await pane.clear();
    resumed.push(await typeAndMeasure((await launch(dist, ["--resume", sessionId], `is 42 (${keysSession.lastMark}).`)).trace.marks["first-frame"]!));
  }
  const summary = (rounds: KeyRound[]) => ({
    p50Ms: med(rounds.map((r) => r.p50)),
    p95Ms: med(rounds.map((r) => r.p95)),
    maxMs: med(rounds.map((r) => r.max)),
    firstFrameMs: med(rounds.map((r) => r.firstFrame)),
    samples: rounds,
  });
  const keysResult = { entries: keysSession.entries, rows: keysSession.rows, resumed: summary(resumed), startScreen: summary(fresh) };
  results.keys = keysResult;
  const k = keysResult.resumed;
  const f = keysResult.startScreen;
  say("");
  say(`3. keystroke → next frame, ${TYPED.length} characters 50 ms apart (in process: input read → frame out; load average ${load()})`);
  say(`${keysResult.entries} entries (${keysResult.rows} rows): p50 ${fmt(k.p50Ms, 2)} ms, p95 ${fmt(k.p95Ms, 2)} ms (target < 10), max ${fmt(k.maxMs, 2)} ms; that resume → first frame ${fmt(k.firstFrameMs)} ms`);
  say(`empty start screen (baseline): p50 ${fmt(f.p50Ms, 2)} ms, p95 ${fmt(f.p95Ms, 2)} ms, max ${fmt(f.maxMs, 2)} ms`);
}

/** 4. Resume ~3,000 entries → first frame. */
async function resumePart(sessionId: string): Promise<void> {
  const bigSession = growSession(sandbox.env, sandbox.workspace, sessionId, RESUME_ENTRIES);
  const runs = new Map<string, Launch[]>([[dist, []], ...(before ? [[before, []] as [string, Launch[]]] : [])]);
  for (let i = 0; i < Math.max(3, Math.ceil(RUNS / 2)); i++) {
    const order = before && i % 2 === 1 ? [before, dist] : before ? [dist, before] : [dist];
    for (const build of order) {
      await pane.clear();
      runs.get(build)!.push(await launch(build, ["--resume", sessionId], `is 42 (${bigSession.lastMark}).`));
      await quit();
    }
  }
  const summary = (resumes: Launch[]) => ({
    firstFrameMs: med(resumes.map((r) => r.trace.marks["first-frame"])),
    replayMs: med(resumes.map((r) => r.trace.marks["controller-ready"]! - r.trace.marks["tui-start"]!)),
    renderMs: med(resumes.map((r) => r.trace.marks["rendered"]! - r.trace.marks["renderer-created"]!)),
    wallMs: med(resumes.map((r) => r.wallMs)),
    cpuToFirstFrameMs: med(resumes.map((r) => r.trace.data.launch?.cpuMs)),
    rssAtFirstFrameMiB: med(resumes.map((r) => r.trace.data.launch?.rssMiB)),
  });
  const resume = { entries: bigSession.entries, rows: bigSession.rows, build: summary(runs.get(dist)!), ...(before ? { before: summary(runs.get(before)!) } : {}) };
  results.resume = resume;
  say("");
  say(`4. resume a session of ${resume.entries} entries (${resume.rows} rows; load average ${load()})`);
  for (const [name, r] of [["this build", resume.build], ...(resume.before ? [["before", resume.before]] : [])] as Array<[string, ReturnType<typeof summary>]>) {
    say(`${name}: process start → first frame ${fmt(r.firstFrameMs)} ms (target < 1,500): replay ${fmt(r.replayMs)} ms, first render ${fmt(r.renderMs)} ms; CPU to it ${fmt(r.cpuToFirstFrameMs)} ms, RSS ${fmt(r.rssAtFirstFrameMiB)} MiB; command line → last answer in the pane ${fmt(r.wallMs)} ms`);
  }
}
