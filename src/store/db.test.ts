import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { databaseFileName, openDatabase } from "./db.ts";
import { StoreError } from "./errors.ts";
import { ensurePrivateDir } from "./state.ts";
import { openStore } from "./store.ts";
import { runRow, sessionRow, tempDirs } from "./store-test-support.ts";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const mode = (path: string) => statSync(path).mode & 0o777;
const fixedNow = () => new Date("2025-03-04T05:06:07.890Z");

function thrown(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (error) {
    if (error instanceof StoreError) return error;
    throw error;
  }
  throw new Error("expected a StoreError");
}

/** A real database with enough rows to span many pages. */
function fillDatabase(dir: string): string {
  const { store } = openStore({ dir });
  store.createSession(sessionRow());
  store.createRun(runRow());
  for (let i = 1; i <= 5000; i++) store.appendEvent({ runId: runRow().id, sequence: i, type: "message.delta", text: `chunk ${i} `.repeat(10) });
  store.close();
  return store.path;
}

describe("opening the database file", () => {
  test("the directory is 0700 and the database, -wal and -shm are 0600 even with umask 000", () => {
    const previous = process.umask(0);
    try {
      const dir = dirs.make();
      const { db, path } = openDatabase({ dir });
      db.run("CREATE TABLE IF NOT EXISTS probe (x)");
      expect(mode(dir)).toBe(0o700);
      expect(mode(path)).toBe(0o600);
      expect(mode(`${path}-wal`)).toBe(0o600);
      expect(mode(`${path}-shm`)).toBe(0o600);
      db.close();
    } finally {
      process.umask(previous);
    }
  });

  test("an existing file with loose permissions is tightened to 0600", () => {
    const dir = dirs.make();
    openStore({ dir }).store.close();
    chmodSync(join(dir, "zero-cli.db"), 0o644);
    openStore({ dir }).store.close();
    expect(mode(join(dir, "zero-cli.db"))).toBe(0o600);
  });

  test("WAL, synchronous=NORMAL, a busy timeout and foreign keys are on", () => {
    const { db } = openDatabase({ dir: dirs.make() });
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.query("PRAGMA synchronous").get()).toEqual({ synchronous: 1 });
    expect(db.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
    expect(db.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
    db.close();
  });

  test("only the basename of fileName is used", () => {
    const dir = dirs.make();
    const { store } = openStore({ dir, fileName: "../../elsewhere/sub/custom.db" });
    expect(store.path).toBe(join(dir, "custom.db"));
    store.close();
    expect(existsSync(join(dirname(dir), "elsewhere"))).toBe(false);
    expect(readdirSync(dir)).toEqual(["custom.db"]);
    expect(databaseFileName(undefined)).toBe("zero-cli.db");
    expect(databaseFileName("/abs/path/x.sqlite")).toBe("x.sqlite");
  });

  test("a file name that names no file is refused", () => {
    for (const name of ["..", ".", "/", "a\0b"]) {
      expect(thrown(() => openStore({ dir: dirs.make(), fileName: name })).code).toBe("invalid_name");
    }
  });

  test("a directory where the file should be is refused, not moved aside", () => {
    const dir = ensurePrivateDir(dirs.make());
    mkdirSync(join(dir, "zero-cli.db"));
    const error = thrown(() => openStore({ dir }));
    expect(error.code).toBe("open_failed");
    expect(error.message).toContain("is not a regular file");
    expect(readdirSync(dir)).toEqual(["zero-cli.db"]);
  });
});

describe("a damaged database", () => {
  test("garbage bytes are moved aside with a notice and a fresh database is created", () => {
    const dir = ensurePrivateDir(dirs.make());
    const garbage = "this is not sqlite ".repeat(300);
    writeFileSync(join(dir, "zero-cli.db"), garbage);
    writeFileSync(join(dir, "zero-cli.db-wal"), "stale wal");

    const { store, notices } = openStore({ dir, now: fixedNow });
    const backup = "zero-cli.db.corrupt-20250304T050607Z";
    expect(notices).toEqual([
      `the session database ${join(dir, "zero-cli.db")} was damaged (file is not a database); ` +
        `it was moved to ${backup} in the same directory and a new, empty database was created`,
    ]);
    expect(readFileSync(join(dir, backup), "utf8")).toBe(garbage);
    expect(readFileSync(join(dir, `${backup}-wal`), "utf8")).toBe("stale wal");
    store.createSession(sessionRow());
    expect(store.listSessions({ workspace: sessionRow().workspace })).toHaveLength(1);
    store.close();
    expect(mode(join(dir, "zero-cli.db"))).toBe(0o600);
  });

  test("a truncated real database (no WAL) is caught by its header; a second damage gets its own backup name", () => {
    const dir = dirs.make();
    const path = fillDatabase(dir);
    const full = statSync(path).size;
    truncateSync(path, Math.floor(full / 2));

    const first = openStore({ dir, now: fixedNow });
    expect(first.notices).toHaveLength(1);
    expect(first.notices[0]).toContain("was damaged (file is truncated (");
    expect(first.notices[0]).toContain("zero-cli.db.corrupt-20250304T050607Z ");
    expect(first.store.listSessions({ workspace: sessionRow().workspace })).toEqual([]);
    first.store.close();
    expect(statSync(join(dir, "zero-cli.db.corrupt-20250304T050607Z")).size).toBe(Math.floor(full / 2));

    writeFileSync(path, "again not a database".repeat(100));
    const second = openStore({ dir, now: fixedNow });
    expect(second.notices[0]).toContain("zero-cli.db.corrupt-20250304T050607Z-2 ");
    second.store.close();
  });

  test("a truncated real database with a WAL beside it is caught by quick_check", () => {
    const source = dirs.make();
    const path = fillDatabase(source);
    // Copy the file pair while a writer holds un-checkpointed frames in the WAL.
    const writer = new Database(path);
    writer.run("PRAGMA wal_autocheckpoint = 0");
    writer.run("INSERT INTO sessions (id, surface, workspace, title, created_at, updated_at) VALUES ('late', 'cli', '/w', 't', 'a', 'a')");
    const dir = ensurePrivateDir(dirs.make());
    copyFileSync(path, join(dir, "zero-cli.db"));
    copyFileSync(`${path}-wal`, join(dir, "zero-cli.db-wal"));
    writer.close();
    truncateSync(join(dir, "zero-cli.db"), Math.floor(statSync(path).size / 2));

    const { store, notices } = openStore({ dir, now: fixedNow });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/was damaged \((quick_check: |database disk image is malformed)/);
    expect(existsSync(join(dir, "zero-cli.db.corrupt-20250304T050607Z"))).toBe(true);
    store.close();
  });

  test("above the full-check size, damage in the catalog tables is still caught", () => {
    const dir = dirs.make();
    const path = fillDatabase(dir);
    const raw = new Database(path, { readonly: true });
    const { rootpage } = raw.query("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").get() as { rootpage: number };
    const { page_size: pageSize } = raw.query("PRAGMA page_size").get() as { page_size: number };
    raw.close();
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (rootpage - 1) * pageSize);
    closeSync(fd);

    const { store, notices } = openStore({ dir, fullCheckMaxBytes: 0, now: fixedNow });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain("was damaged");
    store.close();
  });

  test("a healthy database that is merely locked is not moved aside", () => {
    const dir = dirs.make();
    const path = fillDatabase(dir);
    const holder = new Database(path);
    holder.run("PRAGMA locking_mode = EXCLUSIVE");
    holder.run("BEGIN EXCLUSIVE");
    try {
      const started = Date.now();
      const error = thrown(() => openDatabase({ dir }));
      expect(error.code).toBe("open_failed");
      expect(Date.now() - started).toBeGreaterThanOrEqual(4000); // it waited for the busy timeout
      expect(readdirSync(dir).filter((name) => name.includes("corrupt"))).toEqual([]);
    } finally {
      holder.run("ROLLBACK");
      holder.close();
    }
  }, 15_000);
});
