// Benchmark of the find tool against plain ripgrep: `node_modules/.bin/bun bench/find.ts`.
// Builds a ~50,000-file tree once (plus a .gitignored node_modules), then times findTool.run
// and `rg` with equivalent flags on it: medians over BENCH_FIND_RUNS runs after a warm-up.
import { rgPath } from "@vscode/ripgrep";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRoots } from "../src/security/roots.ts";
import type { ToolContext } from "../src/tool/define.ts";
import { findTool } from "../src/tool/find.ts";
import { makeToolContext } from "../test/support/tool-context.ts";
import { median } from "./stats.ts";

const RUNS = Number(process.env.BENCH_FIND_RUNS ?? 10);
const PACKAGES = 50;
const MODULES = 40;
const FILES = 25; // 50 × 40 × 25 = 50,000 source files
const DEPENDENCY_FILES = 10_000;

const WORDS = ["user", "order", "invoice", "session", "token", "cache", "queue", "report", "payment", "profile", "search", "event"];
const VERBS = ["load", "save", "handle", "parse", "render", "validate", "fetch", "update", "remove", "create"];

/** Deterministic pseudo-random numbers, so every run builds the same tree. */
function generator(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

function sourceFile(random: (n: number) => number, name: string): string {
  const lines = [`import { Logger } from "../../shared/logger";`, `import type { Config } from "../../shared/config";`, ""];
  const functions = 3 + random(6);
  for (let i = 0; i < functions; i++) {
    const verb = VERBS[random(VERBS.length)] ?? "load";
    const word = WORDS[random(WORDS.length)] ?? "user";
    const fn = `${verb}${word[0]?.toUpperCase()}${word.slice(1)}`;
    lines.push(`/** ${verb} a ${word} for the ${name} module. */`);
    lines.push(`export async function ${fn}(input: Record<string, unknown>, config: Config): Promise<number> {`);
    lines.push(`  const logger = new Logger("${name}.${fn}");`);
    if (random(400) === 0) lines.push(`  // TODO(perf): ${fn} walks the whole ${word} list`);
    lines.push(`  logger.debug("${fn} called", { keys: Object.keys(input).length, retries: config.retries });`);
    lines.push(`  return Object.keys(input).length * ${random(1000)};`);
    lines.push("}", "");
  }
  return lines.join("\n");
}

function buildTree(root: string): number {
  const random = generator(42);
  let count = 0;
  for (let p = 0; p < PACKAGES; p++) {
    for (let m = 0; m < MODULES; m++) {
      const dir = join(root, "packages", `pkg-${p}`, "src", `module-${m}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < FILES; f++) {
        const word = WORDS[(p + m + f) % WORDS.length] ?? "item";
        const name = f % 5 === 0 ? `${word}Service${f}` : `${word}-${f}`;
        writeFileSync(join(dir, `${name}.ts`), sourceFile(random, name));
        count++;
      }
    }
  }
  for (let i = 0; i < DEPENDENCY_FILES; i++) {
    const dir = join(root, "node_modules", `dep-${i % 200}`, "lib");
    if (i < 200) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `index-${i}.js`), `// TODO(perf): dependency ${i}\nmodule.exports = function handleUser() { return ${i}; };\n`);
  }
  writeFileSync(join(root, ".gitignore"), "node_modules/\n");
  return count;
}


async function time(runs: number, action: () => Promise<unknown>): Promise<number> {
  await action(); // warm-up: file cache, JIT
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await action();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** Plain ripgrep, reading all of its output as a caller would. */
async function ripgrep(args: string[], cwd: string): Promise<number> {
  const proc = Bun.spawn([rgPath, ...args], { cwd, env: {}, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  const text = await new Response(proc.stdout).text();
  const code = await proc.exited;
  if (code > 1) throw new Error(`rg ${args.join(" ")} exited ${code}`);
  return text.length;
}

type Case = { name: string; input: Record<string, unknown>; rg: string[] };

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "zero-bench-find-"));
  try {
    const root = join(base, "tree");
    const built = performance.now();
    const files = buildTree(root);
    console.log(`tree: ${files} source files + ${DEPENDENCY_FILES} ignored dependency files in ${((performance.now() - built) / 1000).toFixed(1)} s`);

    const ctx: ToolContext = makeToolContext({ roots: createRoots({ workspace: root }), artifactsDir: join(base, "artifacts"), callId: "bench", timeoutMs: 120_000 });
    const common = ["--no-config", "--hidden", "--no-require-git"];
    const cases: Case[] = [
      { name: "content, rare (TODO)", input: { pattern: "TODO\\(perf\\)" }, rg: [...common, "--line-number", "--regexp=TODO\\(perf\\)", "--", root] },
      { name: "content, common (~60k)", input: { pattern: "logger\\.debug" }, rg: [...common, "--line-number", "--regexp=logger\\.debug", "--", root] },
      { name: "files, glob", input: { pattern: "**/*Service*.ts", mode: "files" }, rg: [...common, "--files", "--glob=**/*Service*.ts", "--", root] },
    ];

    const rows: string[][] = [["case", "zero ms", "rg ms", "zero/rg", "zero output"]];
    for (const entry of cases) {
      const prepared = findTool.prepare(entry.input);
      if (!prepared.ok) throw new Error(prepared.error);
      let header = "";
      const zero = await time(RUNS, async () => {
        const result = await findTool.run(prepared.input, ctx);
        if (result.status !== "completed") throw new Error(`${entry.name}: ${result.status}: ${result.output}`);
        header = result.output.split("\n")[0] ?? "";
      });
      const rg = await time(RUNS, () => ripgrep(entry.rg, root));
      rows.push([entry.name, zero.toFixed(1), rg.toFixed(1), (zero / rg).toFixed(2), header.replace(root, ".")]);
    }
    const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
    console.log(`medians over ${RUNS} runs after a warm-up (rg ${rgPath.split("/").slice(-4, -2).join("/")})`);
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  "));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
