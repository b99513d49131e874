// Shared fixtures for the store's tests (excluded from the package by its name).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunRow, SessionRow } from "./records.ts";

/** A fresh temp directory per test; `cleanup` removes every one made. */
export function tempDirs(): { make(): string; cleanup(): void } {
  const made: string[] = [];
  return {
    make() {
      const dir = mkdtempSync(join(tmpdir(), "zero-store-"));
      made.push(dir);
      return join(dir, "state");
    },
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function sessionRow(overrides: Partial<Omit<SessionRow, "status" | "updatedAt">> = {}): Omit<SessionRow, "status" | "updatedAt"> {
  return {
    id: "zero_20250101000000_aaaaaaaaaa",
    surface: "cli",
    workspace: "/work/project",
    title: "fix the tests",
    createdAt: "2025-01-01T00:00:00.000Z",
    ...overrides,
  };
}

export function runRow(overrides: Partial<RunRow> = {}): RunRow {
  const id = overrides.id ?? "run_20250101_aaaaaaaaaa";
  return {
    id,
    sessionId: "zero_20250101000000_aaaaaaaaaa",
    rootId: id,
    parentId: null,
    task: "fix the tests",
    agent: "build",
    modelAlias: "default",
    provider: "openai",
    apiModel: "gpt-5",
    status: "running",
    reason: null,
    depth: 0,
    workspace: "/work/project",
    permissionMode: "ask",
    workDepth: "medium",
    budgets: { maxSteps: 50, maxToolCalls: 200, maxTokens: null },
    usage: { inputTokens: 0, outputTokens: 0 },
    steps: 0,
    toolCalls: 0,
    deadline: "2025-01-01T01:00:00.000Z",
    startedAt: "2025-01-01T00:00:01.000Z",
    endedAt: null,
    pid: process.pid,
    ...overrides,
  };
}
