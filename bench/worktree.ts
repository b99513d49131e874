// Benchmark of isolated git-worktree workspaces: `node_modules/.bin/bun bench/worktree.ts`.
// Builds a 5,000-file repository once, then times, as medians over BENCH_WORKTREE_RUNS runs after a
// warm-up, each next to plain git doing the same work in the same run:
// 1. createGitWorktree + remove  vs  `git worktree add --detach` + `git worktree remove --force`;
// 2. collectChanges on a few edits  vs  `git add -A` + `git diff --cached --binary HEAD` in a plain worktree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGitWorktree } from "../src/session/delegation/workspaces.ts";
import { median } from "./stats.ts";

type Action = (run: number) => Promise<number | undefined>;

const RUNS = Math.max(5, Number(process.env.BENCH_WORKTREE_RUNS ?? 7));
const DIRS = 50;
const FILES_PER_DIR = 100; // 50 × 100 = 5,000 files

async function git(env: Record<string, string>, cwd: string, args: string[]): Promise<void> {
  const proc = Bun.spawn(["git", ...args], { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`git ${args.join(" ")} exited ${code}: ${await new Response(proc.stderr).text()}`);
}

function buildRepo(repo: string): void {
  for (let d = 0; d < DIRS; d++) {
    const dir = join(repo, "src", `module-${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const body = Array.from({ length: 20 }, (_, line) => `export const value${line} = ${d * 1000 + f * 20 + line};`).join("\n");
      writeFileSync(join(dir, `file-${f}.ts`), `// module ${d}, file ${f}\n${body}\n`);
    }
  }
}

/**
 * Times two actions in alternating order (ours first on even runs, the baseline first on odd ones),
 * so drift in the machine's I/O (page cache, writeback) affects both alike.
 */
async function timePair(runs: number, ours: Action, baseline: Action): Promise<[number, number]> {
  await ours(-1); // warm-up: file cache, JIT
  await baseline(-1);
  const samples: [number[], number[]] = [[], []];
  const one = async (action: Action, run: number) => {
    const started = performance.now();
    const own = await action(run); // an action may time only part of itself and return that
    return own ?? performance.now() - started;
  };
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      samples[0].push(await one(ours, i));
      samples[1].push(await one(baseline, i));
    } else {
      samples[1].push(await one(baseline, i));
      samples[0].push(await one(ours, i));
    }
  }
  return [median(samples[0]), median(samples[1])];
}

async function edit(dir: string): Promise<void> {
  for (let i = 0; i < 3; i++) writeFileSync(join(dir, "src", `module-${i}`, "file-0.ts"), `export const edited = ${i};\n`);
  writeFileSync(join(dir, "NEW.md"), "# new\n");
  writeFileSync(join(dir, "src", "blob.bin"), Buffer.from([0, 1, 2, 3, 255, 0]));
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "zero-bench-worktree-"));
  try {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: base,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "bench@example.invalid",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "bench@example.invalid",
    };
    const repo = join(base, "repo");
    const tempRoot = join(base, "tmp");
    mkdirSync(tempRoot);
    const built = performance.now();
    buildRepo(repo);
    await git(env, repo, ["-c", "init.defaultBranch=main", "init", "-q"]);
    await git(env, repo, ["add", "-A"]);
    await git(env, repo, ["commit", "-q", "-m", "bench"]);
    console.log(`repository: ${DIRS * FILES_PER_DIR} files, built and committed in ${((performance.now() - built) / 1000).toFixed(1)} s`);

    const rows: string[][] = [["case", "zero ms", "git ms", "zero/git"]];
    const [zeroCreate, gitCreate] = await timePair(
      RUNS,
      async () => {
        const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot, env });
        await ws.remove();
        return undefined;
      },
      async (run) => {
        const dir = join(tempRoot, `plain-${run + 1}`);
        await git(env, repo, ["worktree", "add", "--detach", "--quiet", dir, "HEAD"]);
        await git(env, repo, ["worktree", "remove", "--force", dir]);
        return undefined;
      },
    );
    rows.push(["create + remove", zeroCreate.toFixed(1), gitCreate.toFixed(1), (zeroCreate / gitCreate).toFixed(2)]);

    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot, env });
    const plain = join(tempRoot, "plain-collect");
    await git(env, repo, ["worktree", "add", "--detach", "--quiet", plain, "HEAD"]);
    await edit(ws.path);
    await edit(plain);
    let files = 0;
    const [zeroCollect, gitCollect] = await timePair(
      RUNS,
      async () => {
        files = (await ws.collectChanges()).changedFiles.length;
        return undefined;
      },
      async () => {
        const started = performance.now();
        await git(env, plain, ["add", "-A"]);
        await git(env, plain, ["diff", "--cached", "--binary", "HEAD"]);
        const elapsed = performance.now() - started;
        await git(env, plain, ["reset", "-q"]); // untimed: unstage for the next run
        return elapsed;
      },
    );
    rows.push([`collect (${files} changed files)`, zeroCollect.toFixed(1), gitCollect.toFixed(1), (zeroCollect / gitCollect).toFixed(2)]);
    await ws.remove();
    await git(env, repo, ["worktree", "remove", "--force", plain]);

    const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
    console.log(`medians over ${RUNS} runs after a warm-up, zero and git runs alternating`);
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  "));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
