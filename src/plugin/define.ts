/**
 * The plugin API: what a plugin module default-exports, and what its hooks and tools are given.
 * This module is what a plugin imports (`definePlugin`, `definePluginTool`, `z`); it loads nothing
 * of zero's but Zod. Everything a hook receives is a frozen copy: changing it changes nothing; a
 * hook that wants a different request or call returns one. See docs/plugins.md.
 */
import { z } from "zod";
import type { Message } from "../protocol/messages.ts";
import type { RunStatus, StopReason, Usage } from "../protocol/events.ts";

/** zero's own Zod (version 4): a plugin outside this checkout can declare its tool inputs with it. */
export { z };

/** A run: the root run of a task, or a delegated child. */
export type RunHookContext = Readonly<{
  runId: string;
  sessionId: string;
  rootRunId: string;
  /** The run that delegated this one; null for a root run. */
  parentRunId: string | null;
  /** 0 for a root run, 1 for its children, … */
  depth: number;
  /** The agent profile the run uses (`workflow:<name>` for a workflow's coordinator). */
  agent: string;
  /** The model alias. */
  model: string;
  /** The user's task (a child: the task its parent gave it). */
  task: string;
  /** The canonical workspace directory (a child in a worktree: the worktree). */
  workspace: string;
  permissionMode: "read-only" | "ask" | "accept-edits" | "full-access";
  workDepth: string;
  /** Which surface started it: cli, exec, host, … */
  surface: string;
}>;

/** A model step of a run: its number (1 = the run's first) and what the run spent so far. */
export type StepHookContext = RunHookContext &
  Readonly<{
    step: number;
    usage: Readonly<Usage>;
    /** Tool calls the run made so far (refused ones included). */
    toolCalls: number;
  }>;

/** A tool call: the tool's name and its input (not validated yet in `beforeTool`). */
export type ToolCall = Readonly<{ callId: string; tool: string; input: unknown }>;

/** `beforeTool`'s way to refuse a call: the model gets "blocked: <reason>", nothing runs. */
export type ToolBlock = Readonly<{ block: string }>;

export type ToolHookContext = StepHookContext & Readonly<{ call: ToolCall }>;

/** How a call was answered: the text the model got (redacted and bounded) and its status. */
export type ToolResult = Readonly<{
  callId: string;
  tool: string;
  status: "completed" | "failed" | "denied" | "cancelled";
  output: string;
  truncated: boolean;
}>;

/**
 * One model request. `system` and `messages` may be changed (return a new request): they are
 * sent for this step only; the stored conversation stays as it was. Messages are zero's own
 * message model (src/protocol/messages.ts); returned messages are validated, and messages passed
 * back unchanged keep their provider data as it was.
 */
export type ModelStepRequest = Readonly<{
  step: number;
  agent: string;
  model: string;
  system: string;
  messages: readonly Message[];
}>;

/** What a model step answered. */
export type ModelStepResult = Readonly<{
  step: number;
  text: string;
  toolCalls: readonly ToolCall[];
  finishReason: string;
  /** This step's usage. */
  usage: Readonly<Usage>;
}>;

/** How a run ended: what `run.completed` says. */
export type RunResult = RunHookContext &
  Readonly<{
    status: RunStatus;
    reason: StopReason | null;
    exitCode: number;
    text: string;
    usage: Readonly<Usage>;
    steps: number;
    toolCalls: number;
  }>;

type Awaitable<T> = T | Promise<T>;

export type PluginHooks = {
  beforeRun?(context: RunHookContext): Awaitable<void>;
  beforeStep?(context: StepHookContext): Awaitable<void>;
  beforeModel?(request: ModelStepRequest): Awaitable<ModelStepRequest | void>;
  afterModel?(result: ModelStepResult, context: StepHookContext): Awaitable<void>;
  beforeTool?(context: ToolHookContext): Awaitable<ToolCall | ToolBlock | void>;
  afterTool?(result: ToolResult, context: ToolHookContext): Awaitable<void>;
  onAgentSpawn?(parent: RunHookContext, child: RunHookContext): Awaitable<void>;
  shouldStop?(context: StepHookContext): Awaitable<boolean>;
  afterRun?(result: RunResult): Awaitable<void>;
  onError?(error: unknown, context: RunHookContext): Awaitable<void>;
};

/** Every hook a plugin may define; any other name under `hooks` is refused at start-up. */
export const HOOK_NAMES = [
  "beforeRun",
  "beforeStep",
  "beforeModel",
  "afterModel",
  "beforeTool",
  "afterTool",
  "onAgentSpawn",
  "shouldStop",
  "afterRun",
  "onError",
] as const satisfies ReadonlyArray<keyof PluginHooks>;

/** A plugin tool's declared risk; policy judges the call by it (see docs/plugins.md). */
export type ToolRisk = "read" | "write" | "execute" | "network";

/** What a tool does, in words any surface can map (ACP's tool kinds). */
export const ACTIVITY_KINDS = ["read", "edit", "delete", "move", "search", "execute", "fetch", "think", "other"] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** What a plugin tool's executor is given: no more than any core tool, and far less. */
export type PluginToolContext = Readonly<{
  callId: string;
  /** The canonical workspace directory of the run. */
  workspace: string;
  /** Fires on cancellation, the run's deadline or the call's own timeout (limits.toolTimeoutMs). */
  signal: AbortSignal;
  timeoutMs: number;
  /** A progress line for the surfaces (redacted like every output). */
  progress(message: string): void;
}>;

/** A tool's answer: the text the model gets (redacted, bounded like every tool's). */
export type PluginToolOutput = string | Readonly<{ output: string }>;

export type ToolDefinition<Schema extends z.ZodType = z.ZodType> = {
  /** Letters, digits, `_` and `-`, starting with a letter, at most 64; unique across zero's tools. */
  name: string;
  description: string;
  /** A Zod (version 4) object schema: the model is shown it as JSON Schema, calls are validated by it. */
  inputSchema: Schema;
  risk: ToolRisk;
  kind: ActivityKind;
  execute(input: z.infer<Schema>, context: PluginToolContext): Awaitable<PluginToolOutput>;
};

export type ZeroCliPlugin = {
  hooks?: PluginHooks;
  // `any`: each tool has its own input type (definePluginTool keeps it typed).
  tools?: ReadonlyArray<ToolDefinition<any>>;
};

/** Types a plugin (identity at run time). */
export function definePlugin<const Plugin extends ZeroCliPlugin>(plugin: Plugin): Plugin {
  return plugin;
}

/** Types one plugin tool, so `execute` knows its input from the schema (identity at run time). */
export function definePluginTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition<Schema> {
  return tool;
}
