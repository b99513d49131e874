import type { Database } from "bun:sqlite";
import { Buffer } from "node:buffer";
import { closeSync, openSync, readSync, statSync } from "node:fs";

/**
 * Cheap checks that decide, on open, whether a database file is damaged. A full
 * `PRAGMA quick_check` reads every page (~0.8 ms per MiB here: 220 ms for a
 * 274 MiB file of a million events), too slow for every start of a large store.
 * So: the header is always checked (O(1)), the whole file is quick-checked up to
 * `fullCheckMaxBytes`, and beyond that only the catalog tables (sessions, runs)
 * that listing and resuming depend on; damage elsewhere surfaces as an SQLite
 * error when those pages are read.
 */
export const FULL_CHECK_MAX_BYTES = 64 * 1024 * 1024;
const CATALOG_TABLES = ["sessions", "runs"] as const;
const SQLITE_MAGIC = "SQLite format 3\0";
const HEADER_BYTES = 100;

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}

/**
 * What is wrong with the file's header, if anything, read before SQLite touches
 * the file: a file that is plainly not a database is then moved aside with its
 * -wal untouched (SQLite would delete or rewrite it on close). An empty file is a
 * new database.
 */
export function headerProblem(path: string): string | undefined {
  const size = fileSize(path);
  if (size === 0) return undefined;
  if (size < HEADER_BYTES) return "file is not a database (shorter than its header)";
  const head = Buffer.alloc(HEADER_BYTES);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, HEADER_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString("latin1", 0, SQLITE_MAGIC.length) !== SQLITE_MAGIC) return "file is not a database";
  // With no WAL beside it the file must hold every page its header counts. (With a WAL,
  // a checkpoint interrupted by a crash may legitimately leave it short; recovery fixes that.)
  if (fileSize(`${path}-wal`) > 0) return undefined;
  const rawPageSize = head.readUInt16BE(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pageCount = head.readUInt32BE(28);
  const countIsValid = head.readUInt32BE(24) === head.readUInt32BE(92);
  if (countIsValid && pageCount > 0 && size < pageCount * pageSize) {
    return `file is truncated (${size} bytes, its header counts ${pageCount} pages of ${pageSize} bytes)`;
  }
  return undefined;
}

/** Problems `quick_check` reports (empty when the database is healthy); see above for its scope. */
export function quickCheckProblems(db: Database, path: string, fullCheckMaxBytes: number): string[] {
  const statements =
    fileSize(path) + fileSize(`${path}-wal`) <= fullCheckMaxBytes
      ? ["PRAGMA quick_check"]
      : (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>)
          .map((row) => row.name)
          .filter((name) => (CATALOG_TABLES as readonly string[]).includes(name))
          .map((name) => `PRAGMA quick_check(${name})`);
  const problems: string[] = [];
  for (const sql of statements) {
    for (const row of db.query(sql).all() as Array<{ quick_check: string }>) {
      if (row.quick_check !== "ok") problems.push(row.quick_check);
    }
  }
  return problems;
}
