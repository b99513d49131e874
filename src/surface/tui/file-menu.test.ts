import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { matchFiles, mentionFor } from "./composer-menu.ts";
import { insideWorkspace, listWorkspaceFiles } from "./file-menu.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function workspace(files: string[]): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-filemenu-")));
  roots.push(root);
  for (const file of files) {
    mkdirSync(dirname(join(root, "ws", file)), { recursive: true });
    writeFileSync(join(root, "ws", file), "x");
  }
  return join(root, "ws");
}

describe("the @ file menu", () => {
  test("lists workspace files without secrets, dependency and state dirs, or gitignored ones", async () => {
    const ws = workspace(["src/app.ts", "src/util/paths.ts", "docs/my notes.md", ".env", "keys/id_rsa", "node_modules/x/index.js", ".git/config", ".venv/lib/a.py", "build/out.js", ".gitignore"]);
    writeFileSync(join(ws, ".gitignore"), "build/\n");
    const files = await listWorkspaceFiles(ws);
    expect(files).toEqual([".gitignore", "docs/my notes.md", "src/app.ts", "src/util/paths.ts"]);
  });

  test("the listing is bounded", async () => {
    const ws = workspace(Array.from({ length: 30 }, (_, i) => `f${i}.txt`));
    expect(await listWorkspaceFiles(ws, { limit: 10 })).toHaveLength(10);
  });

  test("matching ranks name prefixes, then names, then paths, then letters in order", () => {
    const files = ["src/config/paths.ts", "src/paths.ts", "docs/xpaths.md", "lib/p-a-t-h.ts", "README.md"];
    expect(matchFiles(files, "paths")).toEqual(["src/paths.ts", "src/config/paths.ts", "docs/xpaths.md", "lib/p-a-t-h.ts"]);
    expect(matchFiles(files, "readme")).toEqual(["README.md"]);
    expect(matchFiles(files, "PATH")).toEqual(["src/paths.ts", "src/config/paths.ts", "docs/xpaths.md", "lib/p-a-t-h.ts"]);
    expect(matchFiles(files, "", 2)).toEqual(["src/config/paths.ts", "src/paths.ts"]);
  });

  test("a symlink out of the workspace is dropped; one inside stays", () => {
    const ws = workspace(["a.txt"]);
    writeFileSync(join(ws, "..", "outside.txt"), "secret");
    symlinkSync(join(ws, "..", "outside.txt"), join(ws, "escape.txt"));
    symlinkSync(join(ws, "a.txt"), join(ws, "alias.txt"));
    expect(insideWorkspace(ws, ["a.txt", "escape.txt", "alias.txt", "gone.txt"])).toEqual(["a.txt", "alias.txt"]);
  });

  test("mentions quote paths with spaces", () => {
    expect(mentionFor("src/app.ts")).toBe("@src/app.ts");
    expect(mentionFor("docs/my notes.md")).toBe('@"docs/my notes.md"');
  });
});
