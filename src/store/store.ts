import type { Database, Statement } from "bun:sqlite";
import { Buffer } from "node:buffer";
import { decodeValue, encodeValue } from "./codec.ts";
import { openDatabase } from "./db.ts";
import { StoreError } from "./errors.ts";
import { hostResultRetention, hostResults, type HostResultRow } from "./host-results.ts";
import { sessionMessages, type MessageWrite } from "./messages.ts";
import type { Migration } from "./migrations.ts";
import { sessionOwners, type SessionClaim, type SessionOwner } from "./session-owner.ts";
import type { RuntimeEvent } from "../protocol/events.ts";
import type { Message } from "../protocol/messages.ts";
import {
  INTERRUPTED_REASON,
  processIsAlive,
  RUN_COLUMNS,
  runFromRecord,
  runParams,
  sessionColumns,
  SESSION_SPENDING_COLUMNS,
  type Checkpoint,
  type RunPatch,
  type RunRecord,
  type RunRow,
  type SessionRow,
  type SessionSurface,
} from "./records.ts";

export type { MessageWrite } from "./messages.ts";
export type { SessionClaim, SessionOwner } from "./session-owner.ts";
export type { Checkpoint, RunPatch, RunRow, SessionRow, SessionSurface } from "./records.ts";
export { DEFAULT_HOST_RESULT_RETENTION_MS, type HostResultRow } from "./host-results.ts";

/** Checkpoints kept per session (plus the newest of each run, so every run stays resumable). */
export const DEFAULT_CHECKPOINTS_PER_SESSION = 5;
/** The largest checkpoint stored (history + meta, encoded). */
export const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;
/** listSessions / listInterruptedRuns without a limit return at most this many rows. */
export const DEFAULT_LIST_LIMIT = 100;

export type StoredEvent = { runId: string; sequence: number; type: string } & Record<string, unknown>;

export type Store = {
  readonly path: string;
  /** `parentSessionId`: a delegated child's conversation, owned by that session. */
  createSession(row: Omit<SessionRow, "status" | "updatedAt">): void;
  /** Moves the session's last activity forward to `at` (never backwards). */
  touchSession(id: string, at: string): void;
  /** Gives a session created before its first task (an ACP session) the title its first task makes; never replaces one. */
  titleSession(id: string, title: string): void;
  getSession(id: string): SessionRow | undefined;
  /** Newest activity first. */
  /** `offset` skips that many (pages). */
  listSessions(filter: { workspace: string; surface?: SessionSurface; limit?: number; offset?: number }): SessionRow[];
  createRun(row: RunRow): void;
  updateRun(id: string, patch: RunPatch): void;
  getRun(id: string): RunRow | undefined;
  /** Takes an interrupted run for this process; false when another process took it first. */
  claimInterruptedRun(id: string, pid: number): boolean;
  /** Root runs only, newest first. */
  listInterruptedRuns(filter: { workspace: string; surface?: SessionSurface; limit?: number }): RunRow[];
  /** Stores the event verbatim; returns its database-owned order (global, increasing). */
  appendEvent(event: StoredEvent): number;
  /** A run's events in stored order. */
  eventsOf(runId: string): Array<Record<string, unknown>>;
  /** Every event of a session's runs after the given store order (0: all), in stored order. */
  eventsOfSession(sessionId: string, after: number): RuntimeEvent[];
  /** Writes messages of a session at their positions (appended or replaced); returns the bytes written. */
  /** `truncateFrom`: first, in the same transaction, drop the rows from that position on. */
  writeMessages(sessionId: string, runId: string, writes: MessageWrite[], truncateFrom?: number): number;
  /** The session's messages below position `before` (all when absent), validated. */
  loadMessages(sessionId: string, before?: number): Message[];
  messageCount(sessionId: string): number;
  /** Takes the session for this process (one run at a time per session, across processes). */
  claimSession(sessionId: string, owner: SessionOwner): SessionClaim;
  /** Frees the claim `owner` took (and nothing else). */
  releaseSession(sessionId: string, owner: SessionOwner): void;
  /** The session's newest compaction record (a `context.compacted` event of one of its own runs). */
  latestCompaction(sessionId: string): { cut: number; summary: string } | undefined;
  /** The newest root run of a session (by start). */
  latestRootRun(sessionId: string): RunRow | undefined;
  /** Whether a run wrote any message of its session. */
  hasMessagesOf(sessionId: string, runId: string): boolean;
  /**
   * Stores a checkpoint marker; with `step`, in the same transaction, the messages the step
   * wrote and the run's progress (one commit per step instead of three).
   */
  saveCheckpoint(checkpoint: Checkpoint, step?: { messages: MessageWrite[]; run: RunPatch; truncateFrom?: number }): void;
  latestCheckpoint(filter: { sessionId?: string; runId?: string }): Checkpoint | undefined;
  /** Stores a completed host request (replacing one under the same key) and, in the same transaction, deletes expired ones. */
  saveHostResult(row: HostResultRow): void;
  /** A completed host request; undefined when missing or older than the retention at `now` (default: the store's clock). */
  findHostResult(sessionId: string, idempotencyKey: string, now?: Date): HostResultRow | undefined;
  /** Payload bytes this handle has handed to SQLite (events, messages, checkpoints): what the benchmarks report. */
  bytesWritten(): number;
  close(): void;
};

export type OpenStoreOptions = {
  dir: string;
  /** Default zero-cli.db; only its basename is ever used. */
  fileName?: string;
  /** Whether a process still runs (default: `kill(pid, 0)`, EPERM counting as alive). */
  isAlive?: (pid: number) => boolean;
  checkpointsPerSession?: number;
  maxCheckpointBytes?: number;
  /** How long a completed host request is answered from the store (default 24 h). */
  hostResultRetentionMs?: number;
  /** Up to this size the whole file is quick-checked on open; beyond, only the catalog tables (integrity.ts). */
  fullCheckMaxBytes?: number;
  /** For tests of the migration path. */
  migrations?: readonly Migration[];
  now?: () => Date;
};

type CheckpointRecord = { runId: string; sessionId: string; version: number; createdAt: string; messageCount: number | null; meta: string };
type Params = Record<string, string | number | null>;

function prepareStatements(db: Database) {
  const childSessions = db.query("SELECT 1 AS one FROM pragma_table_info('sessions') WHERE name = 'parent_session_id'").get() !== null;
  const SESSION_COLUMNS = sessionColumns(childSessions);
  const q = <R>(sql: string) => db.prepare<R, [Params]>(sql);
  // Statements over columns of later migrations are prepared on first use, so opening
  // with an older migration list (tests of the migration path) still works.
  const later = <R>(sql: string) => {
    let statement: Statement<R, [Params]> | undefined;
    const get = () => (statement ??= q<R>(sql));
    get.finalize = () => statement?.finalize();
    return get;
  };
  return {
    insertSession: q<never>(
      `INSERT INTO sessions (id, surface, workspace, title, created_at, updated_at)
       VALUES (:id, :surface, :workspace, :title, :createdAt, :createdAt)`,
    ),
    insertChildSession: later<never>(
      `INSERT INTO sessions (id, surface, workspace, title, created_at, updated_at, parent_session_id)
       VALUES (:id, :surface, :workspace, :title, :createdAt, :createdAt, :parentSessionId)`,
    ),
    touchSession: q<never>("UPDATE sessions SET updated_at = max(updated_at, :at) WHERE id = :id"),
    titleSession: q<never>("UPDATE sessions SET title = :title WHERE id = :id AND title = ''"),
    touchSessionOfRun: q<never>(
      "UPDATE sessions SET updated_at = max(updated_at, :at) WHERE id = (SELECT session_id FROM runs WHERE id = :runId)",
    ),
    getSession: q<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = :id`),
    // Children's conversations belong to their parent session: never listed on their own.
    listSessions: q<SessionRow>(
      `SELECT ${SESSION_COLUMNS}, ${SESSION_SPENDING_COLUMNS} FROM sessions s
       WHERE s.workspace = :workspace AND (:surface IS NULL OR s.surface = :surface)${childSessions ? " AND s.parent_session_id IS NULL" : ""}
       ORDER BY s.updated_at DESC, s.created_at DESC, s.id DESC LIMIT :limit OFFSET :offset`,
    ),
    insertRun: q<never>(
      `INSERT INTO runs (id, session_id, root_id, parent_id, task, agent, model_alias, provider, api_model, status, reason,
         depth, workspace, permission_mode, work_depth, budgets, usage, steps, tool_calls, deadline, started_at, ended_at, pid)
       VALUES (:id, :sessionId, :rootId, :parentId, :task, :agent, :modelAlias, :provider, :apiModel, :status, :reason,
         :depth, :workspace, :permissionMode, :workDepth, :budgets, :usage, :steps, :toolCalls, :deadline, :startedAt, :endedAt, :pid)`,
    ),
    // One statement for every patch shape: each field changes only when its flag is 1.
    updateRun: q<never>(
      `UPDATE runs SET
         status = CASE WHEN :hasStatus THEN :status ELSE status END,
         reason = CASE WHEN :hasReason THEN :reason ELSE reason END,
         usage = CASE WHEN :hasUsage THEN :usage ELSE usage END,
         steps = CASE WHEN :hasSteps THEN :steps ELSE steps END,
         tool_calls = CASE WHEN :hasToolCalls THEN :toolCalls ELSE tool_calls END,
         ended_at = CASE WHEN :hasEndedAt THEN :endedAt ELSE ended_at END,
         pid = CASE WHEN :hasPid THEN :pid ELSE pid END
       WHERE id = :id`,
    ),
    getRun: q<RunRecord>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = :id`),
    listInterrupted: q<RunRecord>(
      `SELECT ${RUN_COLUMNS} FROM runs r JOIN sessions s ON s.id = r.session_id
       WHERE r.workspace = :workspace AND r.status = 'interrupted' AND r.parent_id IS NULL
         AND (:surface IS NULL OR s.surface = :surface)
       ORDER BY r.started_at DESC, r.rowid DESC LIMIT :limit`,
    ),
    latestRootRun: q<RunRecord>(
      `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.session_id = :sessionId AND r.parent_id IS NULL ORDER BY r.started_at DESC, r.rowid DESC LIMIT 1`,
    ),
    latestCompaction: q<{ body: string }>(
      `SELECT e.body FROM events e JOIN runs r ON r.id = e.run_id
       WHERE r.session_id = :sessionId AND e.type = 'context.compacted' ORDER BY e.id DESC LIMIT 1`,
    ),
    runningRuns: q<{ id: string; pid: number }>("SELECT id, pid FROM runs WHERE status = 'running'"),
    // A run whose terminal event is stored but whose row was not updated (a crash in between) ended.
    completedEvent: q<{ body: string }>("SELECT body FROM events WHERE run_id = :runId AND type = 'run.completed' ORDER BY id DESC LIMIT 1"),
    finishFromEvent: q<never>(
      "UPDATE runs SET status = :status, reason = :reason, ended_at = :endedAt WHERE id = :id AND status = 'running' AND pid = :pid",
    ),
    // Atomic: of two processes resuming the same interrupted run, only one gets it.
    claimRun: q<never>("UPDATE runs SET status = 'running', reason = NULL, ended_at = NULL, pid = :pid WHERE id = :id AND status = 'interrupted'"),
    // Guarded by status and pid: a process that resumed the run meanwhile keeps it.
    markInterrupted: q<never>(
      "UPDATE runs SET status = 'interrupted', reason = :reason WHERE id = :id AND status = 'running' AND pid = :pid",
    ),
    insertEvent: q<never>(
      `INSERT INTO events (run_id, sequence, type, created_at, body) VALUES (:runId, :sequence, :type, :createdAt, :body)
       ON CONFLICT (run_id, sequence) DO NOTHING`,
    ),
    eventAt: q<{ id: number; body: string }>("SELECT id, body FROM events WHERE run_id = :runId AND sequence = :sequence"),
    eventsOf: q<{ body: string }>("SELECT body FROM events WHERE run_id = :runId ORDER BY id"),
    // A session's events include its runs' children (their conversations live in child sessions).
    eventsOfSession: q<{ body: string }>(
      `SELECT e.body FROM events e JOIN runs r ON r.id = e.run_id
       WHERE (r.session_id = :sessionId OR r.root_id IN (SELECT id FROM runs WHERE session_id = :sessionId AND parent_id IS NULL))
         AND e.id > :after ORDER BY e.id`,
    ),
    insertCheckpoint: later<never>(
      `INSERT INTO checkpoints (session_id, run_id, version, created_at, history, meta, message_count)
       VALUES (:sessionId, :runId, :version, :createdAt, '[]', :meta, :messageCount)`,
    ),
    // Keep the newest `keep` of the session and the newest of every run in it.
    pruneCheckpoints: q<never>(
      `DELETE FROM checkpoints WHERE session_id = :sessionId
         AND id NOT IN (SELECT id FROM checkpoints WHERE session_id = :sessionId ORDER BY id DESC LIMIT :keep)
         AND id NOT IN (SELECT max(id) FROM checkpoints WHERE session_id = :sessionId GROUP BY run_id)`,
    ),
    checkpointOfSession: later<CheckpointRecord>(
      `SELECT run_id AS runId, session_id AS sessionId, version, created_at AS createdAt, message_count AS messageCount, meta
       FROM checkpoints WHERE session_id = :sessionId ORDER BY id DESC LIMIT 1`,
    ),
    checkpointOfRun: later<CheckpointRecord>(
      `SELECT run_id AS runId, session_id AS sessionId, version, created_at AS createdAt, message_count AS messageCount, meta
       FROM checkpoints WHERE run_id = :runId ORDER BY id DESC LIMIT 1`,
    ),
  };
}

function listLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  return Number.isSafeInteger(limit) && limit > 0 ? limit : DEFAULT_LIST_LIMIT;
}

function flag(present: boolean): number {
  return present ? 1 : 0;
}

function checkpointFromRecord(record: CheckpointRecord): Checkpoint {
  const meta = decodeValue(record.meta);
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) {
    throw new StoreError("malformed", `the checkpoint of run ${record.runId} is malformed (its meta has the wrong shape)`);
  }
  return { ...record, messageCount: record.messageCount ?? 0, meta: meta as Record<string, unknown> };
}

/**
 * Marks `running` runs whose process is gone as `interrupted`, so they can be
 * listed and explicitly resumed; their session's status follows (it is the
 * status of its latest root run). This process's own runs are always alive.
 */
function sweepInterrupted(db: Database, statements: ReturnType<typeof prepareStatements>, isAlive: (pid: number) => boolean): void {
  const running = statements.runningRuns.all({});
  const gone = running.filter((run) => run.pid !== process.pid && !isAlive(run.pid));
  if (gone.length === 0) return;
  try {
    db.transaction(() => {
      for (const run of gone) {
        const completed = statements.completedEvent.get({ runId: run.id });
        if (completed !== null) {
          const event = JSON.parse(completed.body) as { status?: string; reason?: string | null; timestamp?: string };
          statements.finishFromEvent.run({ id: run.id, pid: run.pid, status: event.status ?? "failed", reason: event.reason ?? null, endedAt: event.timestamp ?? null });
        } else {
          statements.markInterrupted.run({ id: run.id, pid: run.pid, reason: INTERRUPTED_REASON });
        }
      }
    }).immediate();
  } catch (error) {
    // Another process holding the write lock is no reason not to start: the next open sweeps.
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || !code.startsWith("SQLITE_BUSY")) throw error;
  }
}

export function openStore(options: OpenStoreOptions): { store: Store; notices: string[] } {
  // Checked before opening, so a bad option leaves no open handle behind.
  const retentionMs = hostResultRetention(options.hostResultRetentionMs);
  const opened = openDatabase({
    dir: options.dir,
    ...(options.fileName !== undefined ? { fileName: options.fileName } : {}),
    ...(options.migrations !== undefined ? { migrations: options.migrations } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.fullCheckMaxBytes !== undefined ? { fullCheckMaxBytes: options.fullCheckMaxBytes } : {}),
  });
  const { db, path } = opened;
  const now = options.now ?? (() => new Date());
  const keep = Math.max(1, Math.trunc(options.checkpointsPerSession ?? DEFAULT_CHECKPOINTS_PER_SESSION));
  const maxBytes = options.maxCheckpointBytes ?? MAX_CHECKPOINT_BYTES;
  let statements: ReturnType<typeof prepareStatements>;
  try {
    statements = prepareStatements(db);
    sweepInterrupted(db, statements, options.isAlive ?? processIsAlive);
  } catch (error) {
    db.close();
    throw error;
  }
  const s = statements;
  const hosts = hostResults(db, { retentionMs, now });
  const messages = sessionMessages(db, now);
  const owners = sessionOwners(db, options.isAlive ?? processIsAlive);
  let bytesWritten = 0;
  let closed = false;
  const live = () => {
    if (closed) throw new StoreError("closed", `the session database ${path} is already closed`);
  };

  const createRun = db.transaction((row: RunRow) => {
    s.insertRun.run(runParams(row));
    s.touchSession.run({ id: row.sessionId, at: row.startedAt });
  });

  const updateRun = db.transaction((id: string, patch: RunPatch) => {
    const result = s.updateRun.run({
      id,
      hasStatus: flag(patch.status !== undefined),
      status: patch.status ?? null,
      hasReason: flag(patch.reason !== undefined),
      reason: patch.reason ?? null,
      hasUsage: flag(patch.usage !== undefined),
      usage: patch.usage !== undefined ? JSON.stringify(patch.usage) : null,
      hasSteps: flag(patch.steps !== undefined),
      steps: patch.steps ?? null,
      hasToolCalls: flag(patch.toolCalls !== undefined),
      toolCalls: patch.toolCalls ?? null,
      hasEndedAt: flag(patch.endedAt !== undefined),
      endedAt: patch.endedAt ?? null,
      hasPid: flag(patch.pid !== undefined),
      pid: patch.pid ?? null,
    });
    if (result.changes === 0) throw new StoreError("not_found", `no run ${id} in ${path}`);
    if (typeof patch.endedAt === "string") s.touchSessionOfRun.run({ runId: id, at: patch.endedAt });
  });

  const saveCheckpoint = db.transaction((checkpoint: Checkpoint, meta: string, step: { messages: MessageWrite[]; run: RunPatch; truncateFrom?: number } | undefined) => {
    if (step) {
      bytesWritten += messages.write(checkpoint.sessionId, checkpoint.runId, step.messages, step.truncateFrom);
      updateRun(checkpoint.runId, step.run);
    }
    s.insertCheckpoint().run({
      sessionId: checkpoint.sessionId,
      runId: checkpoint.runId,
      version: checkpoint.version,
      createdAt: checkpoint.createdAt,
      messageCount: checkpoint.messageCount,
      meta,
    });
    s.pruneCheckpoints.run({ sessionId: checkpoint.sessionId, keep });
  });

  const store: Store = {
    path,
    createSession(row) {
      live();
      const fields = { id: row.id, surface: row.surface, workspace: row.workspace, title: row.title, createdAt: row.createdAt };
      if (row.parentSessionId) s.insertChildSession().run({ ...fields, parentSessionId: row.parentSessionId });
      else s.insertSession.run(fields);
    },
    titleSession(id, title) {
      live();
      s.titleSession.run({ id, title });
    },
    touchSession(id, at) {
      live();
      if (s.touchSession.run({ id, at }).changes === 0) throw new StoreError("not_found", `no session ${id} in ${path}`);
    },
    getSession(id) {
      live();
      return s.getSession.get({ id }) ?? undefined;
    },
    listSessions(filter) {
      live();
      const offset = filter.offset !== undefined && Number.isSafeInteger(filter.offset) && filter.offset > 0 ? filter.offset : 0;
      return s.listSessions.all({ workspace: filter.workspace, surface: filter.surface ?? null, limit: listLimit(filter.limit), offset });
    },
    createRun(row) {
      live();
      createRun.immediate(row);
    },
    updateRun(id, patch) {
      live();
      updateRun.immediate(id, patch);
    },
    claimInterruptedRun(id, pid) {
      live();
      return s.claimRun.run({ id, pid }).changes === 1;
    },
    getRun(id) {
      live();
      const record = s.getRun.get({ id });
      return record === null ? undefined : runFromRecord(record);
    },
    listInterruptedRuns(filter) {
      live();
      const records = s.listInterrupted.all({ workspace: filter.workspace, surface: filter.surface ?? null, limit: listLimit(filter.limit) });
      return records.map(runFromRecord);
    },
    appendEvent(event) {
      live();
      if (!Number.isSafeInteger(event.sequence)) throw new TypeError(`event sequence must be an integer, got ${String(event.sequence)}`);
      // Stored verbatim: events are JSON by contract (surfaces print them as such).
      const body = JSON.stringify(event);
      bytesWritten += body.length;
      const createdAt = typeof event.timestamp === "string" ? event.timestamp : now().toISOString();
      const result = s.insertEvent.run({ runId: event.runId, sequence: event.sequence, type: event.type, createdAt, body });
      if (result.changes === 1) return Number(result.lastInsertRowid);
      // The same event again (a retried write) is idempotent; a different one under a taken sequence is a bug.
      const existing = s.eventAt.get({ runId: event.runId, sequence: event.sequence });
      if (existing !== null && existing.body === body) return existing.id;
      throw new StoreError("duplicate_event", `run ${event.runId} already has a different event with sequence ${event.sequence}`);
    },
    eventsOf(runId) {
      live();
      return s.eventsOf.all({ runId }).map((row) => JSON.parse(row.body) as Record<string, unknown>);
    },
    writeMessages(sessionId, runId, writes, truncateFrom) {
      live();
      const bytes = messages.write(sessionId, runId, writes, truncateFrom);
      bytesWritten += bytes;
      return bytes;
    },
    loadMessages(sessionId, before) {
      live();
      return messages.load(sessionId, before);
    },
    messageCount(sessionId) {
      live();
      return messages.count(sessionId);
    },
    claimSession(sessionId, owner) {
      live();
      return owners.claim(sessionId, owner);
    },
    releaseSession(sessionId, owner) {
      live();
      owners.release(sessionId, owner);
    },
    latestCompaction(sessionId) {
      live();
      const row = s.latestCompaction.get({ sessionId });
      if (row === null) return undefined;
      const event = JSON.parse(row.body) as { cut?: unknown; summary?: unknown };
      // Read back as data: a record of the wrong shape is no record.
      return typeof event.cut === "number" && Number.isSafeInteger(event.cut) && event.cut >= 0 && typeof event.summary === "string"
        ? { cut: event.cut, summary: event.summary }
        : undefined;
    },
    latestRootRun(sessionId) {
      live();
      const record = s.latestRootRun.get({ sessionId });
      return record === null ? undefined : runFromRecord(record);
    },
    hasMessagesOf(sessionId, runId) {
      live();
      return messages.hasRowsOf(sessionId, runId);
    },
    eventsOfSession(sessionId, after) {
      live();
      return s.eventsOfSession.all({ sessionId, after }).map((row) => JSON.parse(row.body) as RuntimeEvent);
    },
    saveCheckpoint(checkpoint, step) {
      live();
      if (!Number.isSafeInteger(checkpoint.messageCount) || checkpoint.messageCount < 0) {
        throw new TypeError(`checkpoint messageCount must be a non-negative integer, got ${String(checkpoint.messageCount)}`);
      }
      const meta = encodeValue(checkpoint.meta);
      const bytes = Buffer.byteLength(meta);
      if (bytes > maxBytes) {
        const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
        throw new StoreError(
          "too_large",
          `the checkpoint of run ${checkpoint.runId} is ${mib(bytes)} MiB, over the ${mib(maxBytes)} MiB limit; it was not saved`,
        );
      }
      saveCheckpoint.immediate(checkpoint, meta, step);
      bytesWritten += bytes;
    },
    latestCheckpoint(filter) {
      live();
      let record: CheckpointRecord | null;
      if (filter.runId !== undefined) {
        record = s.checkpointOfRun().get({ runId: filter.runId });
        if (record !== null && filter.sessionId !== undefined && record.sessionId !== filter.sessionId) record = null;
      } else if (filter.sessionId !== undefined) {
        record = s.checkpointOfSession().get({ sessionId: filter.sessionId });
      } else {
        throw new TypeError("latestCheckpoint needs a sessionId or a runId");
      }
      return record === null ? undefined : checkpointFromRecord(record);
    },
    saveHostResult(row) {
      live();
      hosts.save(row);
    },
    findHostResult(sessionId, idempotencyKey, at) {
      live();
      return hosts.find(sessionId, idempotencyKey, at ?? now());
    },
    bytesWritten: () => bytesWritten,
    close() {
      if (closed) return;
      closed = true;
      hosts.close();
      messages.close();
      owners.close();
      for (const statement of Object.values(s) as Array<{ finalize(): void }>) statement.finalize();
      try {
        // Cheap upkeep SQLite recommends at close: refreshes planner statistics when useful.
        db.run("PRAGMA optimize");
      } catch {
        // Upkeep only; a busy database is fine.
      }
      db.close();
    },
  };
  return { store, notices: opened.notices };
}
