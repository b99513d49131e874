/**
 * SIGINT and SIGTERM that arrive while the CLI's runtime bundle is still loading (a couple of
 * hundred milliseconds, more on a busy machine). Without a listener Bun would die of them at once,
 * and a protocol surface would end without its final line (`run_end`). src/index.ts starts
 * holding them before it loads main.js; main() takes them over once its own handlers are in place
 * and acts on the first one then.
 */
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export type EarlySignals = {
  /** Stops holding signals; returns the ones that came, in order. */
  release(): NodeJS.Signals[];
};

export function holdSignals(): EarlySignals {
  const received: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals) => void received.push(signal);
  for (const signal of SIGNALS) process.on(signal, hold);
  return {
    release() {
      for (const signal of SIGNALS) process.off(signal, hold);
      return received;
    },
  };
}
