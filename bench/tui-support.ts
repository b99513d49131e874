// Helpers of bench/tui.ts: a private build, a tmux pane to drive the real TUI in, the
// ZERO_TUI_TRACE file, and a large saved TUI session made through the store.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { openStore } from "../src/store/store.ts";
import { workspaceStateDir } from "../src/store/state.ts";
import type { RuntimeEvent } from "../src/protocol/events.ts";
import { addUserTurn, applyEvent, emptyTimeline, visibleRows } from "../src/surface/tui/timeline.ts";

export const ROOT = resolve(import.meta.dir, "..");
export const BUN = resolve(ROOT, "node_modules/.bin/bun");

/**
 * Builds the bundles into a private directory inside the package (node_modules must resolve from
 * it): a `bun run build` by someone else cannot replace dist/ in the middle of a measurement.
 */
export function buildPrivate(outdir: string): string {
  const result = Bun.spawnSync([BUN, resolve(ROOT, "scripts/build.ts"), "--outdir", outdir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`build failed:\n${result.stderr.toString()}${result.stdout.toString()}`);
  return outdir;
}

/**
 * The floor of any OpenTUI program here: a renderer and one line of text, bundled the way
 * dist/tui.js is (ESM, native library external). Built inside the package (node_modules).
 * Any key ends it.
 */
export async function buildBareOpenTui(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const entry = resolve(dir, "bare-opentui.ts");
  writeFileSync(
    entry,
    `import { createCliRenderer, TextRenderable } from "@opentui/core";
const renderer = await createCliRenderer({ exitOnCtrlC: false, exitSignals: [], useMouse: true });
renderer.root.add(new TextRenderable(renderer, { content: "bare OpenTUI ready" }));
renderer.keyInput.on("keypress", () => {
  renderer.destroy();
  process.exit(0);
});
`,
  );
  const result = await Bun.build({ entrypoints: [entry], outdir: resolve(dir, "out"), target: "bun", format: "esm", minify: true, external: ["@opentui/core-*"] });
  if (!result.success) throw new Error(`bare OpenTUI build failed: ${result.logs.join("\n")}`);
  return resolve(dir, "out/bare-opentui.js");
}

/** The command line that starts a build's CLI the way bin/zero does. */
export function zeroCommand(dist: string): string[] {
  if (!existsSync(resolve(dist, "index.js")) || !existsSync(resolve(dist, "tui.js"))) throw new Error(`${dist} is not a built dist/ (index.js, tui.js)`);
  return [BUN, "--config=/dev/null", "--no-env-file", resolve(dist, "index.js")];
}

const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** `env -i K=V … cmd…` for a shell line: the pane's command sees exactly this environment. */
export function shellLine(env: Record<string, string>, command: string[]): string {
  const vars = Object.entries(env).map(([key, value]) => `${key}=${quote(value)}`);
  return ["env", "-i", ...vars, ...command.map(quote)].join(" ");
}

// Escape sequences (CSI, OSC, DCS, charset and keypad modes): what is left is the text written.
const ESCAPES = /\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\|\x1b[()][0-9A-Za-z]|\x1b[=>78]/g;

/**
 * One tmux session (120x40 unless told) running a plain bash to type command lines into. Its
 * output is also piped to a file (`pipe-pane`): timing waits read that file instead of polling
 * `tmux capture-pane`, whose process spawns would take CPU from what is being measured.
 */
export class Pane {
  readonly name: string;
  constructor(
    name: string,
    readonly cwd: string,
    readonly outputFile: string,
  ) {
    this.name = `${name}-${process.pid}`;
  }

  private tmux(...args: string[]) {
    return Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
  }

  async open(width = 120, height = 40): Promise<void> {
    this.tmux("kill-session", "-t", this.name);
    const made = this.tmux("new-session", "-d", "-s", this.name, "-x", String(width), "-y", String(height), "-c", this.cwd, "bash --norc --noprofile");
    if (made.exitCode !== 0) throw new Error(`tmux new-session failed: ${made.stderr.toString()}`);
    writeFileSync(this.outputFile, "");
    this.tmux("pipe-pane", "-t", this.name, "-O", `cat >> '${this.outputFile.replaceAll("'", "'\\''")}'`);
    this.keys("PS1='$ '; clear", "Enter");
    await this.waitFor((text) => text.trim() === "$", 5000);
  }

  text(): string {
    return this.tmux("capture-pane", "-p", "-t", this.name).stdout.toString();
  }

  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.name, ...keys);
  }

  /** Literal text (no key names). */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Types a command line and presses Enter; returns the time it was sent (ms, performance clock). */
  run(line: string): number {
    this.tmux("send-keys", "-t", this.name, "-l", line);
    const at = performance.now();
    this.keys("Enter");
    return at;
  }

  /** How much output the pane has written so far (an offset for `waitForOutput`). */
  outputLength(): number {
    return statSync(this.outputFile).size;
  }

  /** Polls the piped output written after `from` (escape sequences and CRs removed) until `test` holds. */
  async waitForOutput(test: (text: string) => boolean, from: number, timeoutMs = 60_000): Promise<{ at: number; text: string }> {
    const end = performance.now() + timeoutMs;
    const fd = openSync(this.outputFile, "r");
    try {
      let raw = "";
      let offset = from;
      const buffer = Buffer.alloc(1 << 16);
      const decoder = new TextDecoder();
      for (;;) {
        let read: number;
        while ((read = readSync(fd, buffer, 0, buffer.length, offset)) > 0) {
          offset += read;
          raw += decoder.decode(buffer.subarray(0, read), { stream: true });
        }
        const text = raw.replace(ESCAPES, "").replaceAll("\r", "");
        if (test(text)) return { at: performance.now(), text };
        if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms; the output:\n${text.slice(-2000)}`);
        await Bun.sleep(1);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Polls the pane (`capture-pane`) until `test` holds; for waits that are not timed. */
  async waitFor(test: (text: string) => boolean, timeoutMs = 20_000, pollMs = 25): Promise<{ at: number; text: string }> {
    const end = performance.now() + timeoutMs;
    let text = "";
    while (performance.now() < end) {
      text = this.text();
      if (test(text)) return { at: performance.now(), text };
      await Bun.sleep(pollMs);
    }
    throw new Error(`timed out after ${timeoutMs} ms; the pane:\n${text}`);
  }

  /** An empty screen with just the prompt (so no earlier output can match). */
  async clear(): Promise<void> {
    this.keys("clear", "Enter");
    await this.waitFor((text) => text.trim() === "$", 10_000, 10);
  }

  /** The process the pane's shell runs now (its one child), if any. */
  childPid(): number | undefined {
    const shell = this.tmux("display", "-p", "-t", this.name, "#{pane_pid}").stdout.toString().trim();
    const child = Bun.spawnSync(["pgrep", "-P", shell], { stdout: "pipe" }).stdout.toString().trim().split("\n")[0];
    return child ? Number(child) : undefined;
  }

  close(): void {
    this.tmux("kill-session", "-t", this.name);
  }
}

/**
 * CPU time a process's threads have used so far, in ms (the sum of /proc/<pid>/task/<tid>/schedstat:
 * nanoseconds, where /proc/<pid>/stat counts 10 ms ticks).
 */
export function processCpuMs(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    return ns / 1e6;
  } catch {
    return undefined; // gone, or no /proc
  }
}

export type Trace = { marks: Record<string, number>; data: Record<string, any> };

/** Reads a ZERO_TUI_TRACE file: `<mark> <ms>` lines, `name:{json}` marks carrying figures. */
export function readTrace(file: string): Trace {
  const trace: Trace = { marks: {}, data: {} };
  if (!existsSync(file)) return trace;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const space = line.lastIndexOf(" ");
    if (space < 0) continue;
    const mark = line.slice(0, space);
    const ms = Number(line.slice(space + 1));
    const colon = mark.indexOf(":");
    if (colon > 0) trace.data[mark.slice(0, colon)] = JSON.parse(mark.slice(colon + 1));
    else trace.marks[mark] ??= ms;
  }
  return trace;
}

export async function waitForTrace(file: string, test: (trace: Trace) => boolean, timeoutMs = 60_000): Promise<Trace> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const trace = readTrace(file);
    if (test(trace)) return trace;
    if (performance.now() > end) throw new Error(`timed out waiting in the trace ${file}: ${JSON.stringify(trace.marks)}`);
    await Bun.sleep(20);
  }
}

/** The timeline the TUI replays from a session's stored events (controller.ts `replay`). */
export function countEntries(events: RuntimeEvent[]): { entries: number; rows: number } {
  const timeline = emptyTimeline();
  for (const event of events) {
    if (event.type === "run.started" && event.parentRunId === null) addUserTurn(timeline, event.task);
    applyEvent(timeline, event);
  }
  return { entries: timeline.entries.length, rows: visibleRows(timeline).length };
}

/**
 * Grows a saved TUI session to about `target` timeline entries by appending copies of its runs
 * (new run and call ids, `SEEDMARK` in their text numbered) through the store API: real events
 * of a real run, without running the model thousands of times. The copies carry no model
 * history; the session's checkpoint stays that of its first run, so it still resumes.
 */
export function growSession(env: Record<string, string>, workspace: string, sessionId: string, target: number): { entries: number; rows: number; runs: number; lastMark: string } {
  const { store } = openStore({ dir: workspaceStateDir(env, workspace) });
  try {
    const events = store.eventsOfSession(sessionId, 0);
    const seedRuns = [...new Set(events.map((event) => event.runId))];
    const perCopy = countEntries(events).entries;
    if (perCopy === 0) throw new Error("the seed session has no entries");
    const seedRunId = seedRuns[0]!;
    const seedEvents = events.filter((event) => event.runId === seedRunId);
    const seedEntries = countEntries(seedEvents).entries;
    const row = store.getRun(seedRunId)!;
    let current = countEntries(events).entries;
    // Numbered after the runs already there (a second call grows the same session further).
    let copies = seedRuns.length - 1;
    while (current + seedEntries <= target) {
      copies++;
      const runId = `${seedRunId}-copy${copies}`;
      store.createRun({ ...row, id: runId, rootId: runId });
      for (const event of seedEvents) {
        let body = JSON.stringify(event).replaceAll(seedRunId, runId).replaceAll("SEEDMARK", `mark${copies}`);
        const copy = JSON.parse(body) as RuntimeEvent & { callId?: string };
        if (typeof copy.callId === "string") body = JSON.stringify({ ...copy, callId: `${copy.callId}-c${copies}` });
        store.appendEvent(JSON.parse(body));
      }
      current += seedEntries;
    }
    const counted = countEntries(store.eventsOfSession(sessionId, 0));
    return { ...counted, runs: copies + 1, lastMark: `mark${copies}` };
  } finally {
    store.close();
  }
}
