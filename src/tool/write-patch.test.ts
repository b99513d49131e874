import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inspectPatch } from "./write-patch-parse.ts";
import { completed, failed, git, makeBase, type Runner, runnerFor } from "../../test/support/write-tool.ts";

// base/ws/          the workspace (not a repository)
// base/outside/     not a root
// base/repo/sub/    a workspace that is a subdirectory of a git repository
let base = "";
let ws = "";
let outside = "";
let run: Runner;

beforeAll(() => {
  base = makeBase("zero-write-patch-");
  ws = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(ws, { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "target.txt"), "outside\n");
  symlinkSync(outside, join(ws, "out-link"));
  ({ run } = runnerFor(base, { workspace: ws }));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

describe("patch: applying", () => {
  test("modifies, creates (/dev/null) and deletes in one git-style patch", async () => {
    writeFileSync(join(ws, "mod.txt"), "one\ntwo\nthree\n");
    writeFileSync(join(ws, "gone.txt"), "bye\n");
    const patch = [
      "diff --git a/mod.txt b/mod.txt",
      "--- a/mod.txt",
      "+++ b/mod.txt",
      "@@ -1,3 +1,3 @@",
      " one",
      "-two",
      "+TWO",
      " three",
      "diff --git a/dir/new.txt b/dir/new.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/dir/new.txt",
      "@@ -0,0 +1,2 @@",
      "+hello",
      "+world",
      "diff --git a/gone.txt b/gone.txt",
      "deleted file mode 100644",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "",
    ].join("\n");
    const result = await run({ operation: "patch", patch });
    const output = completed(result);
    expect(output).toContain("applied patch to 3 files:");
    expect(output).toContain("  mod.txt (+1 -1)");
    expect(output).toContain("  dir/new.txt (+2 -0)");
    expect(output).toContain("  gone.txt (+0 -1)");
    expect(result.diff).toBe(patch);
    expect(readFileSync(join(ws, "mod.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    expect(readFileSync(join(ws, "dir/new.txt"), "utf8")).toBe("hello\nworld\n");
    expect(existsSync(join(ws, "gone.txt"))).toBe(false);
  });

  test("plain workspace-relative paths (no a/ b/ prefixes) apply with -p0", async () => {
    mkdirSync(join(ws, "src"), { recursive: true });
    writeFileSync(join(ws, "src/plain.txt"), "x\n");
    const patch = "--- src/plain.txt\n+++ src/plain.txt\n@@ -1 +1 @@\n-x\n+y\n";
    completed(await run({ operation: "patch", patch }));
    expect(readFileSync(join(ws, "src/plain.txt"), "utf8")).toBe("y\n");
  });

  test("a removed line that looks like a header is hunk content, not a path", async () => {
    writeFileSync(join(ws, "sql.txt"), "select 1;\n-- ../../etc/passwd\n");
    const patch = "--- a/sql.txt\n+++ b/sql.txt\n@@ -1,2 +1,1 @@\n select 1;\n--- ../../etc/passwd\n";
    completed(await run({ operation: "patch", patch }));
    expect(readFileSync(join(ws, "sql.txt"), "utf8")).toBe("select 1;\n");
  });

  test("a patch that does not apply fails with git's message and changes nothing", async () => {
    writeFileSync(join(ws, "first.txt"), "a\nb\n");
    writeFileSync(join(ws, "second.txt"), "c\nd\n");
    // The first file's hunk is fine; the second's context is wrong.
    const patch = [
      "--- a/first.txt",
      "+++ b/first.txt",
      "@@ -1,2 +1,2 @@",
      "-a",
      "+A",
      " b",
      "--- /dev/null",
      "+++ b/brand-new.txt",
      "@@ -0,0 +1 @@",
      "+new",
      "--- a/second.txt",
      "+++ b/second.txt",
      "@@ -1,2 +1,2 @@",
      "-c",
      "+C",
      " not-d",
      "",
    ].join("\n");
    const output = failed(await run({ operation: "patch", patch }));
    expect(output).toContain("Patch does not apply (nothing was changed)");
    expect(output).toContain("second.txt");
    expect(readFileSync(join(ws, "first.txt"), "utf8")).toBe("a\nb\n");
    expect(readFileSync(join(ws, "second.txt"), "utf8")).toBe("c\nd\n");
    expect(existsSync(join(ws, "brand-new.txt"))).toBe(false);
  });

  test("in a workspace that is a subdirectory of a git repository, paths are relative to the workspace", async () => {
    const repo = join(base, "repo");
    const sub = join(repo, "sub");
    mkdirSync(sub, { recursive: true });
    expect(git(repo, ["init", "-q", "."]).code).toBe(0);
    writeFileSync(join(sub, "x.txt"), "inner\n");
    writeFileSync(join(repo, "x.txt"), "top\n");
    const sr = runnerFor(base, { workspace: sub });
    const patch = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-inner\n+patched\n";
    completed(await sr.run({ operation: "patch", patch }));
    expect(readFileSync(join(sub, "x.txt"), "utf8")).toBe("patched\n");
    expect(readFileSync(join(repo, "x.txt"), "utf8")).toBe("top\n");
  });

  test("a workspace repository's configured filters never run", async () => {
    const repo = join(base, "filtered");
    mkdirSync(repo, { recursive: true });
    expect(git(repo, ["init", "-q", "."]).code).toBe(0);
    const marker = join(base, "filter-ran");
    expect(git(repo, ["config", "filter.evil.clean", `touch ${marker}; cat`]).code).toBe(0);
    expect(git(repo, ["config", "filter.evil.smudge", `touch ${marker}; cat`]).code).toBe(0);
    writeFileSync(join(repo, ".gitattributes"), "*.txt filter=evil\n");
    writeFileSync(join(repo, "f.txt"), "one\n");
    const fr = runnerFor(base, { workspace: repo });
    completed(await fr.run({ operation: "patch", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n" }));
    expect(readFileSync(join(repo, "f.txt"), "utf8")).toBe("two\n");
    expect(existsSync(marker)).toBe(false);
  });

  test("without git on PATH the error names git", async () => {
    writeFileSync(join(ws, "nogit.txt"), "a\n");
    const ng = runnerFor(base, { workspace: ws }, { PATH: join(base, "no-such-bin") });
    const output = failed(await ng.run({ operation: "patch", patch: "--- a/nogit.txt\n+++ b/nogit.txt\n@@ -1 +1 @@\n-a\n+b\n" }));
    expect(output).toContain("needs git");
    expect(readFileSync(join(ws, "nogit.txt"), "utf8")).toBe("a\n");
  });
});

describe("patch: refused before git runs", () => {
  // git is not even findable here: a refusal proves the check ran first (else: "needs git").
  let noGit: Runner;
  beforeAll(() => {
    noGit = runnerFor(base, { workspace: ws }, { PATH: join(base, "no-such-bin") }).run;
  });
  const refusals: [string, string, RegExp][] = [
    ["traversal", "--- /dev/null\n+++ b/../outside/evil.txt\n@@ -0,0 +1 @@\n+x\n", /outside the allowed roots/],
    ["absolute path", "--- /dev/null\n+++ PLACEHOLDER_ABS\n@@ -0,0 +1 @@\n+x\n", /must be relative/],
    ["symlinked dir leading out", "--- /dev/null\n+++ b/out-link/evil.txt\n@@ -0,0 +1 @@\n+x\n", /outside the allowed roots/],
    ["modifying outside through a link", "--- a/out-link/target.txt\n+++ b/out-link/target.txt\n@@ -1 +1 @@\n-outside\n+pwned\n", /outside the allowed roots/],
    ["rename to outside", "diff --git a/m.txt b/m.txt\nsimilarity index 100%\nrename from m.txt\nrename to ../outside/m.txt\n", /outside the allowed roots/],
    ["copy from outside", "diff --git a/c.txt b/c.txt\nsimilarity index 100%\ncopy from ../outside/target.txt\ncopy to c.txt\n", /outside the allowed roots/],
    ["quoted octal traversal", '--- /dev/null\n+++ "b/\\056\\056/outside/q.txt"\n@@ -0,0 +1 @@\n+x\n', /outside the allowed roots/],
    ["git header only", "diff --git a/../outside/z b/../outside/z\nnew file mode 100644\n", /outside the allowed roots/],
    ["symlink mode", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n", /symbolic link/],
    ["submodule", "diff --git a/s b/s\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/s\n@@ -0,0 +1 @@\n+Subproject commit 1234567\n", /submodule/],
    ["binary", "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..e69de29\nGIT binary patch\nliteral 3\nKcmZ?wWB>pF01p5F\n\nliteral 0\nHcmV?d00001\n\n", /binary/],
    ["no headers", "just some text\n", /no file headers/],
  ];
  for (const [name, template, expected] of refusals) {
    test(name, async () => {
      const patch = template.replace("PLACEHOLDER_ABS", join(outside, "abs.txt"));
      const before = readdirSync(outside).sort();
      const output = failed(await noGit({ operation: "patch", patch }));
      expect(output).toMatch(expected);
      expect(output).toStartWith("Patch refused");
      expect(failed(await run({ operation: "patch", patch }))).toMatch(expected);
      expect(readdirSync(outside).sort()).toEqual(before);
      expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("outside\n");
    });
  }
});

describe("inspectPatch", () => {
  test("strip level and paths", () => {
    const git = inspectPatch("--- a/x y.txt\t2024-01-01\n+++ b/x y.txt\n@@ -1 +1 @@\n-a\n+b\n");
    expect(git).toEqual({ ok: true, value: { strip: 1, paths: ["x y.txt", "x"] } });
    const plain = inspectPatch("--- src/a.ts\n+++ src/a.ts\n@@ -1 +1 @@\n-a\n+b\n");
    expect(plain).toEqual({ ok: true, value: { strip: 0, paths: ["src/a.ts"] } });
    const rename = inspectPatch("diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n");
    expect(rename.ok && rename.value.paths.sort()).toEqual(["new", "old"]);
  });
});

test("git is never taken from a PATH entry inside the workspace", async () => {
  const fakeBin = join(ws, "node_modules", ".bin");
  mkdirSync(fakeBin, { recursive: true });
  const marker = join(ws, "PWNED");
  writeFileSync(join(fakeBin, "git"), `#!/bin/sh\ntouch ${marker}\nexit 0\n`, { mode: 0o755 });
  writeFileSync(join(ws, "path-a.txt"), "one\n");
  const hostile = runnerFor(base, { workspace: ws }, { PATH: `${fakeBin}:node_modules/.bin:${process.env.PATH}` });
  const patch = ["--- a/path-a.txt", "+++ b/path-a.txt", "@@ -1 +1 @@", "-one", "+two", ""].join("\n");
  completed(await hostile.run({ operation: "patch", patch }));
  expect(existsSync(marker)).toBe(false);
  expect(readFileSync(join(ws, "path-a.txt"), "utf8")).toBe("two\n");
});
