/**
 * The composer's `@` menu: the workspace's files, filtered as the user types. Listed once by
 * ripgrep (gitignore respected, symlinks not followed, bounded), never showing what the `find`
 * tool hides (.git, node_modules, zero's state, secret-like files) nor dependency and cache
 * directories; a symlink among the matches is shown only when it resolves inside the workspace.
 * Matching and the mention inserted live in composer-menu.ts (the view's side).
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
