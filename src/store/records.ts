/**
 * The rows the store keeps, as the rest of zero sees them, and their mapping
 * from SQL. Column aliases do the snake_case → camelCase work; only the JSON
 * columns need decoding here.
 */

export type SessionSurface = "cli" | "tui" | "acp" | "host" | "exec";

export type RunStatusValue = "running" | "completed" | "failed" | "limit" | "cancelled" | "interrupted";

/** What a session with no root run yet reports as its status. */
export const NO_RUN_STATUS = "idle";

/** The reason recorded when a `running` run's process is found gone on open. */
export const INTERRUPTED_REASON = "process_exited";

export type SessionRow = {
  id: string;
  surface: SessionSurface;
  workspace: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** The status of its latest root run (`idle` before the first run). */
  status: string;
  /** Set for a delegated child's conversation: the session whose run started it. */
  parentSessionId?: string | null;
  /** Listings only: tokens its runs (children included) used, and their cost in micro-USD (null: none priced). */
  tokens?: number;
  costMicroUsd?: number | null;
};

export type RunRow = {
  id: string;
  sessionId: string;
  rootId: string;
  parentId: string | null;
  task: string;
  agent: string;
  modelAlias: string;
  provider: string;
  apiModel: string;
  status: RunStatusValue;
  reason: string | null;
  depth: number;
  workspace: string;
  permissionMode: string;
  workDepth: string;
  budgets: Record<string, unknown>;
  usage: Record<string, number>;
  steps: number;
  toolCalls: number;
  deadline: string;
  startedAt: string;
  endedAt: string | null;
  pid: number;
};

export type RunPatch = Partial<Pick<RunRow, "status" | "reason" | "usage" | "steps" | "toolCalls" | "endedAt" | "pid">>;

export type Checkpoint = {
  runId: string;
  sessionId: string;
  /** The format version of this checkpoint's content (the caller's, stored as given). */
  version: number;
  createdAt: string;
  /** How many of the session's messages (from position 0) this checkpoint covers: a marker, not a copy. */
  messageCount: number;
  /** What is needed to continue: mode, agent, model identity, work depth, permission mode, budgets, usage, deadline… */
  meta: Record<string, unknown>;
};

/** What a session's runs spent, its children's included (their rows hang below the session's root runs). */
export const SESSION_SPENDING_COLUMNS = `(SELECT coalesce(sum(json_extract(r.usage, '$.totalTokens')), 0) FROM runs r
    WHERE r.session_id = s.id OR r.root_id IN (SELECT id FROM runs WHERE session_id = s.id AND parent_id IS NULL)) AS tokens,
  (SELECT sum(json_extract(r.usage, '$.costMicroUsd')) FROM runs r
    WHERE r.session_id = s.id OR r.root_id IN (SELECT id FROM runs WHERE session_id = s.id AND parent_id IS NULL)) AS costMicroUsd`;

/** A session row's columns; `parentColumn` false for a schema older than child conversations (migration tests). */
export function sessionColumns(parentColumn: boolean): string {
  return `s.id AS id, s.surface AS surface, s.workspace AS workspace, s.title AS title,
  s.created_at AS createdAt, s.updated_at AS updatedAt, ${parentColumn ? "s.parent_session_id" : "NULL"} AS parentSessionId,
  coalesce((SELECT r.status FROM runs r WHERE r.session_id = s.id AND r.parent_id IS NULL
            ORDER BY r.started_at DESC, r.rowid DESC LIMIT 1), '${NO_RUN_STATUS}') AS status`;
}

export const RUN_COLUMNS = `r.id AS id, r.session_id AS sessionId, r.root_id AS rootId, r.parent_id AS parentId,
  r.task AS task, r.agent AS agent, r.model_alias AS modelAlias, r.provider AS provider, r.api_model AS apiModel,
  r.status AS status, r.reason AS reason, r.depth AS depth, r.workspace AS workspace,
  r.permission_mode AS permissionMode, r.work_depth AS workDepth, r.budgets AS budgets, r.usage AS usage,
  r.steps AS steps, r.tool_calls AS toolCalls, r.deadline AS deadline, r.started_at AS startedAt,
  r.ended_at AS endedAt, r.pid AS pid`;

/** A runs row as SQLite returns it: the JSON columns still text. */
export type RunRecord = Omit<RunRow, "budgets" | "usage"> & { budgets: string; usage: string };

export function runFromRecord(record: RunRecord): RunRow {
  return {
    ...record,
    budgets: JSON.parse(record.budgets) as Record<string, unknown>,
    usage: JSON.parse(record.usage) as Record<string, number>,
  };
}

/** The named parameters of an INSERT INTO runs. */
export function runParams(row: RunRow): Record<string, string | number | null> {
  return {
    id: row.id,
    sessionId: row.sessionId,
    rootId: row.rootId,
    parentId: row.parentId,
    task: row.task,
    agent: row.agent,
    modelAlias: row.modelAlias,
    provider: row.provider,
    apiModel: row.apiModel,
    status: row.status,
    reason: row.reason,
    depth: row.depth,
    workspace: row.workspace,
    permissionMode: row.permissionMode,
    workDepth: row.workDepth,
    budgets: JSON.stringify(row.budgets),
    usage: JSON.stringify(row.usage),
    steps: row.steps,
    toolCalls: row.toolCalls,
    deadline: row.deadline,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    pid: row.pid,
  };
}

/** `process.kill(pid, 0)` semantics: EPERM means the process exists but is not ours. */
export function processIsAlive(pid: number): boolean {
  // 0 and negative pids address process groups, not a process: never "alive".
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}
