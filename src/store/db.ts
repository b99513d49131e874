import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, lstatSync, openSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { errorMessage } from "../util/errors.ts";
import { StoreError } from "./errors.ts";
import { FULL_CHECK_MAX_BYTES, headerProblem, quickCheckProblems } from "./integrity.ts";
import { migrate, MIGRATIONS, type Migration } from "./migrations.ts";
import { ensurePrivateDir } from "./state.ts";

export const DEFAULT_DB_FILE = "zero-cli.db";

/** SQLite error codes that mean "these bytes are not a healthy database" (anything else is not ours to fix by moving files). */
const CORRUPTION_CODES = /^SQLITE_(NOTADB|CORRUPT)/;

export type OpenedDatabase = { db: Database; path: string; notices: string[] };

/**
 * Only the basename of a configured file name is used, so configuration can never
 * point internal writes outside the private state directory.
 */
export function databaseFileName(fileName: string | undefined): string {
  const name = basename(fileName ?? DEFAULT_DB_FILE);
  if (name === "" || name === "." || name === ".." || name.includes("\0")) {
    throw new StoreError("invalid_name", `storage.path "${fileName}" does not name a file; use a plain file name such as ${DEFAULT_DB_FILE}`);
  }
  return name;
}

function chmodIfPresent(path: string): void {
  if (existsSync(path)) chmodSync(path, 0o600);
}

function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/**
 * Creates the file ourselves with 0600 before SQLite sees it: SQLite creates the
 * -wal and -shm files with the main file's mode, so they are private from the start
 * whatever the umask. An existing file is re-chmodded in case it was loosened.
 */
function preparePrivateFile(path: string): void {
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (info === undefined) {
    try {
      closeSync(openSync(path, "wx", 0o600));
    } catch (error) {
      if (sqliteCode(error) !== "EEXIST") throw error;
    }
  } else if (!info.isFile()) {
    throw new StoreError("open_failed", `${path} is not a regular file; refusing to use it as the session database`);
  }
  chmodSync(path, 0o600);
}

type Attempt = { ok: true; db: Database } | { ok: false; detail: string };

function attemptOpen(path: string, fullCheckMaxBytes: number): Attempt {
  let db: Database | undefined;
  try {
    preparePrivateFile(path);
    const problem = headerProblem(path);
    if (problem !== undefined) return { ok: false, detail: problem };
    db = new Database(path, { readwrite: true, create: false, strict: true });
    // busy_timeout first, so the pragmas below wait for another writer instead of failing.
    db.run("PRAGMA busy_timeout = 5000");
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    const problems = quickCheckProblems(db, path, fullCheckMaxBytes);
    if (problems.length > 0) {
      db.close();
      return { ok: false, detail: `quick_check: ${problems.slice(0, 3).join("; ")}` };
    }
    chmodIfPresent(`${path}-wal`);
    chmodIfPresent(`${path}-shm`);
    return { ok: true, db };
  } catch (error) {
    db?.close();
    if (error instanceof StoreError) throw error;
    if (CORRUPTION_CODES.test(sqliteCode(error))) return { ok: false, detail: errorMessage(error) };
    throw new StoreError("open_failed", `cannot open the session database ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

function backupStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

/** Moves a damaged database (and its -wal/-shm, keeping them a pair) aside; returns the new name. */
function moveAside(path: string, now: Date): string {
  let backup = `${path}.corrupt-${backupStamp(now)}`;
  for (let n = 2; existsSync(backup); n++) backup = `${path}.corrupt-${backupStamp(now)}-${n}`;
  renameSync(path, backup);
  for (const suffix of ["-wal", "-shm"]) {
    if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${backup}${suffix}`);
  }
  return backup;
}

/**
 * Opens (creating when missing) the database file in a private directory, with
 * WAL, synchronous=NORMAL (an acknowledged commit survives a process crash; only
 * an OS crash may lose the last commits), a 5 s busy timeout and foreign keys.
 * A file that is not a database or fails the checks of integrity.ts is moved
 * aside and replaced by a fresh one, with a notice: zero still starts, and the old bytes are kept
 * for inspection. Migrations run last.
 */
export function openDatabase(options: {
  dir: string;
  fileName?: string;
  migrations?: readonly Migration[];
  now?: () => Date;
  /** Up to this size (file + WAL) the whole file is quick-checked on open; beyond, only the catalog tables. */
  fullCheckMaxBytes?: number;
}): OpenedDatabase {
  const fullCheckMaxBytes = options.fullCheckMaxBytes ?? FULL_CHECK_MAX_BYTES;
  const name = databaseFileName(options.fileName);
  try {
    ensurePrivateDir(options.dir);
  } catch (error) {
    throw new StoreError("open_failed", `cannot use the state directory: ${errorMessage(error)}`, { cause: error });
  }
  const path = join(options.dir, name);
  const notices: string[] = [];
  let attempt = attemptOpen(path, fullCheckMaxBytes);
  if (!attempt.ok) {
    let backup: string;
    try {
      backup = moveAside(path, (options.now ?? (() => new Date()))());
    } catch (error) {
      throw new StoreError("open_failed", `the session database ${path} is damaged (${attempt.detail}) and could not be moved aside: ${errorMessage(error)}`, { cause: error });
    }
    notices.push(
      `the session database ${path} was damaged (${attempt.detail}); ` +
        `it was moved to ${basename(backup)} in the same directory and a new, empty database was created`,
    );
    attempt = attemptOpen(path, fullCheckMaxBytes);
    if (!attempt.ok) throw new StoreError("open_failed", `cannot create a fresh session database at ${path}: ${attempt.detail}`);
  }
  const db = attempt.db;
  try {
    migrate(db, path, options.migrations ?? MIGRATIONS);
  } catch (error) {
    db.close();
    throw error;
  }
  return { db, path, notices };
}
