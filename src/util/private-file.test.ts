import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePrivateDir, PrivateFileError, readPrivateFile, withFileLock, writePrivateFileAtomically } from "./private-file.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "zero-private-file-"));
  roots.push(root);
  return root;
}

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("writePrivateFileAtomically", () => {
  test("creates the directory 0700 and the file 0600, replaces content whole, leaves no temp file", () => {
    const dir = join(tempRoot(), "private");
    const file = join(dir, "state.json");
    writePrivateFileAtomically(file, "one\n");
    writePrivateFileAtomically(file, "two\n");
    expect(readFileSync(file, "utf8")).toBe("two\n");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  test("tightens an existing directory to 0700", () => {
    const dir = join(tempRoot(), "open");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    writePrivateFileAtomically(join(dir, "x.json"), "{}");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

describe("readPrivateFile", () => {
  test("a missing file reads as undefined; an existing one as its text", () => {
    const root = tempRoot();
    expect(readPrivateFile(join(root, "absent.json"))).toBeUndefined();
    writePrivateFileAtomically(join(root, "present.json"), "hello");
    expect(readPrivateFile(join(root, "present.json"))).toBe("hello");
  });

  test("a symlink is refused, not followed", () => {
    const root = tempRoot();
    writeFileSync(join(root, "target.json"), "secret");
    symlinkSync(join(root, "target.json"), join(root, "link.json"));
    const error = caught(() => readPrivateFile(join(root, "link.json")));
    expect(error).toBeInstanceOf(PrivateFileError);
    expect((error as PrivateFileError).message).toContain("is a symlink");
    expect((error as PrivateFileError).file).toBe(join(root, "link.json"));
  });

  test("a directory is refused", () => {
    const root = tempRoot();
    mkdirSync(join(root, "dir.json"));
    expect((caught(() => readPrivateFile(join(root, "dir.json"))) as Error).message).toContain("not a regular file");
  });

  test("a file owned by another user is refused", () => {
    // As root, give a file away; as anyone else, a root-owned file is another user's.
    let file = "/etc/passwd";
    if (process.getuid?.() === 0) {
      file = join(tempRoot(), "theirs.json");
      writeFileSync(file, "{}");
      chownSync(file, 4242, 4242);
    }
    const error = caught(() => readPrivateFile(file));
    expect(error).toBeInstanceOf(PrivateFileError);
    expect((error as Error).message).toContain("belongs to another user");
  });

  test("group and other permission bits are removed on read", () => {
    const file = join(tempRoot(), "loose.json");
    writeFileSync(file, "{}", { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(readPrivateFile(file)).toBe("{}");
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe("ensurePrivateDir", () => {
  test("creates a missing directory 0700 and refuses a symlinked one", () => {
    const root = tempRoot();
    ensurePrivateDir(join(root, "a", "b"));
    expect(statSync(join(root, "a", "b")).mode & 0o777).toBe(0o700);
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "alias"));
    const error = caught(() => ensurePrivateDir(join(root, "alias")));
    expect(error).toBeInstanceOf(PrivateFileError);
    expect((error as Error).message).toContain("is a symlink");
  });
});

describe("withFileLock", () => {
  test("returns the update's value and removes the lock", () => {
    const lock = join(tempRoot(), "x.lock");
    expect(withFileLock(lock, () => 42)).toBe(42);
    expect(existsSync(lock)).toBe(false);
  });

  test("a lock whose owner died is broken at once", () => {
    const lock = join(tempRoot(), "x.lock");
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(lock, JSON.stringify({ pid: dead, host: hostname(), token: "old" }));
    expect(withFileLock(lock, () => "ran", { waitMs: 200 })).toBe("ran");
    expect(existsSync(lock)).toBe(false);
  });

  test("a stale lock is broken whoever holds it", () => {
    const lock = join(tempRoot(), "x.lock");
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: "elsewhere", token: "old" }));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(withFileLock(lock, () => "ran", { waitMs: 200 })).toBe("ran");
  });

  test("a live lock held past the wait is an error naming the lock, and the lock stays", () => {
    const lock = join(tempRoot(), "x.lock");
    writeFileSync(lock, JSON.stringify({ pid: process.pid === 1 ? 2 : 1, host: "elsewhere", token: "live" }));
    let ran = false;
    const error = caught(() => withFileLock(lock, () => (ran = true), { waitMs: 100, label: "test lock" }));
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(PrivateFileError);
    expect((error as PrivateFileError).message).toBe("another zero process has held the test lock for 0.1 s; if none is running, delete the lock file");
    expect((error as PrivateFileError).file).toBe(lock);
    expect(existsSync(lock)).toBe(true);
  });

  test("the lock is released when the update throws", () => {
    const lock = join(tempRoot(), "x.lock");
    expect(caught(() => withFileLock(lock, () => {
      throw new Error("boom");
    }))).toBeInstanceOf(Error);
    expect(existsSync(lock)).toBe(false);
  });
});
