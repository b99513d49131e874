import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { StoreError } from "./errors.ts";
import { latestVersion, MIGRATIONS, type Migration } from "./migrations.ts";
import { ensurePrivateDir } from "./state.ts";
import { openStore } from "./store.ts";
import { sessionRow, tempDirs } from "./store-test-support.ts";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

function inspect(path: string, sql: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query(sql).all();
  } finally {
    db.close();
  }
}

const v1 = MIGRATIONS[0] as Migration;
const addPinned: Migration = {
  version: 2,
  name: "sessions.pinned",
  up(db) {
    db.run("ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0");
  },
};

describe("migrations", () => {
  test("a fresh database is created at the newest version with every table", () => {
    const { store } = openStore({ dir: dirs.make() });
    const path = store.path;
    store.close();
    expect(inspect(path, "PRAGMA user_version")).toEqual([{ user_version: latestVersion(MIGRATIONS) }]);
    const tables = inspect(path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    expect(tables).toEqual([
      { name: "checkpoints" },
      { name: "events" },
      { name: "host_results" },
      { name: "messages" },
      { name: "runs" },
      { name: "sessions" },
    ]);
  });

  test("an older database is migrated forward, keeping its rows", () => {
    const dir = dirs.make();
    const first = openStore({ dir, migrations: [v1] });
    first.store.createSession(sessionRow());
    first.store.close();
    expect(inspect(first.store.path, "PRAGMA user_version")).toEqual([{ user_version: 1 }]);

    const second = openStore({ dir, migrations: [v1, addPinned] });
    expect(second.store.getSession(sessionRow().id)?.title).toBe("fix the tests");
    second.store.close();
    expect(inspect(second.store.path, "PRAGMA user_version")).toEqual([{ user_version: 2 }]);
    expect(inspect(second.store.path, "SELECT pinned FROM sessions")).toEqual([{ pinned: 0 }]);
  });

  test("a failing migration rolls back alone: the earlier ones stay, the version does not move", () => {
    const dir = dirs.make();
    openStore({ dir, migrations: [v1] }).store.close();
    const broken: Migration = {
      version: 2,
      name: "half-done",
      up(db) {
        db.run("CREATE TABLE half (x)");
        throw new Error("boom");
      },
    };
    let caught: unknown;
    try {
      openStore({ dir, migrations: [v1, broken] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StoreError);
    expect((caught as StoreError).code).toBe("migration_failed");
    expect((caught as StoreError).message).toContain("migration 2 (half-done) failed: boom");
    const path = join(dir, "zero-cli.db");
    expect(inspect(path, "PRAGMA user_version")).toEqual([{ user_version: 1 }]);
    expect(inspect(path, "SELECT name FROM sqlite_master WHERE name = 'half'")).toEqual([]);
  });

  test("a database from a newer zero is refused, naming the file and both versions, and left in place", () => {
    const dir = ensurePrivateDir(dirs.make());
    const path = join(dir, "zero-cli.db");
    const db = new Database(path, { create: true });
    db.run("CREATE TABLE sessions (id TEXT)");
    db.run("PRAGMA user_version = 99");
    db.close();

    let caught: unknown;
    try {
      openStore({ dir });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StoreError);
    expect((caught as StoreError).code).toBe("newer_schema");
    expect((caught as StoreError).message).toBe(
      `${path} has schema version 99, but this zero understands versions up to ${latestVersion(MIGRATIONS)}; ` +
        "upgrade zero, or point storage.path at another file name",
    );
    expect(readdirSync(dir).filter((name) => name.includes("corrupt"))).toEqual([]);
    expect(existsSync(path)).toBe(true);
    expect(inspect(path, "PRAGMA user_version")).toEqual([{ user_version: 99 }]);
  });
});
