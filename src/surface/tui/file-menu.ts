/**
 * The composer's `@` menu: the workspace's files, filtered as the user types. Listed once by
 * ripgrep (gitignore respected, symlinks not followed, bounded), never showing what the `find`
 * tool hides (.git, node_modules, zero's state, secret-like files) nor dependency and cache
 * directories; a symlink among the matches is shown only when it resolves inside the workspace.
 * What is inserted is an `@mention` the run attaches (`@"…"` when the path has spaces).
 */
import { lstatSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { isSecretLikePath, SECRET_FILE_GLOBS } from "../../policy/secret-paths.ts";
import { HIDDEN_DIRS } from "../../tool/find.ts";

/** At most this many files are listed (a huge monorepo still opens the menu at once). */
export const MAX_LISTED_FILES = 20_000;
/** How long the listing may take. */
export const LIST_TIMEOUT_MS = 3_000;

/** Directories of installed dependencies, virtual environments and build caches. */
const DEPENDENCY_DIRS = [...HIDDEN_DIRS, ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".next", ".turbo", ".cache", ".gradle", "vendor"];

/** The workspace's files, relative, `/`-separated. */
export async function listWorkspaceFiles(workspace: string, options: { limit?: number; timeoutMs?: number } = {}): Promise<string[]> {
  const limit = options.limit ?? MAX_LISTED_FILES;
  const { rgPath } = await import("@vscode/ripgrep");
  const args = ["--no-config", "--no-require-git", "--hidden", "--no-follow", "--files", "--null", "--color=never"];
  for (const glob of [...DEPENDENCY_DIRS, ...SECRET_FILE_GLOBS]) args.push(`--iglob=!${glob}`);
  // Environment-free: a user's RIPGREP_CONFIG_PATH or global gitignore must not change the listing.
  const proc = Bun.spawn([rgPath, ...args, "--", "."], { cwd: workspace, env: {}, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), options.timeoutMs ?? LIST_TIMEOUT_MS);
  const files: string[] = [];
  let rest = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of proc.stdout) {
      const records = (rest + decoder.decode(chunk, { stream: true })).split("\0");
      rest = records.pop() ?? "";
      for (const record of records) {
        const path = record.replace(/^\.\//, "").split(sep).join("/");
        if (path !== "" && shown(path)) files.push(path);
        if (files.length >= limit) {
          proc.kill("SIGKILL");
          break;
        }
      }
      if (files.length >= limit) break;
    }
  } finally {
    clearTimeout(timer);
  }
  await proc.exited;
  return files.sort();
}

function shown(path: string): boolean {
  if (isSecretLikePath(path)) return false;
  return !path.split("/").some((part) => DEPENDENCY_DIRS.includes(part.toLowerCase()));
}

/**
 * The files that match what was typed after `@`, best first: the name starting with it, then the
 * name containing it, then the path containing it, then its letters in order. Case-insensitive.
 */
export function matchFiles(files: readonly string[], query: string, max = 50): string[] {
  const q = query.toLowerCase();
  if (q === "") return files.slice(0, max);
  const scored: { path: string; score: number }[] = [];
  for (const path of files) {
    const lower = path.toLowerCase();
    const name = lower.slice(lower.lastIndexOf("/") + 1);
    const score = name.startsWith(q) ? 0 : name.includes(q) ? 1 : lower.includes(q) ? 2 : inOrder(lower, q) ? 3 : -1;
    if (score >= 0) scored.push({ path, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  return scored.slice(0, max).map((entry) => entry.path);
}

function inOrder(text: string, letters: string): boolean {
  let at = 0;
  for (const letter of letters) {
    at = text.indexOf(letter, at);
    if (at === -1) return false;
    at += 1;
  }
  return true;
}

/** Drops matches that are symlinks leading out of the workspace (or nowhere). */
export function insideWorkspace(workspace: string, paths: readonly string[]): string[] {
  const root = realpathSync(workspace);
  return paths.filter((path) => {
    const full = join(root, path);
    try {
      if (!lstatSync(full).isSymbolicLink()) return true;
      const target = realpathSync(full);
      return target === root || target.startsWith(`${root}${sep}`);
    } catch {
      return false;
    }
  });
}

/** The mention the composer inserts for a file. */
export function mentionFor(path: string): string {
  return /[\s"]/.test(path) ? `@"${path.replace(/"/g, "")}"` : `@${path}`;
}
