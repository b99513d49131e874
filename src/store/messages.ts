import type { Database } from "bun:sqlite";
import { parseMessage, type Message } from "../protocol/messages.ts";
import { StoreError } from "./errors.ts";

/**
 * A session's conversation as rows keyed by (session, position): a step
 * appends what it added and replaces the one message whose tool-call states
 * changed, so the bytes written per step do not grow with the session.
 * Rows are validated against the message schema when read back.
 */

type Params = Record<string, string | number | null>;

function prepare(db: Database) {
  const q = <R>(sql: string) => db.prepare<R, [Params]>(sql);
  return {
    // REPLACE: a position past the last checkpoint may hold a row of an interrupted step.
    put: q<never>(
      `INSERT OR REPLACE INTO messages (session_id, position, run_id, role, body, created_at)
       VALUES (:sessionId, :position, :runId, :role, :body, :createdAt)`,
    ),
    truncate: q<never>("DELETE FROM messages WHERE session_id = :sessionId AND position >= :from"),
    load: q<{ position: number; body: string }>(
      "SELECT position, body FROM messages WHERE session_id = :sessionId AND position < :before ORDER BY position",
    ),
    count: q<{ n: number }>("SELECT count(*) AS n FROM messages WHERE session_id = :sessionId"),
    ofRun: q<{ one: number }>("SELECT 1 AS one FROM messages WHERE session_id = :sessionId AND run_id = :runId LIMIT 1"),
  };
}

export type MessageWrite = { position: number; message: Message };

export function sessionMessages(db: Database, now: () => Date) {
  // Prepared on first use: a store opened with older test migrations never needs them.
  let statements: ReturnType<typeof prepare> | undefined;
  const st = () => (statements ??= prepare(db));
  const write = db.transaction((sessionId: string, runId: string, writes: MessageWrite[], truncateFrom: number | undefined) => {
    const s = st();
    // Rows an interrupted step left past the history are dropped in the same commit that
    // replaces them: a crash in between never loses what was on disk.
    if (truncateFrom !== undefined) s.truncate.run({ sessionId, from: truncateFrom });
    let bytes = 0;
    const createdAt = now().toISOString();
    for (const { position, message } of writes) {
      const body = JSON.stringify(message);
      bytes += body.length;
      s.put.run({ sessionId, position, runId, role: message.role, body, createdAt });
    }
    return bytes;
  });
  return {
    /** Writes messages at their positions (new ones and replaced ones) in one transaction; returns the bytes written. */
    write(sessionId: string, runId: string, writes: MessageWrite[], truncateFrom?: number): number {
      if (writes.length === 0 && truncateFrom === undefined) return 0;
      return write.immediate(sessionId, runId, writes, truncateFrom);
    },
    hasRowsOf(sessionId: string, runId: string): boolean {
      return st().ofRun.get({ sessionId, runId }) !== null;
    },
    /** Messages at positions below `before` (all when absent), validated. */
    load(sessionId: string, before = Number.MAX_SAFE_INTEGER): Message[] {
      const rows = st().load.all({ sessionId, before });
      return rows.map((row, index) => {
        if (row.position !== index) {
          throw new StoreError("malformed", `session ${sessionId} is missing message ${index} of its history (found ${row.position})`);
        }
        let value: unknown;
        try {
          value = JSON.parse(row.body);
        } catch {
          throw new StoreError("malformed", `message ${index} of session ${sessionId} is not valid JSON`);
        }
        const parsed = parseMessage(value);
        if (!parsed.ok) throw new StoreError("malformed", `message ${index} of session ${sessionId} is malformed (${parsed.error})`);
        return parsed.message;
      });
    },
    count(sessionId: string): number {
      return st().count.get({ sessionId })?.n ?? 0;
    },
    close() {
      if (statements) for (const statement of Object.values(statements)) statement.finalize();
    },
  };
}
