import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The launcher every whole-program test spawns: the real CLI, not an in-process call. */
export const ZERO_BIN = resolve(import.meta.dir, "../../bin/zero");

export type Protocol = "chat" | "responses" | "anthropic";

/** A private HOME, XDG dirs and a workspace (a git repo with README.md and src/). */
export type Sandbox = {
  root: string;
  home: string;
  configDir: string;
  stateHome: string;
  workspace: string;
  env: Record<string, string>;
  writeUserConfig(config: unknown): string;
  writeProjectConfig(config: unknown, name?: string): string;
  cleanup(): void;
};

export function makeSandbox(): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-e2e-")));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(join(home, ".config", "zero-cli"), { recursive: true });
  mkdirSync(join(workspace, "src"), { recursive: true });
  writeFileSync(join(workspace, "README.md"), "# Sample project\n\nThe answer is 42.\n");
  writeFileSync(join(workspace, "src", "main.ts"), 'export const main = () => "hello";\n');
  Bun.spawnSync(["git", "init", "-q", workspace]);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    LANG: "C.UTF-8",
  };
  const writeJson = (path: string, config: unknown) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config, null, 2));
    return path;
  };
  return {
    root,
    home,
    configDir: join(home, ".config", "zero-cli"),
    stateHome: env.XDG_STATE_HOME!,
    workspace,
    env,
    writeUserConfig: (config) => writeJson(join(home, ".config", "zero-cli", "config.jsonc"), config),
    writeProjectConfig: (config, name = "zero-cli.jsonc") => writeJson(join(workspace, name), config),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

const BUILT_IN_AGENTS = ["build", "plan", "explore", "implement", "verify", "review", "vision"];

/**
 * The user config that points every built-in agent at the fake provider over
 * the chosen wire protocol. Keys for openai/anthropic come from FAKE_KEY.
 */
export function fakeConfig(url: string, protocol: Protocol = "chat", extra: Record<string, unknown> = {}): Record<string, unknown> {
  const model =
    protocol === "chat"
      ? { provider: "fake", model: "fake-1", capabilities: ["text", "tools"] }
      : { provider: protocol === "responses" ? "openai" : "anthropic", model: "fake-1", baseURL: url, apiKeyEnv: "FAKE_KEY", capabilities: ["text", "tools"] };
  const { agents: extraAgents, models: extraModels, ...rest } = extra as { agents?: Record<string, unknown>; models?: Record<string, unknown> };
  const agents: Record<string, unknown> = {};
  for (const name of BUILT_IN_AGENTS) agents[name] = { model: "fake" };
  for (const [name, value] of Object.entries(extraAgents ?? {})) agents[name] = { ...(agents[name] as object), ...(value as object) };
  return {
    version: 2,
    providers: { fake: { type: "openai-compatible", baseURL: url } },
    models: { fake: model, ...extraModels },
    agents,
    ...rest,
  };
}

export type ZeroResult = { code: number; stdout: string; stderr: string; ms: number };

export type ZeroOptions = {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  /** Start through `npm` (e.g. `npm exec`) instead of the launcher itself. */
  npm?: boolean;
};

/** Spawns the CLI and collects its output; the caller's event loop keeps serving the fake provider. */
export function spawnZero(args: string[], options: ZeroOptions & { sandbox: Sandbox }) {
  const started = performance.now();
  const proc = Bun.spawn([options.npm ? "npm" : ZERO_BIN, ...args], {
    cwd: options.cwd ?? options.sandbox.workspace,
    env: { ...options.sandbox.env, ...options.env },
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  const stdout = collect(proc.stdout);
  const stderr = collect(proc.stderr);
  const result = (async (): Promise<ZeroResult> => {
    const code = await proc.exited;
    clearTimeout(timer);
    return { code, stdout: await stdout.done, stderr: await stderr.done, ms: performance.now() - started };
  })();
  /** The output so far, while the process still runs (to wait for a line before it exits). */
  return { proc, result, stdoutSoFar: stdout.soFar, stderrSoFar: stderr.soFar };
}

/** A stream's text, readable while it still arrives. */
function collect(stream: ReadableStream<Uint8Array>): { done: Promise<string>; soFar(): string } {
  const decoder = new TextDecoder();
  let text = "";
  const done = (async () => {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
    text += decoder.decode();
    return text;
  })();
  return { done, soFar: () => text };
}

/** Polls `condition` until it holds (or throws after `timeoutMs`, naming what it waited for). */
export async function waitUntil(what: string, condition: () => boolean, timeoutMs = 30_000, everyMs = 25): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await Bun.sleep(everyMs);
  }
}

export async function runZero(args: string[], options: ZeroOptions & { sandbox: Sandbox }): Promise<ZeroResult> {
  return spawnZero(args, options).result;
}

/** Parses `--json` output: every stdout line must be one JSON object. */
export function jsonLines(stdout: string): Array<Record<string, any>> {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, any>);
}
