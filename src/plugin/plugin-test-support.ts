import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { AgentProfile } from "../config/schema.ts";

/** Shared by the plugin tests: plugin modules written to temp dirs, importing the real API. */

const DEFINE = resolve(import.meta.dir, "define.ts");
const dirs: string[] = [];

/** Each test file registers this as its afterEach. */
export function removePluginDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function pluginDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "zero-plugin-")));
  dirs.push(dir);
  return dir;
}

/**
 * Writes a plugin module: `body` is its source after the import of the plugin API
 * (`definePlugin`, `definePluginTool`, `z`). Every file name is new: modules are cached by path.
 */
export function writePlugin(dir: string, name: string, body: string): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, `import { definePlugin, definePluginTool, z } from ${JSON.stringify(DEFINE)};\n${body}\n`);
  return file;
}

export function readLog(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : [];
}

/** A profile as config makes it, with the given tools. */
export function profile(name: string, tools: string[]): AgentProfile {
  return { name, model: "fake", tools, skills: [], mcpServers: [], canDelegateTo: [], accepts: [], workspaceMode: "shared-write" } as AgentProfile;
}
