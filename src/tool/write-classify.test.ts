import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRoots } from "../security/roots.ts";
import { classifyWrite } from "./write.ts";

const ws = realpathSync(mkdtempSync(join(tmpdir(), "zero-classify-")));
writeFileSync(join(ws, ".env"), "A=1\n");
symlinkSync(join(ws, ".env"), join(ws, "innocent.txt"));
const roots = createRoots({ workspace: ws });
afterAll(() => rmSync(ws, { recursive: true, force: true }));

const op = (value: Parameters<typeof classifyWrite>[0]) => classifyWrite(value, { roots }).operation;

test("ordinary writes keep their per-operation class", () => {
  expect(op({ operation: "write", path: "src/a.ts" })).toBe("write-edit");
  expect(op({ operation: "delete", path: "src/a.ts" })).toBe("write-delete");
  expect(op({ operation: "move", path: "a.ts", to: "b.ts" })).toBe("write-move");
});

test("touching secrets, git control files or zero's config is write-sensitive", () => {
  expect(op({ operation: "move", path: ".env", to: "notes.txt" })).toBe("write-sensitive");
  expect(op({ operation: "edit", path: ".env" })).toBe("write-sensitive");
  expect(op({ operation: "write", path: "innocent.txt" })).toBe("write-sensitive"); // a symlink to .env
  expect(op({ operation: "write", path: ".git/hooks/pre-commit" })).toBe("write-sensitive");
  expect(op({ operation: "write", path: "./.git/config" })).toBe("write-sensitive");
  expect(op({ operation: "write", path: ".zero-cli/config.jsonc" })).toBe("write-sensitive");
  expect(op({ operation: "write", path: "zero-cli.jsonc" })).toBe("write-sensitive");
  const copy = ["diff --git a/.env b/notes.txt", "similarity index 100%", "copy from .env", "copy to notes.txt", ""].join("\n");
  expect(op({ operation: "patch", patch: copy })).toBe("write-sensitive");
  expect(op({ operation: "write", path: "docs/git-notes.md" })).toBe("write-edit");
});

test("targets: the canonical paths a call changes, one per line", () => {
  const target = (value: Parameters<typeof classifyWrite>[0]) => classifyWrite(value, { roots }).target;
  expect(target({ operation: "write", path: "src/../a.ts" })).toBe("a.ts");
  expect(target({ operation: "edit", path: "./src/a.ts" })).toBe("src/a.ts");
  // write and edit follow a link to what it names; move and delete act on the link itself.
  expect(target({ operation: "write", path: "innocent.txt" })).toBe(".env");
  expect(target({ operation: "delete", path: "innocent.txt" })).toBe("innocent.txt");
  expect(target({ operation: "move", path: "innocent.txt", to: "docs/x.txt" })).toBe("innocent.txt\ndocs/x.txt");
  expect(target({ operation: "write", path: "/tmp/outside.txt" })).toBe("/tmp/outside.txt");
  expect(target({ operation: "write", path: "odd\nname" })).toBe("odd\\nname");
  const patch = ["--- a/src/a.ts", "+++ b/src/a.ts", "@@ -1 +1 @@", "-x", "+y", "--- a/src/b.ts", "+++ b/src/b.ts", "@@ -1 +1 @@", "-x", "+y", ""].join("\n");
  expect(target({ operation: "patch", patch })).toBe("src/a.ts\nsrc/b.ts");
  // Different files never share a target, so an "always" for one never covers the other.
  expect(target({ operation: "edit", path: "a.ts" })).not.toBe(target({ operation: "edit", path: "b.ts" }));
});
