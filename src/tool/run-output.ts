// The bounded output of a running command: head and tail text for the model,
// the raw bytes spooled (memory, then an unlinked temp file) for the artifact
// store, and progress messages throttled for the event stream.
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { MAX_ARTIFACT_BYTES, type ArtifactStore } from "../store/artifacts.ts";

/** Characters kept from the start of the output. */
export const RUN_OUTPUT_HEAD_CHARS = 16_000;
/** Characters kept from the end; head + tail + notes stay under the contract's MAX_OUTPUT_CHARS. */
export const RUN_OUTPUT_TAIL_CHARS = 40_000;
/** Progress messages are merged and sent at most this often. */
export const RUN_OUTPUT_PROGRESS_INTERVAL_MS = 100;
/** One progress message carries at most this many characters (the newest ones). */
export const RUN_OUTPUT_PROGRESS_MAX_CHARS = 4_096;
/** Spooled output beyond this moves from memory to an unlinked temp file. */
export const RUN_OUTPUT_MEMORY_SPOOL_BYTES = 1024 * 1024;

export type CollectorOptions = {
  headChars?: number;
  tailChars?: number;
  /** Most bytes spooled for the artifact (default MAX_ARTIFACT_BYTES). */
  spoolLimit?: number;
  /** Spool bytes kept in memory before moving to a spool file. */
  memoryBytes?: number;
  /** Where the spool file is created; without one (or when it fails) only memory is spooled. */
  tempDir?: string;
};

/** A private, already-unlinked file: a crash of zero leaves nothing behind. */
function openSpoolFile(dir: string): number | undefined {
  const path = join(dir, `zero-run-${randomBytes(8).toString("hex")}`);
  try {
    const fd = openSync(path, "wx+", 0o600); // O_EXCL: never through a planted symlink
    rmSync(path, { force: true });
    return fd;
  } catch {
    return undefined;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/**
 * Keeps head and a tail ring of the text, and spools raw bytes (memory first, then an unlinked temp
 * file: large in-memory spools made the GC let garbage pile up) up to the spool limit.
 */
export function createOutputCollector(options: CollectorOptions = {}) {
  const headChars = options.headChars ?? RUN_OUTPUT_HEAD_CHARS;
  const tailChars = options.tailChars ?? RUN_OUTPUT_TAIL_CHARS;
  const memoryLimit = options.memoryBytes ?? RUN_OUTPUT_MEMORY_SPOOL_BYTES;
  let spoolLimit = options.spoolLimit ?? MAX_ARTIFACT_BYTES;
  let head = "";
  let tail: string[] = [];
  let tailLength = 0;
  let omitted = 0;
  let memory = new Uint8Array(0);
  let fd: number | undefined;
  let spooled = 0;
  let totalBytes = 0;

  const compact = (): void => {
    const joined = tail.join("");
    const keep = joined.slice(joined.length - tailChars);
    omitted += joined.length - keep.length;
    tail = [keep];
    tailLength = keep.length;
  };
  const dispose = (): void => {
    if (fd !== undefined) closeSync(fd);
    [fd, memory] = [undefined, new Uint8Array(0)];
  };
  const spooledContent = (): Uint8Array => {
    if (fd === undefined) return memory.subarray(0, spooled);
    const content = new Uint8Array(spooled);
    let offset = 0;
    while (offset < spooled) {
      const count = readSync(fd, content, offset, spooled - offset, offset);
      if (count === 0) break;
      offset += count;
    }
    return content.subarray(0, offset);
  };

  return {
    addBytes(bytes: Uint8Array): void {
      totalBytes += bytes.length;
      const count = Math.min(bytes.length, spoolLimit - spooled);
      if (count <= 0) return;
      const part = bytes.subarray(0, count);
      if (fd === undefined && spooled + count > memoryLimit) {
        fd = options.tempDir === undefined ? undefined : openSpoolFile(options.tempDir);
        try {
          if (fd === undefined) throw new Error("no spool file");
          writeAll(fd, memory.subarray(0, spooled));
          memory = new Uint8Array(0);
        } catch {
          spoolLimit = spooled; // keep what memory holds; the note will say the artifact is partial
          return;
        }
      }
      if (fd !== undefined) {
        try {
          writeAll(fd, part);
          spooled += count;
        } catch {
          spoolLimit = spooled; // disk full: the artifact keeps what was written before
        }
        return;
      }
      if (spooled + count > memory.length) {
        const grown = new Uint8Array(Math.min(memoryLimit, Math.max(4096, 2 * memory.length, spooled + count)));
        grown.set(memory.subarray(0, spooled));
        memory = grown;
      }
      memory.set(part, spooled);
      spooled += count;
    },
    addText(text: string): void {
      let rest = text;
      if (head.length < headChars) {
        const take = headChars - head.length;
        head += rest.slice(0, take);
        rest = rest.slice(take);
      }
      if (rest === "") return;
      tail.push(rest);
      tailLength += rest.length;
      if (tailLength > 2 * tailChars) compact();
    },
    /** Characters held for the model (head + tail ring), bytes spooled, bytes of it in memory. */
    retainedChars: (): number => head.length + tailLength,
    spooledBytes: (): number => spooled,
    memoryBytes: (): number => memory.length,
    /** The text for the model; when it was cut, the spool becomes an artifact it names. Disposes. */
    finish(artifacts: ArtifactStore): { text: string; truncated: boolean } {
      if (tailLength > tailChars) compact();
      const tailText = tail.join("");
      if (omitted === 0) {
        dispose();
        return { text: head + tailText, truncated: false };
      }
      let where: string;
      try {
        const ref = artifacts.put(spooledContent());
        const partial = totalBytes > ref.bytes ? ` (its first ${ref.bytes} of ${totalBytes} bytes)` : "";
        where = `; the full output is ${ref.uri}${partial}, read it with offset/limit`;
      } catch {
        where = "; the full output could not be stored";
      } finally {
        dispose();
      }
      // Cutting may split a surrogate pair: drop the orphaned halves.
      const cleanHead = /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
      const cleanTail = /^[\uDC00-\uDFFF]/.test(tailText) ? tailText.slice(1) : tailText;
      return { text: `${cleanHead}\n… [${omitted} characters omitted${where}] …\n${cleanTail}`, truncated: true };
    },
    /** Closes the spool file (already unlinked, so nothing stays on disk). */
    dispose,
  };
}

/** Merges output for `progress` and sends it at most every `intervalMs`, newest text first to keep. */
export function createProgressThrottle(progress: (message: string) => void, intervalMs: number, maxChars: number) {
  let pending = "";
  let cut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let last = 0;
  // Only whole lines leave between flushes: a token written in two pieces must reach the
  // redactor in one message. Cuts also start at a line start, never inside a token.
  const send = (final: boolean): void => {
    timer = undefined;
    const end = final ? pending.length : pending.lastIndexOf("\n") + 1;
    if (end <= 0) return;
    let message = pending.slice(0, end);
    pending = pending.slice(end);
    if (cut || message.length > maxChars) {
      const tail = message.slice(message.length - maxChars);
      const lineStart = tail.indexOf("\n") + 1;
      message = `…${lineStart > 0 && lineStart < tail.length ? tail.slice(lineStart) : tail}`;
    }
    cut = false;
    last = performance.now();
    try {
      progress(message);
    } catch {} // a failing listener must not break the command
  };
  return {
    push(text: string): void {
      pending += text;
      if (pending.length > 2 * maxChars) {
        // Keep whole lines of the newest text; a line longer than the budget is cut at the end.
        const keep = pending.slice(pending.length - maxChars);
        const lineStart = keep.indexOf("\n") + 1;
        pending = lineStart > 0 ? keep.slice(lineStart) : keep;
        cut = true;
      }
      timer ??= setTimeout(() => send(false), Math.max(0, intervalMs - (performance.now() - last)));
    },
    flush(): void {
      clearTimeout(timer);
      send(true);
    },
    stop(): void {
      clearTimeout(timer);
      timer = undefined;
      pending = "";
    },
  };
}

