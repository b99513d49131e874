/**
 * The line screen in front of the SDK's NDJSON reader. The SDK answers most malformed input well
 * (not JSON: -32700; a batch: -32600), but three cases it handles badly are settled here:
 * a line over the size bound ends the SDK's connection (here it is skipped and answered); a
 * request with a usable id but a malformed envelope is answered with `id: null` and a bare
 * "Invalid request" (here it gets its own id and says what is wrong); and requests still running
 * when stdin ends are dropped (here the input stays open until each was answered, within a bound).
 */

/** The longest line read (the SDK's own default bound). */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;
/** A refused message is echoed in the error's data only up to this many characters. */
const MAX_ECHO_CHARS = 4096;
/** How long requests still in flight when stdin ends may take to be answered. */
export const DRAIN_BOUND_MS = 10_000;

type Reply = (message: Record<string, unknown>) => void;

const NEWLINE = 0x0a;
const decoder = new TextDecoder();
// What the SDK writes for its own requests and notifications: no answer to track there.
const OUTGOING_CALL = '{"jsonrpc":"2.0","method":';

export type FrameScreen = {
  /** The screened input for `ndJsonStream`. */
  input: ReadableStream<Uint8Array>;
  /** Called with every line the agent writes, so answered requests stop being pending. */
  sent(line: string): void;
};

export function screenFrames(source: ReadableStream<Uint8Array>, options: { reply: Reply; onEnd(): void; maxBytes?: number; drainMs?: number }): FrameScreen {
  const maxBytes = options.maxBytes ?? MAX_FRAME_BYTES;
  const pending = new Set<string>();
  let drained: (() => void) | undefined;
  const answered = (id: unknown) => {
    pending.delete(idKey(id));
    if (pending.size === 0) drained?.();
  };

  /** One complete line: passed on (as is), or answered here and dropped. */
  const screen = (line: Uint8Array): boolean => {
    const text = decoder.decode(line).trim();
    if (text === "") return false;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return true; // the SDK answers -32700
    }
    if (Array.isArray(message)) return true; // the SDK refuses batches itself
    // Like the SDK, the refused message is echoed as the error's data (only when short) so a client can tell which it was.
    const echo = text.length <= MAX_ECHO_CHARS ? message : undefined;
    if (typeof message !== "object" || message === null) {
      options.reply(invalid(null, "a message must be a JSON object", echo));
      return false;
    }
    const record = message as Record<string, unknown>;
    const hasId = Object.hasOwn(record, "id");
    // Response-shaped (an answer to one of our permission requests): the SDK matches it, or logs one it cannot.
    if (!Object.hasOwn(record, "method") && (hasId || Object.hasOwn(record, "result") || Object.hasOwn(record, "error"))) return true;
    const problems: string[] = [];
    if (record.jsonrpc !== "2.0") problems.push('"jsonrpc" must be "2.0"');
    if (typeof record.method !== "string") problems.push('"method" must be a string');
    if (hasId && !usableId(record.id)) problems.push('"id" must be a string, a number or null');
    if (problems.length > 0) {
      options.reply(invalid(hasId && usableId(record.id) ? record.id : null, problems.join("; "), echo));
      return false;
    }
    if (hasId && record.id !== null) pending.add(idKey(record.id));
    return true;
  };

  const input = new ReadableStream<Uint8Array>({
    async start(controller) {
      let parts: Uint8Array[] = [];
      let size = 0;
      let oversized = false;
      const endLine = () => {
        if (oversized) options.reply(invalid(null, `a message is longer than ${maxBytes} bytes; it was skipped`));
        else if (size > 0) {
          const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
          if (screen(line)) controller.enqueue(withNewline(line));
        }
        parts = [];
        size = 0;
        oversized = false;
      };
      const take = (piece: Uint8Array) => {
        size += piece.byteLength;
        if (size > maxBytes) {
          oversized = true;
          parts = [];
        } else if (!oversized && piece.byteLength > 0) parts.push(piece.slice());
      };
      try {
        for await (const chunk of source) {
          let start = 0;
          for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
            take(chunk.subarray(start, at));
            endLine();
            start = at + 1;
          }
          if (start < chunk.byteLength) take(chunk.subarray(start));
        }
        endLine();
      } catch {
        // stdin failed: treated as its end
      }
      // Input is over: what runs is cancelled, and every request already read gets its answer.
      options.onEnd();
      if (pending.size > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, options.drainMs ?? DRAIN_BOUND_MS);
        });
      }
      controller.close();
    },
  });

  return {
    input,
    sent(line) {
      if (pending.size === 0 || line.startsWith(OUTGOING_CALL)) return;
      for (const one of line.split("\n")) {
        if (one === "" || one.startsWith(OUTGOING_CALL)) continue;
        try {
          const message = JSON.parse(one) as { id?: unknown; method?: unknown };
          if (message.method === undefined) answered(message.id);
        } catch {
          // not ours to judge
        }
      }
    },
  };
}

function usableId(id: unknown): boolean {
  return id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

function invalid(id: unknown, problem: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error: { code: -32600, message: `Invalid request: ${problem}`, ...(data !== undefined ? { data } : {}) } };
}

function withNewline(line: Uint8Array): Uint8Array {
  const out = new Uint8Array(line.byteLength + 1);
  out.set(line);
  out[line.byteLength] = NEWLINE;
  return out;
}
