import { afterEach, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// bin/zero picks dist/ or src/: a checkout being edited runs its newer sources, an installed
// package (npm stamps extracted files with the extraction time) always runs its bundle.

const repo = resolve(import.meta.dir, "../..");
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function fakePackage(options: { scripts: boolean }): string {
  const pkg = realpathSync(mkdtempSync(join(tmpdir(), "zero-launcher-")));
  roots.push(pkg);
  for (const dir of ["bin", "dist", "src", "node_modules/.bin"]) mkdirSync(join(pkg, dir), { recursive: true });
  copyFileSync(join(repo, "bin/zero"), join(pkg, "bin/zero"));
  symlinkSync(join(repo, "node_modules/.bin/bun"), join(pkg, "node_modules/.bin/bun"));
  writeFileSync(join(pkg, "package.json"), "{}");
  writeFileSync(join(pkg, "dist/index.js"), 'console.log("dist");');
  writeFileSync(join(pkg, "dist/main.js"), "");
  if (options.scripts) mkdirSync(join(pkg, "scripts"));
  writeFileSync(join(pkg, "src/index.ts"), 'console.log("src");');
  // Everything older than the sources: as an npm extraction or an edit leaves it.
  const old = new Date(Date.now() - 60_000);
  for (const file of ["dist/index.js", "dist/main.js", "package.json"]) utimesSync(join(pkg, file), old, old);
  if (options.scripts) utimesSync(join(pkg, "scripts"), old, old);
  return pkg;
}

function launch(pkg: string): string {
  const result = Bun.spawnSync(["sh", join(pkg, "bin/zero")], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  return result.stdout.toString().trim();
}

test("a checkout (scripts/ present) with newer sources runs them; an installed package runs its bundle", () => {
  expect(launch(fakePackage({ scripts: true }))).toBe("src");
  expect(launch(fakePackage({ scripts: false }))).toBe("dist");
});
