/**
 * ZERO_TUI_TRACE: what bench/tui.ts reads from inside the TUI process. Built only when the
 * variable is set (start.tsx never creates it otherwise), so an ordinary start pays nothing.
 *
 * Lines go through the caller's `trace(mark)` ("<mark> <ms since process start>"); the figures
 * ride in the mark as `name:{json}` (JSON.stringify writes no spaces):
 * - `run-start` / `run-end:{…}` when a run starts and ends: CPU, frames, event-loop lag and RSS
 *   over the run (the streaming benchmark);
 * - `launch:{…}` at the first frame: CPU and RSS so far;
 * - `keys:[…]` at exit: for each typed character, the time to the next rendered frame.
 */
import type { CliRenderer, CliRendererConfig } from "@opentui/core";

const LAG_INTERVAL_MS = 10;

export function createTuiTrace(trace: (mark: string) => void) {
  let renderer: CliRenderer | undefined;
  let keyAt: number | undefined;
  const keyLatencies: number[] = [];
  let lags: number[] = [];
  let worstLag = { lag: 0, at: 0 };
  let lastTick = performance.now();
  let running = false;
  let runStart: { cpu: NodeJS.CpuUsage; at: number } | undefined;
  const sampler = setInterval(() => {
    const now = performance.now();
    const lag = Math.max(0, now - lastTick - LAG_INTERVAL_MS);
    lags.push(lag);
    if (lag > worstLag.lag) worstLag = { lag, at: now };
    lastTick = now;
  }, LAG_INTERVAL_MS);
  sampler.unref?.();

  const round = (value: number) => Math.round(value * 1000) / 1000;

  return {
    /** Renderer options: frame-time samples, and the arrival of each input sequence. */
    rendererOptions: {
      gatherStats: true,
      maxStatSamples: 1_000_000,
      prependInputHandlers: [
        (sequence: string) => {
          // Typed characters only: not the terminal's replies to start-up queries, nor Ctrl-C.
          if (sequence.length === 1 && sequence >= " ") keyAt ??= performance.now();
          return false; // observe only
        },
      ],
    } satisfies CliRendererConfig,
    attach(target: CliRenderer): void {
      renderer = target;
      // CPU to the first frame: steadier than wall time on a busy machine.
      target.once("frame", () => {
        const cpu = process.cpuUsage();
        trace(`launch:${JSON.stringify({ cpuMs: round((cpu.user + cpu.system) / 1000), rssMiB: round(process.memoryUsage.rss() / 2 ** 20) })}`);
      });
      target.on("frame", () => {
        if (keyAt === undefined) return;
        keyLatencies.push(round(performance.now() - keyAt));
        keyAt = undefined;
      });
    },
    /** Called after every state change with whether a run is active. */
    running(now: boolean): void {
      if (now === running) return;
      running = now;
      if (now) {
        renderer?.resetStats();
        lags = [];
        worstLag = { lag: 0, at: 0 };
        runStart = { cpu: process.cpuUsage(), at: performance.now() };
        trace("run-start");
        return;
      }
      if (!runStart) return;
      const cpu = process.cpuUsage(runStart.cpu);
      const frames = renderer?.getStats().frameTimes ?? [];
      trace(
        `run-end:${JSON.stringify({
          wallMs: round(performance.now() - runStart.at),
          cpuMs: round((cpu.user + cpu.system) / 1000),
          frames: frames.length,
          frameAvgMs: round(frames.reduce((sum, time) => sum + time, 0) / Math.max(1, frames.length)),
          frameP95Ms: round(percentile(frames, 0.95)),
          frameMaxMs: round(frames.reduce((max, time) => Math.max(max, time), 0)),
          lagMaxMs: round(worstLag.lag),
          lagP99Ms: round(percentile(lags, 0.99)),
          // Where in the run the worst stall was: ms before its end.
          lagMaxBeforeEndMs: round(performance.now() - worstLag.at),
          rssMiB: round(process.memoryUsage.rss() / 2 ** 20),
          heapMiB: round(process.memoryUsage().heapUsed / 2 ** 20),
        })}`,
      );
    },
    finish(): void {
      clearInterval(sampler);
      trace(`keys:${JSON.stringify(keyLatencies)}`);
    },
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}
