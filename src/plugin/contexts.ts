import type { RunEnd, RunInfo } from "../agent/run-hooks.ts";
import type { StepState } from "../agent/loop-input.ts";
import type { RunHookContext, RunResult, StepHookContext, ToolCall } from "./define.ts";

/**
 * The read-only views hooks get: copies, deeply frozen, of exactly what the API documents — never
 * one of zero's own objects (a hook that mutates what it was given changes nothing, and a hook
 * that keeps a reference sees no later change).
 */

/** Freezes a value and everything inside it (plain data: objects and arrays). */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return Object.freeze(value);
}

/** A frozen copy of plain data. */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

export function runContext(run: RunInfo): RunHookContext {
  return Object.freeze({
    runId: run.runId,
    sessionId: run.sessionId,
    rootRunId: run.rootRunId,
    parentRunId: run.parentRunId,
    depth: run.depth,
    agent: run.agent,
    model: run.model,
    task: run.task,
    workspace: run.workspace,
    permissionMode: run.permissionMode,
    workDepth: run.workDepth,
    surface: run.surface,
  });
}

export function stepContext(run: RunHookContext, state: StepState): StepHookContext {
  return Object.freeze({ ...run, step: state.step, usage: Object.freeze({ ...state.usage }), toolCalls: state.toolCalls });
}

export function callView(call: { callId: string; tool: string; input: unknown }): ToolCall {
  return Object.freeze({ callId: call.callId, tool: call.tool, input: frozenCopy(call.input) });
}

export function runResult(run: RunHookContext, end: RunEnd): RunResult {
  return Object.freeze({
    ...run,
    status: end.status,
    reason: end.reason,
    exitCode: end.exitCode,
    text: end.text,
    usage: Object.freeze({ ...end.usage }),
    steps: end.steps,
    toolCalls: end.toolCalls,
  });
}
