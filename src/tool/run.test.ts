import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Roots, createRoots } from "../security/roots.ts";
import { type ArtifactStore, MAX_ARTIFACT_BYTES, createArtifactStore, parseArtifactUri } from "../store/artifacts.ts";
import { MAX_OUTPUT_CHARS, type ToolContext, type ToolResult } from "./define.ts";
import {
  NON_INTERACTIVE_ENV,
  RUN_KILL_GRACE_MS,
  RUN_MARKER_NAME,
  RUN_OUTPUT_HEAD_CHARS,
  RUN_OUTPUT_PROGRESS_MAX_CHARS,
  RUN_OUTPUT_TAIL_CHARS,
  batchSshCommand,
  commandEnvironment,
  createOutputCollector,
  effectiveTimeout,
  killEscapedProcesses,
  runTool,
} from "./run.ts";
import { makeToolContext } from "../../test/support/tool-context.ts";

// base/ws/          the workspace (with sub/ and a file)
// base/extra/       an extra read-write root
// base/ro/          a read-only root
// base/outside/     not a root
let base = "";
let ws = "";
let roots: Roots;
let artifacts: ArtifactStore;

/** A marker unique to this test process, so pgrep never sees another run's processes. */
let markerCount = 0;
function marker(): string {
  markerCount += 1;
  return `31.${process.pid}${markerCount}`;
}

function processesMatching(pattern: string): number[] {
  const result = Bun.spawnSync(["pgrep", "-f", pattern]);
  return new TextDecoder()
    .decode(result.stdout)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(Number);
}

const baseEnv = (): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  LANG: "C.UTF-8",
  TMPDIR: join(base, "tmp"),
});

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({ roots, artifactsDir: join(base, "artifacts"), env: baseEnv(), artifacts, ...overrides });
}

async function run(raw: unknown, overrides: Partial<ToolContext> = {}): Promise<ToolResult> {
  const prepared = runTool.prepare(raw);
  if (!prepared.ok) throw new Error(`prepare failed: ${prepared.error}`);
  expect(prepared.classification).toMatchObject({ risk: "execute", operation: "execute" });
  return runTool.run(prepared.input, context(overrides));
}

function completed(result: ToolResult): string {
  if (result.status !== "completed") throw new Error(`expected completed, got ${result.status}: ${result.output}`);
  return result.output;
}

function failed(result: ToolResult): string {
  if (result.status !== "failed") throw new Error(`expected failed, got ${result.status}: ${result.output}`);
  return result.output;
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-run-")));
  ws = join(base, "ws");
  for (const dir of ["ws/sub", "extra", "ro", "outside", "tmp"]) mkdirSync(join(base, dir), { recursive: true });
  writeFileSync(join(ws, "file.txt"), "x");
  roots = createRoots({ workspace: ws, extraDirs: [join(base, "extra")], readOnlyDirs: [join(base, "ro")] });
  artifacts = createArtifactStore(join(base, "artifacts"));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

describe("run: results", () => {
  test("exit code 0 with output", async () => {
    expect(completed(await run({ command: "echo hello" }))).toBe("exit code 0\nhello\n");
  });

  test("a non-zero exit is a completed result with stdout and stderr", async () => {
    const output = completed(await run({ command: "echo out; echo err >&2; exit 3" }));
    expect(output.split("\n")[0]).toBe("exit code 3");
    expect(output).toContain("out\n");
    expect(output).toContain("err\n");
  });

  test("stdout and stderr keep their arrival order", async () => {
    const output = completed(await run({ command: "echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c" }));
    expect(output).toBe("exit code 0\na\nb\nc\n");
  });

  test("no output is said so", async () => {
    expect(completed(await run({ command: "true" }))).toBe("exit code 0\n(no output)");
  });

  test("a shell killed by a signal", async () => {
    expect(completed(await run({ command: "kill -KILL $$" }))).toStartWith("killed by signal SIGKILL");
  });

  test("UTF-8 split across writes is decoded whole", async () => {
    expect(completed(await run({ command: "printf '\\303'; sleep 0.1; printf '\\251\\n'" }))).toBe("exit code 0\né\n");
  });

  test("stdin is closed: cat and read return at once", async () => {
    const started = performance.now();
    expect(completed(await run({ command: "cat" }))).toBe("exit code 0\n(no output)");
    expect(completed(await run({ command: 'read line; echo "read=$?"' }))).toBe("exit code 0\nread=1\n");
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  test("a non-login shell: /bin/sh with $0 = /bin/sh", async () => {
    expect(completed(await run({ command: 'echo "$0"' }))).toBe("exit code 0\n/bin/sh\n");
  });
});

describe("run: cwd", () => {
  test("defaults to the workspace", async () => {
    expect(completed(await run({ command: "pwd" }))).toBe(`exit code 0\n${ws}\n`);
  });

  test("relative to the workspace, with PWD set", async () => {
    expect(completed(await run({ command: 'pwd; echo "$PWD"', cwd: "sub" }))).toBe(`exit code 0\n${ws}/sub\n${ws}/sub\n`);
  });

  test("absolute inside the workspace and inside an extra root", async () => {
    expect(completed(await run({ command: "pwd", cwd: join(ws, "sub") }))).toBe(`exit code 0\n${ws}/sub\n`);
    expect(completed(await run({ command: "pwd", cwd: join(base, "extra") }))).toBe(`exit code 0\n${base}/extra\n`);
  });

  test("outside the roots is refused before anything runs", async () => {
    const flag = join(base, "outside", "ran");
    const output = failed(await run({ command: `touch ${flag}`, cwd: join(base, "outside") }));
    expect(output).toContain("outside the allowed roots");
    expect(() => readdirSync(join(base, "outside"))).not.toThrow();
    expect(readdirSync(join(base, "outside"))).toEqual([]);
    expect(failed(await run({ command: "pwd", cwd: "../outside" }))).toContain("outside the allowed roots");
  });

  test("a read-only root is refused (a command may write where it starts)", async () => {
    expect(failed(await run({ command: "pwd", cwd: join(base, "ro") }))).toContain("read-only root");
  });

  test("missing or not a directory", async () => {
    expect(failed(await run({ command: "pwd", cwd: "nope" }))).toContain("does not exist");
    expect(failed(await run({ command: "pwd", cwd: "file.txt" }))).toContain("not a directory");
  });
});

describe("run: environment", () => {
  test("provider keys and zero's variables stay behind; PATH, HOME, LANG are there", async () => {
    const env = {
      ...baseEnv(),
      OPENAI_API_KEY: "sk-secret-openai",
      ANTHROPIC_API_KEY: "sk-ant-secret",
      GITHUB_TOKEN: "ghp_secret",
      ZERO_CLI_X: "zero-own",
      DEVOUT_Y: "devout-own",
      SOME_RANDOM_VAR: "random",
    };
    const output = completed(await run({ command: "env" }, { env }));
    const names = output.split("\n").slice(1).map((line) => line.split("=")[0]);
    for (const name of ["PATH", "HOME", "LANG", "PWD"]) expect(names).toContain(name);
    expect(output).toContain("ZERO_CLI_TOOL=run");
    for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "ZERO_CLI_X", "DEVOUT_Y", "SOME_RANDOM_VAR"]) {
      expect(names).not.toContain(name);
    }
    for (const value of ["secret", "zero-own", "devout-own", "random"]) expect(output).not.toContain(value);
  });

  test("commandEnvironment: an allowlist, secret-like names dropped even when allowlisted", () => {
    const result = commandEnvironment({
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      LC_SECRET_THING: "x",
      XDG_CONFIG_HOME: "/home/u/.config",
      XDG_RUNTIME_DIR: "/run/user/1",
      XDG_SESSION_ID: "3",
      TERM: "xterm",
      NO_COLOR: "1",
      CI: "true",
      UNSET: undefined,
      WITH_NUL: "a\0b",
      SSH_AUTH_SOCK: "/tmp/agent.sock",
      npm_config_global: "true",
      npm_config__authToken: "t",
      AWS_SECRET_ACCESS_KEY: "s",
      DB_PASSWORD: "p",
      GOOGLE_APPLICATION_CREDENTIALS: "/k.json",
      ZERO_CLI_CONFIG: "/c.json",
      DEVOUT_MODEL: "m",
      HTTPS_PROXY: "http://proxy:3128",
      http_proxy: "http://user:pass@proxy:3128",
      NO_PROXY: "localhost,.internal",
      ZERO_CLI_TOOL: "spoofed",
      // The user's interactive programs never reach a command.
      EDITOR: "vim",
      VISUAL: "code --wait",
      GIT_EDITOR: "nano",
      PAGER: "less",
      GIT_PAGER: "delta",
      GIT_ASKPASS: "/usr/lib/ssh/askpass",
      SSH_ASKPASS: "/usr/lib/ssh/askpass",
      DISPLAY: ":0",
      GIT_TERMINAL_PROMPT: "1",
      GIT_SSH_COMMAND: "ssh -i /home/u/.ssh/deploy",
    });
    expect(result).toEqual({
      ...NON_INTERACTIVE_ENV,
      GIT_SSH_COMMAND: "ssh -i /home/u/.ssh/deploy -o BatchMode=yes",
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C",
      XDG_CONFIG_HOME: "/home/u/.config",
      XDG_RUNTIME_DIR: "/run/user/1",
      TERM: "xterm",
      NO_COLOR: "1",
      CI: "true",
      HTTPS_PROXY: "http://proxy:3128",
      NO_PROXY: "localhost,.internal",
      ZERO_CLI_TOOL: "run",
    });
  });

  test("effectiveTimeout: a per-call timeout may only shorten the configured one", () => {
    expect(effectiveTimeout(300, 20_000)).toBe(300);
    expect(effectiveTimeout(undefined, 120_000)).toBe(120_000);
    expect(effectiveTimeout(500_000, 120_000)).toBe(120_000);
    expect(effectiveTimeout(undefined, 1_000)).toBe(1_000);
    expect(effectiveTimeout(5_000, 1_000)).toBe(1_000);
  });
});

describe("run: nothing waits for a person", () => {
  /** An executable that takes `seconds` and leaves a trace, to stand in for an editor or askpass. */
  function slowProgram(name: string, seconds: number): string {
    const path = join(base, name);
    writeFileSync(path, `#!/bin/sh\necho "${name} ran" >> ${join(base, `${name}.log`)}\nsleep ${seconds}\n`);
    chmodSync(path, 0o755);
    return path;
  }

  /** A HOME whose git config names `editor` and `askPass` too (GIT_EDITOR/GIT_ASKPASS must win). */
  function gitHome(editor: string, askPass: string): string {
    const home = mkdtempSync(join(base, "home-"));
    writeFileSync(join(home, ".gitconfig"), `[user]\n\tname = t\n\temail = t@example.com\n[core]\n\teditor = ${editor}\n\taskPass = ${askPass}\n\tpager = ${editor}\n[sequence]\n\teditor = ${editor}\n`);
    return home;
  }

  test("editors, pagers and prompts are set to things that end at once", () => {
    expect(NON_INTERACTIVE_ENV).toEqual({
      EDITOR: "false",
      VISUAL: "false",
      GIT_EDITOR: "false",
      GIT_SEQUENCE_EDITOR: "false",
      PAGER: "cat",
      GIT_PAGER: "cat",
      MANPAGER: "cat",
      SYSTEMD_PAGER: "cat",
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "",
      SSH_ASKPASS_REQUIRE: "never",
      GCM_INTERACTIVE: "never",
      DEBIAN_FRONTEND: "noninteractive",
    });
    expect(commandEnvironment({}).CI).toBeUndefined(); // CI=true changes too much to set it
  });

  test("a user's GIT_SSH_COMMAND keeps working, in batch mode; a wrapper is not passed", () => {
    expect(batchSshCommand("ssh -i ~/.ssh/k")).toBe("ssh -i ~/.ssh/k -o BatchMode=yes");
    expect(batchSshCommand("/usr/bin/ssh -F cfg ")).toBe("/usr/bin/ssh -F cfg -o BatchMode=yes");
    expect(batchSshCommand("ssh -o BatchMode=no")).toBe("ssh -o BatchMode=no");
    expect(batchSshCommand("sshpass -p hunter2 ssh")).toBeUndefined();
    expect(batchSshCommand("/opt/bin/my-ssh-wrapper")).toBeUndefined();
    expect(commandEnvironment({ GIT_SSH_COMMAND: "sshpass -p hunter2 ssh" }).GIT_SSH_COMMAND).toBeUndefined();
  });

  test("git commit without -m fails at once with git's error, whatever editor the user set", async () => {
    const editor = slowProgram("slow-editor", 30);
    const repo = mkdtempSync(join(ws, "repo-"));
    const env = { ...baseEnv(), HOME: gitHome(editor, editor), EDITOR: editor, VISUAL: editor, GIT_EDITOR: editor, GIT_SEQUENCE_EDITOR: editor };
    try {
      completed(await run({ command: "git init -q && echo x > f && git add f", cwd: repo }, { env }));
      const started = performance.now();
      const output = completed(await run({ command: "git commit", cwd: repo, timeoutMs: 15_000 }, { env }));
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(output.split("\n")[0]).toBe("exit code 1");
      expect(output).toContain("There was a problem with the editor 'false'");
      expect(output).toContain("Please supply the message using either -m or -F option.");
      // Interactive rebase and an annotated tag without a message: the same.
      completed(await run({ command: "git commit -q -m one && echo y >> f && git commit -qam two", cwd: repo }, { env }));
      const rebase = completed(await run({ command: "git rebase -i HEAD~1", cwd: repo, timeoutMs: 15_000 }, { env }));
      expect(rebase).toContain("There was a problem with the editor 'false'");
      const tag = completed(await run({ command: "git tag -a v1", cwd: repo, timeoutMs: 15_000 }, { env }));
      expect(tag).toContain("There was a problem with the editor 'false'");
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(readdirSync(base)).not.toContain("slow-editor.log"); // never started
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  test("git asks for no credentials: a 401 fails at once, core.askPass and the terminal are not used", async () => {
    const askPass = slowProgram("slow-askpass", 30);
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response("auth", { status: 401, headers: { "WWW-Authenticate": 'Basic realm="x"' } }),
    });
    try {
      const env = { ...baseEnv(), HOME: gitHome("false", askPass), SSH_ASKPASS: askPass, GIT_ASKPASS: askPass, NO_PROXY: "*" };
      const started = performance.now();
      const output = completed(await run({ command: `git ls-remote http://127.0.0.1:${server.port}/repo.git`, timeoutMs: 15_000 }, { env }));
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(output.split("\n")[0]).toBe("exit code 128");
      expect(output).toContain("terminal prompts disabled");
      expect(readdirSync(base)).not.toContain("slow-askpass.log");
    } finally {
      server.stop(true);
    }
  });

  test("no terminal: stdin is not one and /dev/tty cannot be opened (its own session)", async () => {
    const output = completed(await run({ command: '[ -t 0 ] || echo stdin-not-a-tty; (exec </dev/tty) 2>/dev/null || echo no-controlling-terminal; ps -o sid= -p $$ | tr -d " "; echo "$$"' }));
    const [status, stdin, tty, sid, pid] = output.trimEnd().split("\n");
    expect([status, stdin, tty]).toEqual(["exit code 0", "stdin-not-a-tty", "no-controlling-terminal"]);
    expect(sid).toBe(pid); // the shell leads its own session: no controlling terminal to inherit
  });

  test("pagers print instead of waiting", async () => {
    const output = completed(await run({ command: 'printf "a\\nb\\n" > p.txt; $PAGER p.txt; echo "$GIT_PAGER $MANPAGER"; rm p.txt', timeoutMs: 10_000 }));
    expect(output).toBe("exit code 0\na\nb\ncat cat\n");
  });
});

describe("run: stopping the process group", () => {
  test("a timeout terminates the group and says so", async () => {
    const mark = marker();
    const started = performance.now();
    const output = completed(await run({ command: `echo before; sleep ${mark}; echo after`, timeoutMs: 300 }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(output).toBe("timed out after 300 ms; the process group was terminated\nbefore\n");
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("grandchildren go too, and SIGKILL follows for what ignores SIGTERM", async () => {
    const mark = marker();
    const started = performance.now();
    const output = completed(await run({ command: `trap '' TERM; sh -c 'sleep ${mark}' & sleep ${mark}`, timeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(output.split("\n")[0]).toBe("timed out after 300 ms; the process group was terminated");
    expect(elapsed).toBeGreaterThanOrEqual(RUN_KILL_GRACE_MS); // the grace was waited out
    expect(elapsed).toBeLessThan(RUN_KILL_GRACE_MS + 5_000);
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("cancellation terminates the group", async () => {
    const mark = marker();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = performance.now();
    const result = await run({ command: `sleep ${mark}` }, { signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.status).toBe("cancelled");
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("the contract's own timeout also leaves nothing behind", async () => {
    const mark = marker();
    const result = await run({ command: `echo before; sleep ${mark}` }, { timeoutMs: 400 });
    const text = failed(result);
    // The tool still reports what the command printed, under a timeout first line.
    expect(text).toStartWith("timed out after 400 ms; the process group was terminated");
    expect(text).toContain("before");
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("a background child does not hold the call, and is terminated", async () => {
    const mark = marker();
    const started = performance.now();
    const output = completed(await run({ command: `sleep ${mark} & echo started` }));
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(output).toBe("exit code 0; processes it left running in the background were terminated\nstarted\n");
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("a process that escaped the group (setsid) holding the pipe does not hang the call", async () => {
    const mark = marker();
    const started = performance.now();
    try {
      const output = completed(await run({ command: `setsid sleep ${mark} & echo started` }));
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(output).toContain("started\n");
    } finally {
      // It survives the call (reported, see "escaped processes"), so the test ends it (by pid).
      for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
  });
});

describe("run: escaped processes", () => {
  const isLinux = process.platform === "linux";

  /** The pids a result names in its escape note. */
  function reportedPids(output: string): number[] {
    const note = output.split("\n").find((line) => line.startsWith("note: ")) ?? "";
    return [...note.matchAll(/pid (\d+) `/g)].map((m) => Number(m[1]));
  }

  async function gone(pids: number[]): Promise<boolean> {
    for (let i = 0; i < 100 && pids.some((pid) => alive(pid)); i++) await Bun.sleep(20);
    return !pids.some((pid) => alive(pid));
  }

  /** Alive and not a zombie. */
  function alive(pid: number): boolean {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      return state !== "Z" && state !== "X";
    } catch {
      return false;
    }
  }

  // Each command waits a moment after starting its escapee: a shell that exits at once would find
  // it still in the group (not yet through setsid), and the group kill would end it first.
  test.if(isLinux)("setsid … &: reported with pid and command line; killEscapedProcesses ends it", async () => {
    const mark = marker();
    try {
      const output = completed(await run({ command: `setsid sleep ${mark} & sleep 0.2; echo started` }));
      const pids = processesMatching(`sleep ${mark}`);
      expect(pids).toHaveLength(1);
      const lines = output.split("\n");
      expect(lines[0]).toBe("exit code 0");
      expect(lines[1]).toBe(
        `note: 1 process escaped the command's process group and is still running: pid ${pids[0]} \`sleep ${mark}\`. zero terminates it when it exits; \`kill ${pids[0]}\` stops it sooner.`,
      );
      expect(lines.slice(2).join("\n")).toBe("started\n");
      const killed = killEscapedProcesses();
      expect(killed).toContain(pids[0]!);
      expect(await gone(pids)).toBe(true);
      expect(killEscapedProcesses()).toEqual([]); // nothing left to do
    } finally {
      for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
  });

  test.if(isLinux)("the other ways out: nohup with redirections, job control, a double fork", async () => {
    const marks = [marker(), marker(), marker()];
    const commands = [
      `nohup setsid sleep ${marks[0]} >/dev/null 2>&1 & sleep 0.2`, // holds no pipe of ours
      `perl -e 'setpgrp(0, 0); exec "sleep", @ARGV' ${marks[1]} >/dev/null 2>&1 & sleep 0.2`, // its own process group, same session
      `(setsid sh -c 'sleep ${marks[2]} >/dev/null 2>&1 &' &); sleep 0.2`, // the middle process exits
    ];
    try {
      for (const [i, command] of commands.entries()) {
        const output = completed(await run({ command }));
        const pids = processesMatching(`sleep ${marks[i]}`);
        expect(pids).toHaveLength(1);
        expect(reportedPids(output)).toEqual(pids);
      }
      const all = marks.flatMap((mark) => processesMatching(`sleep ${mark}`));
      expect(killEscapedProcesses().sort()).toEqual(all.sort());
      expect(await gone(all)).toBe(true);
    } finally {
      for (const mark of marks) for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
  });

  test.if(isLinux)("children an escaped process starts after the call are ended with it (same marker)", async () => {
    const [parent, child] = [marker(), marker()];
    try {
      const output = completed(await run({ command: `setsid sh -c 'sleep 0.3; sleep ${child} & sleep ${parent}' >/dev/null 2>&1 & sleep 0.2` }));
      const reported = reportedPids(output); // the sh and its `sleep 0.3`: what existed at the scan
      expect(reported.length).toBeGreaterThan(0);
      await Bun.sleep(600);
      const pids = [...processesMatching(`^sleep ${parent}`), ...processesMatching(`^sleep ${child}`)];
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(reported).not.toContain(pid); // started after the scan
      const killed = killEscapedProcesses();
      for (const pid of pids) expect(killed).toContain(pid);
      expect(await gone(pids)).toBe(true);
    } finally {
      for (const mark of [parent, child]) for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
  });

  test.if(isLinux)("a process that clears its environment is not seen (the documented limit)", async () => {
    const mark = marker();
    try {
      const output = completed(await run({ command: `setsid env -i sleep ${mark} >/dev/null 2>&1 & sleep 0.2` }));
      expect(processesMatching(`sleep ${mark}`)).toHaveLength(1);
      expect(output).toBe("exit code 0\n(no output)");
    } finally {
      for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
  });

  test("normal commands and background children of the group report nothing", async () => {
    expect(completed(await run({ command: "echo hi; sh -c 'echo child'" }))).toBe("exit code 0\nhi\nchild\n");
    const mark = marker();
    expect(completed(await run({ command: `sleep ${mark} & echo started` }))).toBe("exit code 0; processes it left running in the background were terminated\nstarted\n");
    expect(completed(await run({ command: `sleep ${mark}`, timeoutMs: 200 }))).toBe("timed out after 200 ms; the process group was terminated\n(no output)");
    expect(processesMatching(`sleep ${mark}`)).toEqual([]);
  });

  test("the marker is in the command's environment, fresh for every call", async () => {
    const read = async () => completed(await run({ command: `echo "$${RUN_MARKER_NAME}"` })).split("\n")[1] ?? "";
    const [a, b] = [await read(), await read()];
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toMatch(/^[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
  });
});

describe("run: output bounds", () => {
  test("huge output: head and tail for the model, the full output as an artifact", async () => {
    const output = completed(await run({ command: "yes | head -c 50000000" }));
    expect(output.length).toBeLessThan(MAX_OUTPUT_CHARS);
    expect(output).toStartWith("exit code 0\ny\ny\n");
    expect(output).toEndWith("y\ny\n");
    const uri = /artifact:\/\/[0-9a-f]{64}/.exec(output)?.[0] ?? "";
    expect(output).toContain(`(its first ${MAX_ARTIFACT_BYTES} of 50000000 bytes)`);
    const stored = artifacts.get(parseArtifactUri(uri) ?? "");
    expect(stored.length).toBe(MAX_ARTIFACT_BYTES);
    expect(new TextDecoder().decode(stored.subarray(0, 8))).toBe("y\ny\ny\ny\n");
    expect(readdirSync(join(base, "tmp"))).toEqual([]); // the spool file is gone
  });

  test("output at the cap is whole; one character more is cut", async () => {
    const cap = RUN_OUTPUT_HEAD_CHARS + RUN_OUTPUT_TAIL_CHARS;
    const whole = completed(await run({ command: `head -c ${cap} /dev/zero | tr '\\0' a` }));
    expect(whole).toBe(`exit code 0\n${"a".repeat(cap)}`);
    const result = await run({ command: `head -c ${cap + 1} /dev/zero | tr '\\0' a` });
    expect(result.truncated).toBe(true);
    expect(completed(result)).toContain("[1 characters omitted; the full output is artifact://");
  });

  test("the collector stays bounded whatever it is fed, and spools to an unlinked file", () => {
    const temp = mkdtempSync(join(base, "spool-"));
    const collector = createOutputCollector({ headChars: 100, tailChars: 200, spoolLimit: 1_000_000, memoryBytes: 4_096, tempDir: temp });
    const chunk = new Uint8Array(65_536).fill(0x61);
    const text = "a".repeat(65_536);
    for (let i = 0; i < 500; i++) {
      collector.addBytes(chunk);
      collector.addText(text);
      expect(collector.retainedChars()).toBeLessThanOrEqual(100 + 2 * 200 + text.length);
      expect(collector.memoryBytes()).toBeLessThanOrEqual(4_096);
    }
    expect(collector.spooledBytes()).toBe(1_000_000);
    expect(readdirSync(temp)).toEqual([]);
    const { text: out, truncated } = collector.finish(artifacts);
    expect(truncated).toBe(true);
    const sha = parseArtifactUri(/artifact:\/\/[0-9a-f]{64}/.exec(out)?.[0] ?? "") ?? "";
    expect(artifacts.get(sha)).toEqual(new Uint8Array(1_000_000).fill(0x61));
  });

  test("a cut never leaves half a surrogate pair", () => {
    const collector = createOutputCollector({ headChars: 3, tailChars: 2 });
    collector.addText("ab😀cdefg😀h");
    const { text } = collector.finish(artifacts);
    expect(text.startsWith("ab\n")).toBe(true);
    expect(text.endsWith("\nh")).toBe(true);
  });
});

describe("run: progress", () => {
  test("output arrives as progress while the command runs", async () => {
    const messages: { text: string; at: number }[] = [];
    const output = completed(
      await run({ command: "for i in 1 2 3; do echo $i; sleep 0.2; done" }, { progress: (text) => messages.push({ text, at: performance.now() }) }),
    );
    const finished = performance.now();
    expect(output).toBe("exit code 0\n1\n2\n3\n");
    expect(messages.length).toBeGreaterThanOrEqual(2);
    expect(messages[0]?.at ?? finished).toBeLessThan(finished - 200);
    expect(messages.map((m) => m.text).join("")).toBe("1\n2\n3\n");
  });

  test("progress is merged and bounded for a flood", async () => {
    const messages: string[] = [];
    completed(await run({ command: "yes | head -c 20000000" }, { progress: (text) => messages.push(text) }));
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(RUN_OUTPUT_PROGRESS_MAX_CHARS + 1);
  });

  test("a throwing progress listener does not break the command", async () => {
    const output = completed(await run({ command: "echo ok" }, { progress: () => { throw new Error("listener"); } }));
    expect(output).toBe("exit code 0\nok\n");
  });
});

describe("run: input validation", () => {
  test("invalid inputs are readable errors", () => {
    const cases: unknown[] = [
      {},
      { command: "" },
      { command: 1 },
      { command: "ls", extra: true },
      { command: "ls", timeoutMs: 0 },
      { command: "ls", timeoutMs: 1.5 },
      { command: "ls", timeoutMs: "100" },
      { command: "ls", cwd: "" },
    ];
    for (const raw of cases) {
      const prepared = runTool.prepare(raw);
      expect(prepared.ok).toBe(false);
      if (!prepared.ok) expect(prepared.error).toStartWith("invalid input for run:");
    }
  });

  test("a valid input is classified as execute; the schema carries descriptions", () => {
    const prepared = runTool.prepare({ command: "ls", cwd: "sub", timeoutMs: 1000 });
    expect(prepared).toEqual({ ok: true, input: { command: "ls", cwd: "sub", timeoutMs: 1000 }, classification: { risk: "execute", operation: "execute", target: "ls", categories: ["shell"] } });
    // The target is the command, whitespace normalized; a command that reaches the network says so.
    expect(runTool.prepare({ command: "  FOO=1   git push   origin " })).toMatchObject({ ok: true, classification: { target: "FOO=1 git push origin", categories: ["shell", "network"] } });
    expect(runTool.prepare({ command: "echo 'curl   x'" })).toMatchObject({ ok: true, classification: { target: "echo 'curl   x'", categories: ["shell"] } });
    const properties = runTool.inputSchema.properties as Record<string, { description?: string }>;
    for (const name of ["command", "cwd", "timeoutMs"]) expect(properties[name]?.description).toBeTruthy();
    expect(runTool.inputSchema.required).toEqual(["command"]);
  });
});
