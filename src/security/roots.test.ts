import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PathCheck, type Roots, createRoots, displayPath, isPrivatePath, resolveInRoots } from "./roots.ts";

// One real directory tree with real symlinks, built once:
//   base/ws/            workspace (file.txt, sub/inner.txt, vendor/ read-only, .zero/ private)
//   base/ws-evil/       sibling that shares the workspace's name as a prefix
//   base/outside/       not a root
//   base/extra/         --add-dir style extra root
//   base/ro/            read-only root
let base = "";
let ws = "";
let roots: Roots;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-roots-")));
  ws = join(base, "ws");
  for (const dir of ["ws/sub", "ws/vendor", "ws/.zero", "ws/.zero-other", "ws-evil", "outside", "extra", "ro"]) {
    mkdirSync(join(base, dir), { recursive: true });
  }
  const files = ["ws/file.txt", "ws/sub/inner.txt", "ws/vendor/lib.js", "ws/.zero/state.db", "ws-evil/secret.txt",
    "outside/secret.txt", "extra/data.txt", "ro/readme.txt"];
  for (const file of files) writeFileSync(join(base, file), "x");
  symlinkSync(join(ws, "sub/inner.txt"), join(ws, "link-in"));
  symlinkSync("sub", join(ws, "dirlink-in"));
  symlinkSync(join(base, "outside/secret.txt"), join(ws, "link-out"));
  symlinkSync("../outside", join(ws, "dirlink-out"));
  symlinkSync(join(base, "outside/not-yet.txt"), join(ws, "dangling-out"));
  symlinkSync("sub/created-later.txt", join(ws, "dangling-in"));
  symlinkSync(".zero", join(ws, "state-link"));
  symlinkSync("loop-b", join(ws, "loop-a"));
  symlinkSync("loop-a", join(ws, "loop-b"));
  roots = createRoots({
    workspace: ws,
    extraDirs: [join(base, "extra")],
    readOnlyDirs: [join(base, "ro"), "vendor"],
    privateDirs: [join(ws, ".zero")],
  });
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

function expectOk(check: PathCheck) {
  if (!check.ok) throw new Error(`expected ok, got: ${check.error}`);
  return check.value;
}

function expectDenied(check: PathCheck): string {
  if (check.ok) throw new Error(`expected a denial, got ${check.value.path}`);
  return check.error;
}

describe("createRoots", () => {
  test("canonicalizes the workspace and orders the roots", () => {
    symlinkSync(ws, join(base, "ws-alias"));
    const viaLink = createRoots({ workspace: join(base, "ws-alias"), readOnlyDirs: ["vendor"] });
    expect(viaLink.workspace).toBe(ws);
    expect(viaLink.roots).toEqual([
      { path: ws, kind: "workspace" },
      { path: join(ws, "vendor"), kind: "read-only" },
    ]);
  });

  test("throws on a missing workspace or a file", () => {
    expect(() => createRoots({ workspace: join(base, "nope") })).toThrow(/does not exist/);
    expect(() => createRoots({ workspace: join(ws, "file.txt") })).toThrow(/not a directory/);
  });
});

describe("resolveInRoots inside the workspace", () => {
  test("relative paths resolve from the workspace", () => {
    const value = expectOk(resolveInRoots(roots, "sub/inner.txt", "read"));
    expect(value).toEqual({
      path: join(ws, "sub/inner.txt"),
      root: { path: ws, kind: "workspace" },
      relative: join("sub", "inner.txt"),
    });
    expect(expectOk(resolveInRoots(roots, ".", "read")).relative).toBe("");
    expect(expectOk(resolveInRoots(roots, join(ws, "file.txt"), "write")).relative).toBe("file.txt");
  });

  test("a path that leaves and comes back is fine", () => {
    expect(expectOk(resolveInRoots(roots, "sub/../../ws/file.txt", "read")).path).toBe(join(ws, "file.txt"));
  });

  test("new files may be created, also below a symlinked directory that stays inside", () => {
    expect(expectOk(resolveInRoots(roots, "new/deep/file.ts", "write")).path).toBe(join(ws, "new/deep/file.ts"));
    expect(expectOk(resolveInRoots(roots, "dirlink-in/new.txt", "write")).path).toBe(join(ws, "sub/new.txt"));
  });

  test("symlinks that stay inside resolve to their target", () => {
    expect(expectOk(resolveInRoots(roots, "link-in", "read")).path).toBe(join(ws, "sub/inner.txt"));
    expect(expectOk(resolveInRoots(roots, "dangling-in", "write")).path).toBe(join(ws, "sub/created-later.txt"));
  });

  test("~ is not expanded", () => {
    const value = expectOk(resolveInRoots(roots, "~/notes.txt", "write"));
    expect(value.path).toBe(join(ws, "~/notes.txt"));
  });
});

describe("resolveInRoots rejects escapes", () => {
  test("traversal and absolute paths outside every root", () => {
    const error = expectDenied(resolveInRoots(roots, "../outside/secret.txt", "read"));
    expect(error).toContain("../outside/secret.txt");
    expect(error).toContain(`${ws} (workspace)`);
    expect(error).toContain(`${join(base, "extra")} (extra)`);
    expectDenied(resolveInRoots(roots, join(base, "outside/secret.txt"), "read"));
    expectDenied(resolveInRoots(roots, "/etc/passwd", "read"));
    expectDenied(resolveInRoots(roots, "/", "read"));
  });

  test("prefix confusion with a sibling directory", () => {
    expectDenied(resolveInRoots(roots, join(base, "ws-evil/secret.txt"), "read"));
    expectDenied(resolveInRoots(roots, "../ws-evil/secret.txt", "write"));
    expectDenied(resolveInRoots(roots, `${ws}-evil`, "read"));
  });

  test("a symlinked file that leads outside", () => {
    const error = expectDenied(resolveInRoots(roots, "link-out", "read"));
    expect(error).toContain(`resolves to ${join(base, "outside/secret.txt")}`);
  });

  test("a symlinked directory that leads outside, for existing and new files", () => {
    expectDenied(resolveInRoots(roots, "dirlink-out/secret.txt", "read"));
    expectDenied(resolveInRoots(roots, "dirlink-out/new-file.txt", "write"));
    expectDenied(resolveInRoots(roots, "dirlink-out/new-dir/deeper/file.txt", "write"));
  });

  test("a dangling symlink whose target is outside", () => {
    expectDenied(resolveInRoots(roots, "dangling-out", "write"));
  });

  test("symlink loops and NUL bytes are errors", () => {
    expect(expectDenied(resolveInRoots(roots, "loop-a", "read"))).toContain("loop-a");
    expect(expectDenied(resolveInRoots(roots, "file.txt\0.png", "read"))).toContain("NUL");
    expectDenied(resolveInRoots(roots, "", "read"));
  });
});

describe("private directories", () => {
  test("are denied even inside the workspace, directly or through a link", () => {
    expect(expectDenied(resolveInRoots(roots, ".zero/state.db", "read"))).toContain("private");
    expectDenied(resolveInRoots(roots, ".zero", "read"));
    expectDenied(resolveInRoots(roots, ".zero/new.txt", "write"));
    expectDenied(resolveInRoots(roots, "state-link/state.db", "read"));
    expectDenied(resolveInRoots(roots, "sub/../.zero/state.db", "read"));
  });

  test("a sibling with the same prefix is not private", () => {
    expectOk(resolveInRoots(roots, ".zero-other", "write"));
    expect(isPrivatePath(roots, join(ws, ".zero-other"))).toBe(false);
    expect(isPrivatePath(roots, join(ws, ".zero/state.db"))).toBe(true);
  });
});

describe("extra and read-only roots", () => {
  test("an extra root is readable and writable", () => {
    const value = expectOk(resolveInRoots(roots, join(base, "extra/data.txt"), "write"));
    expect(value.root).toEqual({ path: join(base, "extra"), kind: "extra" });
    expect(value.relative).toBe("data.txt");
    expect(expectOk(resolveInRoots(roots, "../extra/new.txt", "write")).root.kind).toBe("extra");
  });

  test("a read-only root may be read but not written", () => {
    expect(expectOk(resolveInRoots(roots, join(base, "ro/readme.txt"), "read")).root.kind).toBe("read-only");
    const error = expectDenied(resolveInRoots(roots, join(base, "ro/readme.txt"), "write"));
    expect(error).toContain("read-only");
    expectDenied(resolveInRoots(roots, join(base, "ro/new.txt"), "write"));
  });

  test("a read-only directory nested in the workspace wins over the workspace", () => {
    const value = expectOk(resolveInRoots(roots, "vendor/lib.js", "read"));
    expect(value.root).toEqual({ path: join(ws, "vendor"), kind: "read-only" });
    expect(value.relative).toBe("lib.js");
    expectDenied(resolveInRoots(roots, "vendor/lib.js", "write"));
    expectOk(resolveInRoots(roots, "file.txt", "write"));
  });
});

describe("displayPath", () => {
  test("is workspace-relative inside, absolute outside", () => {
    expect(displayPath(roots, join(ws, "sub/inner.txt"))).toBe(join("sub", "inner.txt"));
    expect(displayPath(roots, ws)).toBe(".");
    expect(displayPath(roots, join(base, "extra/data.txt"))).toBe(join(base, "extra/data.txt"));
    expect(displayPath(roots, join(base, "ws-evil/secret.txt"))).toBe(join(base, "ws-evil/secret.txt"));
  });
});

describe("a read-only root inside a private directory (a skill package under zero's config dir)", () => {
  test("only that root is readable; the rest of the private directory stays unreachable", () => {
    const cfg = join(base, "cfg");
    for (const dir of ["skills/a/refs", "skills/b"]) mkdirSync(join(cfg, dir), { recursive: true });
    for (const file of ["config.jsonc", "trusted-workspaces.json", "skills/a/SKILL.md", "skills/a/refs/x.md", "skills/b/SKILL.md"]) writeFileSync(join(cfg, file), "x");
    symlinkSync(join(cfg, "config.jsonc"), join(cfg, "skills/a/config-link"));
    const skill = join(cfg, "skills/a");
    const withSkill = createRoots({ workspace: ws, readOnlyDirs: [skill], privateDirs: [cfg], privateReadable: [join(cfg, "skills")] });

    const read = expectOk(resolveInRoots(withSkill, join(skill, "SKILL.md"), "read"));
    expect(read.root).toEqual({ path: skill, kind: "read-only" });
    expectOk(resolveInRoots(withSkill, join(skill, "refs/x.md"), "read"));
    expect(expectDenied(resolveInRoots(withSkill, join(skill, "SKILL.md"), "write"))).toContain("read-only root");
    expect(expectDenied(resolveInRoots(withSkill, join(skill, "new.md"), "write"))).toContain("read-only root");
    for (const path of ["config.jsonc", "trusted-workspaces.json", "skills/b/SKILL.md", "skills", "."]) {
      expect(expectDenied(resolveInRoots(withSkill, join(cfg, path), "read"))).toContain("private");
    }
    // A link inside the package that leads elsewhere in the private directory is judged by its target.
    expect(expectDenied(resolveInRoots(withSkill, join(skill, "config-link"), "read"))).toContain("private");
    expect(expectDenied(resolveInRoots(withSkill, join(skill, "../../config.jsonc"), "read"))).toContain("private");
    expect(isPrivatePath(withSkill, join(skill, "SKILL.md"))).toBe(false);
    expect(isPrivatePath(withSkill, join(cfg, "config.jsonc"))).toBe(true);

    // Without the root, the package is private like the rest; a read-only root that IS the private dir opens nothing.
    const without = createRoots({ workspace: ws, privateDirs: [cfg] });
    expect(expectDenied(resolveInRoots(without, join(skill, "SKILL.md"), "read"))).toContain("private");
    const whole = createRoots({ workspace: ws, readOnlyDirs: [cfg], privateDirs: [cfg], privateReadable: [join(cfg, "skills")] });
    expect(expectDenied(resolveInRoots(whole, join(cfg, "config.jsonc"), "read"))).toContain("private");
    expect(expectDenied(resolveInRoots(whole, join(skill, "SKILL.md"), "read"))).toContain("private");
  });

  test("a read-only root that resolves elsewhere in a private directory (a package swapped for a link) opens nothing", () => {
    const cfg = join(base, "cfg2");
    mkdirSync(join(cfg, "skills"), { recursive: true });
    writeFileSync(join(cfg, "trusted-workspaces.json"), "x");
    mkdirSync(join(cfg, "state", "sub"), { recursive: true });
    writeFileSync(join(cfg, "state", "sub", "x.db"), "x");
    // A workspace package that is now a link into the private directory.
    mkdirSync(join(ws, ".agents", "skills"), { recursive: true });
    symlinkSync(join(cfg, "state", "sub"), join(ws, ".agents", "skills", "foo"));
    const roots = createRoots({ workspace: ws, readOnlyDirs: [join(ws, ".agents", "skills", "foo")], privateDirs: [cfg], privateReadable: [join(cfg, "skills")] });
    expect(expectDenied(resolveInRoots(roots, join(cfg, "state", "sub", "x.db"), "read"))).toContain("private");
    expect(expectDenied(resolveInRoots(roots, join(ws, ".agents", "skills", "foo", "x.db"), "read"))).toContain("private");
    // Without any readable place nothing in a private directory opens, whatever the roots say.
    const none = createRoots({ workspace: ws, readOnlyDirs: [join(cfg, "skills")], privateDirs: [cfg] });
    expect(isPrivatePath(none, join(cfg, "skills", "SKILL.md"))).toBe(true);
  });
});
