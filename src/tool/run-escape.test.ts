import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ESCAPED_COMMAND_CHARS,
  RUN_MARKER_NAME,
  describeEscaped,
  findEscapedProcesses,
  killEscapedProcesses,
  openPidWindow,
  readStat,
  trackEscaped,
  watchEscapes,
} from "./run-escape.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "zero-run-escape-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const MARKER = "a".repeat(32);
const OTHER = "b".repeat(32);

type FakeProcess = { pid: number; pgrp?: number; state?: string; start?: number; marker?: string; comm?: string; cmdline?: string };

/** A /proc look-alike: our own pid in self/, the fork counter, the last pid, pid_max, processes. */
function fakeProc(options: { forks: number; lastPid: number; pidMax?: number; selfPid?: number; processes: FakeProcess[] }): string {
  const dir = mkdtempSync(join(base, "proc-"));
  const stat = (p: FakeProcess) => `${p.pid} (${p.comm ?? "sleep"}) ${p.state ?? "S"} 1 ${p.pgrp ?? p.pid} ${p.pgrp ?? p.pid} 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 ${p.start ?? 5000} 1000 100\n`;
  mkdirSync(join(dir, "self"));
  writeFileSync(join(dir, "self", "stat"), stat({ pid: options.selfPid ?? process.pid, start: 100 }));
  writeFileSync(join(dir, "stat"), `cpu  1 2 3 4\nctxt 9\nbtime 1\nprocesses ${options.forks}\nprocs_running 1\n`);
  writeFileSync(join(dir, "loadavg"), `0.00 0.01 0.05 1/90 ${options.lastPid}\n`);
  mkdirSync(join(dir, "sys", "kernel"), { recursive: true });
  writeFileSync(join(dir, "sys", "kernel", "pid_max"), `${options.pidMax ?? 32768}\n`);
  for (const p of options.processes) {
    mkdirSync(join(dir, String(p.pid)));
    writeFileSync(join(dir, String(p.pid), "stat"), stat(p));
    writeFileSync(join(dir, String(p.pid), "environ"), `PATH=/bin\0${p.marker ? `${RUN_MARKER_NAME}=${p.marker}\0` : ""}HOME=/h\0`);
    writeFileSync(join(dir, String(p.pid), "cmdline"), p.cmdline ?? `sleep\0${p.pid}\0`);
  }
  mkdirSync(join(dir, "sys", "fs"), { recursive: true }); // a non-pid entry
  return dir;
}

const pids = (found: Array<{ pid: number }>) => found.map((p) => p.pid).sort((a, b) => a - b);

describe.if(process.platform === "linux")("the scan", () => {
  const processes: FakeProcess[] = [
    { pid: 100, marker: MARKER }, // below the shell's pid
    { pid: 250, marker: MARKER }, // after it
    { pid: 260, marker: OTHER }, // another call's
    { pid: 270, marker: MARKER, pgrp: 200 }, // still in the call's group (being killed)
    { pid: 280, marker: MARKER, state: "Z" }, // a zombie
    { pid: 290 }, // no marker
  ];

  test("only pids allocated since the shell, when the fork counter rules out a wrap", () => {
    const before = fakeProc({ forks: 1000, lastPid: 200, processes });
    const window = openPidWindow(200, before);
    expect(window).toEqual({ shellPid: 200, forks: 1000 });
    // The counter and last pid moved on as the command ran (a fresh look-alike with the new values).
    const after = fakeProc({ forks: 1100, lastPid: 300, processes });
    expect(pids(findEscapedProcesses(MARKER, { pgid: 200, window, procDir: after }))).toEqual([250]);
    // Without a window every pid is read: 100 carries the marker too.
    expect(pids(findEscapedProcesses(MARKER, { pgid: 200, procDir: after }))).toEqual([100, 250]);
  });

  test("pids that wrapped around pid_max are still candidates", () => {
    const after = fakeProc({ forks: 1100, lastPid: 150, processes });
    expect(pids(findEscapedProcesses(MARKER, { pgid: 200, window: { shellPid: 200, forks: 1000 }, procDir: after }))).toEqual([100, 250]);
  });

  test("when pids may have gone round a full lap, every pid is read", () => {
    const after = fakeProc({ forks: 1000 + 16_384, lastPid: 210, processes });
    expect(pids(findEscapedProcesses(MARKER, { pgid: 200, window: { shellPid: 200, forks: 1000 }, procDir: after }))).toEqual([100, 250]);
  });

  test("a /proc of another pid namespace gives no window (every pid is read)", () => {
    const foreign = fakeProc({ forks: 1000, lastPid: 300, selfPid: process.pid + 1, processes });
    expect(openPidWindow(200, foreign)).toBeUndefined();
  });

  test("processes started before the shell are skipped by start time", () => {
    const dir = fakeProc({ forks: 1, lastPid: 1, processes: [{ pid: 250, marker: MARKER, start: 4000 }, { pid: 251, marker: MARKER, start: 6000 }] });
    expect(pids(findEscapedProcesses(MARKER, { sinceTicks: 5000, procDir: dir }))).toEqual([251]);
  });

  test("stat is read after the last ')' and command lines are bounded and escaped", () => {
    const long = "x".repeat(ESCAPED_COMMAND_CHARS + 50);
    const dir = fakeProc({
      forks: 1,
      lastPid: 1,
      processes: [
        { pid: 300, marker: MARKER, comm: "a) Z 1 (b", pgrp: 300, start: 7000, cmdline: "evil\0`rm`\0\u001b]0;title\u0007\0" },
        { pid: 301, marker: MARKER, cmdline: `${long}\0` },
      ],
    });
    expect(readStat(300, dir)).toEqual({ state: "S", pgrp: 300, tty: 0, startTime: 7000 });
    const found = findEscapedProcesses(MARKER, { procDir: dir });
    expect(found[0]).toEqual({ pid: 301, startTime: 5000, command: `${"x".repeat(ESCAPED_COMMAND_CHARS)}…` });
    expect(found[1]).toEqual({ pid: 300, startTime: 7000, command: "evil 'rm' \\x1b]0;title\\x07" });
  });

  test("no /proc: nothing is found and nothing breaks", () => {
    const missing = join(base, "no-proc");
    expect(findEscapedProcesses(MARKER, { procDir: missing })).toEqual([]);
    expect(openPidWindow(200, missing)).toBeUndefined();
    const watch = watchEscapes(missing);
    watch.started(200);
    expect(watch.finish(200)).toEqual([]);
    expect(watch.env).toEqual({ [RUN_MARKER_NAME]: watch.marker });
  });
});

describe("the note", () => {
  test("one process, several, and more than are listed", () => {
    expect(describeEscaped([])).toBe("");
    expect(describeEscaped([{ pid: 7, startTime: 1, command: "sleep 100" }])).toBe(
      "note: 1 process escaped the command's process group and is still running: pid 7 `sleep 100`. zero terminates it when it exits; `kill 7` stops it sooner.",
    );
    const many = Array.from({ length: 7 }, (_, i) => ({ pid: 10 + i, startTime: 1, command: `d${i}` }));
    expect(describeEscaped(many)).toBe(
      "note: 7 processes escaped the command's process group and are still running: pid 10 `d0`, pid 11 `d1`, pid 12 `d2`, pid 13 `d3`, pid 14 `d4` and 2 more. zero terminates them when it exits; `kill 10 11 12 13 14` stops them sooner.",
    );
  });
});

describe.if(process.platform === "linux")("the kill", () => {
  beforeEach(() => {
    killEscapedProcesses({ graceMs: 0 }); // whatever earlier tests left tracked
  });

  test("a process is killed only while its pid, start time and marker all match", async () => {
    // Same pid and start time as recorded, but without the marker: a reused pid must not be hit.
    const stranger = spawn("sleep", ["30"], { stdio: "ignore", env: { PATH: process.env.PATH } });
    // Carries the marker, but the recorded start time is wrong: found again by its marker instead.
    const marked = spawn("sleep", ["30"], { stdio: "ignore", env: { PATH: process.env.PATH, [RUN_MARKER_NAME]: MARKER } });
    try {
      await Bun.sleep(100);
      const strangerStat = readStat(stranger.pid as number);
      const markedStat = readStat(marked.pid as number);
      if (strangerStat === undefined || markedStat === undefined) throw new Error("no stat");
      trackEscaped(MARKER, [{ pid: stranger.pid as number, startTime: strangerStat.startTime, command: "sleep 30" }], strangerStat.startTime);
      trackEscaped(MARKER, [{ pid: marked.pid as number, startTime: markedStat.startTime + 1, command: "sleep 30" }], markedStat.startTime);
      const exited = new Promise((resolve) => marked.once("exit", resolve));
      expect(killEscapedProcesses()).toEqual([marked.pid as number]);
      await exited;
      expect(readStat(stranger.pid as number)?.state).not.toBe("Z");
      expect(stranger.exitCode).toBeNull();
    } finally {
      stranger.kill("SIGKILL");
      marked.kill("SIGKILL");
    }
  });

  test("a call whose tree has a process with a terminal (a person is using it) is left alone", async () => {
    // An escaped "server", and a process of the same tree that got a terminal (as a tmux pane would).
    const server = spawn("sleep", ["30"], { stdio: "ignore", env: { PATH: process.env.PATH, [RUN_MARKER_NAME]: MARKER } });
    const pane = spawn("script", ["-qc", "sleep 30", "/dev/null"], { stdio: "ignore", env: { PATH: process.env.PATH, [RUN_MARKER_NAME]: MARKER } });
    try {
      await Bun.sleep(300);
      const serverStat = readStat(server.pid as number);
      if (serverStat === undefined) throw new Error("no stat");
      trackEscaped(MARKER, [{ pid: server.pid as number, startTime: serverStat.startTime, command: "sleep 30" }], serverStat.startTime);
      expect(killEscapedProcesses({ graceMs: 0 })).toEqual([]);
      expect(server.exitCode).toBeNull();
    } finally {
      server.kill("SIGKILL");
      pane.kill("SIGKILL");
    }
  });

  test("SIGKILL follows for a process that ignores SIGTERM, within the grace", async () => {
    const stubborn = spawn("sh", ["-c", "trap '' TERM; sleep 30 & wait"], { stdio: "ignore", env: { PATH: process.env.PATH, [RUN_MARKER_NAME]: OTHER } });
    try {
      await Bun.sleep(150);
      const stat = readStat(stubborn.pid as number);
      if (stat === undefined) throw new Error("no stat");
      trackEscaped(OTHER, [{ pid: stubborn.pid as number, startTime: stat.startTime, command: "sh" }], stat.startTime);
      const exited = new Promise((resolve) => stubborn.once("exit", (_code, signal) => resolve(signal)));
      const started = performance.now();
      const killed = killEscapedProcesses({ graceMs: 200 });
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(killed).toContain(stubborn.pid as number); // and its sleep child, which carries the marker too
      expect(killed.length).toBe(2);
      expect(await exited).toBe("SIGKILL");
    } finally {
      stubborn.kill("SIGKILL");
    }
  });
});
