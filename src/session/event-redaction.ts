import type { EventBody } from "../protocol/events.ts";
import type { Redactor } from "../security/redact.ts";

const isSpace = (char: string | undefined) => char === " " || char === "\n" || char === "\t";

/** How much streamed text may be held back waiting for a word boundary. */
const MAX_HELD_CHARS = 512;

/**
 * Streamed deltas, redacted as a whole but released as they came: deltas are
 * held until a word boundary has passed (a secret never spans whitespace),
 * then the released ones are checked together. When nothing was redacted they
 * go out with their own boundaries, exactly as the provider sent them; when
 * something was, they go out merged, redacted.
 */
function createDeltaRedaction(redactor: Redactor) {
  let held: string[] = [];
  const release = (count: number): string[] => {
    const out = held.slice(0, count);
    held = held.slice(count);
    if (out.length === 0) return [];
    const joined = out.join("");
    const redacted = redactor.redact(joined);
    return redacted.count === 0 ? out : [redacted.text];
  };
  return {
    push(delta: string): string[] {
      held.push(delta);
      const joined = held.join("");
      const boundary = Math.max(joined.lastIndexOf(" "), joined.lastIndexOf("\n"), joined.lastIndexOf("\t"));
      if (boundary === -1) return joined.length > MAX_HELD_CHARS ? release(held.length) : [];
      // Whole deltas that end at a word boundary (whitespace on either side of their end) are safe to release.
      let count = 0;
      let end = 0;
      for (const [index, piece] of held.entries()) {
        end += piece.length;
        if (end > boundary + 1) break;
        if (isSpace(joined[end - 1]) || isSpace(joined[end])) count = index + 1;
      }
      if (count === 0 && joined.length > MAX_HELD_CHARS) count = held.length;
      return release(count);
    },
    flush: (): string[] => release(held.length),
  };
}

/**
 * Redaction of everything a run emits, done once, before events are stored or
 * reach any surface (`run --json`, stream-json, host, TUI, ACP). Streamed text
 * is redacted at word boundaries, so a key split across deltas is still seen
 * whole; held text is released before the next other event, reasoning first.
 * Tool output is not redacted again: the tool contract already did it.
 */
export function createEventRedaction(redactor: Redactor) {
  const text = createDeltaRedaction(redactor);
  const reasoning = createDeltaRedaction(redactor);
  let lastStep = 1;
  const scrub = (value: string) => redactor.redact(value).text;

  function deep(value: unknown): unknown {
    if (typeof value === "string") return scrub(value);
    if (Array.isArray(value)) return value.map(deep);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, deep(item)]));
    }
    return value;
  }

  function flush(): EventBody[] {
    return [
      ...reasoning.flush().map((held): EventBody => ({ type: "reasoning.delta", step: lastStep, text: held })),
      ...text.flush().map((held): EventBody => ({ type: "message.delta", step: lastStep, text: held })),
    ];
  }

  function scrubbed(body: EventBody): EventBody {
    switch (body.type) {
      case "run.started":
        return { ...body, task: scrub(body.task) };
      case "tool.requested":
        return { ...body, input: deep(body.input), ...(typeof body.target === "string" ? { target: scrub(body.target) } : {}) };
      case "permission.requested":
        return { ...body, ...(typeof body.target === "string" ? { target: scrub(body.target) } : {}) };
      case "run.failed":
      case "provider.retry":
        return { ...body, error: { ...body.error, message: scrub(body.error.message) } } as EventBody;
      case "run.completed":
        return { ...body, text: scrub(body.text) };
      case "guard.triggered":
        return { ...body, message: scrub(body.message) };
      default:
        return body;
    }
  }

  return {
    /** The events to emit for one body: none while text is held, held text first before anything else. */
    apply(body: EventBody): EventBody[] {
      if (body.type === "message.delta" || body.type === "reasoning.delta") {
        if (body.step !== lastStep) {
          const held = flush();
          lastStep = body.step;
          if (held.length > 0) return [...held, ...this.apply(body)];
        }
        lastStep = body.step;
        if (body.type === "reasoning.delta") return reasoning.push(body.text).map((released) => ({ ...body, text: released }));
        // Reasoning still held came first: it goes out before the answer text.
        const thought = reasoning.flush().map((held): EventBody => ({ type: "reasoning.delta", step: lastStep, text: held }));
        return [...thought, ...text.push(body.text).map((released) => ({ ...body, text: released }))];
      }
      return [...flush(), scrubbed(body)];
    },
  };
}
