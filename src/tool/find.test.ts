import { rgPath } from "@vscode/ripgrep";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isSecretLikePath } from "../policy/secret-paths.ts";
import { type Roots, createRoots } from "../security/roots.ts";
import { type ArtifactStore, createArtifactStore, parseArtifactUri } from "../store/artifacts.ts";
import type { ToolResult } from "./define.ts";
import { findTool, ripgrepArgs } from "./find.ts";
import { makeToolContext } from "../../test/support/tool-context.ts";

// base/ws/        the workspace (not a git repository)
// base/outside/   a sibling directory that is not a root
let base = "";
let ws = "";
let roots: Roots;
let artifacts: ArtifactStore;

/** Text that lives only in files find must never show. */
const SECRET = "TOP-SECRET-42";

const SECRET_FILES = [
  ".env",
  ".env.local",
  "config/.env.production",
  "id_rsa",
  ".ssh/id_ed25519",
  ".npmrc",
  "server.pem",
  "tls.key",
  ".aws/credentials",
  "home/.docker/config.json",
  ".kube/config",
  "config/secrets.yml",
  "infra/terraform.tfstate",
  ".git-credentials",
  ".config/gh/hosts.yml",
];
const HIDDEN_FILES = [".git/config", "node_modules/pkg/index.js", ".zero-cli/state.txt", ".devout/state.txt", "sub/node_modules/x.js", "sub/.git/HEAD"];
const ORDINARY_FILES = [".env.example", ".env.sample", ".env.template", "id_rsa.pub", "env.ts", "keyboard.ts", "monkey.py", "src/key.ts", "docker/config.json", ".kube/cache/discovery.json", "credentials"];

function write(relative: string, content: string): void {
  const path = join(ws, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-find-")));
  ws = join(base, "ws");
  mkdirSync(ws, { recursive: true });
  write("src/app.ts", "import { x } from './util';\nconst answer = 42;\nexport default answer;\n");
  write("src/util.ts", "export const x = 1;\n");
  write("README.md", "Hello World\nhello world\n");
  write("regex.txt", "price is $5.00 (approx) [x]*\nprice is 5.00\n");
  write("dash.txt", "--pre=sh is a flag\nplain line\n-v is too\n");
  write("ctx.txt", Array.from({ length: 10 }, (_, i) => (i === 4 ? "needle here" : `line ${i + 1}`)).join("\n") + "\n");
  write("many.txt", Array.from({ length: 300 }, (_, i) => `hit ${i + 1}`).join("\n") + "\n");
  for (let i = 0; i < 30; i++) write(`bulk/file-${String(i).padStart(2, "0")}.txt`, "bulk\n");
  write(".gitignore", "build/\n");
  write("build/out.js", "needle in build output\n");
  for (const file of [...SECRET_FILES, ...HIDDEN_FILES]) write(file, `needle ${SECRET}\n`);
  for (const file of ORDINARY_FILES) write(file, `needle ordinary\n`);
  write(".private-state/artifact.txt", `needle ${SECRET}\n`);
  mkdirSync(join(base, "outside"), { recursive: true });
  writeFileSync(join(base, "outside", "secret.txt"), `needle ${SECRET} outside\n`);
  symlinkSync(join(base, "outside"), join(ws, "linked-dir"));
  symlinkSync(join(base, "outside", "secret.txt"), join(ws, "linked-file.txt"));
  roots = createRoots({ workspace: ws, privateDirs: [join(ws, ".private-state")] });
  artifacts = createArtifactStore(join(base, "artifacts"));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

async function find(raw: unknown, signal: AbortSignal = new AbortController().signal, within: Roots = roots): Promise<ToolResult> {
  const prepared = findTool.prepare(raw);
  if (!prepared.ok) throw new Error(`prepare failed: ${prepared.error}`);
  expect(prepared.classification).toEqual({ risk: "read", operation: "read" });
  return findTool.run(prepared.input, makeToolContext({ roots: within, artifactsDir: join(base, "artifacts"), artifacts, signal, timeoutMs: 30_000 }));
}

function completed(result: ToolResult): string {
  if (result.status !== "completed") throw new Error(`expected completed, got ${result.status}: ${result.output}`);
  return result.output;
}

function failed(result: ToolResult): string {
  if (result.status !== "failed") throw new Error(`expected failed, got ${result.status}: ${result.output}`);
  return result.output;
}

/** The paths of a files-mode listing (the lines after the header). */
function listed(output: string): string[] {
  return output.split("\n").slice(1).filter((line) => line !== "" && !line.startsWith("…") && !line.startsWith("("));
}

describe("find: content", () => {
  test("reports matches as path:line: text", async () => {
    const output = completed(await find({ pattern: "answer" }));
    expect(output).toContain("src/app.ts:2: const answer = 42;");
    expect(output).toContain("src/app.ts:3: export default answer;");
    expect(output.split("\n")[0]).toBe("2 matches in 1 file in .");
  });

  test("fixed strings take regex metacharacters literally", async () => {
    const literal = "$5.00 (approx) [x]*";
    expect(completed(await find({ pattern: literal, fixed: true }))).toContain("regex.txt:1: price is $5.00 (approx) [x]*");
    expect(completed(await find({ pattern: literal }))).toStartWith("no matches");
  });

  test("ignoreCase", async () => {
    expect(completed(await find({ pattern: "HELLO WORLD" }))).toStartWith("no matches");
    const output = completed(await find({ pattern: "HELLO WORLD", ignoreCase: true }));
    expect(output).toContain("README.md:1: Hello World");
    expect(output).toContain("README.md:2: hello world");
  });

  test("context lines are marked with dashes", async () => {
    const output = completed(await find({ pattern: "needle here", context: 2 }));
    expect(output.split("\n").slice(1)).toEqual(["ctx.txt-3- line 3", "ctx.txt-4- line 4", "ctx.txt:5: needle here", "ctx.txt-6- line 6", "ctx.txt-7- line 7"]);
  });

  test("a pattern starting with - is a pattern, not a flag", async () => {
    expect(completed(await find({ pattern: "--pre=sh" }))).toContain("dash.txt:1: --pre=sh is a flag");
    expect(completed(await find({ pattern: "-v" }))).toContain("dash.txt:3: -v is too");
  });

  test("glob limits the files searched", async () => {
    const output = completed(await find({ pattern: "needle", glob: ["*.py", "env.ts"] }));
    expect(output).toContain("monkey.py:1: needle ordinary");
    expect(output).toContain("env.ts:1:");
    expect(output).not.toContain("ctx.txt");
  });

  test("no matches is a completed result that says so", async () => {
    expect(completed(await find({ pattern: "zzz-not-anywhere" }))).toBe('no matches for "zzz-not-anywhere" in .');
  });

  test("an invalid regex fails with ripgrep's message", async () => {
    const output = failed(await find({ pattern: "(unclosed" }));
    expect(output).toContain("regex parse error");
  });

  test("more matches than maxResults: bounded output and an artifact with all of them", async () => {
    const result = await find({ pattern: "^hit \\d+$", maxResults: 10 });
    const output = completed(result);
    expect(result.truncated).toBe(true);
    expect(output.split("\n")[0]).toBe("300 matches in 1 file in . (showing the first 10)");
    expect(output.split("\n").filter((line) => line.startsWith("many.txt:"))).toHaveLength(10);
    expect(output).toContain("many.txt:10: hit 10");
    expect(output).not.toContain("many.txt:11:");
    expect(output).toContain("290 more matches not shown");
    const uri = /artifact:\/\/[0-9a-f]{64}/.exec(output)?.[0] ?? "";
    const stored = new TextDecoder().decode(artifacts.get(parseArtifactUri(uri) ?? ""));
    const lines = stored.split("\n").filter((line) => line.startsWith("many.txt:"));
    expect(lines).toHaveLength(300);
    expect(lines[299]).toBe("many.txt:300: hit 300");
  });

  test("a file path searches just that file", async () => {
    const output = completed(await find({ pattern: "needle", path: "ctx.txt" }));
    expect(output.split("\n").slice(1)).toEqual(["ctx.txt:5: needle here"]);
  });
});

describe("find: files", () => {
  test("lists paths matching a glob, sorted", async () => {
    expect(listed(completed(await find({ pattern: "*.ts", mode: "files", path: "src" })))).toEqual(["src/app.ts", "src/key.ts", "src/util.ts"]);
    expect(listed(completed(await find({ pattern: "src/*.ts", mode: "files" })))).toEqual(["src/app.ts", "src/key.ts", "src/util.ts"]);
  });

  test("glob belongs to content searches; in files mode the pattern is the glob", async () => {
    expect(failed(await find({ pattern: "*.ts", mode: "files", glob: "*.md" }))).toContain("put the glob in pattern");
  });

  test("more files than maxResults: bounded listing and an artifact with all of them", async () => {
    const output = completed(await find({ pattern: "bulk/*", mode: "files", maxResults: 5 }));
    expect(listed(output).slice(0, 5)).toEqual(["bulk/file-00.txt", "bulk/file-01.txt", "bulk/file-02.txt", "bulk/file-03.txt", "bulk/file-04.txt"]);
    expect(output).toContain("25 more files not shown");
    const uri = /artifact:\/\/[0-9a-f]{64}/.exec(output)?.[0] ?? "";
    const stored = new TextDecoder().decode(artifacts.get(parseArtifactUri(uri) ?? ""));
    expect(stored.split("\n").filter((line) => line.startsWith("bulk/"))).toHaveLength(30);
  });
});

describe("find: what is never shown", () => {
  test(".gitignore is respected outside a git repository", async () => {
    expect(readdirSync(join(ws, "build"))).toEqual(["out.js"]);
    expect(completed(await find({ pattern: "needle in build" }))).toStartWith("no matches");
    expect(completed(await find({ pattern: "*.js", mode: "files" }))).toStartWith("no files match");
  });

  test("secret-like, hidden, private and out-of-root files are never searched", async () => {
    for (const raw of [
      { pattern: "needle" },
      { pattern: "needle", glob: [".env", "**/.env*"] },
      { pattern: "needle", glob: ["**/node_modules/**", "**/.git/**", "id_rsa", ".npmrc", "**/*"] },
      { pattern: SECRET, ignoreCase: true, context: 3 },
    ]) {
      const output = completed(await find(raw)).toLowerCase();
      expect(output).not.toContain(`needle ${SECRET}`.toLowerCase());
      expect(output).not.toContain("outside");
    }
    expect(completed(await find({ pattern: SECRET, ignoreCase: true }))).toStartWith("no matches");
    const all = completed(await find({ pattern: "needle", maxResults: 500 }));
    for (const file of ORDINARY_FILES) expect(all).toContain(`${file}:1: needle ordinary`);
    expect(completed(await find({ pattern: "needle", glob: [".env", "**/.env*"] })).split("\n").slice(1)).toEqual([
      ".env.example:1: needle ordinary",
      "",
      ".env.sample:1: needle ordinary",
      "",
      ".env.template:1: needle ordinary",
    ]);
  });

  test("files mode never lists them, whatever the pattern", async () => {
    const everything = listed(completed(await find({ pattern: "*", mode: "files", maxResults: 500 })));
    for (const file of [...SECRET_FILES, ...HIDDEN_FILES]) expect(everything).not.toContain(file);
    for (const file of ORDINARY_FILES) expect(everything).toContain(file);
    expect(everything.filter((path) => path.startsWith(".private-state") || path.startsWith("linked-"))).toEqual([]);
    for (const pattern of [".env", ".env*", "id_rsa", ".npmrc", "**/.git/**", "node_modules/**", "**/*.pem", ".private-state/*"]) {
      const output = completed(await find({ pattern, mode: "files", ignoreCase: true }));
      expect(listed(output).filter((path) => !ORDINARY_FILES.includes(path))).toEqual([]);
    }
  });

  test("ripgrep itself is never handed them: the exclusions come after the model's globs and win", () => {
    for (const glob of [[".env", "**/.env*", "id_rsa", ".npmrc", "**/*"], ["**/node_modules/**", "**/.git/**", "**/.aws/**"]]) {
      const args = ripgrepArgs({ pattern: "*", mode: "files", glob }, ws, ["/.private-state"]);
      const run = Bun.spawnSync([rgPath, ...args], { cwd: ws, env: {} });
      const paths = run.stdout.toString().split("\0").filter((path) => path !== "").map((path) => path.slice(ws.length + 1));
      expect(paths.filter((path) => [...SECRET_FILES, ...HIDDEN_FILES].includes(path) || path.startsWith(".private-state"))).toEqual([]);
    }
    const content = ripgrepArgs({ pattern: "needle", glob: [".env"] }, ws, []);
    const run = Bun.spawnSync([rgPath, ...content], { cwd: ws, env: {} });
    expect(run.exitCode).toBe(1);
    expect(run.stdout.toString()).not.toContain(SECRET);
  });

  test("find hides exactly what isSecretLikePath calls secret-like", async () => {
    const everything = listed(completed(await find({ pattern: "*", mode: "files", maxResults: 500 })));
    for (const file of [...SECRET_FILES, ...ORDINARY_FILES]) {
      expect({ file, listed: everything.includes(file) }).toEqual({ file, listed: !isSecretLikePath(file) });
    }
  });

  test("searching inside a hidden directory or a secret-like path is refused", async () => {
    expect(failed(await find({ pattern: "needle", path: ".git" }))).toContain("never searched");
    expect(failed(await find({ pattern: "*", mode: "files", path: "node_modules/pkg" }))).toContain("never searched");
    expect(failed(await find({ pattern: "needle", path: "sub/.git" }))).toContain("never searched");
    expect(failed(await find({ pattern: "needle", path: ".env" }))).toContain("secret-like");
    expect(failed(await find({ pattern: "needle", path: ".aws" }))).toContain("secret-like");
    // .docker itself is ordinary; its config.json is secret-like although ripgrep's globs, relative
    // to the search root, no longer see the `.docker/` part: the per-path filter catches it.
    expect(completed(await find({ pattern: "needle", path: "home/.docker" }))).toStartWith("no matches");
  });

  test("symlinks are not followed, so a link out of the roots exposes nothing", async () => {
    expect(readlinkSync(join(ws, "linked-dir"))).toBe(join(base, "outside"));
    expect(completed(await find({ pattern: "outside" }))).toStartWith("no matches");
  });

  test("a private directory inside the workspace is hidden and refused", async () => {
    expect(completed(await find({ pattern: "artifact", mode: "files" }))).toStartWith("no files match");
    expect(failed(await find({ pattern: "needle", path: ".private-state" }))).toContain("private state directory");
  });

  test("a path outside the roots is refused", async () => {
    expect(failed(await find({ pattern: "needle", path: "../outside" }))).toContain("outside the allowed roots");
    expect(failed(await find({ pattern: "needle", path: join(base, "outside") }))).toContain("outside the allowed roots");
    expect(failed(await find({ pattern: "needle", path: "linked-dir" }))).toContain("outside the allowed roots");
  });

  test("ripgrep's own config (RIPGREP_CONFIG_PATH) is ignored", async () => {
    const config = join(base, "rg-config");
    writeFileSync(config, "--invert-match\n");
    const previous = process.env.RIPGREP_CONFIG_PATH;
    process.env.RIPGREP_CONFIG_PATH = config;
    try {
      expect(completed(await find({ pattern: "answer", path: "src/app.ts" })).split("\n").slice(1)).toEqual([
        "src/app.ts:2: const answer = 42;",
        "src/app.ts:3: export default answer;",
      ]);
    } finally {
      if (previous === undefined) delete process.env.RIPGREP_CONFIG_PATH;
      else process.env.RIPGREP_CONFIG_PATH = previous;
    }
  });
});

/** Processes running the ripgrep binary with `cwd` as their working directory (Linux /proc). */
function ripgrepProcessesIn(cwd: string): number[] {
  const binary = realpathSync(rgPath);
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === cwd && readlinkSync(`/proc/${entry}/exe`) === binary) found.push(Number(entry));
    } catch {
      // exited meanwhile, or not ours to inspect
    }
  }
  return found;
}

describe("find: cancellation", () => {
  test("aborting the call kills ripgrep", async () => {
    // A slow search: a Unicode-heavy pattern over two 15 MB files keeps ripgrep busy for about a second.
    const slow = join(base, "slow");
    mkdirSync(slow, { recursive: true });
    const text = `${"abcdefghij".repeat(50)}\n`.repeat(30_000);
    writeFileSync(join(slow, "a.txt"), text);
    writeFileSync(join(slow, "b.txt"), text);
    const pattern = "(?:\\w{1,30}){60}\\W";
    const started = performance.now();
    const baseline = Bun.spawnSync([rgPath, "--no-config", "--count", `--regexp=${pattern}`, "--", slow], { env: {} });
    const natural = performance.now() - started;
    expect(baseline.exitCode).toBe(1); // searched everything and found nothing
    expect(natural).toBeGreaterThan(500); // otherwise this test could not tell a kill from a finish

    const controller = new AbortController();
    const running = find({ pattern }, controller.signal, createRoots({ workspace: slow }));
    let pids: number[] = [];
    for (let tries = 0; tries < 500 && pids.length === 0; tries++) {
      await Bun.sleep(5);
      pids = ripgrepProcessesIn(slow);
    }
    expect(pids.length).toBe(1);
    const abortedAt = performance.now();
    controller.abort();
    const result = await running;
    const latency = performance.now() - abortedAt;
    expect(result.status).toBe("cancelled");
    expect(ripgrepProcessesIn(slow)).toEqual([]);
    expect(latency).toBeLessThan(natural / 2);
  });
});
