import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { completed, failed, git, makeBase, type Runner, runnerFor } from "../../test/support/write-tool.ts";

// base/ws/        the workspace
// base/outside/   not a root
let base = "";
let ws = "";
let outside = "";
let run: Runner;

beforeAll(() => {
  base = makeBase("zero-write-move-");
  ws = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(ws, { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "keep.txt"), "keep\n");
  symlinkSync(outside, join(ws, "out-link"));
  ({ run } = runnerFor(base, { workspace: ws, privateDirs: [join(ws, ".zero-state")] }));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

describe("move", () => {
  test("renames a file, creating the destination's parents", async () => {
    writeFileSync(join(ws, "a.txt"), "a\n");
    const result = await run({ operation: "move", path: "a.txt", to: "moved/b.txt" });
    expect(completed(result)).toBe("moved a.txt → moved/b.txt");
    expect(result.diff).toBe("rename from a.txt\nrename to moved/b.txt\n");
    expect(existsSync(join(ws, "a.txt"))).toBe(false);
    expect(readFileSync(join(ws, "moved/b.txt"), "utf8")).toBe("a\n");
  });

  test("renames a directory with its contents", async () => {
    mkdirSync(join(ws, "dir1/inner"), { recursive: true });
    writeFileSync(join(ws, "dir1/inner/f.txt"), "f\n");
    expect(completed(await run({ operation: "move", path: "dir1", to: "dir2" }))).toBe("moved directory dir1 → dir2");
    expect(readFileSync(join(ws, "dir2/inner/f.txt"), "utf8")).toBe("f\n");
    expect(failed(await run({ operation: "move", path: "dir2", to: "dir2/inner/x" }))).toContain("into itself");
  });

  test("refuses to overwrite unless asked", async () => {
    writeFileSync(join(ws, "src.txt"), "new\n");
    writeFileSync(join(ws, "dst.txt"), "old\n");
    expect(failed(await run({ operation: "move", path: "src.txt", to: "dst.txt" }))).toContain("dst.txt already exists; set overwrite: true");
    expect(readFileSync(join(ws, "dst.txt"), "utf8")).toBe("old\n");
    expect(completed(await run({ operation: "move", path: "src.txt", to: "dst.txt", overwrite: true }))).toContain("replacing the previous dst.txt");
    expect(readFileSync(join(ws, "dst.txt"), "utf8")).toBe("new\n");
    mkdirSync(join(ws, "a-dir"));
    writeFileSync(join(ws, "file.txt"), "x");
    expect(failed(await run({ operation: "move", path: "file.txt", to: "a-dir", overwrite: true }))).toContain("a file cannot replace it");
  });

  test("refuses a destination outside, also through a symlinked directory leading out", async () => {
    writeFileSync(join(ws, "stay.txt"), "stay\n");
    expect(failed(await run({ operation: "move", path: "stay.txt", to: "../outside/stay.txt" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "move", path: "stay.txt", to: "out-link/stay.txt" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "move", path: "out-link/keep.txt", to: "stolen.txt" }))).toContain("outside the allowed roots");
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    expect(readFileSync(join(ws, "stay.txt"), "utf8")).toBe("stay\n");
  });

  test("moves a symlink itself, not its target", async () => {
    symlinkSync(outside, join(ws, "link-to-move"));
    expect(completed(await run({ operation: "move", path: "link-to-move", to: "renamed-link" }))).toBe("moved symlink link-to-move → renamed-link");
    expect(readlinkSync(join(ws, "renamed-link"))).toBe(outside);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
  });

  test("refuses moving the workspace root or a directory holding zero's state", async () => {
    expect(failed(await run({ operation: "move", path: ".", to: "elsewhere" }))).toContain("it is the workspace root itself");
    mkdirSync(join(ws, ".zero-state"), { recursive: true });
    expect(failed(await run({ operation: "move", path: ".zero-state", to: "state2" }))).toContain("private state");
  });

  const shm = "/dev/shm";
  const otherDevice = existsSync(shm) && statSync(shm).dev !== statSync(tmpdir()).dev;
  test.skipIf(!otherDevice)("moves across file systems by copy and delete", async () => {
    const extra = mkdtempSync(join(shm, "zero-write-extra-"));
    try {
      const cross = runnerFor(base, { workspace: ws, extraDirs: [extra] });
      mkdirSync(join(ws, "cross/sub"), { recursive: true });
      writeFileSync(join(ws, "cross/sub/f.sh"), "echo\n", { mode: 0o755 });
      symlinkSync("sub/f.sh", join(ws, "cross/link"));
      expect(completed(await cross.run({ operation: "move", path: "cross", to: join(extra, "cross") }))).toContain("moved directory cross");
      expect(existsSync(join(ws, "cross"))).toBe(false);
      expect(readFileSync(join(extra, "cross/sub/f.sh"), "utf8")).toBe("echo\n");
      expect(statSync(join(extra, "cross/sub/f.sh")).mode & 0o777).toBe(0o755);
      expect(lstatSync(join(extra, "cross/link")).isSymbolicLink()).toBe(true);
      expect(readdirSync(extra)).toEqual(["cross"]); // no temp copy left behind
    } finally {
      rmSync(extra, { recursive: true, force: true });
    }
  });
});

describe("delete", () => {
  test("deletes a file; the diff shows the removed content and recreates it with git apply", async () => {
    writeFileSync(join(ws, "doomed.txt"), "line 1\nline 2\n");
    const result = await run({ operation: "delete", path: "doomed.txt" });
    expect(completed(result)).toBe("deleted doomed.txt (2 lines)");
    expect(existsSync(join(ws, "doomed.txt"))).toBe(false);
    expect(result.diff).toBe("--- a/doomed.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-line 1\n-line 2\n");
    const replay = join(base, "replay-delete");
    mkdirSync(replay);
    expect(git(replay, ["apply", "-R", "-"], result.diff).code).toBe(0);
    expect(readFileSync(join(replay, "doomed.txt"), "utf8")).toBe("line 1\nline 2\n");
  });

  test("a directory needs recursive: true", async () => {
    mkdirSync(join(ws, "tree/a"), { recursive: true });
    writeFileSync(join(ws, "tree/a/f.txt"), "f");
    writeFileSync(join(ws, "tree/g.txt"), "g");
    const output = failed(await run({ operation: "delete", path: "tree" }));
    expect(output).toContain("tree is a directory (2 files and 1 directories); set recursive: true");
    expect(existsSync(join(ws, "tree/a/f.txt"))).toBe(true);
    expect(completed(await run({ operation: "delete", path: "tree", recursive: true }))).toBe("deleted directory tree (2 files and 1 directories)");
    expect(existsSync(join(ws, "tree"))).toBe(false);
  });

  test("a recursive delete removes symlinks inside without following them", async () => {
    mkdirSync(join(ws, "with-link"));
    symlinkSync(outside, join(ws, "with-link/out"));
    completed(await run({ operation: "delete", path: "with-link", recursive: true }));
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
  });

  test("deleting a symlink removes the link, never its target", async () => {
    writeFileSync(join(ws, "target.txt"), "t\n");
    symlinkSync("target.txt", join(ws, "alias"));
    expect(completed(await run({ operation: "delete", path: "alias" }))).toContain("deleted symlink alias");
    expect(readFileSync(join(ws, "target.txt"), "utf8")).toBe("t\n");
    symlinkSync(join(outside, "keep.txt"), join(ws, "out-file-link"));
    completed(await run({ operation: "delete", path: "out-file-link" }));
    expect(readFileSync(join(outside, "keep.txt"), "utf8")).toBe("keep\n");
  });

  test("refuses the workspace root, paths outside and missing paths", async () => {
    expect(failed(await run({ operation: "delete", path: ".", recursive: true }))).toContain("it is the workspace root itself");
    expect(failed(await run({ operation: "delete", path: ws, recursive: true }))).toContain("it is the workspace root itself");
    expect(failed(await run({ operation: "delete", path: "../outside/keep.txt" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "delete", path: "out-link/keep.txt" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "delete", path: "no-such-file" }))).toContain("does not exist");
    expect(existsSync(ws)).toBe(true);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
  });
});
