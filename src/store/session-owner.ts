import type { Database } from "bun:sqlite";
import { StoreError } from "./errors.ts";

/**
 * One run at a time per session, across processes: a session is owned by the
 * holder running it, named by a token unique to that holder (a pid alone is
 * not: two sessions objects in one process, or two containers where zero is
 * pid 1, would share it). A claim is taken in a write transaction and succeeds
 * when the session is free, already held with this token, or held by a
 * process that is gone (a crash never locks a session for good). A release
 * frees only the claim it took.
 */
export type SessionOwner = { pid: number; token: string };
export type SessionClaim = { ok: true } | { ok: false; ownerPid: number };

function prepare(db: Database) {
  return {
    owner: db.prepare<{ pid: number | null; token: string | null }, [string]>("SELECT owner_pid AS pid, owner_token AS token FROM sessions WHERE id = ?"),
    take: db.prepare<never, [number, string, string]>("UPDATE sessions SET owner_pid = ?, owner_token = ? WHERE id = ?"),
    release: db.prepare<never, [string, string]>("UPDATE sessions SET owner_pid = NULL, owner_token = NULL WHERE id = ? AND owner_token = ?"),
  };
}

export function sessionOwners(db: Database, isAlive: (pid: number) => boolean) {
  // Prepared on first use: a store opened with older test migrations never needs them.
  let statements: ReturnType<typeof prepare> | undefined;
  const st = () => (statements ??= prepare(db));
  const claim = db.transaction((sessionId: string, owner: SessionOwner): SessionClaim => {
    const row = st().owner.get(sessionId);
    if (row === null) throw new StoreError("not_found", `no session ${sessionId}`);
    if (row.pid !== null && row.token !== owner.token && isAlive(row.pid)) return { ok: false, ownerPid: row.pid };
    st().take.run(owner.pid, owner.token, sessionId);
    return { ok: true };
  });
  return {
    claim: (sessionId: string, owner: SessionOwner): SessionClaim => claim.immediate(sessionId, owner),
    release: (sessionId: string, owner: SessionOwner): void => void st().release.run(sessionId, owner.token),
    close() {
      if (statements) for (const statement of Object.values(statements)) statement.finalize();
    },
  };
}
