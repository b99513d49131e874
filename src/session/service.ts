import { tmpdir } from "node:os";
import type { EffectiveConfig } from "../config/schema.ts";
import { newSessionId } from "../protocol/ids.ts";
import { userMessage, type Message } from "../protocol/messages.ts";
import { createApprovalBroker, type ApprovalAnswer, type ApprovalRequest, type ApprovalResponder } from "../policy/approvals.ts";
import { createRedactor, type Redactor } from "../security/redact.ts";
import { withVisibleRedaction } from "../security/visible-redaction.ts";
import type { SessionSurface, Store } from "../store/store.ts";
import type { RuntimeEvent } from "../protocol/events.ts";
import type { Env } from "../util/env.ts";
import { UsageError } from "../util/errors.ts";
import type { EventListener } from "./emitter.ts";
import { checkSavedModel, loadHistory, resolveRunResume, resolveSessionResume, type Continuation } from "./resume.ts";
import { titleFrom, type CheckpointMeta } from "./recorder.ts";
import { knownSecretValues, prepareRun, type RunOutcome, type RunOverrides } from "./run.ts";
import { claimSession, RunCancelledBeforeStart } from "./session-claim.ts";

export { RunCancelledBeforeStart } from "./session-claim.ts";
import type { ToolSource } from "./tool-sources.ts";
import type { LoopHooks } from "../agent/loop-input.ts";
import type { RunHooks } from "../agent/run-hooks.ts";
import { createDelegationCoordinator } from "./delegation/coordinator.ts";
import type { DelegationCoordinator } from "./delegation/coordinator.ts";
import type { DelegationProvider } from "./delegation/types.ts";
import type { MediaPart } from "../tool/define.ts";
import { createWorkspaceRegistry } from "./delegation/workspaces.ts";

/** The store as the service sees it: opened only when something must be written or read. */
export type StoreAccess = {
  /** Opens (creating the state directory on first use); undefined when storage is disabled. */
  open(): Store | undefined;
  /** Whether a database already exists (so a resume can fail without creating one). */
  exists(): boolean;
  enabled: boolean;
};

export type SessionServiceOptions = {
  config: EffectiveConfig;
  env: Env;
  workspace: string;
  extraDirs: string[];
  surface: SessionSurface;
  overrides: RunOverrides;
  store: StoreAccess;
  /** Interactive surfaces answer approvals through `answerApproval`; headless sessions deny what needs asking. */
  interactive?: boolean;
  /** Notices for people (waiting for another process); stderr on the CLI. */
  log?(line: string): void;
  toolSources?: readonly ToolSource[];
  /** Lifecycle hooks every run of the service gets, delegated children included (plugins). */
  runHooks?: RunHooks;
  /** How often a session busy in another process is checked again (ms). */
  claimPollMs?: number;
  /** Where isolated child workspaces (git worktrees, scratch dirs) are made; default: the OS temp dir. */
  tempRoot?: string;
};

export type OpenRequest =
  /** `durable`: the session is stored at once, before its first turn (ACP lists it from then on). */
  | { kind: "new"; durable?: boolean }
  /** `--resume <id|latest>`. */
  | { kind: "resume"; ref: string }
  /** `--resume-run <id|latest>`: the interrupted run itself continues. */
  | { kind: "resume-run"; ref: string }
  /** A session the surface names itself (host): continued when it exists, created when not. */
  | { kind: "named"; sessionId: string };

export type RunHandle = {
  /** Settles when the run ended (or was refused before it started: then it rejects). */
  done: Promise<RunOutcome>;
  cancel(): void;
};

export type PendingApproval = ApprovalRequest & { sessionId: string };

export type SendOptions = {
  listeners?: EventListener[];
  hooks?: LoopHooks;
  workflow?: string;
  /** `--attach` paths. */
  attach?: readonly string[];
  /** Media the surface received with the prompt (ACP images and audio), validated by the surface. */
  media?: readonly MediaPart[];
  /** This turn's choices (ACP config options), over the service's. */
  overrides?: RunOverrides;
};

export type Session = {
  readonly id: string;
  /** Queues a user turn; turns of one session run one at a time, in order. */
  send(task: string, options?: SendOptions): RunHandle;
  /** Events of every run of this session, live; `after` replays stored events after that store order first. */
  subscribe(listener: EventListener, options?: { after?: number }): () => void;
  /** Answers a pending approval of an interactive session. */
  answerApproval(callId: string, answer: ApprovalAnswer): boolean;
  /** Approval requests waiting for an answer (interactive sessions). */
  pendingApprovals(): PendingApproval[];
  /** Called with each approval request once it waits for `answerApproval` (interactive sessions); returns the unsubscribe. */
  onApprovalPending(listener: (request: PendingApproval) => void): () => void;
  /** Compacts the conversation before the next turn's first request (the TUI's /compact; ACP). */
  compact(): void;
  /** Cancels the running turn and every queued one. */
  cancel(): void;
  close(): void;
};

/**
 * The session service: every surface (run, exec, host, and later TUI and ACP)
 * opens, resumes, sends to, cancels and subscribes to sessions through it.
 * It owns what must be the same everywhere: one run at a time per session
 * (queued in this process, claimed in the store across processes), the
 * continuation rule for saved models, approvals that last for the session,
 * and redaction of everything that leaves the process, done once.
 */
export function createSessionService(options: SessionServiceOptions) {
  const sessions = new Map<string, Session>();
  // Isolated child workspaces of every session, removed by `shutdown` (the surfaces call it on exit and signals).
  const workspaces = createWorkspaceRegistry();
  // Children outlive an evicted idle session object: their coordinator is kept per session id.
  const coordinators = new Map<string, DelegationCoordinator>();
  // One redactor for everything that leaves the process, matching secrets as written and as seen.
  const redactor: Redactor = withVisibleRedaction(createRedactor({ knownSecrets: knownSecretValues(options.config, options.env) }));
  const resumeContext = () => ({
    workspace: options.workspace,
    surface: options.surface,
    config: options.config,
    ...(options.overrides.model !== undefined ? { modelOverride: options.overrides.model } : {}),
  });

  function storeForResume(flag: string): Store | undefined {
    if (!options.store.enabled) return undefined;
    if (!options.store.exists()) {
      throw new UsageError(`${flag}: nothing to resume in this workspace (${options.workspace}) yet; see 'zero sessions'`);
    }
    return options.store.open();
  }

  /** Where the session stands now: the continuation its next run starts from, checked. */
  function continuationFor(sessionId: string, first: Continuation | undefined, modelOverride: string | undefined): Continuation | undefined {
    if (first?.kind === "run") return first;
    const store = options.store.enabled && options.store.exists() ? options.store.open() : undefined;
    const checkpoint = store?.latestCheckpoint({ sessionId });
    if (!checkpoint) return undefined;
    const meta = checkpoint.meta as unknown as CheckpointMeta;
    // A workflow's coordinator saved no model of its own: the next plain turn takes the agent's.
    if (meta.mode !== "workflow") checkSavedModel(meta, options.config, modelOverride);
    return { kind: "session", sessionId, meta };
  }

  function open(request: OpenRequest): Session {
    let continuation: Continuation | undefined;
    let sessionId: string;
    if (request.kind === "resume") {
      continuation = resolveSessionResume(storeForResume("--resume"), request.ref, resumeContext());
      sessionId = continuation.kind === "session" ? continuation.sessionId : continuation.run.sessionId;
    } else if (request.kind === "resume-run") {
      continuation = resolveRunResume(storeForResume("--resume-run"), request.ref, resumeContext());
      sessionId = continuation.kind === "run" ? continuation.run.sessionId : continuation.sessionId;
    } else if (request.kind === "named") {
      sessionId = request.sessionId;
      const existing = options.store.enabled && options.store.exists() ? options.store.open()?.getSession(sessionId) : undefined;
      if (existing && existing.surface !== options.surface) {
        // Another surface's conversation is not this one's to continue (it would become unresumable there).
        throw new SessionRefused(`session_id ${sessionId} belongs to a ${existing.surface} session; use another session_id`);
      }
    } else {
      sessionId = newSessionId();
      if (request.durable && options.store.enabled) {
        ensureSession(options.store.open()!, { id: sessionId, surface: options.surface, workspace: options.workspace, title: "", createdAt: new Date().toISOString() });
      }
    }
    const known = sessions.get(sessionId);
    if (known) return known;
    const session = createSession(sessionId, continuation);
    sessions.set(sessionId, session);
    return session;
  }

  function createSession(id: string, first: Continuation | undefined): Session {
    let queue: Promise<unknown> = Promise.resolve();
    let pendingFirst = first;
    let compactNext = false;
    // Without storage the conversation lives here, for the life of the process.
    let memory: Message[] = [];
    const controllers = new Set<AbortController>();
    // This session object's claim token: another object for the same session (in this process
    // or another) waits for it rather than sharing it.
    const owner = { pid: process.pid, token: `${process.pid}:${crypto.randomUUID()}` };
    const subscribers = new Set<EventListener>();
    // Subscribers come and go while a run streams; one that throws never keeps an event from the others.
    const publish = (event: RuntimeEvent) => {
      if (subscribers.size === 0) return;
      for (const listener of subscribers) {
        try {
          listener(event);
        } catch {
          // the subscriber's own problem
        }
      }
    };
    const waiting = new Map<string, { request: PendingApproval; resolve: (answer: ApprovalAnswer) => void }>();
    const pendingListeners = new Set<(request: PendingApproval) => void>();
    const responder: ApprovalResponder | undefined = options.interactive
      ? (request, signal) =>
          new Promise<ApprovalAnswer>((resolve, reject) => {
            if (signal.aborted) return reject(new Error("cancelled"));
            const pending = { ...request, sessionId: id };
            waiting.set(request.callId, { request: pending, resolve });
            for (const listener of pendingListeners) {
              try {
                listener(pending);
              } catch {
                // the listener's own problem
              }
            }
            signal.addEventListener("abort", () => {
              waiting.delete(request.callId);
              reject(new Error("cancelled"));
            }, { once: true });
          })
      : undefined;
    // Session-scoped: "always" lasts for every later turn of this session.
    const approvals = createApprovalBroker(responder);
    const ask = async (question: { title: string; detail?: string }, signal: AbortSignal) => {
      if (!responder) return false;
      const callId = `ask-${crypto.randomUUID()}`;
      try {
        const answer = await responder({ callId, tool: "ask", risk: "read", operation: "read", reason: question.title, input: question }, signal);
        return answer !== "deny";
      } catch {
        return false;
      }
    };
    // Children are retained for the life of the service: one coordinator per session id.
    const coordinator = (): DelegationProvider => {
      const known = coordinators.get(id);
      if (known) return known;
      const created = createDelegationCoordinator({
        config: options.config,
        env: options.env,
        surface: options.surface,
        store: () => options.store.open(),
        redactor,
        approvals,
        ask,
        tempRoot: options.tempRoot ?? tmpdir(),
        workspaces,
        ...(options.log ? { log: options.log } : {}),
        ...(options.toolSources ? { toolSources: options.toolSources } : {}),
        ...(options.runHooks ? { runHooks: options.runHooks } : {}),
      });
      coordinators.set(id, created);
      return created;
    };

    async function turn(task: string, send: SendOptions, controller: AbortController): Promise<RunOutcome> {
      const { listeners = [], hooks, workflow, attach, media } = send;
      const overrides = { ...options.overrides, ...send.overrides };
      const continuation = continuationFor(id, pendingFirst, overrides.model);
      pendingFirst = undefined;
      // Everything the user must fix is refused here, before any state is written.
      const prepared = await prepareRun({
        config: options.config,
        env: options.env,
        workspace: options.workspace,
        extraDirs: options.extraDirs,
        task,
        surface: options.surface,
        overrides,
        ...(continuation ? { continuation } : {}),
        ...(options.toolSources ? { toolSources: options.toolSources } : {}),
        ...(options.runHooks ? { runHooks: options.runHooks } : {}),
        delegation: coordinator(),
        ...(workflow !== undefined ? { workflow } : {}),
        ...(attach !== undefined && attach.length > 0 ? { attach } : {}),
        ...(media !== undefined && media.length > 0 ? { media } : {}),
      });
      // Cancelled while preparing: nothing was written yet, and nothing will be.
      if (controller.signal.aborted) throw new RunCancelledBeforeStart();
      const cancelRun = () => prepared.cancel();
      controller.signal.addEventListener("abort", cancelRun, { once: true });
      if (controller.signal.aborted) prepared.cancel();
      const store = options.store.open();
      let release = () => {};
      try {
        let history: Message[] = store ? [] : memory;
        let stored: Message[] = [];
        if (store) {
          const title = redactor.redact(titleFrom(task)).text;
          ensureSession(store, { id, surface: options.surface, workspace: options.workspace, title, createdAt: new Date().toISOString() });
          store.titleSession(id, title);
          release = await claimSession(store, id, { owner, signal: controller.signal, pollMs: options.claimPollMs ?? 100, log: options.log });
          if (continuation?.kind === "run" && !store.claimInterruptedRun(continuation.run.id, process.pid)) {
            throw new UsageError(`run ${continuation.run.id} was just taken by another process`);
          }
          // Read after the claim: whatever ran in this session meanwhile is part of it now.
          ({ history, stored } = historyFor(store, id, continuation));
        }
        // A compacted session continues from its compaction record; a manual request applies once.
        const recorded = store?.latestCompaction(id);
        const compaction = { ...(recorded && recorded.cut <= history.length ? { state: recorded } : {}), ...(compactNext ? { compactFirst: true } : {}) };
        compactNext = false;
        const outcome = await prepared.execute({
          compaction,
          sessionId: id,
          listeners: [...listeners, (event) => publish(event)],
          history,
          stored,
          ...(store ? { store } : {}),
          approvals,
          ask,
          redactor,
          ...(hooks ? { hooks } : {}),
        });
        if (!store) memory = outcome.history;
        return outcome;
      } finally {
        controller.signal.removeEventListener("abort", cancelRun);
        release();
      }
    }

    const session: Session = {
      id,
      send(task, sendOptions = {}) {
        const controller = new AbortController();
        controllers.add(controller);
        const done = queue
          .then(() => {
            if (controller.signal.aborted) throw new RunCancelledBeforeStart();
            return turn(task, sendOptions, controller);
          })
          .finally(() => {
            controllers.delete(controller);
            // A session that never delegated keeps no coordinator (a host serving many ids does not grow).
            if (coordinators.get(id)?.children.size === 0) coordinators.delete(id);
            // An idle headless session holds nothing the store does not: forget it, so a long-lived
            // host serving many session ids does not grow. (Without storage, its memory is the history.)
            if (controllers.size === 0 && subscribers.size === 0 && !options.interactive && options.store.enabled && sessions.get(id) === session) {
              sessions.delete(id);
            }
          });
        queue = done.catch(() => undefined);
        return { done, cancel: () => controller.abort() };
      },
      subscribe(listener, subscribeOptions = {}) {
        if (subscribeOptions.after !== undefined) {
          const store = options.store.enabled && options.store.exists() ? options.store.open() : undefined;
          for (const event of store?.eventsOfSession(id, subscribeOptions.after) ?? []) listener(event);
        }
        subscribers.add(listener);
        return () => subscribers.delete(listener);
      },
      answerApproval(callId, answer) {
        const pending = waiting.get(callId);
        if (!pending) return false;
        waiting.delete(callId);
        pending.resolve(answer);
        return true;
      },
      pendingApprovals: () => [...waiting.values()].map((entry) => entry.request),
      onApprovalPending(listener) {
        pendingListeners.add(listener);
        return () => pendingListeners.delete(listener);
      },
      compact() {
        compactNext = true;
      },
      cancel() {
        for (const controller of controllers) controller.abort();
      },
      close() {
        for (const controller of controllers) controller.abort();
        if (sessions.get(id) === session) sessions.delete(id);
      },
    };
    return session;
  }

  return {
    open,
    redactor,
    /**
     * Ends what outlives a turn: unfinished children are cancelled and awaited (a one-shot process
     * never leaves one running), then every isolated child workspace is removed. Call once work is over.
     */
    async shutdown() {
      await Promise.all([...coordinators.values()].map((coordinator) => coordinator.shutdown()));
      await workspaces.removeAll().catch(() => workspaces.removeAllSync());
    },
    /** The same without waiting, for exit handlers: children are cancelled (their process groups killed), workspaces removed. */
    shutdownSync() {
      for (const coordinator of coordinators.values()) coordinator.cancelAll();
      workspaces.removeAllSync();
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

/**
 * The history a turn continues. A continued run (--resume-run) takes its own last marker, or —
 * killed before its first — the session's, plus whatever it had stored past it; its task is
 * restored when nothing of it was stored.
 */
function historyFor(store: Store, sessionId: string, continuation: Continuation | undefined): { history: Message[]; stored: Message[] } {
  if (continuation?.kind !== "run") return loadHistory(store, sessionId, store.latestCheckpoint({ sessionId }));
  const run = continuation.run;
  const own = store.latestCheckpoint({ runId: run.id });
  const loaded = loadHistory(store, sessionId, own ?? store.latestCheckpoint({ sessionId }), { continuingRun: true });
  // Its task is restored when nothing the run wrote survived (killed during its first request).
  if (!own && !store.hasMessagesOf(sessionId, run.id)) loaded.history.push(userMessage(run.task));
  return loaded;
}

/** Creates the session row unless it exists (two processes may create the same named session at once). */
function ensureSession(store: Store, row: Parameters<Store["createSession"]>[0]): void {
  if (store.getSession(row.id)) return;
  try {
    store.createSession(row);
  } catch (error) {
    if (!store.getSession(row.id)) throw error;
  }
}

/** A session id that belongs to another surface (or workspace): refused, never taken over. */
export class SessionRefused extends UsageError {}


