import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Roots, createRoots } from "../security/roots.ts";
import { type ArtifactStore, MAX_ARTIFACT_BYTES, createArtifactStore, parseArtifactUri } from "../store/artifacts.ts";
import { MAX_OUTPUT_CHARS, type ToolContext, type ToolResult } from "./define.ts";
import {
  RUN_KILL_GRACE_MS,
  RUN_OUTPUT_HEAD_CHARS,
  RUN_OUTPUT_PROGRESS_MAX_CHARS,
  RUN_OUTPUT_TAIL_CHARS,
  commandEnvironment,
  createOutputCollector,
  effectiveTimeout,
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
    });
    expect(result).toEqual({
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
      // The documented limit: it survives, so the test ends it (by pid).
      for (const pid of processesMatching(`sleep ${mark}`)) process.kill(pid, "SIGKILL");
    }
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
