/**
 * Admission of child runs: a counting gate for the campaign's concurrency ceiling and one
 * writer gate per shared checkout. A run that blocks on its own children (a foreground spawn,
 * a wait) lends what it holds back while it waits, so nested delegation cannot deadlock.
 */

export type Lease = {
  /** Gives the slot back (idempotent). */
  release(): void;
  /** Gives it back for the duration of `work`, then takes it again (waiting if it must). */
  lend<T>(work: () => Promise<T>): Promise<T>;
};

export type Gate = {
  /** Waits for a free slot; rejects when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<Lease>;
  /** Slots in use now, and the most ever in use at once. */
  readonly inUse: number;
  readonly peak: number;
};

export class AdmissionCancelled extends Error {
  constructor() {
    super("cancelled before it started");
  }
}

export function createGate(capacity: number): Gate {
  let inUse = 0;
  let peak = 0;
  const waiting: Array<() => void> = [];

  function take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new AdmissionCancelled());
    if (inUse < capacity && waiting.length === 0) {
      inUse += 1;
      peak = Math.max(peak, inUse);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        inUse += 1;
        peak = Math.max(peak, inUse);
        resolve();
      };
      const onAbort = () => {
        const index = waiting.indexOf(wake);
        if (index !== -1) waiting.splice(index, 1);
        reject(new AdmissionCancelled());
      };
      waiting.push(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  function give(): void {
    inUse -= 1;
    const next = waiting.shift();
    if (next) next();
  }

  return {
    async acquire(signal) {
      await take(signal);
      let held = true;
      const lease: Lease = {
        release() {
          if (!held) return;
          held = false;
          give();
        },
        async lend(work) {
          if (!held) return work();
          held = false;
          give();
          try {
            return await work();
          } finally {
            // Taken back even when the work was cancelled: the holder still runs and releases later.
            await take(new AbortController().signal);
            held = true;
          }
        },
      };
      return lease;
    },
    get inUse() {
      return inUse;
    },
    get peak() {
      return peak;
    },
  };
}

/** Leases lent together (a concurrency slot and a writer gate). */
export function lendAll<T>(leases: readonly Lease[], work: () => Promise<T>): Promise<T> {
  return leases.reduceRight<() => Promise<T>>((inner, lease) => () => lease.lend(inner), work)();
}
