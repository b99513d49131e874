/** The longest delay a timer accepts; larger values would fire after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** setTimeout that treats delays beyond the timer range as "as late as possible", not "now". */
export function setSafeTimeout(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
  return setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS));
}
