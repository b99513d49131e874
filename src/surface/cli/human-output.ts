import type { PermissionMode } from "../../config/schema.ts";
import { MODE_RULES, evaluate } from "../../policy/rules.ts";
import { isChildEvent, type CallCategory, type Operation, type Risk, type RuntimeEvent } from "../../protocol/events.ts";
import type { Redactor } from "../../security/redact.ts";
import { createStreamRedactor } from "../../security/stream-redactor.ts";
import { createTerminalSanitizer, sanitizeForTerminal } from "../../security/terminal.ts";

export type Writer = (text: string) => void;

function summarizeInput(input: unknown): string {
  if (input && typeof input === "object") {
    const record = input as Record<string, unknown>;
    for (const key of ["path", "command", "query", "pattern", "name", "url"]) {
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

/** A single line of shown text (see `shownText`), cut to `max` characters. */
function oneLine(redactor: Redactor | undefined, text: string, max = 120): string {
  const line = shownText(redactor, text).replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Text as it may reach the terminal: sanitized first (escape sequences removed, controls and
 * invisible characters shown escaped), then redacted, so a token that only the sanitizer joins
 * (`ghp_abc\x1b[0mdef…`) is redacted as printed. Markers are plain ASCII: sanitizing again
 * (the CLI's stderr does) leaves them.
 */
function shownText(redactor: Redactor | undefined, text: string): string {
  const sanitized = sanitizeForTerminal(text);
  return redactor ? redactor.redact(sanitized).text : sanitized;
}

/** A tool result's text without a leading word repeating its status (`denied: …`, `cancelled; …`). */
function withoutStatus(status: string, output: string): string {
  return output.startsWith(status) && /^[:;]\s*/.test(output.slice(status.length)) ? output.slice(status.length).replace(/^[:;]\s*/, "") : output;
}

/** The modes from least to most permissive, with the flag that selects each. */
const MODE_FLAGS: ReadonlyArray<[PermissionMode, string]> = [
  ["read-only", "--permission-mode read-only"],
  ["ask", "--permission-mode ask"],
  ["accept-edits", "--permission-mode accept-edits"],
  ["full-access", "--permission-mode full-access (or --yes)"],
];

/** What a denied call wanted to do, in the words of the closing summary. */
const DENIED_WHAT: Record<Operation, string> = {
  read: "reads",
  "read-secret": "reading secret-like files",
  "write-edit": "edits",
  "write-delete": "deletes",
  "write-move": "moves",
  "write-sensitive": "changes to sensitive files",
  execute: "commands",
  network: "network access",
  delegate: "delegation",
};

type DeniedCall = { tool: string; risk: Risk | null; operation: Operation | null; categories: readonly CallCategory[] };

/**
 * The closing line of a run that had calls denied: how many, what they wanted, and the flag of the
 * least permissive mode that would have allowed every one of them (found by evaluating the mode
 * rules on the denied calls' operations and categories, as the events carried them).
 */
function deniedSummary(denied: readonly DeniedCall[], mode: PermissionMode | undefined): string {
  const count = denied.length === 1 ? "1 tool call was denied" : `${denied.length} tool calls were denied`;
  const what = [...new Set(denied.map((call) => (call.operation ? DENIED_WHAT[call.operation] : undefined) ?? "calls"))].join(", ");
  const current = MODE_FLAGS.findIndex(([name]) => name === mode);
  const allows = (name: PermissionMode) =>
    denied.every(
      (call) =>
        call.operation !== null &&
        evaluate(MODE_RULES[name], { tool: call.tool, risk: call.risk ?? "read", operation: call.operation, categories: call.categories }, name).decision === "allow",
    );
  const needed = MODE_FLAGS.find(([name], index) => index > current && allows(name));
  const them = denied.length === 1 ? "it" : "them";
  return needed ? `zero: ${count} (${what}); rerun with ${needed[1]} to allow ${them}\n` : `zero: ${count} (${what}) by the permission rules\n`;
}

const DIFF_PREVIEW_LINES = 40;

/** The first lines of a change (already shown text), indented under its tool line. */
function diffPreview(diff: string): string {
  const lines = diff.split("\n").filter((line) => !line.startsWith("===") && line !== "");
  const shown = lines.slice(0, DIFF_PREVIEW_LINES).map((line) => `    ${line}`);
  if (lines.length > DIFF_PREVIEW_LINES) shown.push(`    … ${lines.length - DIFF_PREVIEW_LINES} more lines`);
  return `${shown.join("\n")}\n`;
}

/**
 * Renders the event stream for people: the answer streams to stdout, one line
 * per tool call and any failure go to stderr, and everything model-controlled
 * is stripped of terminal control sequences. Events from the session service arrive redacted
 * already (as written and as they will be seen), so the CLI passes no redactor; one given here
 * (events from elsewhere) runs on the text exactly as it will be printed.
 */
export function createHumanPrinter(stdout: Writer, stderr: Writer, redactor?: Redactor) {
  const sanitizer = createTerminalSanitizer();
  // With a redactor the answer is redacted after sanitizing, at word boundaries of the sanitized
  // text, so a key split by escape sequences (or across deltas) is seen whole.
  const secrets = redactor ? createStreamRedactor(redactor) : { push: (text: string) => text, flush: () => "" };
  const shown = (text: string) => shownText(redactor, text);
  const line = (text: string, max?: number) => oneLine(redactor, text, max);
  const calls = new Map<string, string>();
  /** What each call would do, as tool.requested and permission.requested carried it. */
  const scopes = new Map<string, DeniedCall>();
  const denied: DeniedCall[] = [];
  let permissionMode: PermissionMode | undefined;
  let lastChar = "\n";
  let printedStep = 0;
  let guardMessage = "";

  const out = (text: string) => {
    if (text === "") return;
    stdout(text);
    lastChar = text.at(-1) ?? lastChar;
  };
  const endLine = () => {
    out(secrets.push(sanitizer.flush()));
    out(secrets.flush());
    if (lastChar !== "\n") out("\n");
  };

  return (event: RuntimeEvent): void => {
    // Children work quietly: their start and end are shown as lines of the parent (below).
    if (isChildEvent(event)) return;
    switch (event.type) {
      case "notice":
        stderr(`zero: ${line(event.message, 400)}\n`);
        return;
      case "agent.spawned":
        endLine();
        stderr(`↳ ${line(event.agent)} ${line(event.taskName)}${event.followUp ? " (follow-up)" : ""}${event.background ? " in the background" : ""}\n`);
        break;
      case "agent.completed":
        endLine();
        stderr(`↲ ${line(event.taskId)}: ${line(event.status)}\n`);
        break;
      case "message.delta":
        // Text of a later step starts on its own line.
        if (printedStep !== 0 && printedStep !== event.step) endLine();
        printedStep = event.step;
        out(secrets.push(sanitizer.push(event.text)));
        break;
      case "run.started":
        permissionMode = event.permissionMode;
        break;
      case "tool.requested":
        calls.set(event.callId, line(summarizeInput(event.input), 80));
        scopes.set(event.callId, { tool: event.tool, risk: event.risk, operation: event.operation, categories: event.categories ?? [] });
        break;
      case "permission.requested":
        scopes.set(event.callId, { tool: event.tool, risk: event.risk, operation: event.operation, categories: event.categories ?? [] });
        break;
      case "tool.completed": {
        endLine();
        const summary = calls.get(event.callId) ?? "";
        if (event.status === "denied") denied.push(scopes.get(event.callId) ?? { tool: event.tool, risk: null, operation: null, categories: [] });
        const detail = event.status === "completed" ? "" : ` (${event.status}: ${line(withoutStatus(event.status, event.output), 400)})`;
        stderr(`• ${line(event.tool)}${summary ? ` ${summary}` : ""}${detail}\n`);
        if (event.diff) stderr(diffPreview(shown(event.diff)));
        break;
      }
      case "provider.retry": {
        endLine();
        const wait = event.delayMs >= 1000 ? `${(event.delayMs / 1000).toFixed(0)}s` : `${Math.round(event.delayMs)}ms`;
        stderr(`zero: ${line(event.error.message, 300)}; retrying in ${wait} (attempt ${event.attempt} of ${event.maxAttempts})\n`);
        break;
      }
      case "guard.triggered":
        guardMessage = event.message;
        break;
      case "run.failed":
        endLine();
        stderr(`zero: ${event.error.kind === "provider" ? "provider error" : "internal error"}: ${line(event.error.message, 400)}\n`);
        break;
      case "run.completed":
        endLine();
        if (event.status === "limit") stderr(`zero: stopped: ${shown(guardMessage || String(event.reason))}\n`);
        if (event.status === "cancelled") stderr("zero: cancelled\n");
        if (denied.length > 0) stderr(deniedSummary(denied, permissionMode));
        break;
      default:
        break;
    }
  };
}
