import type { Database } from "bun:sqlite";
import { errorMessage } from "../util/errors.ts";
import { fromSdkShape } from "../protocol/sdk-messages.ts";
import { decodeValue } from "./codec.ts";
import { StoreError } from "./errors.ts";

/**
 * Numbered schema migrations. The schema version lives in `PRAGMA user_version`:
 * it sits in the database header and is written inside the migration's own
 * transaction, so a migration and its version bump commit (or roll back) together,
 * and reading it needs no table. Append new migrations; never edit a shipped one.
 */
export type Migration = { version: number; name: string; up: (db: Database) => void };

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "sessions, runs, events, checkpoints",
    up(db) {
      db.run(`CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        surface TEXT NOT NULL,
        workspace TEXT NOT NULL,
        title TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`);
      db.run("CREATE INDEX sessions_by_workspace ON sessions(workspace, updated_at)");
      db.run(`CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        root_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        parent_id TEXT REFERENCES runs(id) ON DELETE CASCADE,
        task TEXT NOT NULL,
        agent TEXT NOT NULL,
        model_alias TEXT NOT NULL,
        provider TEXT NOT NULL,
        api_model TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT,
        depth INTEGER NOT NULL,
        workspace TEXT NOT NULL,
        permission_mode TEXT NOT NULL,
        work_depth TEXT NOT NULL,
        budgets TEXT NOT NULL,
        usage TEXT NOT NULL,
        steps INTEGER NOT NULL,
        tool_calls INTEGER NOT NULL,
        deadline TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        pid INTEGER NOT NULL,
        UNIQUE (id, session_id)
      )`);
      db.run("CREATE INDEX runs_by_workspace_status ON runs(workspace, status)");
      db.run("CREATE INDEX runs_by_session ON runs(session_id, parent_id, started_at)");
      db.run("CREATE INDEX runs_by_root ON runs(root_id)");
      db.run("CREATE INDEX runs_by_parent ON runs(parent_id)");
      db.run(`CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (run_id, sequence)
      )`);
      db.run(`CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        history TEXT NOT NULL,
        meta TEXT NOT NULL,
        FOREIGN KEY (run_id, session_id) REFERENCES runs(id, session_id) ON DELETE CASCADE
      )`);
      db.run("CREATE INDEX checkpoints_by_session ON checkpoints(session_id, id)");
      db.run("CREATE INDEX checkpoints_by_run ON checkpoints(run_id, id)");
    },
  },
  {
    version: 2,
    name: "host_results",
    up(db) {
      // No foreign keys: host session ids are client strings, not sessions rows.
      db.run(`CREATE TABLE host_results (
        session_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        prompt_sha256 TEXT NOT NULL,
        request_id TEXT NOT NULL,
        final TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, idempotency_key)
      )`);
      db.run("CREATE INDEX host_results_by_created ON host_results(created_at)");
    },
  },
  {
    version: 3,
    name: "messages as rows, checkpoint markers, session owners",
    up(db) {
      db.run(`CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        role TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, position)
      )`);
      // A checkpoint now marks how many messages of its session are consistent; null = none.
      db.run("ALTER TABLE checkpoints ADD COLUMN message_count INTEGER");
      // Who runs the session now (one run per session, across processes): a pid to tell a
      // dead holder, and a token unique to the holder, which alone may release the claim.
      db.run("ALTER TABLE sessions ADD COLUMN owner_pid INTEGER");
      db.run("ALTER TABLE sessions ADD COLUMN owner_token TEXT");
      moveHistoriesToRows(db);
    },
  },
  {
    version: 4,
    name: "child conversations: sessions owned by a parent session",
    up(db) {
      // A delegated child keeps its own conversation (messages, checkpoints) in a session of its
      // own, linked to the session whose run started it; listings and resume skip such sessions.
      db.run("ALTER TABLE sessions ADD COLUMN parent_session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE");
      db.run("CREATE INDEX sessions_by_parent ON sessions(parent_session_id)");
    },
  },
];

/**
 * Schema 2 kept each checkpoint's whole history (the AI SDK's message shape)
 * as one value. The newest checkpoint of each session becomes message rows;
 * every checkpoint keeps its length as a marker, and the copies are dropped.
 */
function moveHistoriesToRows(db: Database): void {
  const sessions = db.query("SELECT DISTINCT session_id AS id FROM checkpoints").all() as Array<{ id: string }>;
  const insert = db.prepare("INSERT INTO messages (session_id, position, run_id, role, body, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  for (const { id } of sessions) {
    const latest = db.query("SELECT run_id, created_at, history FROM checkpoints WHERE session_id = ? ORDER BY id DESC LIMIT 1").get(id) as
      | { run_id: string; created_at: string; history: string }
      | null;
    if (!latest) continue;
    const decoded = decodeValue(latest.history);
    const messages = fromSdkShape(Array.isArray(decoded) ? (decoded as Array<{ role: string; content: unknown }>) : []);
    messages.forEach((message, position) => insert.run(id, position, latest.run_id, message.role, JSON.stringify(message), latest.created_at));
    const rows = db.query("SELECT id, history FROM checkpoints WHERE session_id = ?").all(id) as Array<{ id: number; history: string }>;
    for (const row of rows) {
      const history = decodeValue(row.history);
      const length = Array.isArray(history) ? Math.min(history.length, messages.length) : 0;
      db.run("UPDATE checkpoints SET message_count = ?, history = '[]' WHERE id = ?", [length, row.id]);
    }
  }
  insert.finalize();
}

export function schemaVersion(db: Database): number {
  const row = db.query("PRAGMA user_version").get() as { user_version: number } | null;
  return row?.user_version ?? 0;
}

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/**
 * Brings the database up to the newest version, one transaction per migration.
 * `BEGIN IMMEDIATE` takes the write lock before reading the version, so two
 * processes opening the same old file never apply a migration twice. A database
 * from a newer zero is refused: this code cannot know what its tables mean.
 */
export function migrate(db: Database, file: string, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  const latest = latestVersion(migrations);
  const from = schemaVersion(db);
  if (from > latest) {
    throw new StoreError(
      "newer_schema",
      `${file} has schema version ${from}, but this zero understands versions up to ${latest}; ` +
        "upgrade zero, or point storage.path at another file name",
    );
  }
  // The common case takes no write lock: opening never waits on another process's writes.
  if (from === latest) return { from, to: latest };
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  for (const migration of ordered) {
    db.run("BEGIN IMMEDIATE");
    try {
      const current = schemaVersion(db);
      if (current > latest) throw new StoreError("newer_schema", `${file} was upgraded to schema version ${current} by a newer zero while opening`);
      if (current >= migration.version) {
        db.run("COMMIT");
        continue;
      }
      migration.up(db);
      // PRAGMA takes no bound parameters; the version is an integer we own.
      db.run(`PRAGMA user_version = ${Math.trunc(migration.version)}`);
      db.run("COMMIT");
    } catch (error) {
      // Some failures (a full disk) already ended the transaction.
      if (db.inTransaction) db.run("ROLLBACK");
      if (error instanceof StoreError) throw error;
      throw new StoreError(
        "migration_failed",
        `${file}: migration ${migration.version} (${migration.name}) failed: ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }
  return { from, to: Math.max(from, latest) };
}
