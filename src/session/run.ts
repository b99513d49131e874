import { realpathSync } from "node:fs";
import { join } from "node:path";
import type {
  AgentProfile,
  EffectiveConfig,
  PermissionMode,
  ReasoningEffort,
  ResolvedModel,
  Speed,
  WorkDepth,
} from "../config/schema.ts";
import { DEFAULT_MAX_STEPS, EMERGENCY_TOOL_CALLS } from "../config/defaults.ts";
import { configDir, stateDir } from "../config/paths.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { workspaceStateDir } from "../store/state.ts";
import type { RunRow, Store } from "../store/store.ts";
import type { LoopHooks } from "../agent/loop-input.ts";
import { createModelRunner, type ModelRunner } from "../llm/step.ts";
import { exitCodeFor, type RuntimeEvent, type StopReason, type Usage } from "../protocol/events.ts";
import { newRunId } from "../protocol/ids.ts";
import { userMessage, type Message } from "../protocol/messages.ts";
import type { ApprovalBroker } from "../policy/approvals.ts";
import { MODE_RULES } from "../policy/rules.ts";
import type { Redactor } from "../security/redact.ts";
import { SECRET_ENV_NAME } from "../security/redact-rules.ts";
import { createRoots, type Roots } from "../security/roots.ts";
import type { AskRequest } from "../tool/define.ts";
import { runLoop } from "../agent/loop.ts";
import { assembleSystemPrompt } from "../agent/prompt.ts";
import type { Env } from "../util/env.ts";
import { UsageError, errorMessage } from "../util/errors.ts";
import { setSafeTimeout } from "../util/timers.ts";
import { createEmitter, type EventListener } from "./emitter.ts";
import { createEventRedaction } from "./event-redaction.ts";
import { createCampaign, eventStamp, type Campaign } from "./run-context.ts";
import { buildToolSet, coreToolSource, type ToolSource } from "./tool-sources.ts";
import { networkAccessFor, webSearchAccessFor } from "./network.ts";
import { createRunRecorder, titleFrom, type CheckpointMeta } from "./recorder.ts";
import type { Continuation } from "./resume.ts";
import { readPromptTexts } from "./prompt-inputs.ts";

export type Surface = "cli" | "tui" | "acp" | "host" | "exec";

/** How often (in model steps) the loop nudges the garbage collector: each step is fine for memory but costs ~1 ms. */
const GC_EVERY_STEPS = 3;

export type RunOverrides = {
  model?: string;
  permissionMode?: PermissionMode;
  reasoningEffort?: ReasoningEffort;
  speed?: Speed;
  depth?: WorkDepth;
};

export type RunRequest = {
  config: EffectiveConfig;
  env: Env;
  /** Canonical workspace directory. */
  workspace: string;
  extraDirs?: string[];
  task: string;
  surface: Surface;
  overrides?: RunOverrides;
  /** Earlier work this run continues (`--resume`, `--resume-run`); its history comes with `execute`. */
  continuation?: Continuation;
  /** Where the run's tools come from (default: the core tools). */
  toolSources?: readonly ToolSource[];
  /** Set for a child run: who started it, and the campaign it charges (delegation fills this). */
  parent?: ParentLink;
};

/** A child run's link to its parent: its events name parent and root, and it spends the root's campaign. */
export type ParentLink = { runId: string; rootId: string; depth: number; campaign: Campaign };

/** What the session hands a prepared run when its turn comes (the session is claimed by then). */
export type RunExecution = {
  sessionId: string;
  listeners: EventListener[];
  /** The session's history before this run's task, read after the claim. */
  history: Message[];
  /** The part of `history` the store already holds unchanged. */
  stored: Message[];
  /** Where events, runs and messages are recorded; absent when storage is disabled. */
  store?: Store;
  /** Session-scoped: an "always" answer outlives this run. */
  approvals: ApprovalBroker;
  ask(question: AskRequest, signal: AbortSignal): Promise<boolean>;
  /** Redacts everything the run emits, once, before it is stored or published. */
  redactor: Redactor;
  hooks?: LoopHooks;
};

export type RunOutcome = {
  runId: string;
  sessionId: string;
  status: Extract<RuntimeEvent, { type: "run.completed" }>["status"];
  exitCode: number;
  text: string;
  history: Message[];
  /** Set when recording to the store failed: the run finished without full persistence. */
  persistWarning?: string;
};

export type PreparedRun = {
  runId: string;
  agent: AgentProfile;
  model: ResolvedModel;
  /** Runs to completion; never throws for provider trouble (that is an event). */
  execute(execution: RunExecution): Promise<RunOutcome>;
  /** Cancels the run: the model request and running tools are aborted. */
  cancel(): void;
};

const CANONICAL_KEY_VARIABLES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KIMI_API_KEY", "NEBIUS_API_KEY", "AI_GATEWAY_API_KEY", "BRAVE_SEARCH_API_KEY"];

/**
 * The secret values zero itself can see: every key variable the config names,
 * the providers' canonical variables, and any variable named like a secret.
 * Their exact text is scrubbed from tool output wherever it appears.
 */
export function knownSecretValues(config: EffectiveConfig, env: Env): string[] {
  const names = new Set(CANONICAL_KEY_VARIABLES);
  for (const model of Object.values(config.models)) if (model.apiKeyEnv) names.add(model.apiKeyEnv);
  if (config.webSearch.apiKeyEnv) names.add(config.webSearch.apiKeyEnv);
  for (const name of Object.keys(env)) if (SECRET_ENV_NAME.test(name)) names.add(name);
  // A value that is a plain word (MONKEY_KEY=keyboard) would be scrubbed everywhere: keep
  // only values that look like credentials (long enough, not just letters).
  return [...names]
    .map((name) => env[name])
    .filter((value): value is string => typeof value === "string" && value.length >= 8 && !/^[A-Za-z]+$/.test(value));
}

/** Files the configuration points at that steer an agent (prompt files), canonical where they exist. */
function configuredFiles(config: EffectiveConfig): string[] {
  const files = new Set<string>();
  for (const agent of Object.values(config.agents)) {
    if (agent.promptFile === undefined) continue;
    files.add(agent.promptFile);
    try {
      files.add(realpathSync(agent.promptFile));
    } catch {
      // Not there (yet): the configured path itself counts.
    }
  }
  return [...files];
}

function pickAgent(config: EffectiveConfig): AgentProfile {
  const agent = config.agents[config.defaultAgent];
  if (!agent) throw new UsageError(`defaultAgent '${config.defaultAgent}' is not a configured agent`);
  return agent;
}

function pickModel(config: EffectiveConfig, alias: string, fromFlag: boolean): ResolvedModel {
  const model = config.models[alias];
  if (model) return model;
  const known = Object.keys(config.models).sort().join(", ");
  throw new UsageError(`${fromFlag ? "--model" : "agent model"} '${alias}' is not a configured model alias (known: ${known})`);
}

/**
 * Validates everything a run needs before any request or event: agent, model
 * alias, key, options, prompt file, tools, roots. Errors here are the user's to
 * fix (exit 2); after this, failures are run events.
 */
export async function prepareRun(request: RunRequest): Promise<PreparedRun> {
  const { config, overrides = {}, continuation } = request;
  const agent = pickAgent(config);
  const saved = continuation?.meta;
  // A continuation keeps its saved model unless --model replaces it on purpose.
  const model = pickModel(config, overrides.model ?? saved?.model.alias ?? agent.model, overrides.model !== undefined);
  const tools = buildToolSet(agent, request.toolSources ?? [coreToolSource()]);
  let permissionMode = overrides.permissionMode ?? agent.permissionMode ?? config.permissionMode;
  if (continuation?.kind === "run" && saved!.agent !== agent.name) {
    throw new UsageError(`run ${continuation.run.id} was a run of agent ${saved!.agent}; the configured root agent is now ${agent.name}`);
  }
  if (continuation?.kind === "run") {
    // An interrupted run keeps its authority: it was granted for that run, not widened later.
    if (overrides.permissionMode !== undefined && overrides.permissionMode !== saved!.permissionMode) {
      throw new UsageError(`--resume-run keeps the run's permission mode (${saved!.permissionMode}); it cannot be changed to ${overrides.permissionMode}`);
    }
    permissionMode = saved!.permissionMode as PermissionMode;
  }
  const workDepth = overrides.depth ?? (saved?.workDepth as WorkDepth | undefined) ?? config.workDepth;
  const roots: Roots = createRoots({
    workspace: request.workspace,
    extraDirs: request.extraDirs ?? [],
    // zero's own state and configuration (trust records!) are never tool-reachable.
    privateDirs: [stateDir(request.env), configDir(request.env)],
  });
  const runner: ModelRunner = await createModelRunner({
    model,
    env: request.env,
    tools: [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    streamIdleTimeoutMs: config.limits.streamIdleTimeoutMs,
    ...(overrides.reasoningEffort ? { reasoningEffort: overrides.reasoningEffort } : {}),
    ...(overrides.speed ? { speed: overrides.speed } : {}),
  });
  const now = new Date();
  const instructions = assembleSystemPrompt(
    agent,
    {
      workspace: roots.workspace,
      roots: roots.roots.map((r) => r.path),
      permissionMode,
      model: `${model.type}/${model.model}`,
      now,
      platform: process.platform,
    },
    readPromptTexts(agent, roots),
  );

  // Large outputs live in the workspace's private state directory, created on first use.
  const artifacts = createArtifactStore(join(workspaceStateDir(request.env, roots.workspace), "artifacts"));
  const runId = continuation?.kind === "run" ? continuation.run.id : newRunId(now);
  // A resumed run keeps its absolute deadline; a passed one stops it at once.
  const timeoutMs =
    continuation?.kind === "run"
      ? Math.max(1, Date.parse(continuation.meta.deadline) - now.getTime())
      : Math.min(config.limits.runTimeoutMs, agent.timeoutMs ?? Number.POSITIVE_INFINITY);
  const controller = new AbortController();
  let abortReason: StopReason = "cancelled";

  const runRow = (sessionId: string, deadline: Date): RunRow => ({
    id: runId,
    sessionId,
    rootId: request.parent?.rootId ?? runId,
    parentId: request.parent?.runId ?? null,
    task: request.task,
    agent: agent.name,
    modelAlias: model.alias,
    provider: model.type,
    apiModel: model.model,
    status: "running",
    reason: null,
    depth: request.parent ? request.parent.depth + 1 : 0,
    workspace: roots.workspace,
    permissionMode,
    workDepth,
    budgets: { maxSteps: agent.maxSteps ?? DEFAULT_MAX_STEPS, maxToolCalls: agent.maxToolCalls ?? EMERGENCY_TOOL_CALLS, maxTokens: agent.maxTokens ?? null, timeoutMs },
    usage: continuation?.kind === "run" ? { ...continuation.meta.usage } : {},
    steps: continuation?.kind === "run" ? continuation.meta.steps : 0,
    toolCalls: continuation?.kind === "run" ? continuation.meta.toolCalls : 0,
    deadline: deadline.toISOString(),
    // When it really started: a turn may have waited for its session after it was prepared.
    startedAt: new Date().toISOString(),
    endedAt: null,
    pid: process.pid,
  });

  async function execute(execution: RunExecution): Promise<RunOutcome> {
    const { sessionId } = execution;
    const startedAt = performance.now();
    const deadline = continuation?.kind === "run" ? new Date(continuation.meta.deadline) : new Date(Date.now() + timeoutMs);
    const store = execution.store;
    const recorder = store ? createRunRecorder(store, runRow(sessionId, deadline), { surface: request.surface, title: execution.redactor.redact(titleFrom(request.task)).text }, execution.stored, execution.redactor) : undefined;
    const place = { parentId: request.parent?.runId ?? null, rootId: request.parent?.rootId ?? runId };
    const stamp = eventStamp(place);
    const emit = createEmitter(runId, execution.listeners, {
      startSequence: continuation?.kind === "run" ? continuation.lastSequence : 0,
      // Written before any surface sees it: what a client saw is always in the store.
      persist: recorder ? (event) => recorder.event(event) : undefined,
      transform: createEventRedaction(execution.redactor).apply,
      ...(stamp ? { stamp } : {}),
    });
    // A root run opens its campaign; a child charges its root's (one object, shared).
    const campaign =
      request.parent?.campaign ??
      createCampaign(
        { steps: null, toolCalls: null, tokens: null, runs: null, deadline },
        continuation?.kind === "run" ? { steps: continuation.meta.steps, toolCalls: continuation.meta.toolCalls, tokens: continuation.meta.usage.totalTokens } : {},
      );
    const checkpointMeta = (snapshot: { usage: Usage; steps: number; toolCalls: number }): CheckpointMeta => ({
      mode: "agent",
      surface: request.surface,
      workspace: roots.workspace,
      agent: agent.name,
      model: runner.identity,
      workDepth,
      permissionMode,
      deadline: deadline.toISOString(),
      usage: snapshot.usage,
      steps: snapshot.steps,
      toolCalls: snapshot.toolCalls,
    });
    // Measured now, not when prepared: the turn may have waited for its session. A deadline
    // already passed stops the run before its first request.
    const remainingMs = deadline.getTime() - Date.now();
    if (remainingMs <= 0 && !controller.signal.aborted) {
      abortReason = "deadline";
      controller.abort();
    }
    const timer = setSafeTimeout(() => {
      abortReason = "deadline";
      controller.abort();
    }, Math.max(0, remainingMs));
    const limits = {
      maxSteps: agent.maxSteps ?? DEFAULT_MAX_STEPS,
      maxToolCalls: agent.maxToolCalls ?? EMERGENCY_TOOL_CALLS,
      toolTimeoutMs: config.limits.toolTimeoutMs,
      maxAttachmentBytes: config.limits.maxAttachmentBytes,
      maxTokens: agent.maxTokens ?? null,
    };
    // A continued run (--resume-run) carries on its own history; its new text joins as a user turn.
    const history = [...execution.history, userMessage(request.task)];
    try {
      emit({
        type: "run.started",
        sessionId,
        rootRunId: place.rootId,
        parentRunId: place.parentId,
        surface: request.surface,
        task: request.task,
        agent: agent.name,
        model: runner.identity,
        cwd: roots.workspace,
        roots: roots.roots.map((r) => r.path),
        permissionMode,
        workDepth,
        depth: request.parent ? request.parent.depth + 1 : 0,
        reasoningEffort: overrides.reasoningEffort ?? model.reasoningEffort ?? null,
        speed: overrides.speed ?? model.speed ?? null,
        budgets: { ...limits, maxTokens: limits.maxTokens ?? null, timeoutMs, deadline: deadline.toISOString() },
      });
      const result = await runLoop({
        agent: agent.name,
        runner,
        instructions,
        history,
        tools,
        permissionMode,
        rules: MODE_RULES[permissionMode],
        approvals: execution.approvals,
        ask: execution.ask,
        ...(execution.hooks ? { hooks: execution.hooks } : {}),
        campaign,
        roots,
        sensitiveFiles: configuredFiles(config),
        services: {
          env: request.env,
          artifacts,
          redactor: execution.redactor,
          network: networkAccessFor(request.env),
          webSearch: webSearchAccessFor(config.webSearch, request.env),
        },
        modelCapabilities: model.capabilities,
        limits,
        signal: controller.signal,
        abortReason: () => abortReason,
        emit,
        ...(continuation?.kind === "run" ? { spent: { usage: continuation.meta.usage, steps: continuation.meta.steps, toolCalls: continuation.meta.toolCalls } } : {}),
        onHistory: (snapshot) => recorder?.messages(snapshot),
        onCheckpoint: (snapshot) => {
          recorder?.checkpoint(snapshot.history, checkpointMeta(snapshot));
          // Each step leaves its request, stream and parse garbage behind; a non-blocking
          // collection every few steps keeps peak memory flat (loop-50: ~95 → ~80 MiB).
          if (snapshot.steps % GC_EVERY_STEPS === 0) Bun.gc(false);
        },
      });
      if (result.reason === "deadline") {
        emit({ type: "guard.triggered", guard: "deadline", message: `the run passed its deadline (${timeoutMs} ms)` });
      }
      const exitCode = exitCodeFor(result.status, result.reason);
      // The final history (the answer included) is what `--resume` continues from.
      recorder?.checkpoint(result.history, checkpointMeta(result));
      emit({
        type: "run.completed",
        status: result.status,
        reason: result.reason,
        exitCode,
        text: result.text,
        usage: result.usage,
        steps: result.steps,
        toolCalls: result.toolCalls,
        durationMs: Math.round(performance.now() - startedAt),
      });
      recorder?.finish({ status: result.status, reason: result.reason, usage: { ...result.usage }, steps: result.steps, toolCalls: result.toolCalls });
      const persistWarning = recorder?.failure();
      return { runId, sessionId, status: result.status, exitCode, text: result.text, history: result.history, ...(persistWarning ? { persistWarning } : {}) };
    } catch (error) {
      // A bug, not a provider problem: still one failure event and one terminal event.
      emit({
        type: "run.failed",
        error: { kind: "internal", category: null, message: errorMessage(error), statusCode: null, retryAfterMs: null, retryable: false },
      });
      const exitCode = exitCodeFor("failed", "internal_error");
      emit({
        type: "run.completed",
        status: "failed",
        reason: "internal_error",
        exitCode,
        text: "",
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0 },
        steps: 0,
        toolCalls: 0,
        durationMs: Math.round(performance.now() - startedAt),
      });
      recorder?.finish({ status: "failed", reason: "internal_error", usage: {}, steps: 0, toolCalls: 0 });
      const persistWarning = recorder?.failure();
      return { runId, sessionId, status: "failed", exitCode, text: "", history, ...(persistWarning ? { persistWarning } : {}) };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    runId,
    agent,
    model,
    execute,
    cancel() {
      if (!controller.signal.aborted) {
        abortReason = "cancelled";
        controller.abort();
      }
    },
  };
}
