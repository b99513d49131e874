import * as z from "zod";
import { jsonCandidates } from "../../util/json-in-text.ts";
import type { Deliverable } from "../../config/effective.ts";
import { parseArtifactUri } from "../../store/artifacts.ts";
import type { ChildEvidence } from "./evidence.ts";

/**
 * The AgentResult envelope every child run ends in, and how a child's final answer becomes one.
 *
 * The child is asked for a JSON envelope, but only its judgement is taken from it (summary,
 * findings, follow-ups, plan steps, review verdict). What it did — changed files, commands and
 * their outcome, artifacts, the patch — comes from observed tool evidence, and the status is the
 * runtime's: the model can lower it, never raise it.
 */

export const MAX_SUMMARY_CHARS = 4000;
/** Entries kept per list and characters per entry text: a result is injected into the parent's context. */
const MAX_ENTRIES = 100;
const MAX_ENTRY_CHARS = 2000;

const artifactUriSchema = z.string().regex(/^artifact:\/\/[0-9a-f]{64}$/);
const findingSchema = z.object({
  path: z.string().min(1),
  line: z.number().int().positive().optional(),
  description: z.string().min(1),
  confidence: z.number().min(0).max(1).optional(),
});
const stepSchema = z.object({ id: z.string().min(1), description: z.string(), dependencies: z.array(z.string()).default([]) });
const verdictSchema = z.enum(["approve", "request_changes", "comment"]);
const issueSchema = z.object({
  path: z.string().min(1).optional(),
  line: z.number().int().positive().optional(),
  severity: z.enum(["low", "medium", "high", "critical"]),
  description: z.string().min(1),
});
const verificationSchema = z.object({ command: z.string(), status: z.enum(["passed", "failed"]) });
export const agentResultStatusSchema = z.enum(["completed", "failed", "blocked", "cancelled", "skipped"]);

export const agentResultSchema = z.object({
  status: agentResultStatusSchema,
  summary: z.string().max(MAX_SUMMARY_CHARS),
  findings: z.array(findingSchema),
  /** Observed only. */
  changedFiles: z.array(z.string()),
  /** Observed only. */
  artifacts: z.array(artifactUriSchema),
  /** Observed only. */
  verification: z.array(verificationSchema),
  followUps: z.array(z.string()),
  /** plan only: dependency-checked. */
  steps: z.array(stepSchema).optional(),
  /** review only. */
  verdict: verdictSchema.optional(),
  issues: z.array(issueSchema).optional(),
  /** patch only: the artifact the runtime produced from the child's changes. */
  patch: artifactUriSchema.optional(),
  /** Why the runtime lowered the status or dropped parts of the envelope; absent when nothing was wrong. */
  problems: z.array(z.string()).optional(),
});

export type AgentResult = z.infer<typeof agentResultSchema>;
export type AgentResultStatus = z.infer<typeof agentResultStatusSchema>;
type Step = z.infer<typeof stepSchema>;

export type NormalizeInput = {
  deliverable: Deliverable;
  run: { status: "completed" | "failed" | "limit" | "cancelled"; reason: string | null; text: string };
  /** `patch`: the artifact URI of the patch the runtime produced from the child's changes, when any. */
  evidence: ChildEvidence & { patch?: string };
  /** The child could not write (effective permission read-only or a shared-readonly workspace). */
  readOnly: boolean;
  /** Task scope globs, workspace-relative (`src/auth/**`); absent = unscoped. */
  scopePaths?: string[];
};

/** Worse statuses rank higher; a downgrade only ever moves up. */
const RANK: Record<Exclude<AgentResultStatus, "skipped">, number> = { completed: 0, blocked: 1, failed: 2, cancelled: 3 };

export function normalizeResult(input: NormalizeInput): AgentResult {
  const { deliverable, run, evidence, readOnly } = input;
  const problems: string[] = [];
  let status: Exclude<AgentResultStatus, "skipped"> = run.status === "completed" ? "completed" : run.status === "cancelled" ? "cancelled" : "failed";
  const lower = (to: "blocked" | "failed") => {
    if (RANK[to] > RANK[status]) status = to;
  };
  const stop = run.status === "limit" ? `stopped: ${run.reason ?? "limit"}` : run.status === "failed" ? `failed: ${run.reason ?? "error"}` : undefined;
  if (stop !== undefined) problems.push(stop);

  const located = locateEnvelope(run.text);
  const envelope = located?.envelope ?? {};
  let summary = located === undefined ? run.text.trim() : located.prose;
  if (typeof envelope.summary === "string" && envelope.summary.trim() !== "") summary = envelope.summary.trim();
  else if (envelope.summary !== undefined) problems.push("summary ignored: not a non-empty string");
  if (summary === "") summary = stop ?? (run.status === "cancelled" ? "cancelled" : "(no final answer)");

  const findings = readList(envelope.findings, "findings", findingSchema, problems).map((f) => ({ ...f, description: clip(f.description, MAX_ENTRY_CHARS) }));
  const followUps = readList(envelope.followUps, "followUps", z.string().min(1), problems).map((text) => clip(text, MAX_ENTRY_CHARS));

  if ((envelope.status === "failed" || envelope.status === "blocked") && RANK[envelope.status] > RANK[status]) {
    lower(envelope.status);
    problems.push(`the child reported status "${envelope.status}"`);
  }

  // What the child did: evidence only.
  const changedFiles = unique(evidence.changedFiles);
  // The last commands matter most (a test result is judged by the last one).
  const verification = evidence.verification.slice(-MAX_ENTRIES).map((entry) => ({ ...entry, command: clip(entry.command, MAX_ENTRY_CHARS) }));
  const patch = deliverable === "patch" && evidence.patch !== undefined && parseArtifactUri(evidence.patch) !== undefined ? evidence.patch : undefined;
  const artifacts = unique([...evidence.artifacts, ...(patch === undefined ? [] : [patch])]).filter((uri) => parseArtifactUri(uri) !== undefined);

  const claimed = unique(stringsOf(envelope.changedFiles).map(tidyPath));
  const observed = new Set(changedFiles);
  const unobserved = claimed.filter((path) => !observed.has(path));
  if (unobserved.length > 0) problems.push(`changed files claimed but not observed (ignored): ${listed(unobserved)}`);
  if (readOnly && (changedFiles.length > 0 || claimed.length > 0)) {
    lower("blocked");
    problems.push(`a read-only child reported changed files: ${listed(unique([...changedFiles, ...claimed]))}`);
  }
  if (input.scopePaths !== undefined) {
    const scope = input.scopePaths;
    const outside = changedFiles.filter((path) => !inScope(path, scope));
    if (outside.length > 0) {
      lower("blocked");
      problems.push(`unverifiable scoped patch: changed outside the task scope (${scope.join(", ") || "nothing"}): ${listed(outside)}`);
    }
  }

  // What each deliverable needs before it can count as completed; checked whenever the run finished.
  const finished = run.status === "completed";
  const extra: Pick<AgentResult, "steps" | "verdict" | "issues" | "patch"> = {};
  if (deliverable === "patch" && finished) {
    if (changedFiles.length === 0) problems.push("a patch result needs observed file changes; none were observed");
    if (patch === undefined) problems.push("no patch artifact was produced");
    if (changedFiles.length === 0 || patch === undefined) lower("failed");
  }
  if (deliverable === "test_result" && finished) {
    const last = verification.at(-1);
    if (last === undefined) problems.push("a test result needs a verification command run with the run tool; none was observed");
    else if (last.status !== "passed") problems.push(`the last verification command failed: ${last.command}`);
    if (last?.status !== "passed") lower("failed");
  }
  if (deliverable === "plan") {
    const steps = readList(envelope.steps, "steps", stepSchema, problems).map((step) => ({ ...step, description: clip(step.description, MAX_ENTRY_CHARS), dependencies: unique(step.dependencies) }));
    const invalid = planProblem(steps);
    if (invalid !== undefined) {
      lower("blocked");
      problems.push(`plan steps dropped: ${invalid}`);
    } else if (steps.length > 0) extra.steps = steps;
    else if (finished) {
      lower("blocked");
      problems.push("a plan result needs steps; none were given");
    }
  }
  if (deliverable === "review") {
    const verdict = readVerdict(envelope.verdict);
    if (verdict === undefined && envelope.verdict !== undefined) problems.push("verdict ignored: expected approve, request_changes or comment");
    if (verdict !== undefined) extra.verdict = verdict;
    else if (finished) {
      lower("blocked");
      problems.push("a review result needs a verdict; none was given");
    }
    extra.issues = readList(envelope.issues, "issues", issueSchema, problems).map((issue) => ({ ...issue, description: clip(issue.description, MAX_ENTRY_CHARS) }));
  }
  if (patch !== undefined) extra.patch = patch;
  return {
    status,
    summary: boundSummary(summary),
    findings,
    changedFiles,
    artifacts,
    verification,
    followUps,
    ...extra,
    ...(problems.length > 0 ? { problems } : {}),
  };
}

/** The result of a task that never ran (a failed or blocked dependency). */
export function skippedResult(reason: string): AgentResult {
  return { status: "skipped", summary: boundSummary(reason), findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [], problems: [reason] };
}

/** Cuts a summary to MAX_SUMMARY_CHARS, saying so at the end. */
export function boundSummary(text: string): string {
  if (text.length <= MAX_SUMMARY_CHARS) return text;
  const marker = `\n[… cut: the full text had ${text.length} characters]`;
  return sliceChars(text, MAX_SUMMARY_CHARS - marker.length) + marker;
}

/** What a child is told to end with, appended to its task prompt. */
export function envelopeInstructions(deliverable: Deliverable): string {
  const fields = [
    `  "status": "completed" | "failed" | "blocked"`,
    `  "summary": "what you found or did, at most ${MAX_SUMMARY_CHARS} characters"`,
    `  "findings": [{ "path": "src/file.ts", "line": 42, "description": "what is there and why it matters", "confidence": 0.9 }]`,
    `  "followUps": ["work that remains, if any"]`,
  ];
  if (deliverable === "plan") fields.push(`  "steps": [{ "id": "s1", "description": "one concrete step", "dependencies": [] }]`);
  if (deliverable === "review") {
    fields.push(`  "verdict": "approve" | "request_changes" | "comment"`);
    fields.push(`  "issues": [{ "path": "src/file.ts", "line": 42, "severity": "low" | "medium" | "high" | "critical", "description": "the problem" }]`);
  }
  const specific: Record<Deliverable, string> = {
    analysis: "Findings name exact paths and, where it helps, lines; confidence is between 0 and 1.",
    plan: 'Every step has a unique id; "dependencies" lists ids of other steps and must not form a cycle. A plan without valid steps is blocked.',
    patch: "Make the change with the write tool; the runtime builds the patch from your changes. A patch with no file changes fails.",
    review: "A review without a verdict is blocked. Each issue needs a severity and a description.",
    test_result: "Run the checks with the run tool. The result counts as passed only if the last command you ran exited with code 0.",
  };
  return [
    "When you are done, end your final answer with one JSON object (a ```json block is fine) of this shape:",
    "{",
    fields.join(",\n"),
    "}",
    'Use "blocked" when you cannot finish without something you lack, "failed" when the task cannot be done.',
    "Changed files, commands you ran and their outcome, and artifacts are taken from your tool calls: do not list them; claims without a matching tool call are ignored.",
    specific[deliverable],
  ].join("\n");
}

type Envelope = Record<string, unknown>;

/** Keys that make a JSON object an envelope rather than, say, an example in prose. */
const ENVELOPE_KEYS = ["status", "summary", "findings", "followUps", "steps", "verdict", "issues", "changedFiles", "verification", "artifacts"];

/**
 * Finds the envelope in a final answer: the whole text, else the last ```json (or unlabeled)
 * fenced block, else the last top-level `{...}` object. `prose` is the rest of the text.
 */
export function locateEnvelope(text: string): { envelope: Envelope; prose: string } | undefined {
  for (const candidate of jsonCandidates(text)) {
    const envelope = asEnvelope(candidate.json);
    if (envelope !== undefined) return { envelope, prose: `${text.slice(0, candidate.start)}${text.slice(candidate.end)}`.trim() };
  }
  return undefined;
}

function asEnvelope(json: string): Envelope | undefined {
  if (!json.startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return ENVELOPE_KEYS.some((key) => key in value) ? (value as Envelope) : undefined;
}

/** The valid entries of a list field; each invalid entry is dropped and named in `problems`. */
function readList<T>(value: unknown, field: string, schema: z.ZodType<T>, problems: string[]): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${field} ignored: not a list`);
    return [];
  }
  const kept: T[] = [];
  const dropped: string[] = [];
  value.forEach((entry, index) => {
    const parsed = schema.safeParse(entry);
    if (parsed.success) kept.push(parsed.data);
    else dropped.push(`${field}[${index}]: ${describeIssue(parsed.error)}`);
  });
  if (dropped.length > 0) problems.push(`dropped invalid entries: ${dropped.slice(0, 5).join("; ")}${dropped.length > 5 ? ` (and ${dropped.length - 5} more)` : ""}`);
  if (kept.length > MAX_ENTRIES) problems.push(`${field}: kept the first ${MAX_ENTRIES} of ${kept.length}`);
  return kept.slice(0, MAX_ENTRIES);
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}

/** A verdict, forgiving case and `request changes` / `request-changes` spellings. */
function readVerdict(value: unknown): z.infer<typeof verdictSchema> | undefined {
  if (typeof value !== "string") return undefined;
  const parsed = verdictSchema.safeParse(value.trim().toLowerCase().replace(/[\s-]+/g, "_"));
  return parsed.success ? parsed.data : undefined;
}

/** Why a plan's steps cannot be trusted as a dependency graph, or undefined when they can. */
function planProblem(steps: Step[]): string | undefined {
  const byId = new Map<string, Step>();
  for (const step of steps) {
    if (byId.has(step.id)) return `duplicate step id "${step.id}"`;
    byId.set(step.id, step);
  }
  for (const step of steps) {
    const unknown = step.dependencies.find((dependency) => !byId.has(dependency));
    if (unknown !== undefined) return `step "${step.id}" depends on unknown step "${unknown}"`;
  }
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string, path: string[]): string | undefined => {
    if (state.get(id) === "done") return undefined;
    if (state.get(id) === "visiting") return `dependency cycle: ${[...path.slice(path.indexOf(id)), id].join(" → ")}`;
    state.set(id, "visiting");
    for (const dependency of byId.get(id)?.dependencies ?? []) {
      const cycle = visit(dependency, [...path, id]);
      if (cycle !== undefined) return cycle;
    }
    state.set(id, "done");
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id, []);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

function inScope(path: string, scope: string[]): boolean {
  return scope.some((pattern) => {
    const tidy = tidyPath(pattern);
    // A plain directory name covers what is inside it, like the glob `dir/**`.
    if (!/[*?[\]{}!]/.test(tidy)) return path === tidy || path.startsWith(`${tidy.replace(/\/$/, "")}/`);
    return new Bun.Glob(tidy).match(path);
  });
}

function tidyPath(path: string): string {
  return path.trim().replace(/^(\.\/)+/, "");
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string" && entry.trim() !== "") : [];
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function listed(paths: string[]): string {
  return paths.length > 10 ? `${paths.slice(0, 10).join(", ")} (and ${paths.length - 10} more)` : paths.join(", ");
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${sliceChars(text, max - 1)}…`;
}

/** A prefix of at most `max` UTF-16 units that does not end inside a surrogate pair. */
function sliceChars(text: string, max: number): string {
  const head = text.slice(0, Math.max(0, max));
  const last = head.charCodeAt(head.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}
