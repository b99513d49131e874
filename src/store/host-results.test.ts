import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { DEFAULT_HOST_RESULT_RETENTION_MS, type HostResultRow } from "./host-results.ts";
import { latestVersion, MIGRATIONS, type Migration } from "./migrations.ts";
import { openStore, type OpenStoreOptions, type Store } from "./store.ts";
import { runRow, sessionRow, tempDirs } from "./store-test-support.ts";

const dirs = tempDirs();
const open: Store[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
  dirs.cleanup();
});

const T0 = "2025-01-01T00:00:00.000Z";
const HOUR = 60 * 60 * 1000;

function at(base: string, ms: number): Date {
  return new Date(Date.parse(base) + ms);
}

/** A store whose clock reads `clock.now` (settable by the test). */
function storeIn(dir: string, options: Partial<OpenStoreOptions> & { clock?: { now: Date } } = {}): Store {
  const { clock, ...rest } = options;
  const { store, notices } = openStore({ dir, ...(clock !== undefined ? { now: () => clock.now } : {}), ...rest });
  expect(notices).toEqual([]);
  open.push(store);
  return store;
}

function hostRow(overrides: Partial<HostResultRow> = {}): HostResultRow {
  return {
    sessionId: "host-session-1",
    idempotencyKey: "key-1",
    promptSha256: "a".repeat(64),
    requestId: "req-1",
    final: { type: "final", status: "completed", text: "done", usage: { inputTokens: 3 }, none: null, list: [1, "x"] },
    createdAt: T0,
    ...overrides,
  };
}

function countRows(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM host_results").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("host results", () => {
  test("round trip, keyed by session and idempotency key", () => {
    const store = storeIn(dirs.make(), { clock: { now: at(T0, 1000) } });
    const row = hostRow();
    store.saveHostResult(row);
    expect(store.findHostResult(row.sessionId, row.idempotencyKey)).toEqual(row);
    expect(store.findHostResult(row.sessionId, "key-2")).toBeUndefined();
    expect(store.findHostResult("host-session-2", row.idempotencyKey)).toBeUndefined();
    // The same key in another session is another row.
    const other = hostRow({ sessionId: "host-session-2", requestId: "req-2", final: { text: "other" } });
    store.saveHostResult(other);
    expect(store.findHostResult(other.sessionId, other.idempotencyKey)).toEqual(other);
    expect(store.findHostResult(row.sessionId, row.idempotencyKey)).toEqual(row);
  });

  test("a save under a taken key replaces the row", () => {
    const store = storeIn(dirs.make(), { clock: { now: at(T0, 1000) } });
    store.saveHostResult(hostRow());
    const replacement = hostRow({ promptSha256: "b".repeat(64), requestId: "req-9", final: { text: "again" }, createdAt: "2025-01-01T00:00:00.500Z" });
    store.saveHostResult(replacement);
    expect(store.findHostResult("host-session-1", "key-1")).toEqual(replacement);
    expect(countRows(store.path)).toBe(1);
  });

  test("a row older than the retention is not found; `now` defaults to the store's clock", () => {
    const clock = { now: at(T0, HOUR) };
    const store = storeIn(dirs.make(), { clock, hostResultRetentionMs: 2 * HOUR });
    store.saveHostResult(hostRow());
    expect(store.findHostResult("host-session-1", "key-1", at(T0, 2 * HOUR))).toBeDefined(); // exactly the retention: kept
    expect(store.findHostResult("host-session-1", "key-1", at(T0, 2 * HOUR + 1))).toBeUndefined();
    expect(store.findHostResult("host-session-1", "key-1")).toBeDefined();
    clock.now = at(T0, 3 * HOUR);
    expect(store.findHostResult("host-session-1", "key-1")).toBeUndefined();
    // Expiry hides the row; only a save deletes it.
    expect(countRows(store.path)).toBe(1);
  });

  test("the default retention is 24 hours", () => {
    expect(DEFAULT_HOST_RESULT_RETENTION_MS).toBe(24 * HOUR);
    const store = storeIn(dirs.make(), { clock: { now: at(T0, 0) } });
    store.saveHostResult(hostRow());
    expect(store.findHostResult("host-session-1", "key-1", at(T0, 24 * HOUR))).toBeDefined();
    expect(store.findHostResult("host-session-1", "key-1", at(T0, 24 * HOUR + 1))).toBeUndefined();
  });

  test("a save deletes the expired rows in the same transaction", () => {
    const clock = { now: at(T0, 0) };
    const store = storeIn(dirs.make(), { clock, hostResultRetentionMs: HOUR });
    store.saveHostResult(hostRow({ idempotencyKey: "old", createdAt: T0 }));
    store.saveHostResult(hostRow({ idempotencyKey: "edge", createdAt: at(T0, 30 * 60 * 1000).toISOString() }));
    expect(countRows(store.path)).toBe(2);

    clock.now = at(T0, 90 * 60 * 1000); // "old" is 90 min old, "edge" exactly 60 min
    store.saveHostResult(hostRow({ idempotencyKey: "new", createdAt: clock.now.toISOString() }));
    expect(countRows(store.path)).toBe(2);
    // Asked about an earlier instant, the pruned row is still gone: it was deleted, not hidden.
    expect(store.findHostResult("host-session-1", "old", at(T0, 1))).toBeUndefined();
    expect(store.findHostResult("host-session-1", "edge")).toBeDefined();
    expect(store.findHostResult("host-session-1", "new")).toBeDefined();

    // A row saved already expired is not kept either.
    store.saveHostResult(hostRow({ idempotencyKey: "stale", createdAt: T0 }));
    expect(store.findHostResult("host-session-1", "stale", at(T0, 1))).toBeUndefined();
    expect(countRows(store.path)).toBe(2);
  });

  test("createdAt is stored in canonical form, so other spellings of an instant order correctly", () => {
    const store = storeIn(dirs.make(), { clock: { now: at(T0, 0) }, hostResultRetentionMs: HOUR });
    store.saveHostResult(hostRow({ createdAt: "2025-01-01T01:00:00+01:00" }));
    expect(store.findHostResult("host-session-1", "key-1")?.createdAt).toBe(T0);
    expect(store.findHostResult("host-session-1", "key-1", at(T0, HOUR + 1))).toBeUndefined();
  });

  test("bad input is refused before anything is written", () => {
    const store = storeIn(dirs.make(), { clock: { now: at(T0, 0) } });
    expect(() => store.saveHostResult(hostRow({ createdAt: "yesterday" }))).toThrow(TypeError);
    expect(() => store.saveHostResult(hostRow({ final: [] as unknown as Record<string, unknown> }))).toThrow(TypeError);
    expect(() => store.saveHostResult(hostRow({ final: null as unknown as Record<string, unknown> }))).toThrow(TypeError);
    expect(countRows(store.path)).toBe(0);
    expect(() => openStore({ dir: dirs.make(), hostResultRetentionMs: -1 })).toThrow(TypeError);
    expect(() => openStore({ dir: dirs.make(), hostResultRetentionMs: Number.NaN })).toThrow(TypeError);
  });

  test("a completed request is answered after close and reopen", () => {
    const dir = dirs.make();
    const clock = { now: at(T0, 1000) };
    const first = openStore({ dir, now: () => clock.now });
    first.store.saveHostResult(hostRow());
    first.store.close();
    expect(() => first.store.findHostResult("host-session-1", "key-1")).toThrow("already closed");

    const second = storeIn(dir, { clock });
    expect(second.findHostResult("host-session-1", "key-1")).toEqual(hostRow());
  });

  test("a version-1 database migrates to the newest version, keeping its rows, and host results work", () => {
    const dir = dirs.make();
    const v1 = MIGRATIONS.filter((m) => m.version === 1) as Migration[];
    const first = openStore({ dir, migrations: v1 });
    first.store.createSession(sessionRow());
    first.store.createRun(runRow({ status: "completed" }));
    first.store.appendEvent({ runId: runRow().id, sequence: 1, type: "run_started", timestamp: T0 });
    first.store.close();
    const path = first.store.path;
    const probe = new Database(path, { readonly: true });
    expect(probe.query("PRAGMA user_version").get()).toEqual({ user_version: 1 });
    expect(probe.query("SELECT name FROM sqlite_master WHERE name = 'host_results'").all()).toEqual([]);
    probe.close();

    const store = storeIn(dir, { clock: { now: at(T0, 1000) } });
    expect(store.getSession(sessionRow().id)).toMatchObject({ title: "fix the tests", status: "completed" });
    expect(store.getRun(runRow().id)?.status).toBe("completed");
    expect(store.eventsOf(runRow().id)).toEqual([{ runId: runRow().id, sequence: 1, type: "run_started", timestamp: T0 }]);
    store.saveHostResult(hostRow());
    expect(store.findHostResult("host-session-1", "key-1")).toEqual(hostRow());
    const after = new Database(path, { readonly: true });
    expect(after.query("PRAGMA user_version").get()).toEqual({ user_version: latestVersion(MIGRATIONS) });
    after.close();
  });
});
