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
export function createOutput(file: typeof Bun.stdout): Output {
  const sink = file.writer();
  return {
    write(text) {
      if (text === "") return;
      sink.write(text);
      void sink.flush();
    },
    async close() {
      await sink.end();
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
