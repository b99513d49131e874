import { fstatSync } from "node:fs";

export type Output = {
  write(text: string): void;
  /** Resolves once everything written has reached the file descriptor. */
  close(): Promise<void>;
};

/**
 * Ordered, non-blocking output through Bun's file sinks. `process.stdout` costs
 * ~10 ms to set up (Node stream machinery) on every start; these cost nothing.
 * Each write is flushed at once so streamed text appears as it arrives; when the
 * reader is slow the sink buffers and `close` waits for it.
 */
export function createOutput(file: typeof Bun.stdout, onClosed: () => void = () => undefined): Output {
  const sink = file.writer();
  let broken = false;
  // The reader went away (`| head`, a closed terminal): stop writing, tell the owner once.
  const fail = () => {
    if (broken) return;
    broken = true;
    onClosed();
  };
  return {
    write(text) {
      if (text === "" || broken) return;
      try {
        sink.write(text);
        const flushed = sink.flush();
        if (flushed instanceof Promise) flushed.catch(fail);
      } catch {
        fail();
      }
    },
    async close() {
      if (broken) return;
      try {
        await sink.end();
      } catch {
        fail();
      }
    },
  };
}

/** Whether stdin can hold a piped task: a terminal or /dev/null (character devices) cannot. */
export function stdinMayHaveData(): boolean {
  try {
    return !fstatSync(0).isCharacterDevice();
  } catch {
    return false; // no stdin at all
  }
}
