/** Shared setup for the write tool's tests: real temp dirs, a hand-built context, real git. */
import { expect } from "bun:test";
import { mkdtempSync, readdirSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Roots, createRoots, type RootsOptions } from "../../src/security/roots.ts";
import type { Env } from "../../src/util/env.ts";
import type { ToolContext, ToolResult } from "../../src/tool/define.ts";
import { writeTool } from "../../src/tool/write.ts";
import { makeToolContext } from "./tool-context.ts";

export function makeBase(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function contextFor(roots: Roots, base: string, env: Env = {}): ToolContext {
  return makeToolContext({ roots, artifactsDir: join(base, "artifacts"), env });
}

export type Runner = (raw: Record<string, unknown>) => Promise<ToolResult>;

/** A runner that prepares (validates + classifies) and runs like the loop does. */
export function runnerFor(base: string, options: RootsOptions, env: Env = {}): { roots: Roots; run: Runner } {
  const roots = createRoots(options);
  const run: Runner = async (raw) => {
    const prepared = writeTool.prepare(raw);
    if (!prepared.ok) return { status: "failed", output: prepared.error, truncated: false };
    return writeTool.run(prepared.input, contextFor(roots, base, env));
  };
  return { roots, run };
}

export function completed(result: ToolResult): string {
  if (result.status !== "completed") throw new Error(`expected completed, got ${result.status}: ${result.output}`);
  return result.output;
}

export function failed(result: ToolResult): string {
  if (result.status !== "failed") throw new Error(`expected failed, got ${result.status}: ${result.output}`);
  return result.output;
}

/** Temp files the atomic writer might leave behind, anywhere under `dir`. */
export function leftoverTempFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.includes(".zero-tmp"));
}

/** Runs real git in `cwd` with no repository discovery above it. */
export function git(cwd: string, args: string[], stdin?: string): { code: number; stdout: string; stderr: string } {
  const result = Bun.spawnSync(["git", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CEILING_DIRECTORIES: join(cwd, ".."), GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: cwd },
    ...(stdin !== undefined ? { stdin: new TextEncoder().encode(stdin) } : {}),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

export function expectNoTempFiles(dir: string): void {
  expect(leftoverTempFiles(dir)).toEqual([]);
}
