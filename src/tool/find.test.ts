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
  expect(prepared.classification).toMatchObject({ risk: "read", operation: "read" });
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

describe("find: symbol", () => {
  // base/sym/ a workspace with one file per language: each defines things and uses others.
  let sym = "";
  let symRoots: Roots;
  const put = (relative: string, content: string) => {
    const path = join(sym, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  };
  const symbol = (raw: Record<string, unknown>) => find(raw, new AbortController().signal, symRoots);
  /** The `path:line: text` lines of a result (the header and notes dropped). */
  const definitions = (output: string) => output.split("\n").filter((line) => /^[^ ]+:\d+: /.test(line));

  beforeAll(() => {
    sym = join(base, "sym");
    put("web/app.ts", [
      'import { parseConfig } from "./config";', // 1 usage
      "export async function parseConfig(text: string): Promise<Config> {", // 2
      "  return parseConfig(text);", // 3 usage
      "}",
      "export interface Config { port: number }", // 5
      "export type Handler<T> = (value: T) => void;", // 6
      "export enum Color { Red, Green }", // 7
      "export const MAX_RETRIES = 3;", // 8
      "export abstract class Server {", // 9
      "  abstract listen(port: number): void;", // 10
      "  static create(config: Config): Server {", // 11
      "    return Server.create(config);", // 12 usage
      "  }",
      "  private onError = (error: Error) => {};", // 14
      "  handle(request: Request) {", // 15
      "    this.handle(request);", // 16 usage
      "    this.onError(new Error(String(MAX_RETRIES)));", // 17 usage
      "  }",
      "}",
      "const server: Server = Server.create(parseConfig(''));", // 20 usage
      "",
    ].join("\n"));
    put("py/tasks.py", [
      "from .util import load_tasks", // 1 usage
      "DEFAULT_LIMIT = 10", // 2
      "def load_tasks(path, limit=DEFAULT_LIMIT):", // 3
      "    return load_tasks(path)", // 4 usage
      "class TaskQueue(Base):", // 5
      "    async def drain(self):", // 6
      "        await self.drain()", // 7 usage
      "queue = TaskQueue()", // 8 (a module-level name)
      "",
    ].join("\n"));
    put("go/server.go", [
      "package server",
      "type Listener interface {", // 2
      "\tAccept() error",
      "}",
      "func (s *Server) Serve(l Listener) error {", // 5
      "\treturn s.Serve(l)", // 6 usage
      "}",
      "func NewServer() *Server { return &Server{} }", // 8
      "const DefaultPort = 8080", // 9
      "var srv = NewServer()", // 10
      "",
    ].join("\n"));
    put("rs/lib.rs", [
      "pub(crate) async fn run_job(id: u32) -> Result<u32, Error> {", // 1
      "    run_job(id).await", // 2 usage
      "}",
      "pub struct JobQueue { items: Vec<u32> }", // 4
      "pub trait Runner {}", // 5
      "const MAX_JOBS: usize = 8;", // 6
      "fn main() { let q = JobQueue { items: vec![] }; run_job(MAX_JOBS as u32); }", // 7 usage
      "",
    ].join("\n"));
    put("java/OrderService.java", [
      "package shop;",
      "public final class OrderService {", // 2
      "    public static final int MAX_ITEMS = 5;", // 3
      "    public List<Order> findOrders(String customer) throws IOException {", // 4
      "        return findOrders(customer);", // 5 usage
      "    }",
      "    void audit() { int n = MAX_ITEMS; new OrderService().findOrders(\"x\"); }", // 7 usage (and audit's definition)
      "}",
      "",
    ].join("\n"));
    put("kt/User.kt", ["data class User(val id: Int)", "suspend fun loadUser(id: Int): User = TODO()", "fun main() { val u = loadUser(1) }", ""].join("\n"));
    put("c/hash.c", [
      "#include <stdio.h>",
      "#define BUCKETS 64", // 2
      "typedef struct entry { int key; } entry_t;", // 3
      "static unsigned long hash_key(const char *key)", // 4
      "{",
      "  return hash_key(key) % BUCKETS;", // 6 usage
      "}",
      "int main(void) {", // 8
      "  entry_t e;",
      "  unsigned long h = hash_key(\"a\");", // 10 usage
      "  hash_key(\"b\");", // 11 usage
      "}",
      "",
    ].join("\n"));
    put("cpp/vec.hpp", ["namespace geo {", "template <typename T>", "class Vector final {", "  std::vector<T> items() const;", "};", "}", "void f() { geo::Vector<int> v; v.items(); }", ""].join("\n"));
    put("cs/Invoice.cs", [
      "namespace Billing {",
      "  public sealed class Invoice {", // 2
      "    public decimal Total { get; set; }", // 3
      "    public async Task<bool> SubmitAsync(CancellationToken ct) { return true; }", // 4
      "  }",
      "  class Use { void M(Invoice i) { var t = i.Total; i.SubmitAsync(default); } }", // 6 usage
      "}",
      "",
    ].join("\n"));
    put("rb/invoice.rb", ["class Invoice < Base", "  TAX_RATE = 0.2", "  def paid?", "    true", "  end", "end", "Invoice.new.paid?", "x = Invoice::TAX_RATE", ""].join("\n"));
    put("php/Repo.php", ["<?php", "final class UserRepo {", "    public static function findById(int $id) { return self::findById($id); }", "}", "$r = new UserRepo(); $r->findById(1);", ""].join("\n"));
    put("swift/Model.swift", ["final class ViewModel {", "    @MainActor func reload() async { }", "}", "let vm = ViewModel(); vm.reload()", ""].join("\n"));
    // Usages only, and a definition-shaped line in a file of no supported language.
    put("web/use.ts", ["import { parseConfig, Server } from './app';", "const config = parseConfig('x');", "new Server();", "parseConfig(config);", ""].join("\n"));
    put("notes.md", "export function parseConfig(text) {}\n");
    // Never shown: dependencies, VCS internals, secret-like directories, zero's private state.
    for (const hidden of ["node_modules/dep/index.ts", ".git/hooks/x.ts", ".ssh/helper.ts", ".private-state/copy.ts"]) put(hidden, "export function parseConfig() {}\n");
    for (let i = 0; i < 12; i++) put(`many/m${String(i).padStart(2, "0")}.py`, "def duplicate():\n    return duplicate()\n");
    symRoots = createRoots({ workspace: sym, privateDirs: [join(sym, ".private-state")] });
  });

  test("finds definitions, not uses, as path:line: text", async () => {
    const output = completed(await symbol({ name: "parseConfig" }));
    expect(output.split("\n")[0]).toBe("1 definition of parseConfig in 1 file in .");
    expect(definitions(output)).toEqual(["web/app.ts:2: export async function parseConfig(text: string): Promise<Config> {"]);
  });

  test("a name that is only used, never defined, is not reported", async () => {
    const output = completed(await symbol({ name: "parseConfig", path: "web/use.ts" }));
    expect(output).toStartWith("no definitions of parseConfig in web/use.ts");
    expect(output).toContain("search the content for \\bparseConfig\\b");
    expect(definitions(output)).toEqual([]);
  });

  test.each([
    ["Config", ["web/app.ts:5: export interface Config { port: number }"]],
    ["Handler", ["web/app.ts:6: export type Handler<T> = (value: T) => void;"]],
    ["Color", ["web/app.ts:7: export enum Color { Red, Green }"]],
    ["MAX_RETRIES", ["web/app.ts:8: export const MAX_RETRIES = 3;"]],
    ["listen", ["web/app.ts:10:   abstract listen(port: number): void;"]],
    ["create", ["web/app.ts:11:   static create(config: Config): Server {"]],
    ["onError", ["web/app.ts:14:   private onError = (error: Error) => {};"]],
    ["handle", ["web/app.ts:15:   handle(request: Request) {"]],
    ["DEFAULT_LIMIT", ["py/tasks.py:2: DEFAULT_LIMIT = 10"]],
    ["load_tasks", ["py/tasks.py:3: def load_tasks(path, limit=DEFAULT_LIMIT):"]],
    ["TaskQueue", ["py/tasks.py:5: class TaskQueue(Base):"]],
    ["drain", ["py/tasks.py:6:     async def drain(self):"]],
    ["Listener", ["go/server.go:2: type Listener interface {"]],
    ["Serve", ["go/server.go:5: func (s *Server) Serve(l Listener) error {"]],
    ["NewServer", ["go/server.go:8: func NewServer() *Server { return &Server{} }"]],
    ["DefaultPort", ["go/server.go:9: const DefaultPort = 8080"]],
    ["run_job", ["rs/lib.rs:1: pub(crate) async fn run_job(id: u32) -> Result<u32, Error> {"]],
    ["JobQueue", ["rs/lib.rs:4: pub struct JobQueue { items: Vec<u32> }"]],
    ["Runner", ["rs/lib.rs:5: pub trait Runner {}"]],
    ["MAX_JOBS", ["rs/lib.rs:6: const MAX_JOBS: usize = 8;"]],
    ["OrderService", ["java/OrderService.java:2: public final class OrderService {"]],
    ["MAX_ITEMS", ["java/OrderService.java:3:     public static final int MAX_ITEMS = 5;"]],
    ["findOrders", ["java/OrderService.java:4:     public List<Order> findOrders(String customer) throws IOException {"]],
    ["User", ["kt/User.kt:1: data class User(val id: Int)"]],
    ["loadUser", ["kt/User.kt:2: suspend fun loadUser(id: Int): User = TODO()"]],
    ["BUCKETS", ["c/hash.c:2: #define BUCKETS 64"]],
    ["entry_t", ["c/hash.c:3: typedef struct entry { int key; } entry_t;"]],
    ["hash_key", ["c/hash.c:4: static unsigned long hash_key(const char *key)"]],
    ["Vector", ["cpp/vec.hpp:3: class Vector final {"]],
    ["items", ["cpp/vec.hpp:4:   std::vector<T> items() const;"]],
    ["Invoice", ["cs/Invoice.cs:2:   public sealed class Invoice {", "", "rb/invoice.rb:1: class Invoice < Base"]],
    ["Total", ["cs/Invoice.cs:3:     public decimal Total { get; set; }"]],
    ["SubmitAsync", ["cs/Invoice.cs:4:     public async Task<bool> SubmitAsync(CancellationToken ct) { return true; }"]],
    ["TAX_RATE", ["rb/invoice.rb:2:   TAX_RATE = 0.2"]],
    ["paid?", ["rb/invoice.rb:3:   def paid?"]],
    ["UserRepo", ["php/Repo.php:2: final class UserRepo {"]],
    ["findById", ["php/Repo.php:3:     public static function findById(int $id) { return self::findById($id); }"]],
    ["ViewModel", ["swift/Model.swift:1: final class ViewModel {"]],
    ["reload", ["swift/Model.swift:2:     @MainActor func reload() async { }"]],
  ])("%s: the definition and nothing else", async (name, expected) => {
    const output = completed(await symbol({ name }));
    expect(output.split("\n").slice(1).filter((line) => line !== "--")).toEqual(expected);
  });

  test("mode symbol is explicit or implied by name; glob and path narrow it", async () => {
    expect(completed(await symbol({ mode: "symbol", name: "Invoice", glob: "*.rb" })).split("\n").slice(1)).toEqual(["rb/invoice.rb:1: class Invoice < Base"]);
    expect(completed(await symbol({ name: "Invoice", path: "cs" })).split("\n").slice(1)).toEqual(["cs/Invoice.cs:2:   public sealed class Invoice {"]);
    // An include glob can select any file; only files of a supported language are read for definitions.
    expect(completed(await symbol({ name: "parseConfig", glob: "*.md" }))).toStartWith("no definitions");
  });

  test("names that are not identifiers are refused with a clear error", async () => {
    for (const name of ["foo.bar", "a b", "(x)", "-v", ".*", "1abc", "x;rm", "Foo::bar"]) {
      expect(failed(await symbol({ name }))).toContain("is not an identifier");
    }
    expect(failed(await symbol({ name: "Foo::bar" }))).toContain("give the last part alone (bar)");
    expect(failed(await symbol({ name: "x".repeat(201) }))).toContain("at most 200 characters");
  });

  test("arguments that do not fit the mode are refused", async () => {
    expect(failed(await symbol({ mode: "symbol" }))).toContain("symbol mode needs name");
    expect(failed(await symbol({ name: "Invoice", pattern: "Invoice" }))).toContain("not pattern");
    expect(failed(await symbol({ name: "Invoice", context: 2, ignoreCase: true }))).toContain("not ignoreCase, context");
    expect(failed(await symbol({ mode: "content", name: "Invoice" }))).toContain("name is for symbol mode");
    expect(failed(await symbol({}))).toContain("content mode needs a pattern");
    expect(failed(await symbol({ mode: "files" }))).toContain("files mode needs a pattern");
    // Defaults the model may spell out do not count.
    expect(completed(await symbol({ name: "Invoice", ignoreCase: false, context: 0, fixed: false }))).toStartWith("2 definitions");
  });

  test("hidden, secret-like and private paths stay hidden", async () => {
    const output = completed(await symbol({ name: "parseConfig", glob: ["**/*.ts", "**/node_modules/**", "**/.git/**", "**/.ssh/**"] }));
    expect(definitions(output)).toEqual(["web/app.ts:2: export async function parseConfig(text: string): Promise<Config> {"]);
    expect(failed(await symbol({ name: "parseConfig", path: "node_modules" }))).toContain("never searched");
    expect(failed(await symbol({ name: "parseConfig", path: ".ssh" }))).toContain("secret-like");
  });

  test("bounded like the other modes: the rest goes to an artifact", async () => {
    const result = await symbol({ name: "duplicate", maxResults: 5 });
    const output = completed(result);
    expect(result.truncated).toBe(true);
    expect(output.split("\n")[0]).toBe("12 definitions of duplicate in 12 files in . (showing the first 5)");
    expect(definitions(output)).toHaveLength(5);
    expect(output).toContain("7 more definitions not shown");
    const uri = /artifact:\/\/[0-9a-f]{64}/.exec(output)?.[0] ?? "";
    const stored = new TextDecoder().decode(artifacts.get(parseArtifactUri(uri) ?? ""));
    expect(definitions(stored)).toHaveLength(12);
  });
});
