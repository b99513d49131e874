import { z } from "zod";
import { jsonCandidates } from "../../util/json-in-text.ts";
import type { Message, ToolResultOutput } from "../../protocol/messages.ts";
import { ARTIFACT_REFERENCE_IN_TEXT } from "../../store/artifacts.ts";
import { inspectPatch } from "../../tool/write-patch-parse.ts";
import promptTemplate from "./checkpoint-prompt.md" with { type: "text" };

/**
 * The structured checkpoint that replaces the summarized part of a conversation: what the model
 * is asked to write, how its answer is read and checked, how it is shown, and the deterministic
 * summary used when the model's checkpoint fails (CTX-03, CTX-08).
 */

const LIMITS = { taskChars: 4_000, itemChars: 1_000, pathChars: 500, decisions: 40, files: 200, questions: 20, steps: 20 };

const item = (max: number) => z.string().trim().min(1).max(max);
export const checkpointSchema = z.object({
  task: item(LIMITS.taskChars),
  // A model may leave out a list it has nothing for; that is not a reason to discard the checkpoint.
  decisions: z.array(item(LIMITS.itemChars)).max(LIMITS.decisions).default([]),
  filesTouched: z.array(item(LIMITS.pathChars)).max(LIMITS.files).default([]),
  openQuestions: z.array(item(LIMITS.itemChars)).max(LIMITS.questions).default([]),
  nextSteps: z.array(item(LIMITS.itemChars)).max(LIMITS.steps).default([]),
});
export type Checkpoint = z.infer<typeof checkpointSchema>;

/** What the checkpoint model is told, with the schema's bounds and the summary budget filled in. */
export function checkpointInstructions(maxSummaryTokens: number): string {
  const tokens = Math.max(1, Math.floor(maxSummaryTokens));
  const values: Record<string, number> = { ...LIMITS, maxSummaryTokens: tokens, maxSummaryChars: tokens * 4 };
  return promptTemplate.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => String(values[name] ?? whole)).trim();
}

function validated(candidate: string): Checkpoint | undefined {
  let value: unknown;
  try {
    value = JSON.parse(candidate);
  } catch {
    return undefined;
  }
  const parsed = checkpointSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The checkpoint in a model's answer: the whole answer, else a fenced block (the last first),
 * else the last `{…}` object that is a valid checkpoint. Undefined when none validates.
 */
export function parseCheckpoint(text: string): Checkpoint | undefined {
  for (const candidate of jsonCandidates(text)) {
    const checkpoint = validated(candidate.json);
    if (checkpoint) return checkpoint;
  }
  return undefined;
}

/** The checkpoint as the text of the summary part: short labelled sections, empty ones left out. */
export function renderCheckpoint(cp: Checkpoint): string {
  const lines = ["Checkpoint of the conversation so far.", `Task: ${cp.task}`];
  const section = (title: string, items: readonly string[]) => {
    if (items.length > 0) lines.push(`${title}:`, ...items.map((entry) => `- ${entry}`));
  };
  section("Decisions", cp.decisions);
  section("Files touched", cp.filesTouched);
  section("Open questions", cp.openQuestions);
  section("Next steps", cp.nextSteps);
  return lines.join("\n");
}

// The deterministic fallback. Bounds keep it well inside a summary budget however long the head.
const REQUEST_CHARS = 500;
const REQUESTS_TOTAL_CHARS = 8_000;
const EARLIER_SUMMARY_CHARS = 3_000;
const TOOL_LINES = 30;
const TARGET_CHARS = 160;
const FILE_LINES = 50;
const LAST_TEXT_CHARS = 1_500;
/** The fields of a tool call's input that say what it acted on, in the order they are shown. */
const TARGET_FIELDS = ["operation", "path", "to", "command", "url", "query", "pattern", "agent", "taskName", "runId"];
const WRITE_LABELS: Record<string, string> = { write: "written", edit: "edited", patch: "patched", delete: "deleted", mkdir: "directory created" };

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
const bounded = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const boundedEnd = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(text.length - max + 1)}`);
const fieldsOf = (input: unknown): Record<string, unknown> => (typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {});

function outcomeOf(output: ToolResultOutput | undefined): string | undefined {
  if (output === undefined) return "no result";
  if (output.type === "error-text") return "failed";
  if (output.type === "execution-denied") return "denied";
  return undefined;
}

function outputText(output: ToolResultOutput): string {
  if (output.type === "execution-denied") return output.reason;
  if (output.type === "content") return output.value.map((entry) => (entry.type === "text" ? entry.text : "")).join("\n");
  return output.value;
}

/** Every user request, oldest first, each bounded: the first (the original task) and the newest that fit. */
function requestLines(requests: readonly string[]): string[] {
  const shown = requests.map((request) => `- ${bounded(oneLine(request), REQUEST_CHARS)}`);
  const first = shown[0];
  if (first === undefined) return [];
  let used = first.length;
  const newest: string[] = [];
  for (let i = shown.length - 1; i > 0; i--) {
    const line = shown[i]!;
    if (used + line.length > REQUESTS_TOTAL_CHARS) break;
    used += line.length;
    newest.unshift(line);
  }
  const left = shown.length - 1 - newest.length;
  return [first, ...(left > 0 ? [`- (${left} more request${left === 1 ? "" : "s"} left out)`] : []), ...newest];
}

/** What each call acted on, one line per distinct call with a count, newest kept; failures and denials marked. */
function toolLines(head: readonly Message[], results: ReadonlyMap<string, ToolResultOutput>): string[] {
  const lines = new Map<string, { count: number; reference?: string }>();
  for (const message of head) {
    if (message.role !== "assistant") continue;
    for (const part of message.parts) {
      if (part.type !== "tool-call") continue;
      const fields = fieldsOf(part.input);
      const targets = TARGET_FIELDS.flatMap((name) => (typeof fields[name] === "string" ? [bounded(oneLine(fields[name]), TARGET_CHARS)] : []));
      const result = results.get(part.callId);
      const outcome = outcomeOf(result);
      const key = [part.tool, ...targets].join(" ") + (outcome ? ` (${outcome})` : "");
      const reference = result ? outputText(result).match(ARTIFACT_REFERENCE_IN_TEXT)?.[0] : undefined;
      const seen = lines.get(key);
      lines.delete(key); // re-inserted, so the order is by the latest call
      lines.set(key, { count: (seen?.count ?? 0) + 1, reference: reference ?? seen?.reference });
    }
  }
  const all = [...lines].map(([key, { count, reference }]) => `- ${key}${count > 1 ? ` ×${count}` : ""}${reference ? ` → ${reference}` : ""}`);
  const left = all.length - TOOL_LINES;
  return left > 0 ? [`- (${left} earlier call${left === 1 ? "" : "s"} left out)`, ...all.slice(left)] : all;
}

/** The paths the write tool changed (calls that failed or were denied changed nothing). */
function fileLines(head: readonly Message[], results: ReadonlyMap<string, ToolResultOutput>): string[] {
  const files = new Map<string, string[]>();
  const note = (path: unknown, label: string) => {
    if (typeof path !== "string" || path === "") return;
    const key = bounded(oneLine(path), TARGET_CHARS);
    const labels = files.get(key) ?? [];
    if (!labels.includes(label)) labels.push(label);
    files.set(key, labels);
  };
  for (const message of head) {
    if (message.role !== "assistant") continue;
    for (const part of message.parts) {
      if (part.type !== "tool-call" || part.tool !== "write") continue;
      if (outcomeOf(results.get(part.callId)) !== undefined) continue;
      const fields = fieldsOf(part.input);
      const operation = typeof fields.operation === "string" ? fields.operation : "write";
      if (operation === "move") {
        note(fields.path, `moved to ${String(fields.to)}`);
        note(fields.to, `moved from ${String(fields.path)}`);
      } else if (operation === "patch" && typeof fields.patch === "string") {
        const inspected = inspectPatch(fields.patch);
        if (inspected.ok) for (const path of inspected.value.paths) note(path, "patched");
      } else {
        note(fields.path, WRITE_LABELS[operation] ?? operation);
      }
    }
  }
  const all = [...files].map(([path, labels]) => `- ${path} (${labels.join(", ")})`);
  const left = all.length - FILE_LINES;
  return left > 0 ? [`- (${left} more file${left === 1 ? "" : "s"} left out)`, ...all.slice(left)] : all;
}

/**
 * A summary built without a model, for when the checkpoint call fails or answers with no valid
 * checkpoint: an earlier summary, every user request, the tools called and on what, the files
 * written, and the last thing the assistant said. Deterministic and bounded; redaction is the
 * caller's job.
 */
export function fallbackSummary(head: readonly Message[]): string {
  const results = new Map<string, ToolResultOutput>();
  const requests: string[] = [];
  const summaries: string[] = [];
  let lastText: string | undefined;
  for (const message of head) {
    if (message.role === "tool") {
      for (const part of message.parts) results.set(part.callId, part.output);
    } else if (message.role === "user") {
      for (const part of message.parts) if (part.type === "summary") summaries.push(part.text);
      const text = message.parts
        .map((part) => (part.type === "text" ? part.text : part.type === "file" ? `[${part.mediaType} attachment${part.filename ? ` ${part.filename}` : ""}]` : ""))
        .filter((piece) => piece.trim() !== "")
        .join(" ");
      if (text !== "") requests.push(text);
    } else {
      const text = message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n").trim();
      if (text !== "") lastText = text;
    }
  }

  const sections = ["Checkpoint of the conversation so far (written without the model: the summary call failed, so this lists what happened)."];
  const add = (title: string, lines: readonly string[]) => {
    if (lines.length > 0) sections.push(`${title}:\n${lines.join("\n")}`);
  };
  if (summaries.length > 0) add("Earlier summary", [bounded(summaries.join("\n\n"), EARLIER_SUMMARY_CHARS)]);
  add("User requests, oldest first", requestLines(requests));
  add("Tools called", toolLines(head, results));
  add("Files changed", fileLines(head, results));
  if (lastText !== undefined) add("Last assistant message", [boundedEnd(lastText, LAST_TEXT_CHARS)]);
  return sections.join("\n\n");
}
