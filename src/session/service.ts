import { tmpdir } from "node:os";
import { newSessionId } from "../protocol/ids.ts";
import type { Message } from "../protocol/messages.ts";
import { createApprovalBroker, type ApprovalAnswer, type ApprovalResponder } from "../policy/approvals.ts";
import { createRedactor, type Redactor } from "../security/redact.ts";
import { withVisibleRedaction } from "../security/visible-redaction.ts";
import type { Store } from "../store/store.ts";
import type { RuntimeEvent } from "../protocol/events.ts";
import { UsageError } from "../util/errors.ts";
import type { EventListener } from "./emitter.ts";
import { checkSavedModel, historyFor, resolveRunResume, resolveSessionResume, type Continuation } from "./resume.ts";
import { titleFrom, type CheckpointMeta } from "./recorder.ts";
import { knownSecretValues, prepareRun, type RunOutcome } from "./run.ts";
import { claimSession, ensureSession, RunCancelledBeforeStart } from "./session-claim.ts";
import { withinBound } from "../util/timers.ts";

export { RunCancelledBeforeStart } from "./session-claim.ts";
export type { OpenRequest, PendingApproval, RunHandle, SendOptions, Session, SessionServiceOptions, StoreAccess } from "./service-types.ts";
import type { OpenRequest, PendingApproval, SendOptions, Session, SessionServiceOptions } from "./service-types.ts";
import { createDelegationCoordinator } from "./delegation/coordinator.ts";
import type { DelegationCoordinator } from "./delegation/coordinator.ts";
import type { DelegationProvider } from "./delegation/types.ts";
import { createWorkspaceRegistry } from "./delegation/workspaces.ts";

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
  // Turns queued or running in any session: shutdown lets them finish writing before the store closes.
  const inflight = new Set<Promise<unknown>>();
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
        const settled = queue.finally(() => inflight.delete(settled));
        inflight.add(settled);
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
      busy() {
        if (controllers.size > 0) return true;
        for (const child of coordinators.get(id)?.children.values() ?? []) if (child.status === "queued" || child.status === "running") return true;
        return false;
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
     * Ends what outlives a turn: turns still running (cancelled by the caller) are given up to
     * `turnBoundMs` to finish writing their records and release their session, unfinished children
     * are cancelled and awaited (a one-shot process never leaves one running), then every isolated
     * child workspace is removed. Call once work is over, before the store is closed.
     */
    async shutdown(turnBoundMs = SHUTDOWN_TURN_BOUND_MS) {
      if (inflight.size > 0) await withinBound(Promise.all(inflight), turnBoundMs, "turns still running").catch(() => undefined);
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

/** How long `shutdown` waits for cancelled turns to wind down. */
export const SHUTDOWN_TURN_BOUND_MS = 10_000;

/** A session id that belongs to another surface (or workspace): refused, never taken over. */
export class SessionRefused extends UsageError {}


