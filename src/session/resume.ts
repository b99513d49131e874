import type { EffectiveConfig } from "../config/schema.ts";
import { toolCallsOf, toolResultMessage, userMessage, type AssistantMessage, type Message } from "../protocol/messages.ts";
import type { Checkpoint, RunRow, SessionSurface, Store } from "../store/store.ts";
import { StoreError } from "../store/errors.ts";
import { UsageError } from "../util/errors.ts";
import { CHECKPOINT_VERSION, type CheckpointMeta } from "./recorder.ts";

/**
 * How a run continues earlier work: a new run in a saved session, or an
 * interrupted run itself. The history is not part of it: it is read from the
 * store only once the session is claimed, so two processes never fork it.
 */
export type Continuation =
  | { kind: "session"; sessionId: string; meta: CheckpointMeta }
  | { kind: "run"; run: RunRow; meta: CheckpointMeta; lastSequence: number };

type ResumeContext = { workspace: string; surface: SessionSurface; config: EffectiveConfig; modelOverride?: string };

/** The result an interrupted call gets when its run is continued: it may or may not have happened. */
export const INTERRUPTED_RESULT = "interrupted: the process running this call ended before it finished; its outcome is unknown (check before repeating it)";

function requireStore(store: Store | undefined, flag: string): Store {
  if (store) return store;
  throw new UsageError(`${flag}: persistence is disabled (storage.enabled: false), so there is nothing to resume`);
}

/**
 * The continuation rule, one for every surface: a saved model alias continues
 * only while it still names the same provider and model; when it changed or
 * vanished the caller must name a replacement on purpose (`--model`).
 */
export function checkSavedModel(meta: CheckpointMeta, config: EffectiveConfig, modelOverride: string | undefined): void {
  if (modelOverride !== undefined) return;
  const current = config.models[meta.model.alias];
  const saved = `${meta.model.provider} ${meta.model.model}`;
  if (!current) {
    throw new UsageError(`the saved model alias '${meta.model.alias}' (${saved}) is no longer configured; pass --model <alias> to continue with another model`);
  }
  if (current.type !== meta.model.provider || current.model !== meta.model.model) {
    throw new UsageError(
      `the saved model alias '${meta.model.alias}' was ${saved} and is now ${current.type} ${current.model}; ` +
        `pass --model <alias> to continue with a replacement on purpose`,
    );
  }
}

/** `workflows`: a workflow's checkpoint is acceptable too (it saved no model of its own to check). */
export function checkMeta(meta: CheckpointMeta, version: number, ctx: ResumeContext, what: string, options: { workflows?: boolean } = {}): void {
  if (version !== CHECKPOINT_VERSION && version !== 1) throw new UsageError(`${what} was saved in checkpoint format ${version}; this version reads ${CHECKPOINT_VERSION}`);
  if (meta.mode !== "agent" && !(options.workflows && meta.mode === "workflow")) throw new UsageError(`${what} was a ${meta.mode} run; only agent runs can be resumed`);
  if (meta.workspace !== ctx.workspace) throw new UsageError(`${what} belongs to the workspace ${meta.workspace}, not ${ctx.workspace}`);
  if (meta.surface !== ctx.surface) throw new UsageError(`${what} was started from the ${meta.surface} surface; ${surfaceAdvice(meta.surface, ctx.surface)}`);
  if (meta.mode === "agent") checkSavedModel(meta, ctx.config, ctx.modelOverride);
}

/** Where a session of each surface is continued, for the refusal's advice. */
const RESUMED_BY: Record<string, string> = { tui: "zero --resume <id>", cli: "zero run --resume <id>", exec: "zero exec --resume <id>", acp: "an ACP client's session/load" };

function surfaceAdvice(theirs: string, ours: string): string {
  return `here only ${ours} sessions can be resumed${RESUMED_BY[theirs] ? ` (${RESUMED_BY[theirs]} resumes it)` : ""}`;
}

/** `--resume <id|latest>`: a validated checkpoint to continue in a fresh run of the same session. */
export function resolveSessionResume(storeOrNone: Store | undefined, ref: string, ctx: ResumeContext): Continuation {
  const store = requireStore(storeOrNone, "--resume");
  const session =
    ref === "latest" ? store.listSessions({ workspace: ctx.workspace, surface: ctx.surface, limit: 1 })[0] : store.getSession(ref);
  if (!session) {
    throw new UsageError(
      ref === "latest"
        ? `--resume latest: no ${ctx.surface} session in this workspace (${ctx.workspace}) yet`
        : `--resume: no session '${ref}' in this workspace (${ctx.workspace}); sessions belong to the workspace they ran in (see 'zero sessions')`,
    );
  }
  const what = `session ${session.id}`;
  if (session.parentSessionId) {
    throw new UsageError(`${what} is a delegated child's conversation inside session ${session.parentSessionId}; resume that session and continue the child with delegate send`);
  }
  if (session.surface !== ctx.surface) throw new UsageError(`${what} belongs to the ${session.surface} surface; ${surfaceAdvice(session.surface, ctx.surface)}`);
  if (session.workspace !== ctx.workspace) throw new UsageError(`${what} belongs to the workspace ${session.workspace}, not ${ctx.workspace}`);
  const checkpoint = store.latestCheckpoint({ sessionId: session.id });
  if (!checkpoint) throw new UsageError(`${what} has no checkpoint to resume (it never completed a step)`);
  const meta = checkpoint.meta as unknown as CheckpointMeta;
  checkMeta(meta, checkpoint.version, ctx, what);
  return { kind: "session", sessionId: session.id, meta };
}

/** `--resume-run <run-id|latest>`: the interrupted run itself, with its id, authority, budget and deadline. */
export function resolveRunResume(storeOrNone: Store | undefined, ref: string, ctx: ResumeContext): Continuation {
  const store = requireStore(storeOrNone, "--resume-run");
  const run = ref === "latest" ? store.listInterruptedRuns({ workspace: ctx.workspace, surface: ctx.surface, limit: 1 })[0] : store.getRun(ref);
  if (!run) {
    throw new UsageError(
      ref === "latest"
        ? `--resume-run latest: no interrupted run in this workspace (see 'zero sessions --interrupted')`
        : `--resume-run: no run '${ref}' in this workspace (${ctx.workspace})`,
    );
  }
  const what = `run ${run.id}`;
  if (run.status !== "interrupted") throw new UsageError(`${what} is ${run.status}; only a run interrupted by a process death can be continued`);
  if (run.parentId !== null) throw new UsageError(`${what} is a child run; only root runs can be continued`);
  const session = store.getSession(run.sessionId);
  if (session && session.surface !== ctx.surface) throw new UsageError(`${what} was started from the ${session.surface} surface`);
  const latest = store.latestRootRun(run.sessionId);
  if (latest && latest.id !== run.id) {
    // Continuing it would rewrite the history the later run built on.
    throw new UsageError(`${what} is not the latest run of session ${run.sessionId} (${latest.id} came after it); continue the session with --resume ${run.sessionId}`);
  }
  const checkpoint = store.latestCheckpoint({ runId: run.id });
  // Killed before its first consistent point: continue from its task.
  const meta: CheckpointMeta = (checkpoint?.meta as unknown as CheckpointMeta | undefined) ?? {
    mode: "agent",
    surface: ctx.surface,
    workspace: run.workspace,
    agent: run.agent,
    model: { alias: run.modelAlias, provider: run.provider, model: run.apiModel },
    workDepth: run.workDepth,
    permissionMode: run.permissionMode,
    deadline: run.deadline,
    usage: run.usage as CheckpointMeta["usage"],
    steps: run.steps,
    toolCalls: run.toolCalls,
  };
  checkMeta(meta, checkpoint?.version ?? CHECKPOINT_VERSION, ctx, what);
  const events = store.eventsOf(run.id);
  const lastSequence = events.reduce((max, event) => Math.max(max, Number(event.sequence) || 0), 0);
  return { kind: "run", run, meta, lastSequence };
}

/**
 * A session's history as the next run continues it, read once the session is
 * claimed: the messages up to the checkpoint, plus a step an interrupted run
 * left half done — its calls answered "interrupted, outcome unknown", so the
 * model knows they may have happened instead of silently repeating them.
 * `stored` is what the store holds that stays as it is.
 */
export function loadHistory(
  store: Store,
  sessionId: string,
  checkpoint: Checkpoint | undefined,
  options: { continuingRun?: boolean } = {},
): { history: Message[]; stored: Message[] } {
  const count = checkpoint?.messageCount ?? 0;
  const all = store.loadMessages(sessionId);
  if (all.length < count) {
    throw new StoreError("malformed", `session ${sessionId} has ${all.length} messages, but its last checkpoint covers ${count}; its history is incomplete`);
  }
  const stored = all.slice(0, count);
  const tail = all.slice(count);
  const history = [...stored];
  for (const message of tail) {
    history.push(message);
    if (message.role === "assistant") history.push(...interruptedAnswers(message, tail));
  }
  // A tail that ends on a user message (its run died before answering) is dropped when a new
  // run brings its own task; a continued run keeps it: it is that run's task.
  if (!options.continuingRun) while (history.length > stored.length && history.at(-1)!.role === "user") history.pop();
  return { history, stored };
}

function interruptedAnswers(message: AssistantMessage, tail: readonly Message[]): Message[] {
  const answered = new Set(tail.flatMap((m) => (m.role === "tool" ? m.parts.map((p) => p.callId) : [])));
  const open = toolCallsOf(message).filter((call) => !answered.has(call.callId));
  if (open.length === 0) return [];
  return [toolResultMessage(open.map((call) => ({ type: "tool-result", callId: call.callId, tool: call.tool, output: { type: "error-text", value: INTERRUPTED_RESULT } })))];
}

/**
 * Whether a stored session can be restored by the surface that asks (ACP `session/load` and
 * `session/resume`), checked before anything of it starts (MCP servers included): the session is a
 * root session of this surface and workspace, and its last checkpoint — when it has one — was
 * written in a format this version reads, by the root agent (or a workflow) still configured, with a
 * model alias that still names exactly the same provider and model. Returns its checkpoint's meta.
 */
export function checkRestorable(store: Store | undefined, sessionId: string, ctx: ResumeContext): CheckpointMeta | undefined {
  const session = store?.getSession(sessionId);
  if (!store || !session || session.parentSessionId) throw new UsageError(`no ${ctx.surface} session '${sessionId}' in this workspace (${ctx.workspace})`);
  const what = `session ${session.id}`;
  if (session.surface !== ctx.surface) throw new UsageError(`${what} belongs to the ${session.surface} surface, not ${ctx.surface}`);
  if (session.workspace !== ctx.workspace) throw new UsageError(`${what} belongs to the workspace ${session.workspace}, not ${ctx.workspace}`);
  const checkpoint = store.latestCheckpoint({ sessionId: session.id });
  if (!checkpoint) return undefined;
  const meta = checkpoint.meta as unknown as CheckpointMeta;
  if (meta.mode === "workflow") {
    const name = meta.agent.replace(/^workflow:/, "");
    if (!Object.hasOwn(ctx.config.workflows, name)) throw new UsageError(`${what} last ran the workflow ${name}, which is no longer configured`);
    checkMeta(meta, checkpoint.version, ctx, what, { workflows: true });
  } else {
    checkMeta(meta, checkpoint.version, ctx, what);
    if (meta.agent !== ctx.config.defaultAgent) throw new UsageError(`${what} was a conversation with agent ${meta.agent}; the root agent is now ${ctx.config.defaultAgent}`);
  }
  return meta;
}

/**
 * The history a turn continues. A continued run (--resume-run) takes its own last marker, or —
 * killed before its first — the session's, plus whatever it had stored past it; its task is
 * restored when nothing of it was stored.
 */
export function historyFor(store: Store, sessionId: string, continuation: Continuation | undefined): { history: Message[]; stored: Message[] } {
  if (continuation?.kind !== "run") return loadHistory(store, sessionId, store.latestCheckpoint({ sessionId }));
  const run = continuation.run;
  const own = store.latestCheckpoint({ runId: run.id });
  const loaded = loadHistory(store, sessionId, own ?? store.latestCheckpoint({ sessionId }), { continuingRun: true });
  // Its task is restored when nothing the run wrote survived (killed during its first request).
  if (!own && !store.hasMessagesOf(sessionId, run.id)) loaded.history.push(userMessage(run.task));
  return loaded;
}
