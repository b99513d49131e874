// Benchmark of `zero acp` (issue 18): `node_modules/.bin/bun bench/acp.ts` (after a build). Medians over
// BENCH_ACP_RUNS runs (default 7) after a warm-up, against an instant scripted fake provider, the two
// sides of each comparison alternating, the baseline being `zero exec --output-format stream-json` for
// the same prompt and the same scripted answer, measured in the same run:
// 1. start-up: spawn → `initialize` answered → `session/new` answered → the prompt's first model
//    request at the fake, vs `zero exec` spawn → its first model request.
// 2. streaming: an answer of BENCH_ACP_DELTAS (default 10,000) text deltas, BENCH_ACP_STREAM_RUNS runs
//    (default 5). From the model request to the last frame (ACP: the prompt's response, after every
//    session/update; exec: the run_end line): wall time, frames per second (frames: the lines written
//    for the turn; ACP: its session/updates and the response, exec: every line after run_start), and
//    CPU time (user+sys of the zero process, /proc/<pid>/stat read as the request arrives and as the
//    last frame is read, clock-tick resolution), plus ACP's prompt → response time.
// The client side is raw NDJSON (JSON-RPC lines on the process's stdin/stdout), not the SDK: cheaper
// per frame, so the bench process (which also serves the fake) is not what limits the rate. Every
// run must answer all its requests, exit 0 and deliver the whole text, or the bench stops.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider, type FakeProvider, type FakeTurn, type RecordedRequest } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, ZERO_BIN, type Sandbox } from "../test/support/cli.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_ACP_RUNS ?? 7));
const STREAM_RUNS = Math.max(1, Number(process.env.BENCH_ACP_STREAM_RUNS ?? 5));
const DELTAS = Math.max(10, Number(process.env.BENCH_ACP_DELTAS ?? 10_000));
/** One word a delta, so stream-json's re-chunking at word boundaries keeps one frame a delta too. */
const PIECES = Array.from({ length: DELTAS }, (_, i) => `w${i} `);
const ANSWER = PIECES.join("");
const TIMEOUT_MS = 60_000;

const now = () => performance.timeOrigin + performance.now();
const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** User+system CPU of a live process in ms (clock-tick resolution), undefined once it is gone. */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields[0] is field 3 (state)
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Calls `onLine` for every complete stdout line, with the time it was read. */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string, at: number) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    const at = now();
    buffered += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n", start)) {
      if (nl > start) onLine(buffered.slice(start, nl), at);
      start = nl + 1;
    }
    buffered = buffered.slice(start);
  }
  if (buffered.trim() !== "") onLine(buffered, now());
}

function collectText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** `zero acp` driven over raw NDJSON: requests by id, session/update frames counted (and their text kept). */
function startAcp(sandbox: Sandbox) {
  const startedAt = now();
  const proc = Bun.spawn([ZERO_BIN, "acp"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), TIMEOUT_MS);
  const stderr = collectText(proc.stderr);
  const pending = new Map<number, { resolve: (at: number) => void; reject: (error: Error) => void; method: string }>();
  let nextId = 0;
  const counts = { updates: 0, chunks: 0 };
  let text = "";
  const results = new Map<number, any>();
  const reading = readLines(proc.stdout, (line, at) => {
    const message = JSON.parse(line);
    if (message.method === "session/update") {
      const update = message.params?.update;
      // Sent after session/new's response, maybe while the prompt runs: not part of the turn.
      if (update?.sessionUpdate !== "available_commands_update") counts.updates++;
      if (update?.sessionUpdate === "agent_message_chunk") {
        counts.chunks++;
        text += update.content?.text ?? "";
      }
      return;
    }
    if (message.method !== undefined) throw new Error(`bench: unexpected agent message ${line.slice(0, 300)}`);
    const waiter = pending.get(message.id);
    if (!waiter) throw new Error(`bench: response to no request: ${line.slice(0, 300)}`);
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${waiter.method}: ${JSON.stringify(message.error)}`));
    else {
      results.set(message.id, message.result);
      waiter.resolve(at);
    }
  });
  /** Sends a request; resolves with its result and the time its response line was read. */
  const request = (method: string, params: unknown) => {
    const id = ++nextId;
    const answered = new Promise<number>((resolve, reject) => pending.set(id, { resolve, reject, method }));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    proc.stdin.flush();
    return answered.then((at) => ({ at, result: results.get(id) }));
  };
  // A bad line, or the agent gone (stdout ended) with requests unanswered: those requests fail.
  void reading.then(
    () => new Error("zero acp closed its stdout"),
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  ).then(async (error) => {
    if (pending.size === 0) return;
    const why = `${error.message}; stderr: ${(await stderr).slice(0, 600)}`;
    for (const waiter of pending.values()) waiter.reject(new Error(`${waiter.method}: ${why}`));
    pending.clear();
  });
  return {
    proc,
    startedAt,
    counts,
    text: () => text,
    request,
    initialize: () => request("initialize", { protocolVersion: 1, clientCapabilities: {} }),
    newSession: () => request("session/new", { cwd: sandbox.workspace, mcpServers: [] }),
    prompt: (sessionId: string, prompt: string) => request("session/prompt", { sessionId, prompt: [{ type: "text", text: prompt }] }),
    /** Ends stdin (the agent then exits 0); throws unless it did. */
    async stop() {
      proc.stdin.end();
      const code = await proc.exited;
      clearTimeout(timer);
      await reading;
      if (code !== 0) throw new Error(`zero acp exited ${code}: ${(await stderr).slice(0, 600)}`);
    },
    async fail(why: string): Promise<never> {
      proc.kill("SIGKILL");
      await proc.exited;
      throw new Error(`zero acp: ${why}; stderr: ${(await stderr).slice(0, 600)}`);
    },
  };
}

/** `zero exec --output-format stream-json`: its lines counted (text deltas kept), run_end timed. */
function startExec(sandbox: Sandbox, prompt: string, onRunEnd?: (at: number) => void) {
  const startedAt = now();
  const proc = Bun.spawn([ZERO_BIN, "exec", "--output-format", "stream-json", prompt], { cwd: sandbox.workspace, env: sandbox.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), TIMEOUT_MS);
  const stderr = collectText(proc.stderr);
  const counts = { lines: 0, chunks: 0 };
  let text = "";
  let runEnd: Record<string, any> | undefined;
  const reading = readLines(proc.stdout, (line, at) => {
    counts.lines++;
    const event = JSON.parse(line);
    if (event.type === "text") {
      counts.chunks++;
      text += event.delta;
    } else if (event.type === "run_end") {
      runEnd = event;
      onRunEnd?.(at);
    }
  });
  return {
    proc,
    startedAt,
    counts,
    text: () => text,
    async done() {
      const code = await proc.exited;
      clearTimeout(timer);
      await reading;
      if (code !== 0 || runEnd?.exitCode !== 0) throw new Error(`zero exec exited ${code} (run_end ${JSON.stringify(runEnd)}): ${(await stderr).slice(0, 600)}`);
    },
  };
}

/** The fake's answer for the next request; `onRequest` runs as it arrives (before the reply). */
let answer: (req: RecordedRequest) => FakeTurn = () => ({ text: "done" });

type Startup = { initMs: number; newMs: number; requestMs: number };

async function acpStartup(sandbox: Sandbox, fake: FakeProvider): Promise<Startup> {
  fake.reset();
  answer = () => ({ text: "done" });
  const acp = startAcp(sandbox);
  const init = await acp.initialize();
  const created = await acp.newSession();
  const sessionId = created.result?.sessionId;
  if (typeof sessionId !== "string") return acp.fail(`session/new answered ${JSON.stringify(created.result)}`);
  const prompted = await acp.prompt(sessionId, "hi");
  if (prompted.result?.stopReason !== "end_turn") return acp.fail(`prompt answered ${JSON.stringify(prompted.result)}`);
  if (fake.requests.length !== 1 || acp.text() !== "done") return acp.fail(`${fake.requests.length} model requests, text ${JSON.stringify(acp.text())}`);
  await acp.stop();
  return { initMs: init.at - acp.startedAt, newMs: created.at - acp.startedAt, requestMs: fake.requests[0]!.receivedAt - acp.startedAt };
}

async function execStartup(sandbox: Sandbox, fake: FakeProvider): Promise<number> {
  fake.reset();
  answer = () => ({ text: "done" });
  const exec = startExec(sandbox, "hi");
  await exec.done();
  if (fake.requests.length !== 1 || exec.text() !== "done") throw new Error(`exec: ${fake.requests.length} model requests, text ${JSON.stringify(exec.text())}`);
  return fake.requests[0]!.receivedAt - exec.startedAt;
}

type Stream = { wallMs: number; cpuMs: number; frames: number; textFrames: number; framesPerS: number; promptMs?: number };

/** The streamed answer, with the zero process's CPU read as its model request arrives. */
function streamedAnswer(pid: () => number, cpu: { atRequest?: number }) {
  return () => {
    cpu.atRequest = cpuMsOf(pid());
    return { text: PIECES } satisfies FakeTurn;
  };
}

async function acpStream(sandbox: Sandbox, fake: FakeProvider): Promise<Stream> {
  fake.reset();
  const acp = startAcp(sandbox);
  const cpu: { atRequest?: number } = {};
  answer = streamedAnswer(() => acp.proc.pid, cpu);
  await acp.initialize();
  const created = await acp.newSession();
  const sessionId = created.result?.sessionId as string;
  const before = { ...acp.counts };
  const sentAt = now();
  const prompted = await acp.prompt(sessionId, "stream a long answer");
  const cpuAtEnd = cpuMsOf(acp.proc.pid);
  if (prompted.result?.stopReason !== "end_turn") return acp.fail(`prompt answered ${JSON.stringify(prompted.result)}`);
  if (acp.text() !== ANSWER) return acp.fail(`the streamed text differs (${acp.text().length} of ${ANSWER.length} chars)`);
  if (fake.requests.length !== 1 || cpu.atRequest === undefined || cpuAtEnd === undefined) return acp.fail("no CPU reading");
  const frames = acp.counts.updates - before.updates + 1; // the updates and the response
  const wallMs = prompted.at - fake.requests[0]!.receivedAt;
  await acp.stop();
  const textFrames = acp.counts.chunks - before.chunks;
  return { wallMs, cpuMs: cpuAtEnd - cpu.atRequest, frames, textFrames, framesPerS: frames / (wallMs / 1000), promptMs: prompted.at - sentAt };
}

async function execStream(sandbox: Sandbox, fake: FakeProvider): Promise<Stream> {
  fake.reset();
  const cpu: { atRequest?: number } = {};
  let endedAt = 0;
  let cpuAtEnd: number | undefined;
  const exec = startExec(sandbox, "stream a long answer", (at) => {
    endedAt = at;
    cpuAtEnd = cpuMsOf(exec.proc.pid);
  });
  answer = streamedAnswer(() => exec.proc.pid, cpu);
  await exec.done();
  if (exec.text() !== ANSWER) throw new Error(`exec: the streamed text differs (${exec.text().length} of ${ANSWER.length} chars)`);
  if (fake.requests.length !== 1 || cpu.atRequest === undefined) throw new Error("exec: no CPU reading at the request");
  // Gone already (it exits right after run_end): its whole CPU, shutdown included, from the rusage.
  cpuAtEnd ??= Number(exec.proc.resourceUsage()?.cpuTime.total ?? 0n) / 1000;
  const wallMs = endedAt - fake.requests[0]!.receivedAt;
  const frames = exec.counts.lines - 1; // every line after run_start (run_end included)
  return { wallMs, cpuMs: cpuAtEnd - cpu.atRequest, frames, textFrames: exec.counts.chunks, framesPerS: frames / (wallMs / 1000) };
}

const fmt = (value: number, digits = 0) => value.toFixed(digits);
const pad = (value: string, width: number) => value.padStart(width);
const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)}`;
const signed = (value: number, digits = 0) => `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(digits)}`;

const sandbox = makeSandbox();
const fake = await startFakeProvider({ fallback: (req) => answer(req) });
sandbox.writeUserConfig(fakeConfig(fake.url));
const stale = Bun.spawnSync(["find", join(import.meta.dir, "../src"), "-newer", resolve(import.meta.dir, "../dist/main.js"), "-print", "-quit"]).stdout.toString().trim();
try {
  const acpRuns: Startup[] = [];
  const execRuns: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const a = await acpStartup(sandbox, fake);
    const e = await execStartup(sandbox, fake);
    if (i === 0) continue; // warm-up
    acpRuns.push(a);
    execRuns.push(e);
  }
  const acpStreams: Stream[] = [];
  const execStreams: Stream[] = [];
  for (let i = 0; i <= STREAM_RUNS; i++) {
    const a = await acpStream(sandbox, fake);
    const e = await execStream(sandbox, fake);
    if (i === 0) continue;
    acpStreams.push(a);
    execStreams.push(e);
  }

  const init = median(acpRuns.map((r) => r.initMs));
  const created = median(acpRuns.map((r) => r.newMs));
  const acpRequest = median(acpRuns.map((r) => r.requestMs));
  const execRequest = median(execRuns);
  const m = (list: Stream[], key: keyof Stream) => median(list.map((s) => s[key] as number));
  const [aw, ac, af, at, afs, ap] = [m(acpStreams, "wallMs"), m(acpStreams, "cpuMs"), m(acpStreams, "frames"), m(acpStreams, "textFrames"), m(acpStreams, "framesPerS"), m(acpStreams, "promptMs")];
  const [ew, ec, ef, et, efs] = [m(execStreams, "wallMs"), m(execStreams, "cpuMs"), m(execStreams, "frames"), m(execStreams, "textFrames"), m(execStreams, "framesPerS")];
  const perFrame = (cpuMs: number, frames: number) => `${fmt((cpuMs * 1000) / frames, 1)} µs`;
  console.log(
    [
      `zero acp (${new Date().toISOString().slice(0, 10)}, medians; start-up ×${RUNS}, ${DELTAS}-delta stream ×${STREAM_RUNS}, instant fake provider${stale ? "; dist stale: ran src/" : ""})`,
      "",
      "start-up (ms from spawn)                 acp   exec",
      `initialize answered                 ${pad(fmt(init), 8)}`,
      `session/new answered                ${pad(fmt(created), 8)}`,
      `first model request                 ${pad(fmt(acpRequest), 8)} ${pad(fmt(execRequest), 6)}   ${ratio(acpRequest, execRequest)} exec (${signed(acpRequest - execRequest)} ms)`,
      "",
      `${DELTAS}-delta answer, model request → last frame`,
      "                                         acp   exec",
      `wall ms                             ${pad(fmt(aw), 8)} ${pad(fmt(ew), 6)}   ${ratio(aw, ew)} exec`,
      `CPU ms (zero process, user+sys)     ${pad(fmt(ac), 8)} ${pad(fmt(ec), 6)}   ${ratio(ac, ec)} exec`,
      `frames (lines written for the turn) ${pad(fmt(af), 8)} ${pad(fmt(ef), 6)}`,
      `  of which text deltas              ${pad(fmt(at), 8)} ${pad(fmt(et), 6)}`,
      `frames/s                            ${pad(fmt(afs), 8)} ${pad(fmt(efs), 6)}   ${ratio(afs, efs)} exec`,
      `CPU per frame                       ${pad(perFrame(ac, af), 8)} ${pad(perFrame(ec, ef), 6)}   ${signed(((ac - ec) * 1000) / DELTAS, 1)} µs a delta vs exec`,
      `acp session/prompt → response       ${pad(fmt(ap), 8)} ms`,
    ].join("\n"),
  );
} finally {
  await fake.close();
  sandbox.cleanup();
}
