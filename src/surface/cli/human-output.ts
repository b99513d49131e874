import type { RuntimeEvent } from "../../protocol/events.ts";
import type { Redactor } from "../../security/redact.ts";
import { createStreamRedactor } from "../../security/stream-redactor.ts";
import { createTerminalSanitizer, sanitizeForTerminal } from "../../security/terminal.ts";

export type Writer = (text: string) => void;

function summarizeInput(input: unknown): string {
  if (input && typeof input === "object") {
    const record = input as Record<string, unknown>;
    for (const key of ["path", "command", "query", "pattern", "url"]) {
      if (typeof record[key] !== "string") continue;
      const offset = typeof record.offset === "number" ? record.offset : undefined;
      const limit = typeof record.limit === "number" ? record.limit : undefined;
      // Show a line range so different reads of one file don't look like repeats.
      const range = offset !== undefined || limit !== undefined ? `:${offset ?? 1}${limit !== undefined ? `+${limit}` : ""}` : "";
      return `${record[key] as string}${range}`;
    }
  }
  const json = JSON.stringify(input) ?? "";
  return json === "{}" ? "" : json;
}

function oneLine(text: string, max = 120): string {
  const line = sanitizeForTerminal(text).replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const DIFF_PREVIEW_LINES = 40;

/** The first lines of a change, indented under its tool line (sanitized by the caller's stderr). */
function diffPreview(diff: string): string {
  const lines = diff.split("\n").filter((line) => !line.startsWith("===") && line !== "");
  const shown = lines.slice(0, DIFF_PREVIEW_LINES).map((line) => `    ${line}`);
  if (lines.length > DIFF_PREVIEW_LINES) shown.push(`    … ${lines.length - DIFF_PREVIEW_LINES} more lines`);
  return `${shown.join("\n")}\n`;
}

/**
 * Renders the event stream for people: the answer streams to stdout, one line
 * per tool call and any failure go to stderr, and everything model-controlled
 * is stripped of terminal control sequences first.
 */
export function createHumanPrinter(stdout: Writer, stderr: Writer, redactor?: Redactor) {
  const sanitizer = createTerminalSanitizer();
  // The answer is redacted too (a model can echo a key it saw), at word boundaries.
  const secrets = redactor ? createStreamRedactor(redactor) : undefined;
  const calls = new Map<string, string>();
  let lastChar = "\n";
  let printedStep = 0;
  let guardMessage = "";

  const out = (text: string) => {
    if (text === "") return;
    stdout(text);
    lastChar = text.at(-1) ?? lastChar;
  };
  const endLine = () => {
    if (secrets) out(sanitizer.push(secrets.flush()));
    out(sanitizer.flush());
    if (lastChar !== "\n") out("\n");
  };

  return (event: RuntimeEvent): void => {
    switch (event.type) {
      case "message.delta":
        // Text of a later step starts on its own line.
        if (printedStep !== 0 && printedStep !== event.step) endLine();
        printedStep = event.step;
        out(sanitizer.push(secrets ? secrets.push(event.text) : event.text));
        break;
      case "tool.requested":
        calls.set(event.callId, oneLine(summarizeInput(event.input), 80));
        break;
      case "tool.completed": {
        endLine();
        const summary = calls.get(event.callId) ?? "";
        const detail = event.status === "completed" ? "" : ` (${event.status}: ${oneLine(event.output, 400)})`;
        stderr(`• ${event.tool}${summary ? ` ${summary}` : ""}${detail}\n`);
        if (event.diff) stderr(diffPreview(event.diff));
        break;
      }
      case "provider.retry": {
        endLine();
        const wait = event.delayMs >= 1000 ? `${(event.delayMs / 1000).toFixed(0)}s` : `${Math.round(event.delayMs)}ms`;
        stderr(`zero: ${oneLine(event.error.message, 300)}; retrying in ${wait} (attempt ${event.attempt} of ${event.maxAttempts})\n`);
        break;
      }
      case "guard.triggered":
        guardMessage = event.message;
        break;
      case "run.failed":
        endLine();
        stderr(`zero: ${event.error.kind === "provider" ? "provider error" : "internal error"}: ${oneLine(event.error.message, 400)}\n`);
        break;
      case "run.completed":
        endLine();
        if (event.status === "limit") stderr(`zero: stopped: ${guardMessage || event.reason}\n`);
        if (event.status === "cancelled") stderr("zero: cancelled\n");
        break;
      default:
        break;
    }
  };
}
