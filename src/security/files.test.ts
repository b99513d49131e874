import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openChecked, openDirectoryChecked, readRegularFile } from "./files.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "zero-files-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

test("acting through a checked directory is immune to its path being swapped for a symlink", () => {
  const dir = join(base, "ws", "sub");
  const outside = join(base, "outside");
  mkdirSync(dir, { recursive: true });
  mkdirSync(outside);
  const checked = openDirectoryChecked(dir);
  try {
    // Another process swaps the directory for a symlink to somewhere else.
    renameSync(dir, join(base, "ws", "moved"));
    symlinkSync(outside, dir);
    writeFileSync(join(checked.base, "new.txt"), "x");
  } finally {
    checked.close();
  }
  expect(existsSync(join(outside, "new.txt"))).toBe(false);
  expect(readFileSync(join(base, "ws", "moved", "new.txt"), "utf8")).toBe("x");
  // Opening the swapped path now is refused.
  expect(() => openDirectoryChecked(dir)).toThrow(/changed/);
});

test("openChecked refuses a final symlink and reports what it opened", () => {
  const file = join(base, "real.txt");
  writeFileSync(file, "content");
  symlinkSync(file, join(base, "link.txt"));
  expect(() => openChecked(join(base, "link.txt"))).toThrow(/symbolic link/);
  const opened = openChecked(file);
  expect(opened.stat.isFile()).toBe(true);
  opened.close();
  expect(new TextDecoder().decode(readRegularFile(file, 3).bytes)).toBe("con");
  expect(readRegularFile(file, 3).truncated).toBe(true);
});
