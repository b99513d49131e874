import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { type ChildWorkspace, createGitWorktree, createScratch, createWorkspaceRegistry, WorkspaceError } from "./workspaces.ts";

// base/<name>/       one parent repository per test
// base/tmp-<name>/   the temporary root its isolated workspaces go to (outside the repository)
let base = "";
let env: Record<string, string> = {};

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-workspaces-")));
  writeFileSync(join(base, "gitconfig"), "");
  env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: base,
    GIT_CONFIG_GLOBAL: join(base, "gitconfig"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CEILING_DIRECTORIES: base,
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.invalid",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.invalid",
  };
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

function git(cwd: string, args: string[], stdin?: Uint8Array): string {
  const result = Bun.spawnSync(["git", ...args], { cwd, env, stdin: stdin ?? "ignore", stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

function makeRepo(name: string, files: Record<string, string | Uint8Array>): string {
  const repo = join(base, name);
  mkdirSync(repo);
  git(repo, ["-c", "init.defaultBranch=main", "init", "-q"]);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", "initial"]);
  return repo;
}

const tempRootFor = (name: string) => join(base, `tmp-${name}`);

/** Everything about a checkout that a child must not change, read without refreshing the index. */
function snapshot(repo: string) {
  return {
    index: createHash("sha256").update(readFileSync(join(repo, ".git", "index"))).digest("hex"),
    status: git(repo, ["--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"]),
    head: git(repo, ["rev-parse", "HEAD"]),
    branch: git(repo, ["symbolic-ref", "HEAD"]),
    refs: git(repo, ["for-each-ref"]),
    files: tree(repo),
  };
}

/** Every file under `root` except .git, with its bytes. */
function tree(root: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === ".git") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else found[relative(root, path)] = readFileSync(path).toString("base64");
    }
  };
  walk(root);
  return found;
}

const worktreePaths = (repo: string) =>
  git(repo, ["worktree", "list", "--porcelain"])
    .split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length));

const objectCounts = (repo: string) => git(repo, ["count-objects", "-v"]).split("\n").filter((line) => /^(count|in-pack|size):/.test(line));

describe("git-worktree", () => {
  test("is a private detached checkout of HEAD without the parent's uncommitted changes", async () => {
    const repo = makeRepo("detached", { "a.txt": "committed\n" });
    writeFileSync(join(repo, "a.txt"), "edited, not committed\n");
    writeFileSync(join(repo, "untracked.txt"), "new\n");
    writeFileSync(join(repo, "staged.txt"), "staged\n");
    git(repo, ["add", "staged.txt"]);
    const branches = git(repo, ["branch", "--list"]);
    // Variables that would point git at another repository are ignored.
    const hostileEnv = { ...env, GIT_DIR: join(base, "nowhere"), GIT_WORK_TREE: join(base, "nowhere"), GIT_INDEX_FILE: join(base, "nowhere", "index") };
    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("detached"), env: hostileEnv });
    try {
      expect(ws.mode).toBe("git-worktree");
      expect(ws.path.startsWith(`${tempRootFor("detached")}/`)).toBe(true);
      expect(realpathSync(ws.path)).toBe(ws.path);
      expect(statSync(dirname(ws.path)).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(ws.path, "a.txt"), "utf8")).toBe("committed\n");
      expect(existsSync(join(ws.path, "untracked.txt"))).toBe(false);
      expect(existsSync(join(ws.path, "staged.txt"))).toBe(false);
      expect(ws.baseCommit).toBe(git(repo, ["rev-parse", "HEAD"]).trim());
      expect(git(ws.path, ["rev-parse", "HEAD"])).toBe(git(repo, ["rev-parse", "HEAD"]));
      expect(() => git(ws.path, ["symbolic-ref", "-q", "HEAD"])).toThrow(); // detached
      expect(git(repo, ["branch", "--list"])).toBe(branches);
      expect(worktreePaths(repo)).toEqual([repo, ws.path]);
    } finally {
      await ws.remove();
    }
  });

  test("a child's edits leave the parent checkout, index, refs and objects untouched", async () => {
    const repo = makeRepo("untouched", { "a.txt": "one\n", "b.txt": "two\n" });
    writeFileSync(join(repo, "a.txt"), "parent's own edit\n");
    const before = snapshot(repo);
    const objects = objectCounts(repo);
    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("untouched"), env });
    writeFileSync(join(ws.path, "b.txt"), "child edit\n");
    writeFileSync(join(ws.path, "c.txt"), "child file\n");
    rmSync(join(ws.path, "a.txt"));
    const changes = await ws.collectChanges();
    expect(changes.changedFiles).toEqual(["a.txt", "b.txt", "c.txt"]);
    expect(snapshot(repo)).toEqual(before);
    expect(objectCounts(repo)).toEqual(objects);
    // collecting did not stage anything in the child's own index either
    expect(git(ws.path, ["diff", "--cached", "--name-only"])).toBe("");
    await ws.remove();
    expect(snapshot(repo)).toEqual(before);
  });

  test("the patch is binary-safe and git apply reproduces the child's files in the parent", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i} of a file that moves\n`).join("");
    const repo = makeRepo("patch", {
      ".gitignore": "*.log\n",
      "text.txt": "alpha\nbeta\ngamma\n",
      "bin.dat": Buffer.concat([Buffer.from([0, 1, 2, 0]), randomBytes(4096)]),
      "gone.txt": "delete me\n",
      "old-name.txt": lines,
      "latin1.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "script.sh": "#!/bin/sh\necho hi\n",
    });
    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("patch"), env });
    writeFileSync(join(ws.path, "text.txt"), "alpha\nBETA\ngamma\ndelta\n");
    writeFileSync(join(ws.path, "bin.dat"), Buffer.concat([Buffer.from([0, 9, 0]), randomBytes(3000)]));
    writeFileSync(join(ws.path, "new.bin"), Buffer.concat([Buffer.from([0]), randomBytes(500)]));
    mkdirSync(join(ws.path, "dir"));
    writeFileSync(join(ws.path, "dir", "new.txt"), "fresh ✓\n");
    rmSync(join(ws.path, "gone.txt"));
    mkdirSync(join(ws.path, "moved"));
    renameSync(join(ws.path, "old-name.txt"), join(ws.path, "moved", "new-name.txt"));
    writeFileSync(join(ws.path, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0a]));
    writeFileSync(join(ws.path, "latin1-new.txt"), Buffer.from([0x64, 0xe9, 0x6a, 0xe0, 0x0a]));
    chmodSync(join(ws.path, "script.sh"), 0o755);
    writeFileSync(join(ws.path, "debug.log"), "ignored\n");

    const { changedFiles, patch } = await ws.collectChanges();
    expect(changedFiles).toEqual(["bin.dat", "dir/new.txt", "gone.txt", "latin1-new.txt", "latin1.txt", "moved/new-name.txt", "new.bin", "old-name.txt", "script.sh", "text.txt"]);
    expect(patch).toContain("rename from old-name.txt");
    expect(patch).not.toContain("\uFFFD");
    // Text that is not UTF-8 travels as a binary hunk, so the string form loses nothing.
    const latin1Section = patch.split("diff --git ").find((section) => section.startsWith("a/latin1.txt "));
    expect(latin1Section).toContain("GIT binary patch");

    const bytes = new TextEncoder().encode(patch);
    git(repo, ["apply", "--check"], bytes);
    git(repo, ["apply"], bytes);
    const expected = tree(ws.path);
    delete expected["debug.log"];
    expect(tree(repo)).toEqual(expected);
    expect(statSync(join(repo, "script.sh")).mode & 0o111).not.toBe(0);
    await ws.remove();
  });

  test("no changes give an empty change set", async () => {
    const repo = makeRepo("empty", { "a.txt": "a\n" });
    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("empty"), env });
    writeFileSync(join(ws.path, "ignored-by-nobody.txt"), "x\n");
    rmSync(join(ws.path, "ignored-by-nobody.txt"));
    expect(await ws.collectChanges()).toEqual({ changedFiles: [], patch: "" });
    await ws.remove();
  });

  test("collecting uses the worktree's recorded git directory, not a .git file the child rewrote", async () => {
    const repo = makeRepo("rewritten", { "a.txt": "a\n" });
    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("rewritten"), env });
    writeFileSync(join(ws.path, "a.txt"), "edited\n");
    writeFileSync(join(ws.path, ".git"), `gitdir: ${join(base, "no-such-git-dir")}\n`);
    const changes = await ws.collectChanges();
    expect(changes.changedFiles).toEqual(["a.txt"]);
    expect(changes.patch).toContain("+edited");
    await ws.remove();
    expect(worktreePaths(repo)).toEqual([repo]);
  });

  test("a subdirectory workspace maps to the same subdirectory, and remap follows the repository", async () => {
    const repo = makeRepo("nested", { "packages/app/index.ts": "export {};\n", "packages/lib/x.ts": "export const x = 1;\n" });
    const ws = await createGitWorktree({ parentWorkspace: join(repo, "packages", "app"), tempRoot: tempRootFor("nested"), env });
    const root = ws.remap(repo);
    expect(root).toBe(dirname(dirname(ws.path)));
    expect(dirname(root ?? "").startsWith(`${tempRootFor("nested")}/`)).toBe(true);
    expect(ws.path).toBe(join(root ?? "", "packages", "app"));
    expect(readFileSync(join(ws.path, "index.ts"), "utf8")).toBe("export {};\n");
    expect(ws.remap(join(repo, "packages", "lib"))).toBe(join(root ?? "", "packages", "lib"));
    expect(ws.remap(join(repo, "packages", "app"))).toBe(ws.path);
    expect(ws.remap(`${repo}-sibling`)).toBeUndefined();
    expect(ws.remap(base)).toBeUndefined();
    expect(ws.remap(join(repo, ".git"))).toBeUndefined();
    expect(ws.remap(join(repo, ".git", "hooks"))).toBeUndefined();
    expect(ws.remap("relative/path")).toBeUndefined();
    // changed paths stay relative to the repository, not to the workspace
    writeFileSync(join(ws.path, "index.ts"), "export const app = 1;\n");
    expect((await ws.collectChanges()).changedFiles).toEqual(["packages/app/index.ts"]);
    await ws.remove();

    // A workspace directory that is not committed starts empty in the worktree.
    mkdirSync(join(repo, "notes"));
    writeFileSync(join(repo, "notes", "draft.md"), "uncommitted\n");
    const notes = await createGitWorktree({ parentWorkspace: join(repo, "notes"), tempRoot: tempRootFor("nested"), env });
    expect(notes.path).toBe(join(notes.remap(repo) ?? "", "notes"));
    expect(readdirSync(notes.path)).toEqual([]);
    await notes.remove();
  });

  test("refuses a directory outside any repository, a repository without commits, and a temp root inside the repository", async () => {
    const plain = join(base, "plain");
    mkdirSync(plain);
    const tempRoot = tempRootFor("refused");
    const outside = createGitWorktree({ parentWorkspace: plain, tempRoot, env });
    await expect(outside).rejects.toThrow(WorkspaceError);
    await expect(outside).rejects.toThrow("git-worktree needs the workspace to be inside a git repository with at least one commit");

    const fresh = join(base, "fresh");
    mkdirSync(fresh);
    git(fresh, ["init", "-q"]);
    const noCommit = createGitWorktree({ parentWorkspace: fresh, tempRoot, env });
    await expect(noCommit).rejects.toThrow(WorkspaceError);
    await expect(noCommit).rejects.toThrow("has no commit yet");

    const repo = makeRepo("temp-inside", { "a.txt": "a\n" });
    await expect(createGitWorktree({ parentWorkspace: repo, tempRoot: join(repo, "tmp"), env })).rejects.toThrow("is inside the repository");
    await expect(createGitWorktree({ parentWorkspace: join(base, "missing"), tempRoot, env })).rejects.toThrow(WorkspaceError);
    expect(existsSync(tempRoot) ? readdirSync(tempRoot) : []).toEqual([]);
    expect(worktreePaths(repo)).toEqual([repo]);
  });

  test("an aborted signal creates nothing", async () => {
    const repo = makeRepo("aborted", { "a.txt": "a\n" });
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    await expect(createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("aborted"), env, signal: controller.signal })).rejects.toThrow("stop now");
    expect(worktreePaths(repo)).toEqual([repo]);
    expect(existsSync(tempRootFor("aborted")) ? readdirSync(tempRootFor("aborted")) : []).toEqual([]);
  });

  test("remove() deletes the worktree and its record, idempotently, even after the child broke it", async () => {
    const repo = makeRepo("removal", { "a.txt": "a\n" });
    const first = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("removal"), env });
    writeFileSync(join(first.path, "unsaved.txt"), "untracked work\n");
    // The user's own stale worktree record (its directory is gone) is not ours to prune.
    const userWorktree = join(base, "user-worktree");
    git(repo, ["worktree", "add", "--detach", "--quiet", userWorktree]);
    rmSync(userWorktree, { recursive: true });
    await first.remove();
    await first.remove();
    first.removeSync();
    expect(existsSync(dirname(first.path))).toBe(false);
    expect(worktreePaths(repo)).toEqual([repo, userWorktree]);
    git(repo, ["worktree", "prune"]);
    await expect(first.collectChanges()).rejects.toThrow(WorkspaceError);

    // The child deleted its .git file and made a directory read-only: git cannot remove it.
    const broken = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("removal"), env });
    rmSync(join(broken.path, ".git"));
    mkdirSync(join(broken.path, "locked"));
    writeFileSync(join(broken.path, "locked", "f.txt"), "x\n");
    chmodSync(join(broken.path, "locked"), 0o500);
    broken.removeSync();
    expect(existsSync(dirname(broken.path))).toBe(false);
    expect(worktreePaths(repo)).toEqual([repo]);
    expect(readdirSync(tempRootFor("removal"))).toEqual([]);
  });

  test("a hostile repository configuration runs no program", async () => {
    const markers = join(base, "markers");
    mkdirSync(markers);
    const evil = join(base, "evil.sh");
    writeFileSync(evil, `#!/bin/sh\ntouch "${markers}/$1"\ncat\n`, { mode: 0o755 });
    const hooks = join(base, "evil-hooks");
    mkdirSync(hooks);
    for (const hook of ["post-checkout", "reference-transaction", "pre-auto-gc"]) writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch "${markers}/${hook}"\n`, { mode: 0o755 });
    writeFileSync(join(base, "fsmonitor.sh"), `#!/bin/sh\ntouch "${markers}/fsmonitor"\nexit 1\n`, { mode: 0o755 });

    const repo = makeRepo("hostile", { ".gitattributes": "* filter=evil diff=evil\n", "a.txt": "a\n" });
    const config: Array<[string, string]> = [
      ["core.hooksPath", hooks],
      ["core.fsmonitor", join(base, "fsmonitor.sh")],
      ["filter.evil.smudge", `${evil} smudge`],
      ["filter.evil.clean", `${evil} clean`],
      ["filter.evil.required", "true"],
      ["diff.evil.textconv", `${evil} textconv`],
      ["diff.external", `${evil} external`],
    ];
    for (const [key, value] of config) git(repo, ["config", key, value]);

    // The same steps with plain git do run these programs, so the assertion below can fail.
    const plain = join(base, "plain-hostile");
    git(repo, ["worktree", "add", "--detach", plain]);
    writeFileSync(join(plain, "a.txt"), "changed\n");
    git(plain, ["add", "-A"]);
    git(plain, ["diff", "--cached", "HEAD"]);
    git(plain, ["diff", "--no-ext-diff", "--cached", "HEAD"]);
    expect(readdirSync(markers).sort()).toEqual(["clean", "external", "fsmonitor", "post-checkout", "reference-transaction", "smudge", "textconv"]);
    git(repo, ["worktree", "remove", "--force", plain]);
    rmSync(markers, { recursive: true });
    mkdirSync(markers);

    const ws = await createGitWorktree({ parentWorkspace: repo, tempRoot: tempRootFor("hostile"), env });
    writeFileSync(join(ws.path, "a.txt"), "changed\n");
    writeFileSync(join(ws.path, "b.txt"), "new\n");
    const changes = await ws.collectChanges();
    expect(changes.changedFiles).toEqual(["a.txt", "b.txt"]);
    expect(changes.patch).toContain("+changed");
    await ws.remove();
    expect(readdirSync(markers)).toEqual([]);
  });
});

describe("scratch", () => {
  test("is an empty private directory under the temp root, listed and removed", async () => {
    const workspace = makeRepo("scratch-parent", { "a.txt": "a\n" });
    const ws = await createScratch({ tempRoot: tempRootFor("scratch") });
    expect(ws.mode).toBe("scratch");
    expect(ws.path.startsWith(`${tempRootFor("scratch")}/`)).toBe(true);
    expect(ws.path.startsWith(`${workspace}/`)).toBe(false);
    expect(statSync(ws.path).mode & 0o777).toBe(0o700);
    expect(readdirSync(ws.path)).toEqual([]);
    expect(ws.remap(workspace)).toBeUndefined();
    expect(ws.baseCommit).toBeUndefined();
    writeFileSync(join(ws.path, "b.txt"), "b\n");
    mkdirSync(join(ws.path, "sub"));
    writeFileSync(join(ws.path, "sub", "a.bin"), randomBytes(10));
    expect(await ws.collectChanges()).toEqual({ changedFiles: ["b.txt", "sub/a.bin"], patch: "" });
    await ws.remove();
    await ws.remove();
    expect(existsSync(ws.path)).toBe(false);
  });
});

describe("workspace registry", () => {
  const make = async (name: string): Promise<{ repo: string; workspaces: ChildWorkspace[] }> => {
    const repo = makeRepo(name, { "a.txt": "a\n" });
    const tempRoot = tempRootFor(name);
    const workspaces = [
      await createGitWorktree({ parentWorkspace: repo, tempRoot, env }),
      await createGitWorktree({ parentWorkspace: repo, tempRoot, env }),
      await createScratch({ tempRoot }),
    ];
    return { repo, workspaces };
  };

  test("removeAllSync removes every tracked workspace", async () => {
    const { repo, workspaces } = await make("registry-sync");
    const registry = createWorkspaceRegistry();
    for (const ws of workspaces) registry.add(ws);
    expect(registry.size()).toBe(3);
    registry.removeAllSync();
    expect(registry.size()).toBe(0);
    for (const ws of workspaces) expect(existsSync(ws.path)).toBe(false);
    expect(worktreePaths(repo)).toEqual([repo]);
    expect(readdirSync(tempRootFor("registry-sync"))).toEqual([]);
  });

  test("removeAll removes what is tracked and nothing that was deleted from it", async () => {
    const { repo, workspaces } = await make("registry-async");
    const [kept, first, scratch] = workspaces as [ChildWorkspace, ChildWorkspace, ChildWorkspace];
    const registry = createWorkspaceRegistry();
    for (const ws of workspaces) registry.add(ws);
    registry.delete(kept);
    await registry.removeAll();
    expect(registry.size()).toBe(0);
    expect(existsSync(first.path)).toBe(false);
    expect(existsSync(scratch.path)).toBe(false);
    expect(existsSync(kept.path)).toBe(true);
    expect(worktreePaths(repo)).toEqual([repo, kept.path]);
    await kept.remove();
  });
});
