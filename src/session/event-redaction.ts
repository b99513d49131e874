import type { EventBody } from "../protocol/events.ts";
import type { Redactor } from "../security/redact.ts";
import { withVisibleRedaction } from "../security/visible-redaction.ts";

const isSpace = (char: string | undefined) => char === " " || char === "\n" || char === "\t";
/** Characters a token, key or password can be made of: a forced cut never falls between two of them. */
const isTokenChar = (char: string | undefined) => char !== undefined && /[A-Za-z0-9_\-+/=.~:@%]/.test(char);

/** How much streamed text may be held back waiting for a word boundary. */
const MAX_HELD_CHARS = 4096;
/**
 * How much already-released text a new piece is checked together with: rules that need context
 * (an `Authorization: Bearer` header, `password: "…"`, a private key's BEGIN line and body) match
 * across whitespace, so each piece is redacted with what came before it.
 */
const CONTEXT_CHARS = 8192;
/** A long base64-like run: what a private key body line looks like (the cheap pre-check misses orphan bodies). */
const BASE64_RUN = /[A-Za-z0-9+/=]{40,}/;

/**
 * Streamed deltas, redacted with their context but released as they came:
 * deltas are held until a word boundary has passed, then checked together with
 * the text released before them in this step. When nothing in them was redacted
 * they go out with their own boundaries, exactly as the provider sent them;
 * when something was, what follows the part already shown goes out, redacted.
 */
function createDeltaRedaction(redactor: Redactor) {
  let held: string[] = [];
  let recent = ""; // raw text already released in this step (its last CONTEXT_CHARS)
  const release = (count: number): string[] => {
    const out = held.slice(0, count);
    held = held.slice(count);
    if (out.length === 0) return [];
    const group = out.join("");
    const context = recent;
    recent = (recent + group).slice(-CONTEXT_CHARS);
    const whole = context + group;
    if (!redactor.mayContainSecrets(whole) && !BASE64_RUN.test(whole)) return out;
    const shown = redactor.redact(context).text;
    const after = redactor.redact(whole).text;
    if (after === shown + group) return out;
    // Emit only what follows the longest part both agree on: a secret that began in text
    // already shown may repeat a few characters, but never appears.
    let common = 0;
    while (common < shown.length && common < after.length && shown[common] === after[common]) common++;
    const text = after.slice(common);
    return text === "" ? [] : [text];
  };
  return {
    push(delta: string): string[] {
      held.push(delta);
      const joined = held.join("");
      const boundary = Math.max(joined.lastIndexOf(" "), joined.lastIndexOf("\n"), joined.lastIndexOf("\t"));
      // Whole deltas that end at a word boundary (whitespace on either side of their end) are safe to release.
      let count = 0;
      let end = 0;
      for (const [index, piece] of held.entries()) {
        end += piece.length;
        if (end > boundary + 1) break;
        if (isSpace(joined[end - 1]) || isSpace(joined[end])) count = index + 1;
      }
      if (count === 0 && joined.length > MAX_HELD_CHARS) {
        // Too long without a boundary: cut where no token continues across the cut, else keep the last delta back.
        end = 0;
        for (const [index, piece] of held.entries()) {
          end += piece.length;
          if (index < held.length - 1 && !(isTokenChar(joined[end - 1]) && isTokenChar(joined[end]))) count = index + 1;
        }
        if (count === 0) count = Math.max(1, held.length - 1);
      }
      return release(count);
    },
    flush: (): string[] => release(held.length),
    /** A new step: its text is checked on its own. */
    reset() {
      recent = "";
    },
  };
}

/**
 * Redaction of everything a run emits, done once, before events are stored or
 * reach any surface (`run --json`, stream-json, host, TUI, ACP). Streamed text
 * is redacted at word boundaries, so a key split across deltas is still seen
 * whole; held text is released before the next other event, reasoning first.
 * Tool output is not redacted again: the tool contract already did it.
 * Text is redacted as stored and as it will be seen (`withVisibleRedaction`): a key split by
 * colour codes or invisible characters in the model's text, a task or a tool input is found too.
 * Text keeps its escapes otherwise (`--json` shows model text exactly).
 */
export function createEventRedaction(rawRedactor: Redactor) {
  const redactor = withVisibleRedaction(rawRedactor);
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
      case "tool.completed":
        // A tool's own output was redacted by the tool contract; answers given before a tool ran
        // (invalid input echoed by the SDK, a hook's reason) were not.
        return body.status === "failed" || body.status === "denied" ? { ...body, output: scrub(body.output) } : body;
      case "guard.triggered":
        return { ...body, message: scrub(body.message) };
      // Delegation: the child's envelope and the task's names are model text; the ledger too.
      case "agent.spawned":
        return { ...body, taskName: scrub(body.taskName), taskId: scrub(body.taskId) };
      case "agent.completed":
        return { ...body, taskId: scrub(body.taskId), result: deep(body.result) as Record<string, unknown> };
      case "context.compacted":
        return { ...body, summary: scrub(body.summary) };
      case "plan.updated":
        return { ...body, items: body.items.map((item) => ({ ...item, content: scrub(item.content) })) };
      // An MCP server's stderr tail can quote anything it printed.
      case "notice":
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
          text.reset();
          reasoning.reset();
          lastStep = body.step;
          if (held.length > 0) return [...held, ...this.apply(body)];
        }
        lastStep = body.step;
        if (body.type === "reasoning.delta") {
          // Text still held came first: it goes out before the reasoning that follows it.
          const said = text.flush().map((held): EventBody => ({ type: "message.delta", step: lastStep, text: held }));
          return [...said, ...reasoning.push(body.text).map((released) => ({ ...body, text: released }))];
        }
        // Reasoning still held came first: it goes out before the answer text.
        const thought = reasoning.flush().map((held): EventBody => ({ type: "reasoning.delta", step: lastStep, text: held }));
        return [...thought, ...text.push(body.text).map((released) => ({ ...body, text: released }))];
      }
      return [...flush(), scrubbed(body)];
    },
  };
}
