import { createHash } from "node:crypto";
import { EXIT, isChildEvent, type RuntimeEvent } from "../../protocol/events.ts";
import {
  DEFAULT_TIMEOUT_MS,
  TIMEOUT_TEXT,
  cancelRequestSchema,
  head,
  pingRequestSchema,
  runRequestSchema,
  type CancelRequest,
  type FinalStatus,
  type HostError,
  type HostErrorCode,
  type HostUsage,
  type RunRequest,
} from "../../protocol/host.ts";
import { RunCancelledBeforeStart, SessionRefused, type SessionService } from "../../session/service.ts";
import type { Store } from "../../store/store.ts";
import { errorMessage } from "../../util/errors.ts";
import { lineKind, type InputLine } from "../../util/lines.ts";
import { setSafeTimeout } from "../../util/timers.ts";
import { describeJsonError, describeRequestProblem, hostEventFor } from "./messages.ts";

export type HostOptions = {
  /** Every run goes through the session service (opened with surface "host"). */
  sessions: SessionService;
  /** The store for replayable results, opened on first use (a ping never needs it). */
  store(): Store | undefined;
  bridgeCompat: boolean;
  singleRequest: boolean;
  /** How many sessions may run at once; runs of one session always queue. */
  maxConcurrent: number;
  write(line: Record<string, unknown>): void;
  log(text: string): void;
  /** Ends the process (one-shot mode), after output is flushed. */
  exit(code: number): void;
};


type Active = {
  request: RunRequest;
  cancel(): void;
  canceled: boolean;
  timedOut: boolean;
  started: number;
  /** The run itself has begun (it holds a slot); before that, a timeout or cancel is answered at once. */
  running: boolean;
  /** Its final was written (a queued run that timed out or was cancelled): nothing more to do. */
  answered: boolean;
};

const PROVIDER_CODES: Record<string, { code: HostErrorCode; retryable: boolean }> = {
  auth: { code: "PROVIDER_AUTH", retryable: false },
  rate_limit: { code: "PROVIDER_RATE_LIMIT", retryable: true },
  // A spent quota or a billing problem: the same family as a rate limit, but waiting does not help.
  quota: { code: "PROVIDER_RATE_LIMIT", retryable: false },
  unavailable: { code: "PROVIDER_DOWN", retryable: true },
  // The model refused the prompt: no provider code fits, and the same prompt would be refused again.
  refusal: { code: "INTERNAL", retryable: false },
};

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const zeroUsage = (): HostUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** The exit code a one-shot host ends with, from the terminal line it wrote. */
function exitCodeOf(status: FinalStatus | "INVALID" | "PONG" | "ACK", error: HostError | null): number {
  if (status === "OK" || status === "PONG" || status === "ACK") return EXIT.ok;
  if (status === "TIMEOUT") return EXIT.limit;
  if (status === "CANCELED") return EXIT.cancelled;
  if (status === "INVALID") return EXIT.usage;
  return error?.code.startsWith("PROVIDER_") ? EXIT.provider : EXIT.internal;
}

/**
 * The host: requests in, protocol lines out. Sessions are durable conversations
 * (their history lives in the store's checkpoints); different sessions run
 * concurrently up to a bound, one session's runs queue in arrival order;
 * completed results are kept by (session_id, idempotency_key) and replayed.
 */
export function createHost(options: HostOptions) {
  const queues = new Map<string, Promise<void>>();
  const active = new Map<string, Active>(); // request_id → running or queued run
  const inFlight = new Map<string, { requestId: string; promptSha: string; state: Active }>(); // session␀key
  let running = 0;
  const waiting: Array<() => void> = [];
  let finished = false;
  let taken = false; // single-request: the first request line has been taken
  let closing = false; // after SIGINT/SIGTERM: new runs are answered CANCELED, never started

  const now = () => Date.now();
  const terminal = (status: FinalStatus | "INVALID" | "PONG" | "ACK", error: HostError | null) => {
    if (options.singleRequest && !finished) {
      finished = true;
      options.exit(exitCodeOf(status, error));
    }
  };
  const invalid = (requestId: string | null, sessionId: string | null, message: string) => {
    options.write({ ...head("error", requestId, sessionId, now()), error: { code: "INVALID_REQUEST", message, retryable: false } });
    terminal("INVALID", null);
  };

  async function slot(): Promise<() => void> {
    if (running >= options.maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    return () => {
      running -= 1;
      waiting.shift()?.();
    };
  }

  function writeFinal(request: RunRequest, status: FinalStatus, text: string, usage: HostUsage, error: HostError | null, started: number, extra: Record<string, unknown> = {}) {
    const line = { ...head("final", request.request_id, request.session_id, now()), status, text, usage, error, latency_ms: Math.max(0, now() - started), ...extra };
    options.write(line);
    return line;
  }

  /** Forgets a request's entries, but only its own: a retry may have taken the same id or key since. */
  function forgetRequest(request: RunRequest, state: Active) {
    if (active.get(request.request_id) === state) active.delete(request.request_id);
    const key = `${request.session_id}\u0000${request.idempotency_key}`;
    if (inFlight.get(key)?.state === state) inFlight.delete(key);
  }

  // The spec's exact shapes: a stopped run reports no text and zero usage.
  function answerTimeout(request: RunRequest, state: Active) {
    state.answered = true;
    if (!state.running) forgetRequest(request, state);
    writeFinal(request, "TIMEOUT", TIMEOUT_TEXT, zeroUsage(), { code: "TIMEOUT", message: "request exceeded timeout_ms", retryable: true }, state.started);
    terminal("TIMEOUT", null);
  }
  function answerCanceled(request: RunRequest, state: Active) {
    state.answered = true;
    if (!state.running) forgetRequest(request, state);
    writeFinal(request, "CANCELED", "", zeroUsage(), null, state.started);
    terminal("CANCELED", null);
  }

  async function execute(request: RunRequest, state: Active): Promise<void> {
    const stream = request.stream === true && !options.bridgeCompat;
    let seq = 0;
    const event = (eventType: string, payload: Record<string, unknown>) => {
      if (stream) options.write({ ...head("event", request.request_id, request.session_id, now()), event_type: eventType, seq: ++seq, payload });
    };
    const forget = () => forgetRequest(request, state);
    if (state.answered) return forget();
    const release = await slot();
    try {
      if (state.answered) return;
      state.running = true;
      event("REQUEST_ACCEPTED", { timeout_ms: request.timeout_ms ?? DEFAULT_TIMEOUT_MS, metadata: request.metadata ?? {} });
      // The session service owns the conversation: history, one run at a time, the continuation rule, redaction.
      const session = options.sessions.open({ kind: "named", sessionId: request.session_id });
      let usage = zeroUsage();
      let failure: HostError | null = null;
      // Everything arrives redacted (bridges post it into chat rooms): the service did it once for every surface.
      let context: { tokens: number; window: number } | undefined;
      const listener = (runtime: RuntimeEvent) => {
        // The reply is the root run's: a child's usage or failure is not the request's (its result reached the root).
        if (isChildEvent(runtime)) return;
        if (runtime.type === "notice") options.log(`zero host: ${runtime.message}\n`);
        if (runtime.type === "context.updated") context = { tokens: runtime.tokens, window: runtime.window };
        if (runtime.type === "usage.updated") usage = { prompt_tokens: runtime.usage.inputTokens, completion_tokens: runtime.usage.outputTokens, total_tokens: runtime.usage.totalTokens };
        if (runtime.type === "run.failed") {
          const mapped = (runtime.error.category && PROVIDER_CODES[runtime.error.category]) || { code: "INTERNAL" as const, retryable: false };
          failure = { code: mapped.code, message: runtime.error.message, retryable: mapped.retryable };
        }
        const hostEvent = hostEventFor(runtime, context);
        if (!hostEvent) return;
        event(hostEvent.type, hostEvent.payload);
      };
      const run = session.send(request.prompt, { listeners: [listener] });
      state.cancel = () => run.cancel();
      if (state.canceled || state.timedOut) run.cancel();
      const outcome = await run.done;
      if (outcome.persistWarning) options.log(`zero host: ${outcome.persistWarning}\n`);
      event("RUN_FINISHED", {});
      if (state.timedOut) return answerTimeout(request, state);
      if (outcome.status === "cancelled") return answerCanceled(request, state);
      if (outcome.status === "completed") {
        remember(request, writeFinal(request, "OK", options.sessions.redactor.redact(outcome.text).text, usage, null, state.started));
        return terminal("OK", null);
      }
      const error: HostError = failure ?? { code: "INTERNAL", message: `the run ended: ${outcome.status}`, retryable: false };
      writeFinal(request, "ERROR", options.sessions.redactor.redact(outcome.text).text, usage, error, state.started);
      terminal("ERROR", error);
    } catch (error) {
      if (state.answered) return;
      // A timeout while the turn waited for its session is a timeout, not a cancel.
      if (error instanceof RunCancelledBeforeStart) return state.timedOut ? answerTimeout(request, state) : answerCanceled(request, state);
      if (error instanceof SessionRefused) {
        state.answered = true;
        options.write({ ...head("error", request.request_id, request.session_id, now()), error: { code: "INVALID_REQUEST", message: error.message, retryable: false } });
        return terminal("INVALID", null);
      }
      const hostError: HostError = { code: "INTERNAL", message: options.sessions.redactor.redact(errorMessage(error)).text, retryable: false };
      writeFinal(request, "ERROR", "", zeroUsage(), hostError, state.started);
      terminal("ERROR", hostError);
    } finally {
      release();
      forget();
    }
  }

  /** Completed results are kept so a retried request is answered without a model call. */
  function remember(request: RunRequest, line: Record<string, unknown>) {
    try {
      options.store()?.saveHostResult({
        sessionId: request.session_id,
        idempotencyKey: request.idempotency_key,
        promptSha256: sha256(request.prompt),
        requestId: request.request_id,
        final: line,
        createdAt: new Date().toISOString(),
      });
    } catch (error) {
      options.log(`zero host: could not keep the result for replay: ${errorMessage(error)}\n`);
    }
  }

  function onRun(request: RunRequest) {
    const key = `${request.session_id}\u0000${request.idempotency_key}`;
    const promptSha = sha256(request.prompt);
    const duplicate = inFlight.get(key);
    if (duplicate) {
      if (duplicate.promptSha !== promptSha) return invalid(request.request_id, request.session_id, "idempotency_key was already used with a different prompt");
      options.write({ ...head("ack", request.request_id, request.session_id, now()), status: "DUPLICATE_IN_PROGRESS", existing_request_id: duplicate.requestId });
      return terminal("ACK", null);
    }
    let saved;
    try {
      saved = options.store()?.findHostResult(request.session_id, request.idempotency_key);
    } catch (error) {
      options.write({ ...head("error", request.request_id, request.session_id, now()), error: { code: "INTERNAL", message: errorMessage(error), retryable: false } });
      return terminal("ERROR", { code: "INTERNAL", message: errorMessage(error), retryable: false });
    }
    if (saved) {
      if (saved.promptSha256 !== promptSha) return invalid(request.request_id, request.session_id, "idempotency_key was already used with a different prompt");
      const { protocol_version, type, request_id: _old, session_id, ts_ms: _ts, ...rest } = saved.final;
      options.write({ protocol_version, type, request_id: request.request_id, session_id, ts_ms: now(), ...rest, replayed: true });
      return terminal("OK", null);
    }
    if (active.has(request.request_id)) return invalid(request.request_id, request.session_id, `request_id ${request.request_id} is already in use`);
    if (!options.bridgeCompat) {
      options.write({ ...head("ack", request.request_id, request.session_id, now()), status: "ACCEPTED", ...(request.ts_ms !== undefined ? { request_ts_ms: request.ts_ms } : {}) });
    }
    const state: Active = { request, canceled: false, timedOut: false, started: now(), cancel: () => undefined, running: false, answered: false };
    if (closing) return answerCanceled(request, state);
    active.set(request.request_id, state);
    inFlight.set(key, { requestId: request.request_id, promptSha, state });
    const timeout = setSafeTimeout(() => {
      state.timedOut = true;
      if (state.running) state.cancel();
      else if (!state.answered) answerTimeout(request, state); // still queued behind its session
    }, request.timeout_ms ?? DEFAULT_TIMEOUT_MS);
    const previous = queues.get(request.session_id) ?? Promise.resolve();
    const next = previous.then(() => execute(request, state)).finally(() => clearTimeout(timeout));
    queues.set(request.session_id, next);
    void next.finally(() => {
      if (queues.get(request.session_id) === next) queues.delete(request.session_id);
    });
  }

  function onCancel(request: CancelRequest) {
    const target = active.get(request.target_request_id);
    // Another session's run is answered like an unknown one: a bridge serving several rooms
    // must not let one room stop (or probe for) another room's run.
    if (!target || target.answered || target.request.session_id !== request.session_id) {
      return invalid(request.request_id, request.session_id, `no running request ${request.target_request_id} in session ${request.session_id} to cancel`);
    }
    options.write({ ...head("ack", request.request_id, request.session_id, now()), status: "CANCEL_ACCEPTED", target_request_id: request.target_request_id });
    target.canceled = true;
    if (target.running) target.cancel();
    else if (!target.answered) answerCanceled(target.request, target); // still queued
  }

  return {
    /**
     * Handles one input line, or a line the reader refused (too long, not UTF-8); never throws.
     * A blank line (empty, or only spaces, tabs, CR) is skipped; a line of only other
     * whitespace (U+00A0, U+2028, U+FEFF, …) is an invalid request.
     */
    handleLine(input: string | InputLine) {
      if (finished || (options.singleRequest && taken)) return;
      if (typeof input !== "string" && !input.ok) {
        taken = true;
        return invalid(null, null, `input line ${input.number} is ${input.problem}`);
      }
      const line = typeof input === "string" ? input : input.text;
      const kind = lineKind(line);
      if (kind === "blank") return;
      taken = true;
      if (kind === "whitespace") return invalid(null, null, "a line of only whitespace is not a request (a blank line may hold only spaces, tabs and a carriage return)");
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        const where = typeof input === "string" ? "" : `input line ${input.number}: `;
        return invalid(null, null, options.sessions.redactor.redact(`${where}malformed JSON: ${describeJsonError(line)}; each line must be one JSON object`).text);
      }
      const record = (value && typeof value === "object" ? value : {}) as Record<string, unknown>;
      const requestId = typeof record.request_id === "string" ? record.request_id : null;
      const sessionId = typeof record.session_id === "string" ? record.session_id : null;
      try {
        const problem = describeRequestProblem(record);
        if (problem) return invalid(requestId, sessionId, problem);
        if (record.type === "ping") {
          const ping = pingRequestSchema.parse(record);
          options.write({ ...head("ack", ping.request_id, ping.session_id, now()), status: "PONG" });
          return terminal("PONG", null);
        }
        if (record.type === "run") return onRun(runRequestSchema.parse(record));
        return onCancel(cancelRequestSchema.parse(record));
      } catch (error) {
        return invalid(requestId, sessionId, errorMessage(error));
      }
    },
    /** Cancels every run (SIGINT/SIGTERM). */
    cancelAll() {
      closing = true;
      for (const state of active.values()) {
        state.canceled = true;
        if (state.running) state.cancel();
        else if (!state.answered) answerCanceled(state.request, state);
      }
    },
    /** Resolves when every accepted run has answered. */
    async drain() {
      while (queues.size > 0) await Promise.all([...queues.values()]);
    },
  };
}
