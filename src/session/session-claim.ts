import type { SessionOwner, Store } from "../store/store.ts";

/** A turn cancelled before it began (queued, or waiting for its session): nothing ran, nothing was written. */
export class RunCancelledBeforeStart extends Error {
  constructor(message = "cancelled before the run started") {
    super(message);
  }
}

/**
 * Takes a session for this process, waiting while another live process runs
 * it (a second `zero run --resume latest` queues behind the first instead of
 * forking the history). Returns the release. A cancel while waiting gives up.
 */
export async function claimSession(
  store: Store,
  sessionId: string,
  options: { owner: SessionOwner; signal: AbortSignal; pollMs: number; log?: ((line: string) => void) | undefined },
): Promise<() => void> {
  let told = false;
  for (;;) {
    const claim = store.claimSession(sessionId, options.owner);
    if (claim.ok) {
      return () => {
        try {
          store.releaseSession(sessionId, options.owner);
        } catch {
          // A store too busy to release: the claim is ours and ends with this process anyway.
        }
      };
    }
    if (!told) {
      options.log?.(`zero: session ${sessionId} is running in another process (pid ${claim.ownerPid}); waiting for it to finish\n`);
      told = true;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, options.pollMs);
      function done() {
        clearTimeout(timer);
        options.signal.removeEventListener("abort", done);
        resolve();
      }
      options.signal.addEventListener("abort", done, { once: true });
    });
    if (options.signal.aborted) throw new RunCancelledBeforeStart(`cancelled while waiting for session ${sessionId}`);
  }
}

/** Creates the session row unless it exists (two processes may create the same named session at once). */
export function ensureSession(store: Store, row: Parameters<Store["createSession"]>[0]): void {
  if (store.getSession(row.id)) return;
  try {
    store.createSession(row);
  } catch (error) {
    if (!store.getSession(row.id)) throw error;
  }
}
