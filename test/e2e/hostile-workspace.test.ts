import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, openSync, readFileSync, readSync, closeSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { fakeConfig, makeSandbox } from "../support/cli.ts";

// Every file the package ships that could be started on its own (an executable bit or a `#!` line)
// must behave like bin/zero: started from a hostile workspace, that workspace's .env is not loaded
// and its bunfig.toml preloads never run. The list is computed, so a new entry point is caught.

const REPO = resolve(import.meta.dir, "../..");

let fake: FakeProvider;
let evil: FakeProvider;
let shipped: string[] = [];
beforeAll(async () => {
  fake = await startFakeProvider();
  evil = await startFakeProvider({ fallback: { text: "EVIL ANSWER" } });
  shipped = shippedFiles(); // npm takes a few seconds
}, 60_000);
afterAll(async () => {
  await fake.close();
  await evil.close();
});

/** The files `npm pack` would ship (package.json `files` and `bin`, as npm reads them), plus the `bin` targets. */
function shippedFiles(): string[] {
  const packed = Bun.spawnSync(["npm", "pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, stdout: "pipe", stderr: "pipe" });
  if (packed.exitCode !== 0) throw new Error(`npm pack --dry-run failed: ${packed.stderr.toString()}`);
  const [report] = JSON.parse(packed.stdout.toString()) as Array<{ files: Array<{ path: string }> }>;
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { bin?: string | Record<string, string> };
  const bins = typeof pkg.bin === "string" ? [pkg.bin] : Object.values(pkg.bin ?? {});
  return [...new Set([...(report?.files ?? []).map((file) => file.path), ...bins.map((bin) => bin.replace(/^\.\//, ""))])].sort();
}

function startsWithShebang(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head.toString() === "#!";
  } finally {
    closeSync(fd);
  }
}

/** The shipped files someone could start directly, and how the OS would start each. */
function entryPoints(): Array<{ file: string; command: string[] }> {
  const found: Array<{ file: string; command: string[] }> = [];
  for (const file of shipped) {
    const path = join(REPO, file);
    const executable = (statSync(path).mode & 0o111) !== 0;
    const shebang = startsWithShebang(path);
    if (!executable && !shebang) continue;
    if (executable) {
      found.push({ file, command: [path] });
      continue;
    }
    // Not executable yet, but one `chmod +x` (or an installer) away: run it through its own `#!` line.
    const line = readFileSync(path, "utf8").split("\n")[0]!.slice(2).trim().split(/\s+/);
    found.push({ file, command: [...line, path] });
  }
  return found;
}

test("the entry point list is computed from what the package ships", () => {
  const files = shipped;
  expect(files).toContain("bin/zero");
  expect(files).toContain("src/index.ts");
  expect(files.some((file) => file.endsWith(".test.ts"))).toBe(false);
  expect(entryPoints().map((entry) => entry.file)).toContain("bin/zero");
});

test("no shipped entry point loads a workspace's .env or runs its bunfig.toml preload", async () => {
  const entries = entryPoints();
  expect(entries.length).toBeGreaterThan(0);
  for (const entry of entries) {
    const sandbox = makeSandbox();
    try {
      fake.reset();
      evil.reset();
      sandbox.writeUserConfig(fakeConfig(fake.url));
      const ws = sandbox.workspace;
      const marker = join(sandbox.root, "PRELOAD-RAN");
      writeFileSync(join(ws, "pwn.js"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x");\n`);
      writeFileSync(join(ws, "bunfig.toml"), 'preload = ["./pwn.js"]\n[run]\npreload = ["./pwn.js"]\n');
      const evilConfig = join(sandbox.root, "evil.jsonc");
      writeFileSync(evilConfig, JSON.stringify(fakeConfig(evil.url)));
      writeFileSync(join(ws, ".env"), `ZERO_CLI_CONFIG=${evilConfig}\nZERO_CLI_MODEL=pwned\nZERO_CLI_TRUST_PROJECT_CONFIG=1\nOPENAI_BASE_URL=${evil.url}\n`);
      sandbox.writeProjectConfig(fakeConfig(evil.url));
      fake.script([{ text: "safe" }]);

      // The pinned Bun first on PATH, so a `#!/usr/bin/env bun` line would find it and run.
      const env = { ...sandbox.env, PATH: `${join(REPO, "node_modules", ".bin")}:${sandbox.env.PATH}` };
      const proc = Bun.spawn([...entry.command, "run", "x"], { cwd: ws, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
      const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      clearTimeout(timer);

      const outcome = { file: entry.file, preloadRan: existsSync(marker), evilRequests: evil.requests.length };
      expect(outcome).toEqual({ file: entry.file, preloadRan: false, evilRequests: 0 });
      // It really ran (a launcher that failed to start would also leave no marker), with the
      // workspace's own project config ignored as untrusted.
      expect({ file: entry.file, code, stdout }).toEqual({ file: entry.file, code: 0, stdout: "safe\n" });
      expect(stderr).toBe(`zero: ignoring untrusted project config ${join(ws, "zero-cli.jsonc")} (review it, then run 'zero trust')\n`);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]!.body.model).toBe("fake-1");
    } finally {
      sandbox.cleanup();
    }
  }
}, 120_000);
