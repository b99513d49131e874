import type { CampaignCharge, LoopHooks } from "./loop-input.ts";
import { expect } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { PermissionMode } from "../config/schema.ts";
import type { ModelRunner, StepOutcome, StepRequest, StepToolCall } from "../llm/step.ts";
import { type ApprovalAnswer, type ApprovalRequest, createApprovalBroker } from "../policy/approvals.ts";
import { MODE_RULES } from "../policy/rules.ts";
import type { EventBody, StopReason, Usage } from "../protocol/events.ts";
import { userMessage, type Message, type ToolResultPart } from "../protocol/messages.ts";
import { createRoots, resolveInRoots } from "../security/roots.ts";
import { createRedactor } from "../security/redact.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { type Tool, defineTool } from "../tool/define.ts";
import { type LoopLimits, type LoopResult, runLoop } from "./loop.ts";

/** Shared by the runLoop tests (loop.test.ts, loop-limits.test.ts): scripted runner, test tools, a run helper. */
// ---------------------------------------------------------------------------
// Workspace

const dirs: string[] = [];
/** Each test file registers this as its afterEach. */
export function removeWorkspaces(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempWorkspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "zero-loop-")));
  dirs.push(dir);
  return dir;
}

// ---------------------------------------------------------------------------
// Test tools

export type Counters = { edit: number; probe: number; sleepy: number; boom: number; nap: number };

export function makeTools(counters: Counters, hooks: { onSleepyStart?: () => void } = {}): Map<string, Tool> {
  const edit = defineTool({
    name: "edit",
    description: "write a file",
    input: z.object({ path: z.string(), content: z.string() }),
    classify: ({ path }) => ({ risk: "write", operation: "write-edit", target: path }),
    async execute({ path, content }, ctx) {
      counters.edit += 1;
      const checked = resolveInRoots(ctx.roots, path, "write");
      if (!checked.ok) throw new Error(checked.error);
      await writeFile(checked.value.path, content);
      return { output: `wrote ${path}` };
    },
  });
  const probe = defineTool({
    name: "probe",
    description: "echo its input",
    input: z.object({ a: z.number().optional(), b: z.number().optional(), text: z.string().optional() }),
    classify: () => ({ risk: "read", operation: "read", target: "" }),
    async execute(input) {
      counters.probe += 1;
      return { output: `probe ${JSON.stringify(input)}` };
    },
  });
  const sleepy = defineTool({
    name: "sleepy",
    description: "waits until stopped",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read", target: "" }),
    async execute(_input, ctx) {
      counters.sleepy += 1;
      hooks.onSleepyStart?.();
      await new Promise<void>((_resolve, reject) => {
        if (ctx.signal.aborted) reject(new Error("aborted"));
        ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
      return { output: "woke up (should not happen)" };
    },
  });
  const boom = defineTool({
    name: "boom",
    description: "always throws",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read", target: "" }),
    async execute() {
      counters.boom += 1;
      throw new Error("kaboom: the disk is on fire");
    },
  });
  const nap = defineTool({
    name: "nap",
    description: "takes 30 ms, then answers",
    input: z.object({}),
    classify: () => ({ risk: "read", operation: "read", target: "" }),
    async execute(_input, ctx) {
      counters.nap += 1;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 30);
        ctx.signal.addEventListener("abort", () => (clearTimeout(timer), reject(new Error("aborted"))), { once: true });
      });
      return { output: "rested" };
    },
  });
  return new Map([edit, probe, sleepy, boom, nap].map((tool) => [tool.name, tool]));
}

// ---------------------------------------------------------------------------
// Scripted model

export function usageOf(input: number, output: number, reasoning = 0, cached = 0): Usage {
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, reasoningTokens: reasoning, cachedInputTokens: cached };
}

export function call(callId: string, tool: string, input: unknown, invalid?: string): StepToolCall {
  return { callId, tool, input, ...(invalid !== undefined ? { invalid } : {}) };
}

/** A model step that makes the given calls (the assistant message carries them, as the SDK's would). */
export function toolStep(calls: StepToolCall[], options: { usage?: Usage; text?: string; extra?: Message[] } = {}): StepOutcome {
  const text = options.text ?? "";
  return {
    ok: true,
    text,
    toolCalls: calls,
    responseMessages: [
      {
        role: "assistant",
        parts: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...calls.map((c) => ({ type: "tool-call" as const, callId: c.callId, tool: c.tool, input: c.input, state: "pending" as const })),
        ],
      },
      ...(options.extra ?? []),
    ],
    usage: options.usage ?? usageOf(10, 5),
    finishReason: "tool-calls",
  };
}

export function finalStep(text = "done", usage: Usage = usageOf(10, 5)): StepOutcome {
  return { ok: true, text, toolCalls: [], responseMessages: [{ role: "assistant", parts: [{ type: "text", text }] }], usage, finishReason: "stop" };
}

export type Script = StepOutcome | ((request: StepRequest) => StepOutcome | Promise<StepOutcome>);

export function scriptedRunner(script: Script[]) {
  const requests: Message[][] = [];
  const runner: ModelRunner = {
    identity: { alias: "fake", provider: "fake", model: "fake-1" },
    async step(request) {
      // The loop keeps appending to the array it passed; keep what the model saw at this moment.
      requests.push(structuredClone(request.messages));
      const next = script.shift();
      if (next === undefined) throw new Error(`model called more often than scripted (request ${requests.length})`);
      return typeof next === "function" ? next(request) : next;
    },
  };
  return { runner, requests };
}

// ---------------------------------------------------------------------------
// Running the loop

export type RunOptions = {
  script: Script[];
  mode?: PermissionMode;
  responder?: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;
  limits?: Partial<LoopLimits>;
  controller?: AbortController;
  abortReason?: StopReason;
  onSleepyStart?: () => void;
  history?: Message[];
  campaign?: CampaignCharge;
  hooks?: LoopHooks;
};

export async function run(options: RunOptions) {
  const ws = tempWorkspace();
  const counters: Counters = { edit: 0, probe: 0, sleepy: 0, boom: 0, nap: 0 };
  const tools = makeTools(counters, { onSleepyStart: options.onSleepyStart });
  const { runner, requests } = scriptedRunner(options.script);
  const events: EventBody[] = [];
  const controller = options.controller ?? new AbortController();
  const mode = options.mode ?? "ask";
  const history: Message[] = options.history ?? [userMessage("please do the thing")];
  const historyBefore = structuredClone(history);
  const result: LoopResult = await runLoop({
    agent: "tester",
    runner,
    instructions: "you are a test",
    history,
    tools,
    permissionMode: mode,
    rules: MODE_RULES[mode],
    approvals: createApprovalBroker(options.responder),
    ask: async () => false,
    roots: createRoots({ workspace: ws }),
    services: { env: {}, artifacts: createArtifactStore(join(ws, ".artifacts")), redactor: createRedactor() },
    modelCapabilities: ["text", "tools"],
    limits: { maxSteps: 10, maxToolCalls: 50, toolTimeoutMs: 10_000, maxAttachmentBytes: 1024 * 1024, ...options.limits },
    signal: controller.signal,
    abortReason: () => options.abortReason ?? "cancelled",
    emit: (body) => events.push(body),
    ...(options.campaign ? { campaign: options.campaign } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  return { ws, counters, requests, events, result, history, historyBefore };
}

/** Read-only calls run in parallel, so completions interleave: compare them in call order. */
export function byCall<E extends { callId: string }>(events: E[]): E[] {
  return [...events].sort((a, b) => a.callId.localeCompare(b.callId, "en", { numeric: true }));
}

export function ofType<T extends EventBody["type"]>(events: EventBody[], type: T): Extract<EventBody, { type: T }>[] {
  return events.filter((e): e is Extract<EventBody, { type: T }> => e.type === type);
}

/** The lifecycle of one call, as event types in order. */
export function lifecycle(events: EventBody[], callId: string): string[] {
  return events.filter((e) => "callId" in e && e.callId === callId).map((e) => e.type);
}

export function lastToolParts(messages: Message[]): ToolResultPart[] {
  const last = messages.at(-1);
  if (!last || last.role !== "tool") throw new Error(`expected the history to end with a tool message, got ${JSON.stringify(last)}`);
  return last.parts;
}

export function allToolResults(messages: Message[]): ToolResultPart[] {
  return messages.flatMap((m) => (m.role === "tool" ? m.parts : []));
}

export function completedFor(events: EventBody[], callId: string) {
  const found = ofType(events, "tool.completed").filter((e) => e.callId === callId);
  expect(found).toHaveLength(1);
  return found[0]!;
}

// ---------------------------------------------------------------------------
