/** The longest delay a timer accepts; larger values would fire after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** setTimeout that treats delays beyond the timer range as "as late as possible", not "now". */
export function setSafeTimeout(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
  return setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS));
}

/**
 * `work`'s outcome, or a rejection with `message` after `ms`, or with the signal's reason when it
 * fires first (also when it had fired already). `work` itself is not stopped: the caller owns that.
 */
export function withinBound<T>(work: Promise<T>, ms: number, message: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal!.reason instanceof Error ? signal!.reason : new Error("cancelled"));
    if (signal?.aborted) return stop();
    const timer = setSafeTimeout(() => reject(new Error(message)), ms);
    signal?.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
    });
  });
}
