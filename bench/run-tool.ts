// Benchmark of the `run` tool: `node_modules/.bin/bun bench/run-tool.ts`.
// The overhead of one `runTool.run` call against spawning the same shell directly with Bun.spawn
// (piped stdout/stderr, read to the end), medians over repeated runs and their ratio. A row with
// node:child_process shows how much of the gap is the spawn API the tool uses (it needs detached
// process groups) rather than the tool's own work. `benchRunTool` is exported so bench/run.ts can
// include these figures.
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRoots } from "../src/security/roots.ts";
import type { ToolContext } from "../src/tool/define.ts";
import { runTool } from "../src/tool/run.ts";
import { makeToolContext } from "../test/support/tool-context.ts";
import { median } from "./stats.ts";

export type RunToolBench = {
  runs: number;
  trueCommand: { runToolMs: number; bunSpawnMs: number; childProcessMs: number; ratio: number };
  bigOutput: { bytes: number; runs: number; runToolMs: number; bunSpawnMs: number; ratio: number };
};


async function timeIt(runs: number, once: () => Promise<void>): Promise<number> {
  await once(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

async function bunSpawn(command: string, env: Record<string, string>, cwd: string): Promise<void> {
  const proc = Bun.spawn(["/bin/sh", "-c", command], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).arrayBuffer(), proc.exited]);
}

function childProcessSpawn(command: string, env: Record<string, string>, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    child.stdout?.resume();
    child.stderr?.resume();
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

export async function benchRunTool(runs = 30, bigRuns = 5, bigBytes = 50_000_000): Promise<RunToolBench> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "zero-bench-run-")));
  try {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, LANG: "C.UTF-8", TMPDIR: base };
    const ctx: ToolContext = makeToolContext({ roots: createRoots({ workspace: base }), artifactsDir: join(base, ".artifacts"), callId: "bench", timeoutMs: 120_000, env });
    const viaTool = async (command: string): Promise<void> => {
      const result = await runTool.run({ command }, ctx);
      if (result.status !== "completed" || !result.output.startsWith("exit code 0")) throw new Error(`run failed: ${result.output.slice(0, 200)}`);
    };

    const runToolMs = await timeIt(runs, () => viaTool("true"));
    const bunSpawnMs = await timeIt(runs, () => bunSpawn("true", env, base));
    const childProcessMs = await timeIt(runs, () => childProcessSpawn("true", env, base));

    const big = `yes | head -c ${bigBytes}`;
    const bigTool = await timeIt(bigRuns, () => viaTool(big));
    const bigSpawn = await timeIt(bigRuns, () => bunSpawn(big, env, base));

    return {
      runs,
      trueCommand: { runToolMs, bunSpawnMs, childProcessMs, ratio: runToolMs / bunSpawnMs },
      bigOutput: { bytes: bigBytes, runs: bigRuns, runToolMs: bigTool, bunSpawnMs: bigSpawn, ratio: bigTool / bigSpawn },
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

export function formatRunToolBench(result: RunToolBench): string {
  const f = (value: number, digits = 2) => value.toFixed(digits).padStart(9);
  const { trueCommand: t, bigOutput: b } = result;
  return [
    `run tool (medians; \`true\` ×${result.runs}, big output ×${b.runs})`,
    "",
    "                                        wall ms",
    `runTool.run  true                     ${f(t.runToolMs)}   ×${t.ratio.toFixed(2)} Bun.spawn`,
    `Bun.spawn    sh -c true               ${f(t.bunSpawnMs)}`,
    `child_process sh -c true (detached)   ${f(t.childProcessMs)}   ×${(t.childProcessMs / t.bunSpawnMs).toFixed(2)} Bun.spawn`,
    `runTool.run  ${(b.bytes / 1e6).toFixed(0)} MB of output          ${f(b.runToolMs, 1)}   ×${b.ratio.toFixed(2)} Bun.spawn`,
    `Bun.spawn    ${(b.bytes / 1e6).toFixed(0)} MB read to the end    ${f(b.bunSpawnMs, 1)}`,
  ].join("\n");
}

if (import.meta.main) {
  const runs = Number(process.env.BENCH_RUNS ?? 30);
  console.log(formatRunToolBench(await benchRunTool(runs)));
}
