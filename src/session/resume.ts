import type { EffectiveConfig } from "../config/schema.ts";
import { userMessage, type ModelMessage } from "../protocol/messages.ts";
import type { RunRow, SessionSurface, Store } from "../store/store.ts";
import { UsageError } from "../util/errors.ts";
import { CHECKPOINT_VERSION, type CheckpointMeta } from "./recorder.ts";

/** How a run continues earlier work: a new run in a saved session, or an interrupted run itself. */
export type Continuation =
  | { kind: "session"; sessionId: string; history: ModelMessage[]; meta: CheckpointMeta }
  | { kind: "run"; run: RunRow; history: ModelMessage[]; meta: CheckpointMeta; lastSequence: number };

type ResumeContext = { workspace: string; surface: SessionSurface; config: EffectiveConfig; modelOverride?: string };

function requireStore(store: Store | undefined, flag: string): Store {
  if (store) return store;
  throw new UsageError(`${flag}: persistence is disabled (storage.enabled: false), so there is nothing to resume`);
}

/** The saved model must still mean the same model, unless the user names a replacement. */
function checkModel(meta: CheckpointMeta, ctx: ResumeContext): void {
  if (ctx.modelOverride !== undefined) return;
  const current = ctx.config.models[meta.model.alias];
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

function checkMeta(meta: CheckpointMeta, version: number, ctx: ResumeContext, what: string): void {
  if (version !== CHECKPOINT_VERSION) throw new UsageError(`${what} was saved in checkpoint format ${version}; this version reads ${CHECKPOINT_VERSION}`);
  if (meta.mode !== "agent") throw new UsageError(`${what} was a ${meta.mode} run; only agent runs can be resumed`);
  if (meta.workspace !== ctx.workspace) throw new UsageError(`${what} belongs to the workspace ${meta.workspace}, not ${ctx.workspace}`);
  if (meta.surface !== ctx.surface) throw new UsageError(`${what} was started from the ${meta.surface} surface; zero run resumes only its own (${ctx.surface}) sessions`);
  checkModel(meta, ctx);
}

/** `--resume <id|latest>`: a validated checkpoint restored into a fresh run of the same session. */
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
  if (session.surface !== ctx.surface) throw new UsageError(`${what} belongs to the ${session.surface} surface; zero run resumes only ${ctx.surface} sessions`);
  if (session.workspace !== ctx.workspace) throw new UsageError(`${what} belongs to the workspace ${session.workspace}, not ${ctx.workspace}`);
  const checkpoint = store.latestCheckpoint({ sessionId: session.id });
  if (!checkpoint) throw new UsageError(`${what} has no checkpoint to resume (it never completed a step)`);
  const meta = checkpoint.meta as unknown as CheckpointMeta;
  checkMeta(meta, checkpoint.version, ctx, what);
  return { kind: "session", sessionId: session.id, history: checkpoint.history as ModelMessage[], meta };
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
  const history = checkpoint ? (checkpoint.history as ModelMessage[]) : [userMessage(run.task)];
  const events = store.eventsOf(run.id);
  const lastSequence = events.reduce((max, event) => Math.max(max, Number(event.sequence) || 0), 0);
  // Taken atomically: two processes resuming the same run at once never both continue it.
  if (!store.claimInterruptedRun(run.id, process.pid)) throw new UsageError(`${what} was just taken by another process`);
  return { kind: "run", run, history, meta, lastSequence };
}
