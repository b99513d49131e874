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
      // held: the holder has the slot; lent: given back while the holder waits; released: done for good.
      let state: "held" | "lent" | "released" = "held";
      const lease: Lease = {
        release() {
          if (state === "held") give();
          // A lent slot is not ours to give: the pending take-back sees `released` and gives it up.
          state = "released";
        },
        async lend(work) {
          if (state !== "held") return work();
          state = "lent";
          give();
          try {
            return await work();
          } finally {
            // Released while lent (the holder ended): nothing to take back. Released while the
            // take-back waited: the slot it gets goes straight back.
            if ((state as "lent" | "released") !== "released") {
              await take(new AbortController().signal);
              if ((state as "lent" | "released") === "released") give();
              else state = "held";
            }
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

/**
 * Leases lent together (a writer gate and a concurrency slot), given in the order they were
 * acquired: they are taken back in that same order, as every other holder takes them, so two
 * holders can never each hold one and wait for the other.
 */
export function lendAll<T>(leases: readonly Lease[], work: () => Promise<T>): Promise<T> {
  return leases.reduce<() => Promise<T>>((inner, lease) => () => lease.lend(inner), work)();
}
