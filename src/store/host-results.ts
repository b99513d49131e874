import type { Database, Statement } from "bun:sqlite";
import { StoreError } from "./errors.ts";

/**
 * Completed host-protocol requests, keyed by (session id, idempotency key), so a
 * bridge program that retries a request is answered from the store, also after a
 * restart. Rows live for a retention window: a row older than it is not found,
 * and every save deletes the expired rows in the same transaction.
 */

/** How long a completed host request is answered from the store (24 h). */
export const DEFAULT_HOST_RESULT_RETENTION_MS = 24 * 60 * 60 * 1000;

export type HostResultRow = {
  /** The host session id, a client string (not a sessions row). */
  sessionId: string;
  idempotencyKey: string;
  promptSha256: string;
  requestId: string;
  /** The final response, stored as JSON. */
  final: Record<string, unknown>;
  /** An instant; stored in its canonical `Date#toISOString` form. */
  createdAt: string;
};

type HostResultRecord = Omit<HostResultRow, "final"> & { final: string };
type Params = Record<string, string | number | null>;

const COLUMNS = `session_id AS sessionId, idempotency_key AS idempotencyKey, prompt_sha256 AS promptSha256,
  request_id AS requestId, final, created_at AS createdAt`;

function prepare(db: Database) {
  const q = <R>(sql: string) => db.prepare<R, [Params]>(sql);
  return {
    upsert: q<never>(
      `INSERT OR REPLACE INTO host_results (session_id, idempotency_key, prompt_sha256, request_id, final, created_at)
       VALUES (:sessionId, :idempotencyKey, :promptSha256, :requestId, :final, :createdAt)`,
    ),
    // Text order is time order: every created_at is canonical toISOString.
    prune: q<never>("DELETE FROM host_results WHERE created_at < :cutoff"),
    find: q<HostResultRecord>(`SELECT ${COLUMNS} FROM host_results WHERE session_id = :sessionId AND idempotency_key = :idempotencyKey`),
  };
}

/** The retention option, checked: a finite, non-negative number of milliseconds. */
export function hostResultRetention(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_HOST_RESULT_RETENTION_MS;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`hostResultRetentionMs must be a finite, non-negative number of milliseconds, got ${String(ms)}`);
  }
  return ms;
}

function canonicalInstant(value: string): string {
  const time = typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(time)) throw new TypeError(`host result createdAt must be a timestamp, got ${String(value)}`);
  return new Date(time).toISOString();
}

function cutoff(now: Date, retentionMs: number): string {
  return new Date(now.getTime() - retentionMs).toISOString();
}

function rowFromRecord(record: HostResultRecord): HostResultRow {
  let final: unknown;
  try {
    final = JSON.parse(record.final);
  } catch {
    final = undefined;
  }
  if (final === null || typeof final !== "object" || Array.isArray(final)) {
    throw new StoreError(
      "malformed",
      `the stored host result of session ${record.sessionId}, key ${record.idempotencyKey} is malformed (final is not a JSON object)`,
    );
  }
  return { ...record, final: final as Record<string, unknown> };
}

export type HostResults = {
  save(row: HostResultRow): void;
  find(sessionId: string, idempotencyKey: string, now: Date): HostResultRow | undefined;
  /** Finalizes the statements (when any were prepared). */
  close(): void;
};

/**
 * Statements are prepared on first use, so a store opened with an older
 * migration list (tests of the migration path) still opens.
 */
export function hostResults(db: Database, options: { retentionMs: number; now: () => Date }): HostResults {
  let statements: ReturnType<typeof prepare> | undefined;
  const s = () => (statements ??= prepare(db));

  const save = db.transaction((row: HostResultRow, final: string, createdAt: string) => {
    const st = s();
    st.upsert.run({
      sessionId: row.sessionId,
      idempotencyKey: row.idempotencyKey,
      promptSha256: row.promptSha256,
      requestId: row.requestId,
      final,
      createdAt,
    });
    // After the insert: a row saved already expired is not kept either (find would not return it).
    st.prune.run({ cutoff: cutoff(options.now(), options.retentionMs) });
  });

  return {
    save(row) {
      if (row.final === null || typeof row.final !== "object" || Array.isArray(row.final)) {
        throw new TypeError("a host result's final must be a JSON object");
      }
      save.immediate(row, JSON.stringify(row.final), canonicalInstant(row.createdAt));
    },
    find(sessionId, idempotencyKey, now) {
      const record = s().find.get({ sessionId, idempotencyKey });
      if (record === null || record.createdAt < cutoff(now, options.retentionMs)) return undefined;
      return rowFromRecord(record);
    },
    close() {
      if (statements === undefined) return;
      for (const statement of Object.values(statements) as Array<Statement<unknown, [Params]>>) statement.finalize();
      statements = undefined;
    },
  };
}
