import type { Database } from "bun:sqlite";
import { StoreError } from "./errors.ts";

/**
 * One run at a time per session, across processes: a session is owned by the
 * process running it. A claim is taken in a write transaction and succeeds
 * when the session is free, already ours, or owned by a process that is gone
 * (a crash never locks a session for good).
 */
export type SessionClaim = { ok: true } | { ok: false; ownerPid: number };

function prepare(db: Database) {
  return {
    owner: db.prepare<{ owner: number | null }, [string]>("SELECT owner_pid AS owner FROM sessions WHERE id = ?"),
    take: db.prepare<never, [number, string]>("UPDATE sessions SET owner_pid = ? WHERE id = ?"),
    release: db.prepare<never, [string, number]>("UPDATE sessions SET owner_pid = NULL WHERE id = ? AND owner_pid = ?"),
  };
}

export function sessionOwners(db: Database, isAlive: (pid: number) => boolean) {
  // Prepared on first use: a store opened with older test migrations never needs them.
  let statements: ReturnType<typeof prepare> | undefined;
  const st = () => (statements ??= prepare(db));
  const claim = db.transaction((sessionId: string, pid: number): SessionClaim => {
    const row = st().owner.get(sessionId);
    if (row === null) throw new StoreError("not_found", `no session ${sessionId}`);
    if (row.owner !== null && row.owner !== pid && isAlive(row.owner)) return { ok: false, ownerPid: row.owner };
    st().take.run(pid, sessionId);
    return { ok: true };
  });
  return {
    claim: (sessionId: string, pid: number): SessionClaim => claim.immediate(sessionId, pid),
    release: (sessionId: string, pid: number): void => void st().release.run(sessionId, pid),
    close() {
      if (statements) for (const statement of Object.values(statements)) statement.finalize();
    },
  };
}
