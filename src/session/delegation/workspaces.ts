/**
 * Isolated workspaces for delegated child runs: a detached git worktree of the parent repository's
 * committed HEAD, or an empty scratch directory. Each lives in its own private (0700) directory
 * under a temporary root, stays available for follow-up turns, and is removed at shutdown through
 * a registry. The parent checkout is only read: git records the worktree under the repository's
 * .git/worktrees, and nothing else of the parent changes (files, index, HEAD, branches, objects).
 */
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { MAX_ARTIFACT_BYTES } from "../../store/artifacts.ts";
import type { Env } from "../../util/env.ts";
import { isWithin } from "../../util/paths.ts";
import { filterOverrides, type Git, GitFailure, type GitResult, gitMessage, locateGit, patchAsText, runGit, runGitSync, text } from "./git.ts";

export type ChildWorkspace = {
  mode: "git-worktree" | "scratch";
  /** Canonical (realpath) directory the child works in. */
  path: string;
  /** git-worktree: the commit the worktree was created from, which the patch applies to. */
  baseCommit: string | undefined;
  /** git-worktree: the workspace's path inside the repository ("" at its top; `/`-separated), what changedFiles are relative to. */
  repoPrefix: string;
  /**
   * The counterpart of a parent root (canonical absolute path) inside this workspace: for a
   * git-worktree, a root inside the parent repository maps to the same relative path in the
   * worktree; anything else (a root outside the repository, its .git, every scratch root) is dropped.
   */
  remap(parentRoot: string): string | undefined;
  /**
   * git-worktree: the changed paths (repository-relative, sorted; a rename lists both paths) and a
   * `git diff --binary` patch against baseCommit, new untracked files included and ignored files
   * excluded, that `git apply` accepts in a parent checkout at that commit. Nothing changed gives
   * `{ changedFiles: [], patch: "" }`. scratch: every file present (relative), and no patch.
   */
  collectChanges(): Promise<{ changedFiles: string[]; patch: string }>;
  /** Removes the worktree (or scratch directory) and its private directory. Idempotent. */
  remove(): Promise<void>;
  /** The same, synchronously for exit handlers; best effort, never throws. */
  removeSync(): void;
};

/** A problem the user can act on (not a repository, no commit, git missing, patch too large). */
export class WorkspaceError extends Error {
  override name = "WorkspaceError";
}

export type GitWorktreeOptions = {
  parentWorkspace: string;
  tempRoot: string;
  signal?: AbortSignal;
  /** Where PATH, HOME and the user's git configuration location come from; defaults to process.env. */
  env?: Env;
  /** Upper bound for each git call; defaults to two minutes. */
  timeoutMs?: number;
};

const NEEDS_REPOSITORY = "git-worktree needs the workspace to be inside a git repository with at least one commit";

/** Creates a detached worktree of the committed HEAD of the repository holding `parentWorkspace`. */
export async function createGitWorktree(options: GitWorktreeOptions): Promise<ChildWorkspace> {
  const { signal } = options;
  const workspace = existingDirectory(options.parentWorkspace, "workspace");
  const git = locateGit(options.env ?? process.env, workspace, options.timeoutMs);
  if (git === undefined) throw new WorkspaceError(`${NEEDS_REPOSITORY}, and no git executable was found on PATH. Install git, or use a scratch or shared workspace.`);
  return withGitErrors(async () => {
    const here = { cwd: workspace, signal };
    const top = await runGit(git, ["rev-parse", "--show-toplevel"], here);
    if (top.code !== 0) throw new WorkspaceError(`${NEEDS_REPOSITORY} (${workspace}: ${gitMessage(top)}).`);
    const repoTop = realpathSync(text(top));
    if (!isWithin(repoTop, workspace)) throw new WorkspaceError(`${NEEDS_REPOSITORY} (git places ${workspace} in ${repoTop}, which does not contain it).`);
    if (isWithin(repoTop, git.executable)) throw new WorkspaceError(`the git executable found on PATH (${git.executable}) is inside the repository ${repoTop}; put a system git first on PATH.`);
    const head = await runGit(git, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], here);
    if (head.code !== 0) throw new WorkspaceError(`${NEEDS_REPOSITORY} (${repoTop} has no commit yet).`);
    const baseCommit = text(head);
    const common = await runGit(git, ["rev-parse", "--git-common-dir"], { cwd: repoTop, signal });
    if (common.code !== 0) throw new WorkspaceError(`${NEEDS_REPOSITORY} (${repoTop}: ${gitMessage(common)}).`);
    const filters = await filterOverrides(git, here);
    if (typeof filters === "string") throw new WorkspaceError(`git-worktree refused ${repoTop}: ${filters}.`);

    const tempRoot = privateTempRoot(options.tempRoot);
    if (isWithin(repoTop, tempRoot)) throw new WorkspaceError(`the temporary directory ${tempRoot} is inside the repository ${repoTop}; a worktree there would appear in the parent checkout.`);
    const outer = realpathSync(mkdtempSync(join(tempRoot, "zero-worktree-")));
    const checkout = join(outer, basename(repoTop) || "checkout");
    const dirs: WorktreeDirs = { git, outer, checkout, commonDir: resolve(repoTop, text(common)), adminDir: "", baseCommit, repoTop };
    try {
      const added = await runGit(git, ["worktree", "add", "--detach", "--quiet", checkout, baseCommit], { cwd: repoTop, config: filters, signal });
      if (added.code !== 0) throw new WorkspaceError(`creating a git worktree of ${repoTop} failed: ${gitMessage(added)}`);
      const located = await runGit(git, ["rev-parse", "--absolute-git-dir"], { cwd: checkout, signal });
      if (located.code !== 0) throw new WorkspaceError(`the new worktree of ${repoTop} is unreadable: ${gitMessage(located)}`);
      dirs.adminDir = text(located);
      // A workspace directory that is not committed (new, or ignored) starts empty in the worktree.
      const path = join(checkout, relative(repoTop, workspace));
      mkdirSync(path, { recursive: true });
      return worktreeWorkspace(dirs, realpathSync(path));
    } catch (error) {
      removeWorktreeSync(dirs);
      throw error;
    }
  });
}

/** Creates an empty private directory under `tempRoot`. */
export async function createScratch(options: { tempRoot: string }): Promise<ChildWorkspace> {
  const dir = realpathSync(mkdtempSync(join(privateTempRoot(options.tempRoot), "zero-scratch-")));
  let removed = false;
  const removeSync = () => {
    removed = true;
    forceRemove(dir);
  };
  return {
    mode: "scratch",
    path: dir,
    baseCommit: undefined,
    repoPrefix: "",
    remap: () => undefined,
    async collectChanges() {
      if (removed) throw new WorkspaceError(`the scratch workspace ${dir} was already removed`);
      return { changedFiles: listFiles(dir), patch: "" };
    },
    async remove() {
      try {
        removeSync();
      } catch (error) {
        throw new WorkspaceError(`could not remove the scratch workspace ${dir}: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    removeSync() {
      try {
        removeSync();
      } catch {
        // best effort by contract
      }
    },
  };
}

export type WorkspaceRegistry = {
  add(workspace: ChildWorkspace): void;
  delete(workspace: ChildWorkspace): void;
  /** Removes every tracked workspace; failures stay tracked and are thrown together (AggregateError) once all ran. */
  removeAll(): Promise<void>;
  /** Removes every tracked workspace synchronously (process "exit" handlers); never throws. */
  removeAllSync(): void;
  size(): number;
};

/** Tracks every isolated workspace of a process so shutdown can remove them all. */
export function createWorkspaceRegistry(): WorkspaceRegistry {
  const live = new Set<ChildWorkspace>();
  return {
    add: (workspace) => void live.add(workspace),
    delete: (workspace) => void live.delete(workspace),
    async removeAll() {
      const all = [...live];
      const results = await Promise.allSettled(all.map((workspace) => workspace.remove()));
      const failures: unknown[] = [];
      for (const [index, result] of results.entries()) {
        // A failed one stays tracked, so the synchronous exit-time pass tries it once more.
        if (result.status === "fulfilled") live.delete(all[index] as ChildWorkspace);
        else failures.push(result.reason);
      }
      if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${all.length} isolated workspaces could not be removed`);
    },
    removeAllSync() {
      for (const workspace of live) workspace.removeSync();
      live.clear();
    },
    size: () => live.size,
  };
}

type WorktreeDirs = { git: Git; outer: string; checkout: string; commonDir: string; adminDir: string; baseCommit: string; repoTop: string };

function worktreeWorkspace(dirs: WorktreeDirs, path: string): ChildWorkspace {
  let removing: Promise<void> | undefined;
  let finished = false;
  return {
    mode: "git-worktree",
    path,
    baseCommit: dirs.baseCommit,
    repoPrefix: relative(dirs.checkout, path).split(sep).join("/"),
    remap(parentRoot) {
      if (!isAbsolute(parentRoot)) return undefined;
      const inside = relative(dirs.repoTop, resolve(parentRoot));
      if (!isWithin(dirs.repoTop, resolve(parentRoot)) || inside === ".git" || inside.startsWith(`.git${sep}`)) return undefined;
      return join(dirs.checkout, inside);
    },
    collectChanges() {
      if (removing !== undefined) return Promise.reject(new WorkspaceError(`the worktree ${dirs.checkout} was already removed`));
      return withGitErrors(() => collectWorktreeChanges(dirs));
    },
    remove() {
      removing ??= removeWorktree(dirs).finally(() => {
        finished = true;
      });
      return removing;
    },
    removeSync() {
      // Also when an asynchronous removal is still under way: the process may exit before it ends.
      if (finished) return;
      removing ??= Promise.resolve();
      removeWorktreeSync(dirs);
      finished = true;
    },
  };
}

/**
 * Stages the worktree into a throwaway index and object directory (the repository's objects serve as
 * read-only alternates), so neither the child's own index nor the parent's object store changes.
 * git runs with an explicit GIT_DIR: a .git file the child rewrote cannot point it at other config.
 */
async function collectWorktreeChanges(dirs: WorktreeDirs): Promise<{ changedFiles: string[]; patch: string }> {
  const { git, checkout, baseCommit } = dirs;
  const scratch = mkdtempSync(join(dirs.outer, "collect-"));
  try {
    const objects = join(dirs.commonDir, "objects");
    const env = {
      GIT_DIR: dirs.adminDir,
      GIT_WORK_TREE: checkout,
      GIT_INDEX_FILE: join(scratch, "index"),
      GIT_OBJECT_DIRECTORY: join(scratch, "objects"),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objects.includes(":") ? JSON.stringify(objects) : objects,
    };
    mkdirSync(env.GIT_OBJECT_DIRECTORY);
    const filters = await filterOverrides(git, { cwd: checkout, env });
    if (typeof filters === "string") throw new WorkspaceError(`collecting the worktree's changes was refused: ${filters}.`);
    const call = { cwd: checkout, env, config: filters };
    const must = async (args: string[], what: string, maxOutputBytes?: number): Promise<GitResult> => {
      const result = await runGit(git, args, { ...call, maxOutputBytes });
      if (result.code !== 0) throw new WorkspaceError(`${what} failed in ${checkout}: ${gitMessage(result)}`);
      return result;
    };

    // The child's index (when readable) only lends its file stat cache, so unchanged files are not rehashed.
    let seeded = false;
    try {
      copyFileSync(join(dirs.adminDir, "index"), env.GIT_INDEX_FILE);
      seeded = (await runGit(git, ["read-tree", "-m", baseCommit], call)).code === 0;
    } catch {
      // no usable index: start from the commit alone
    }
    if (!seeded) {
      rmSync(env.GIT_INDEX_FILE, { force: true });
      await must(["read-tree", baseCommit], "reading the base commit");
    }
    await must(["add", "--all"], "staging the changes");
    const names = await must(["diff", "--cached", "--name-only", "--no-renames", "-z", baseCommit, "--"], "listing the changes");
    const changedFiles = new TextDecoder().decode(names.stdout).split("\0").filter((name) => name !== "").sort();
    if (changedFiles.length === 0) return { changedFiles, patch: "" };

    const diffArgs = ["diff", "--cached", "--binary", "--full-index", "--no-ext-diff", "--no-textconv", "--no-color", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", baseCommit, "--"];
    let diff: GitResult;
    try {
      diff = await must(diffArgs, "diffing the changes", MAX_ARTIFACT_BYTES);
    } catch (error) {
      if (!(error instanceof GitFailure) || error.kind !== "output") throw error;
      throw new WorkspaceError(`the ${changedFiles.length} changed files make a patch larger than ${MAX_ARTIFACT_BYTES} bytes, too large to return; the worktree ${checkout} keeps them until shutdown`);
    }
    const patch = await patchAsText(diff.stdout, async (oid) => (await must(["cat-file", "blob", oid], "reading a changed file")).stdout);
    return { changedFiles, patch };
  } finally {
    forceRemove(scratch);
  }
}

const REMOVE = (dirs: WorktreeDirs) => ["worktree", "remove", "--force", "--force", dirs.checkout];
const PRUNE = ["worktree", "prune"];
// The common directory rather than the parent checkout, which may be gone by shutdown.
const removalCall = (dirs: WorktreeDirs) => ({ cwd: dirname(dirs.outer), env: { GIT_DIR: dirs.commonDir } });

/**
 * `git worktree remove`, then the private directory regardless (the fallback for a worktree git
 * refuses: a deleted .git file, a submodule). `git worktree prune` runs only when our own record in
 * .git/worktrees outlived that, because it also drops the repository's other stale records.
 */
async function removeWorktree(dirs: WorktreeDirs): Promise<void> {
  const present = existsSync(dirs.checkout);
  if (present) await runGit(dirs.git, REMOVE(dirs), removalCall(dirs)).catch(() => undefined);
  forceRemove(dirs.outer);
  if (recordLeft(dirs, present)) await runGit(dirs.git, PRUNE, removalCall(dirs)).catch(() => undefined);
  if (existsSync(dirs.outer)) throw new WorkspaceError(`could not remove the worktree ${dirs.checkout}`);
}

function removeWorktreeSync(dirs: WorktreeDirs): void {
  try {
    const present = existsSync(dirs.checkout);
    if (present) runGitSync(dirs.git, REMOVE(dirs), removalCall(dirs));
    forceRemove(dirs.outer);
    if (recordLeft(dirs, present)) runGitSync(dirs.git, PRUNE, removalCall(dirs));
  } catch {
    // best effort by contract
  }
}

/** Before the record's path is known (a failed creation), a checkout on disk means there may be one. */
function recordLeft(dirs: WorktreeDirs, checkoutWasPresent: boolean): boolean {
  return dirs.adminDir === "" ? checkoutWasPresent : existsSync(dirs.adminDir);
}

/** Deletes a tree; directories the child made read-only are opened up and the removal retried. */
function forceRemove(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    makeWritable(path);
    rmSync(path, { recursive: true, force: true });
  }
}

function makeWritable(dir: string): void {
  try {
    if (!lstatSync(dir).isDirectory()) return;
    chmodSync(dir, 0o700);
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) makeWritable(join(dir, entry.name));
  } catch {
    // whatever cannot be opened up is reported by the retried removal
  }
}

/** Every non-directory entry under `root`, relative and sorted; symbolic links are listed, not followed. */
function listFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(root, path));
    }
  };
  walk(root);
  return found.sort();
}

function existingDirectory(path: string, what: string): string {
  try {
    const real = realpathSync(path);
    if (lstatSync(real).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new WorkspaceError(`the ${what} ${path} is not an existing directory`);
}

function privateTempRoot(path: string): string {
  if (!isAbsolute(path)) throw new WorkspaceError(`the temporary root must be an absolute path, not ${JSON.stringify(path)}`);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  return realpathSync(path);
}

/** Turns a git call that did not finish (timeout, output limit) into a WorkspaceError; aborts pass through. */
async function withGitErrors<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof GitFailure) throw new WorkspaceError(error.message);
    throw error;
  }
}
