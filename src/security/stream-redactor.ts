import type { Redactor } from "./redact.ts";

/** How much undelimited text may be held back waiting for a word boundary. */
const MAX_HELD_CHARS = 512;

/**
 * Redaction for text that arrives in deltas: a token split across two deltas must
 * be seen whole. Text is released up to the last whitespace (secrets never contain
 * any), the rest is held until more arrives, the hold grows too long, or `flush`.
 */
export function createStreamRedactor(redactor: Redactor) {
  let held = "";
  return {
    push(delta: string): string {
      held += delta;
      const boundary = Math.max(held.lastIndexOf(" "), held.lastIndexOf("\n"), held.lastIndexOf("\t"));
      if (boundary === -1 && held.length <= MAX_HELD_CHARS) return "";
      const cut = boundary === -1 ? held.length : boundary + 1;
      const ready = held.slice(0, cut);
      held = held.slice(cut);
      return redactor.redact(ready).text;
    },
    flush(): string {
      const rest = held;
      held = "";
      return rest === "" ? "" : redactor.redact(rest).text;
    },
  };
}
