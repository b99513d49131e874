/**
 * Processes that left a `run` command's process group and outlived the call.
 *
 * The run tool kills the command's process group; a descendant that calls `setsid` or `setpgid`
 * (a daemon's double fork, a program that makes its own group) is no longer in it and survives.
 * Until an OS sandbox (a PID namespace) exists, such processes are FOUND and REPORTED instead:
 * - Each call puts a random marker in its command's environment (`ZERO_CLI_RUN_MARKER=<128-bit
 *   hex>`); every descendant inherits it. After the call (its group already terminated), /proc is
 *   scanned: a live process carrying the marker and not in the call's group escaped. Only
 *   processes created since the call's shell are looked at — pids allocated after it (PidWindow)
 *   and started no earlier (/proc/<pid>/stat field 22) — so the common case costs a directory
 *   listing and a few small reads, and the environment of older processes is never read;
 *   /proc/<pid>/environ is readable only for our own user's processes anyway.
 * - Escaped processes are remembered (pid, start time, marker) and `killEscapedProcesses()` ends
 *   them: SIGTERM, a short bounded wait, SIGKILL — only a process whose pid, start time AND marker
 *   all still match, plus any live process carrying one of those markers (children an escaped
 *   process started after the scan). A synchronous `exit` handler, installed when the first escape
 *   is recorded, calls it when zero exits (process.exit, a normal end, the SIGINT/SIGTERM handlers
 *   of the CLI — not SIGKILL, and not a SIGHUP zero does not handle).
 *
 * Not detected: a process that clears or rewrites its environment (`env -i`, setproctitle-style
 * overwrites), one that changes user (sudo: its environ is unreadable), and anything on a system
 * without /proc (macOS): there the scan finds nothing and reports nothing.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable that marks a call's processes. */
export const RUN_MARKER_NAME = "ZERO_CLI_RUN_MARKER";
/** At most this many escaped processes are listed in one result. */
export const ESCAPED_LISTED = 5;
/** Characters of one command line shown in the note. */
export const ESCAPED_COMMAND_CHARS = 200;
/** At most this many escaped processes are remembered for the kill at exit. */
export const ESCAPED_TRACKED = 256;
/** How long the kill at exit waits after SIGTERM before SIGKILL. */
export const ESCAPED_KILL_GRACE_MS = 250;

export type EscapedProcess = { pid: number; startTime: number; command: string };
type Stat = { state: string; pgrp: number; tty: number; startTime: number };
type Tracked = { pid: number; startTime: number; marker: string };

const tracked = new Map<number, Tracked>();
/** Markers of calls that had escapees, with the earliest start time worth looking at. */
const trackedMarkers = new Map<string, number>();
let exitHandlerInstalled = false;

export function newRunMarker(): string {
  return randomBytes(16).toString("hex");
}

/** Whether this system has a /proc to scan (Linux). */
export function canScanProcesses(procDir = "/proc"): boolean {
  if (process.platform !== "linux") return false;
  try {
    readFileSync(`${procDir}/self/stat`);
    return true;
  } catch {
    return false;
  }
}

/** State, process group and start time (clock ticks since boot) of a process; undefined when gone. */
export function readStat(pid: number | "self", procDir = "/proc"): Stat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${procDir}/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: fields start after the LAST ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const pgrp = Number(fields[2]);
  const tty = Number(fields[4]);
  const startTime = Number(fields[19]);
  if (fields[0] === undefined || !Number.isFinite(pgrp) || !Number.isFinite(startTime)) return undefined;
  return { state: fields[0], pgrp, tty: Number.isFinite(tty) ? tty : 0, startTime };
}

function carriesMarker(pid: number, markers: ReadonlySet<string>, procDir: string): string | undefined {
  let environ: string;
  try {
    environ = readFileSync(`${procDir}/${pid}/environ`, "latin1");
  } catch {
    return undefined; // gone, or another user's
  }
  for (const entry of environ.split("\0")) {
    if (!entry.startsWith(`${RUN_MARKER_NAME}=`)) continue;
    const value = entry.slice(RUN_MARKER_NAME.length + 1);
    if (markers.has(value)) return value;
  }
  return undefined;
}

/** The command line, NULs as spaces, control characters escaped, bounded. */
function commandLine(pid: number, procDir: string): string {
  let raw: string;
  try {
    raw = readFileSync(`${procDir}/${pid}/cmdline`, "utf8");
  } catch {
    return "?";
  }
  const text = raw.replace(/\0+$/, "").replaceAll("\0", " ");
  const shown = text.length > ESCAPED_COMMAND_CHARS ? `${text.slice(0, ESCAPED_COMMAND_CHARS)}…` : text;
  return shown.replace(/[\u0000-\u001f\u007f-\u009f`]/g, (c) => (c === "`" ? "'" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)) || "?";
}

/**
 * Which pids can belong to processes created since a call started: the pids allocated after its
 * shell's, up to the most recently allocated one (/proc/loadavg) — cyclically, pids wrap at
 * pid_max. Exact only while fewer than about pid_max processes were created meanwhile, which the
 * fork counter of /proc/stat bounds; otherwise (or when anything is unreadable) every pid is a
 * candidate. It lets the common case read a directory listing and a few small files instead of one
 * stat file per process on the machine (~20 µs each).
 */
export type PidWindow = { shellPid: number; forks: number };

function readNumber(path: string, pick: (text: string) => string | undefined): number | undefined {
  try {
    const value = Number(pick(readFileSync(path, "latin1")));
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
const forkCount = (procDir: string): number | undefined => readNumber(`${procDir}/stat`, (text) => /^processes (\d+)$/m.exec(text)?.[1]);
const lastPid = (procDir: string): number | undefined => readNumber(`${procDir}/loadavg`, (text) => text.trim().split(/\s+/)[4]);
const pidMax = (procDir: string): number | undefined => readNumber(`${procDir}/sys/kernel/pid_max`, (text) => text.trim());

/** Opened right after the shell was spawned (before any await). */
export function openPidWindow(shellPid: number | undefined, procDir = "/proc"): PidWindow | undefined {
  if (shellPid === undefined || !canScanProcesses(procDir)) return undefined;
  // /proc must show our own pid namespace, or its pids mean nothing to us.
  if (readNumber(`${procDir}/self/stat`, (text) => text.split(" ")[0]) !== process.pid) return undefined;
  const forks = forkCount(procDir);
  return forks === undefined ? undefined : { shellPid, forks };
}

/** A test for "allocated since the window opened", or undefined when every pid must be looked at. */
function pidFilter(window: PidWindow | undefined, procDir: string): ((pid: number) => boolean) | undefined {
  if (window === undefined) return undefined;
  const [forks, last, max] = [forkCount(procDir), lastPid(procDir), pidMax(procDir)];
  if (forks === undefined || last === undefined || max === undefined) return undefined;
  if (forks - window.forks >= max / 2) return undefined; // pids may have wrapped past the shell's
  const first = window.shellPid;
  return last >= first ? (pid) => pid >= first && pid <= last : (pid) => pid >= first || pid <= last;
}

export type ScanOptions = {
  /** The call's process group: its members are being killed, not escaped. */
  pgid?: number;
  /** Only processes started at or after this (clock ticks since boot) are looked at. */
  sinceTicks?: number;
  /** Only pids allocated since this window opened are looked at (see PidWindow). */
  window?: PidWindow;
  procDir?: string;
};

/** Live processes (not zombies) that carry one of the markers, outside the call's group. */
function scan(markers: ReadonlySet<string>, options: ScanOptions): Array<EscapedProcess & { marker: string; tty: number }> {
  const procDir = options.procDir ?? "/proc";
  if (markers.size === 0 || !canScanProcesses(procDir)) return [];
  let entries: string[];
  try {
    entries = readdirSync(procDir);
  } catch {
    return [];
  }
  const inWindow = pidFilter(options.window, procDir);
  const found: Array<EscapedProcess & { marker: string; tty: number }> = [];
  for (const entry of entries) {
    const code = entry.charCodeAt(0);
    if (code < 48 || code > 57) continue; // not a pid
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (inWindow !== undefined && !inWindow(pid)) continue;
    const stat = readStat(pid, procDir);
    if (stat === undefined || stat.state === "Z" || stat.state === "X") continue;
    if (options.pgid !== undefined && stat.pgrp === options.pgid) continue;
    if (options.sinceTicks !== undefined && stat.startTime < options.sinceTicks) continue;
    const marker = carriesMarker(pid, markers, procDir);
    if (marker === undefined) continue;
    found.push({ pid, startTime: stat.startTime, command: commandLine(pid, procDir), marker, tty: stat.tty });
  }
  return found.sort((a, b) => a.startTime - b.startTime || a.pid - b.pid);
}

/**
 * The processes of one call that escaped its process group and are still running. `sinceTicks`
 * (the start time of the call's shell, see `startTicksOf`) and `window` (see `openPidWindow`)
 * narrow what is read; without them every process of ours is looked at.
 */
export function findEscapedProcesses(marker: string, options: ScanOptions = {}): EscapedProcess[] {
  return scan(new Set([marker]), options).map(({ pid, startTime, command }) => ({ pid, startTime, command }));
}

/** Start time of a process in clock ticks since boot; falls back to zero's own (a safe lower bound). */
export function startTicksOf(pid: number | undefined, procDir = "/proc"): number | undefined {
  return (pid !== undefined ? readStat(pid, procDir)?.startTime : undefined) ?? readStat("self", procDir)?.startTime;
}

/**
 * One call's watch: the marker for its environment; `started` right after the spawn (before any
 * await); `finish` after the group was terminated: the escaped processes, already tracked for the
 * kill at exit.
 */
export function watchEscapes(procDir = "/proc") {
  const marker = newRunMarker();
  let sinceTicks: number | undefined;
  let window: PidWindow | undefined;
  return {
    marker,
    env: { [RUN_MARKER_NAME]: marker } as Record<string, string>,
    started(shellPid: number | undefined): void {
      if (!canScanProcesses(procDir)) return;
      // The shell is at worst an unreaped zombie here, so its start time is readable.
      sinceTicks = startTicksOf(shellPid, procDir);
      window = openPidWindow(shellPid, procDir);
    },
    finish(pgid: number): EscapedProcess[] {
      const escaped = findEscapedProcesses(marker, { pgid, sinceTicks, window, procDir });
      trackEscaped(marker, escaped, sinceTicks);
      return escaped;
    },
  };
}

/** The note for the tool result: how many, which (bounded), and what happens to them. */
export function describeEscaped(processes: readonly EscapedProcess[]): string {
  if (processes.length === 0) return "";
  const count = processes.length;
  const listed = processes.slice(0, ESCAPED_LISTED).map((p) => `pid ${p.pid} \`${p.command}\``);
  const more = count > ESCAPED_LISTED ? ` and ${count - ESCAPED_LISTED} more` : "";
  const subject = count === 1 ? "1 process escaped the command's process group and is still running" : `${count} processes escaped the command's process group and are still running`;
  const pids = processes.slice(0, ESCAPED_LISTED).map((p) => p.pid).join(" ");
  return `note: ${subject}: ${listed.join(", ")}${more}. zero terminates ${count === 1 ? "it" : "them"} when it exits; \`kill ${pids}\` stops ${count === 1 ? "it" : "them"} sooner.`;
}

/** Remembers escaped processes of a call for `killEscapedProcesses` and installs the exit handler. */
export function trackEscaped(marker: string, processes: readonly EscapedProcess[], sinceTicks: number | undefined): void {
  if (processes.length === 0) return;
  const since = Math.min(sinceTicks ?? Number.POSITIVE_INFINITY, ...processes.map((p) => p.startTime));
  trackedMarkers.set(marker, Math.min(trackedMarkers.get(marker) ?? since, since));
  for (const p of processes) {
    if (tracked.size >= ESCAPED_TRACKED && !tracked.has(p.pid)) break; // the marker rescan still finds the rest
    tracked.set(p.pid, { pid: p.pid, startTime: p.startTime, marker });
  }
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on("exit", () => {
      try {
        killEscapedProcesses();
      } catch {} // exiting anyway
    });
  }
}

/** Pids currently remembered (for tests and diagnostics). */
export function trackedEscapedPids(): number[] {
  return [...tracked.keys()];
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Still the process we recorded: same pid, same start time, still carrying its call's marker. */
function stillMatches(entry: Tracked, procDir: string): boolean {
  const stat = readStat(entry.pid, procDir);
  if (stat === undefined || stat.state === "Z" || stat.state === "X" || stat.startTime !== entry.startTime) return false;
  return carriesMarker(entry.pid, new Set([entry.marker]), procDir) !== undefined;
}

/**
 * Terminates the escaped processes recorded so far, synchronously and bounded (one /proc scan,
 * SIGTERM, up to `graceMs`, SIGKILL): those whose pid, start time and marker still match, and any
 * live process carrying one of those calls' markers. Returns the pids signalled. Safe to call more
 * than once; without recorded escapes it does nothing and costs nothing.
 */
export function killEscapedProcesses(options: { graceMs?: number; procDir?: string } = {}): number[] {
  const procDir = options.procDir ?? "/proc";
  if (tracked.size === 0 && trackedMarkers.size === 0) return [];
  const targets = new Map<number, Tracked>();
  for (const entry of tracked.values()) if (stillMatches(entry, procDir)) targets.set(entry.pid, entry);
  const since = Math.min(...trackedMarkers.values());
  const carrying = scan(new Set(trackedMarkers.keys()), { sinceTicks: since, procDir });
  for (const p of carrying) {
    if (!targets.has(p.pid)) targets.set(p.pid, { pid: p.pid, startTime: p.startTime, marker: p.marker });
  }
  // A process with a terminal was not started by a command of ours (those never have one): a
  // person is using what that command left running (a tmux server's pane, an editor daemon's
  // client). That whole call's tree is left alone rather than killed under them.
  const inUse = new Set(carrying.filter((p) => p.tty !== 0).map((p) => p.marker));
  for (const [pid, entry] of targets) if (inUse.has(entry.marker)) targets.delete(pid);
  tracked.clear();
  trackedMarkers.clear();
  const signal = (entry: Tracked, name: NodeJS.Signals): boolean => {
    try {
      process.kill(entry.pid, name);
      return true;
    } catch {
      return false;
    }
  };
  const signalled = [...targets.values()].filter((entry) => signal(entry, "SIGTERM"));
  const deadline = performance.now() + (options.graceMs ?? ESCAPED_KILL_GRACE_MS);
  let alive = signalled;
  while (alive.length > 0 && performance.now() < deadline) {
    sleepSync(10);
    alive = alive.filter((entry) => stillMatches(entry, procDir));
  }
  // Checked again right before SIGKILL: a pid that was reused meanwhile is not touched.
  for (const entry of alive) if (stillMatches(entry, procDir)) signal(entry, "SIGKILL");
  return signalled.map((entry) => entry.pid);
}
