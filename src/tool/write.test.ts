import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { replacementDiff } from "./write-diff.ts";
import { writeFileAtomic } from "./write-fs.ts";
import { classifyWrite, writeTool } from "./write.ts";
import { completed, expectNoTempFiles, failed, git, makeBase, type Runner, runnerFor } from "../../test/support/write-tool.ts";

// base/ws/        the workspace
// base/outside/   a sibling that is not a root
// base/ro/        a read-only root
let base = "";
let ws = "";
let outside = "";
let ro = "";
let run: Runner;

beforeAll(() => {
  base = makeBase("zero-write-");
  ws = join(base, "ws");
  outside = join(base, "outside");
  ro = join(base, "ro");
  for (const dir of [ws, outside, ro]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(outside, "secret.txt"), "outside\n");
  writeFileSync(join(ro, "locked.txt"), "locked\n");
  ({ run } = runnerFor(base, { workspace: ws, readOnlyDirs: [ro] }));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

describe("write: input schema and classification", () => {
  test("each operation takes exactly its fields", () => {
    const missing = writeTool.prepare({ operation: "edit", path: "a.txt", newText: "x" });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toContain("oldText: required for operation edit");
    const extra = writeTool.prepare({ operation: "write", path: "a.txt", content: "x", recursive: true });
    expect(extra.ok).toBe(false);
    if (!extra.ok) expect(extra.error).toContain("recursive: not used by operation write (it takes: path, content)");
    const unknown = writeTool.prepare({ operation: "write", path: "a.txt", content: "x", mode: 7 });
    expect(unknown.ok).toBe(false);
    expect(writeTool.prepare({ operation: "chmod", path: "a" }).ok).toBe(false);
    expect(writeTool.prepare({ operation: "patch", patch: "--- a/x\n" }).ok).toBe(true);
    expect(writeTool.prepare({ operation: "write", path: "a.txt", content: "" }).ok).toBe(true);
  });

  test("the JSON schema is one flat object without a top-level anyOf", () => {
    const schema = writeTool.inputSchema;
    expect(schema.type).toBe("object");
    expect(schema.anyOf).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(["operation"]);
  });

  test("classify gives each kind of change its own operation", () => {
    const cases: [string, string][] = [
      ["write", "write-edit"],
      ["edit", "write-edit"],
      ["patch", "write-edit"],
      ["mkdir", "write-edit"],
      ["delete", "write-delete"],
      ["move", "write-move"],
    ];
    for (const [operation, expected] of cases) {
      expect(classifyWrite({ operation: operation as "write" })).toEqual({ risk: "write", operation: expected as "write-edit", target: "" });
    }
    const prepared = writeTool.prepare({ operation: "move", path: "a", to: "b" });
    expect(prepared.ok && prepared.classification.operation).toBe("write-move");
  });
});

describe("write: create and overwrite", () => {
  test("creates a file and its parent directories, with a diff against /dev/null", async () => {
    const result = await run({ operation: "write", path: "new/deep/file.txt", content: "one\ntwo\n" });
    expect(completed(result)).toBe("created new/deep/file.txt (2 lines)");
    expect(readFileSync(join(ws, "new/deep/file.txt"), "utf8")).toBe("one\ntwo\n");
    expect(result.diff).toBe("--- /dev/null\n+++ b/new/deep/file.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n");
    // New files get 0o666 & ~umask.
    const umask = process.umask();
    expect(statSync(join(ws, "new/deep/file.txt")).mode & 0o777).toBe(0o666 & ~umask);
  });

  test("overwriting keeps the mode of an executable script", async () => {
    const script = join(ws, "run.sh");
    writeFileSync(script, "#!/bin/sh\necho old\n");
    chmodSync(script, 0o755);
    const result = await run({ operation: "write", path: "run.sh", content: "#!/bin/sh\necho new\n" });
    expect(completed(result)).toStartWith("overwrote run.sh (+1 -1)");
    expect(statSync(script).mode & 0o777).toBe(0o755);
    expect(readFileSync(script, "utf8")).toBe("#!/bin/sh\necho new\n");
    expect(result.diff).toContain("-echo old\n+echo new\n");
  });

  test("identical content is reported unchanged", async () => {
    writeFileSync(join(ws, "same.txt"), "same\n");
    expect(completed(await run({ operation: "write", path: "same.txt", content: "same\n" }))).toBe("unchanged same.txt (the content is identical)");
  });

  test("replacement is a rename: a hard link to the old file keeps the old content", async () => {
    writeFileSync(join(ws, "linked.txt"), "before\n");
    linkSync(join(ws, "linked.txt"), join(base, "hardlink-outside.txt"));
    completed(await run({ operation: "write", path: "linked.txt", content: "after\n" }));
    expect(readFileSync(join(ws, "linked.txt"), "utf8")).toBe("after\n");
    expect(readFileSync(join(base, "hardlink-outside.txt"), "utf8")).toBe("before\n");
  });

  test("refuses a directory, a FIFO and a path under a file", async () => {
    mkdirSync(join(ws, "adir"), { recursive: true });
    expect(failed(await run({ operation: "write", path: "adir", content: "x" }))).toContain("adir is a directory");
    expect(Bun.spawnSync(["mkfifo", join(ws, "pipe")]).exitCode).toBe(0);
    expect(failed(await run({ operation: "write", path: "pipe", content: "x" }))).toContain("not a regular file");
    writeFileSync(join(ws, "plain.txt"), "x");
    expect(failed(await run({ operation: "write", path: "plain.txt/child.txt", content: "x" }))).toContain("not a directory");
    expectNoTempFiles(ws);
  });

  test("writes through an in-workspace symlink to its target and leaves the link", async () => {
    writeFileSync(join(ws, "real.txt"), "real\n");
    symlinkSync("real.txt", join(ws, "alias.txt"));
    const result = await run({ operation: "write", path: "alias.txt", content: "via alias\n" });
    expect(completed(result)).toStartWith("overwrote real.txt");
    expect(readFileSync(join(ws, "real.txt"), "utf8")).toBe("via alias\n");
    expect(readdirSync(ws)).toContain("alias.txt");
  });
});

describe("write: mkdir", () => {
  test("creates a directory with parents; an existing one is fine; a file is not", async () => {
    expect(completed(await run({ operation: "mkdir", path: "made/a/b" }))).toBe("created directory made/a/b");
    expect(statSync(join(ws, "made/a/b")).isDirectory()).toBe(true);
    expect(completed(await run({ operation: "mkdir", path: "made/a" }))).toBe("directory made/a already exists");
    writeFileSync(join(ws, "made/file"), "");
    expect(failed(await run({ operation: "mkdir", path: "made/file" }))).toContain("not a directory");
  });
});

describe("write: hostile symlink layouts", () => {
  test("a new file under a symlinked directory leading out is refused and nothing is created there", async () => {
    const target = join(base, "outside-x");
    symlinkSync(target, join(ws, "link")); // dangling: the directory does not exist yet
    expect(failed(await run({ operation: "write", path: "link/new.txt", content: "x" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "mkdir", path: "link/sub" }))).toContain("outside the allowed roots");
    expect(existsSync(target)).toBe(false);
    mkdirSync(target);
    expect(failed(await run({ operation: "write", path: "link/new.txt", content: "x" }))).toContain("outside the allowed roots");
    expect(readdirSync(target)).toEqual([]);
  });

  test("a file that is a symlink to outside is refused, for write and edit", async () => {
    symlinkSync(join(outside, "secret.txt"), join(ws, "secret-link"));
    expect(failed(await run({ operation: "write", path: "secret-link", content: "pwned" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "edit", path: "secret-link", oldText: "outside", newText: "pwned" }))).toContain("outside the allowed roots");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside\n");
  });

  test("traversal and absolute paths outside are refused", async () => {
    expect(failed(await run({ operation: "write", path: "../outside/evil.txt", content: "x" }))).toContain("outside the allowed roots");
    expect(failed(await run({ operation: "write", path: join(outside, "evil.txt"), content: "x" }))).toContain("outside the allowed roots");
    expect(existsSync(join(outside, "evil.txt"))).toBe(false);
  });
});

describe("write: a read-only root is refused for every operation", () => {
  test("write, edit, patch, move, delete, mkdir", async () => {
    const refusals = [
      { operation: "write", path: join(ro, "new.txt"), content: "x" },
      { operation: "write", path: join(ro, "locked.txt"), content: "x" },
      { operation: "edit", path: join(ro, "locked.txt"), oldText: "locked", newText: "open" },
      { operation: "mkdir", path: join(ro, "sub") },
      { operation: "delete", path: join(ro, "locked.txt") },
      { operation: "delete", path: ro, recursive: true },
      { operation: "move", path: join(ro, "locked.txt"), to: "stolen.txt" },
    ];
    for (const raw of refusals) {
      const output = failed(await run(raw));
      expect(output).toMatch(/read-only root|is the read-only root/);
    }
    writeFileSync(join(ws, "mine.txt"), "mine\n");
    expect(failed(await run({ operation: "move", path: "mine.txt", to: join(ro, "mine.txt") }))).toContain("read-only root");
    // A symlink inside the workspace into the read-only root does not open it for writing.
    symlinkSync(ro, join(ws, "ro-link"));
    expect(failed(await run({ operation: "write", path: "ro-link/locked.txt", content: "x" }))).toContain("read-only root");
    const patch = "--- a/ro-link/locked.txt\n+++ b/ro-link/locked.txt\n@@ -1 +1 @@\n-locked\n+open\n";
    expect(failed(await run({ operation: "patch", patch }))).toContain("read-only root");
    expect(readdirSync(ro)).toEqual(["locked.txt"]);
    expect(readFileSync(join(ro, "locked.txt"), "utf8")).toBe("locked\n");
    expect(existsSync(join(ws, "stolen.txt"))).toBe(false);
  });
});

describe("write: atomic replacement", () => {
  test("a failed rename leaves the original intact and removes the temp file", () => {
    // Renaming a file over a non-empty directory fails (EISDIR) even for root: a real failure
    // after the temp file was fully written and fsynced.
    const dir = join(ws, "atomic-target");
    mkdirSync(dir);
    writeFileSync(join(dir, "keep.txt"), "keep\n");
    expect(() => writeFileAtomic(dir, new TextEncoder().encode("new"))).toThrow();
    expect(readdirSync(dir)).toEqual(["keep.txt"]);
    expectNoTempFiles(ws);
  });

  test("no temp files after a success or after a failed edit", async () => {
    writeFileSync(join(ws, "tmpcheck.txt"), "alpha\nbeta\n");
    completed(await run({ operation: "edit", path: "tmpcheck.txt", oldText: "beta", newText: "gamma" }));
    failed(await run({ operation: "edit", path: "tmpcheck.txt", oldText: "missing", newText: "x" }));
    expect(readFileSync(join(ws, "tmpcheck.txt"), "utf8")).toBe("alpha\ngamma\n");
    expectNoTempFiles(ws);
  });
});

/** A tiny seeded generator, so the property test is reproducible. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function randomText(random: () => number, lines: number): string {
  const words = ["alpha", "beta", "gamma", "  indented", "", "x = 1;", "}", "{", "return y;"];
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(words[Math.floor(random() * words.length)] ?? "");
  const text = out.join("\n");
  return random() < 0.7 ? `${text}\n` : text;
}

describe("write: the diff field is a correct unified diff", () => {
  test("applying it with git apply to the old content reproduces the new (write and edit)", async () => {
    const random = prng(42);
    for (let round = 0; round < 40; round++) {
      const name = `prop/file-${round}.txt`;
      const before = randomText(random, 1 + Math.floor(random() * 30));
      writeFileSync(join(ws, "prop-seed.txt"), before);
      mkdirSync(join(ws, "prop"), { recursive: true });
      writeFileSync(join(ws, name), before);
      let after: string;
      let diff: string | undefined;
      if (round % 2 === 0) {
        after = randomText(random, 1 + Math.floor(random() * 30));
        const result = await run({ operation: "write", path: name, content: after });
        completed(result);
        diff = result.diff;
      } else {
        const lines = before.split("\n");
        const at = Math.floor(random() * lines.length);
        const oldText = lines.slice(at, at + 2).join("\n");
        const newText = `${oldText}\ninserted ${round}\nmore`;
        const result = await run({ operation: "edit", path: name, oldText, newText, replaceAll: true });
        if (result.status === "failed") continue; // e.g. oldText empty for a trailing blank line
        after = readFileSync(join(ws, name), "utf8");
        diff = result.diff;
      }
      if (after === before) continue;
      expect(diff).toBeDefined();
      // Replay the diff on a fresh copy of the old content.
      const replay = join(base, `replay-${round}`);
      mkdirSync(join(replay, "prop"), { recursive: true });
      writeFileSync(join(replay, name), before);
      const applied = git(replay, ["apply", "--whitespace=nowarn", "-"], diff);
      expect(applied.stderr).toBe("");
      expect(applied.code).toBe(0);
      expect(readFileSync(join(replay, name), "utf8")).toBe(after);
    }
  });

  test("the linear-time fallback diff (for huge rewrites) also applies", () => {
    const random = prng(7);
    for (let round = 0; round < 40; round++) {
      const before = round % 5 === 0 ? "" : randomText(random, Math.floor(random() * 12));
      const after = round % 7 === 0 ? "" : randomText(random, Math.floor(random() * 12));
      if (before === after) continue;
      const replay = join(base, `fallback-${round}`);
      mkdirSync(replay, { recursive: true });
      if (before !== "") writeFileSync(join(replay, "f.txt"), before);
      const oldName = before === "" ? "/dev/null" : "a/f.txt";
      const newName = after === "" ? "/dev/null" : "b/f.txt";
      const { diff } = replacementDiff(oldName, newName, before, after);
      const applied = git(replay, ["apply", "--whitespace=nowarn", "-"], diff);
      expect(applied.stderr).toBe("");
      expect(existsSync(join(replay, "f.txt")) ? readFileSync(join(replay, "f.txt"), "utf8") : "").toBe(after);
    }
  });

  test("a created file's diff recreates it with git apply", async () => {
    const result = await run({ operation: "write", path: "fresh/created.txt", content: "a\nb\nno newline" });
    completed(result);
    const replay = join(base, "replay-create");
    mkdirSync(replay);
    expect(git(replay, ["apply", "-"], result.diff).code).toBe(0);
    expect(readFileSync(join(replay, "fresh/created.txt"), "utf8")).toBe("a\nb\nno newline");
  });

  test("a huge rewrite produces a bounded diff", async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => `line ${i} ${"x".repeat(10)}`).join("\n");
    writeFileSync(join(ws, "big.txt"), `${big}\n`);
    const result = await run({ operation: "write", path: "big.txt", content: `${big.replaceAll("x", "y")}\n` });
    expect(completed(result)).toStartWith("overwrote big.txt (+40000 -40000)");
    expect(result.diff?.length ?? 0).toBeLessThanOrEqual(200 * 1024 + 100);
    expect(result.diff).toContain("diff truncated");
    expect(result.output.length).toBeLessThan(200); // too big to be inlined for the model
  });
});
