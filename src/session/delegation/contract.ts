/**
 * A child's task contract as the child sees it: the task prompt (goal, deliverable, acceptance
 * criteria, scope, the parent context the spawn asked for, explicit context, artifact
 * references, dependency results) and the path scope that narrows its file tools.
 */
import { isAbsolute } from "node:path";
import type { DefaultContext, Deliverable } from "../../config/schema.ts";
import type { Message } from "../../protocol/messages.ts";
import type { Redactor } from "../../security/redact.ts";

/** How much of the parent's conversation a child gets. */
export type ContextMode = { kind: "none" } | { kind: "summary" } | { kind: "full" } | { kind: "recent"; turns: number };

/** A configured `recent` default without a count means this many turns. */
export const DEFAULT_RECENT_TURNS = 6;
export const SUMMARY_CONTEXT_CHARS = 3_000;
export const RECENT_CONTEXT_CHARS = 16_000;
export const FULL_CONTEXT_CHARS = 48_000;
/** One tool output or message inside a rendered context is cut to this. */
const ITEM_CHARS = 1_500;

export type TaskContract = {
  taskId: string;
  taskName: string;
  goal: string;
  deliverable: Deliverable;
  acceptanceCriteria: string[];
  scope?: { paths?: string[]; components?: string[] };
  context?: string[];
  artifactRefs?: string[];
};

export function contextModeOf(requested: "none" | "summary" | "full" | { type: "recent"; turns: number } | undefined, fallback: DefaultContext | "recent"): ContextMode {
  const mode = requested ?? fallback;
  if (typeof mode === "object") return { kind: "recent", turns: mode.turns };
  if (mode === "recent") return { kind: "recent", turns: DEFAULT_RECENT_TURNS };
  return { kind: mode };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/**
 * One message as plain lines: what was said and which tools ran, never raw media or reasoning.
 * Each piece is redacted before it is cut: a cut through a secret would leave a prefix no rule matches.
 */
export function renderMessage(message: Message, scrub: (text: string) => string): string[] {
  const lines: string[] = [];
  const bounded = (text: string, max: number) => cut(scrub(text), max);
  for (const part of message.parts) {
    if (part.type === "text" && part.text.trim() !== "") lines.push(`${message.role}: ${bounded(part.text.trim(), ITEM_CHARS)}`);
    else if (part.type === "summary") lines.push(`summary of earlier conversation: ${bounded(part.text, ITEM_CHARS)}`);
    else if (part.type === "file") lines.push(`${message.role}: [attached ${part.mediaType}]`);
    else if (part.type === "tool-call") lines.push(`assistant called ${part.tool} ${bounded(JSON.stringify(part.input ?? null), 300)}`);
    else if (part.type === "tool-result") {
      const output = part.output;
      const value = output.type === "text" || output.type === "error-text" ? output.value : output.type === "execution-denied" ? `denied: ${output.reason ?? ""}` : "[content]";
      lines.push(`${part.tool} result: ${bounded(value, ITEM_CHARS)}`);
    }
  }
  return lines;
}

/** Turns start at each user message. */
function turnsOf(history: readonly Message[]): Message[][] {
  const turns: Message[][] = [];
  for (const message of history) {
    if (message.role === "user" || turns.length === 0) turns.push([message]);
    else turns[turns.length - 1]!.push(message);
  }
  return turns;
}

/** Keeps the newest lines that fit, saying how much older text was left out. */
export function newestWithin(lines: string[], max: number): string {
  const kept: string[] = [];
  let size = 0;
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!;
    if (size + line.length + 1 > max) {
      kept.unshift(`[${index + 1} earlier lines left out]`);
      break;
    }
    kept.unshift(line);
    size += line.length + 1;
  }
  return kept.join("\n");
}

/** The parent's conversation as the child may see it (redacted, bounded); undefined for `none` or an empty history. */
export function parentContext(history: readonly Message[], mode: ContextMode, redactor: Redactor): string | undefined {
  if (mode.kind === "none" || history.length === 0) return undefined;
  const scrub = (text: string) => redactor.redact(text).text;
  const render = (message: Message) => renderMessage(message, scrub);
  const turns = turnsOf(history);
  let text: string;
  if (mode.kind === "summary") {
    // The parent's request (or the summary that replaced it), what it said last, and which tools it used.
    const firstTask = history.flatMap(render).find((line) => line.startsWith("user: ") || line.startsWith("summary of earlier conversation: "));
    const lastRequest = turns[turns.length - 1]!.flatMap(render).find((line) => line.startsWith("user: "));
    const said = history.flatMap((m) => (m.role === "assistant" ? render(m).filter((l) => l.startsWith("assistant: ")) : []));
    const tools = new Map<string, number>();
    for (const m of history) for (const p of m.parts) if (p.type === "tool-call") tools.set(p.tool, (tools.get(p.tool) ?? 0) + 1);
    const lines = [
      ...(firstTask ? [`first request — ${firstTask}`] : []),
      ...(lastRequest && lastRequest !== firstTask ? [`current request — ${lastRequest}`] : []),
      ...(said.length > 0 ? [`latest — ${said[said.length - 1]}`] : []),
      ...(tools.size > 0 ? [`tools used so far: ${[...tools].map(([name, n]) => `${name}×${n}`).join(", ")}`] : []),
      `(${turns.length} turn${turns.length === 1 ? "" : "s"}, ${history.length} messages)`,
    ];
    text = cut(lines.join("\n"), SUMMARY_CONTEXT_CHARS);
  } else if (mode.kind === "recent") {
    text = newestWithin(turns.slice(-mode.turns).flat().flatMap(render), RECENT_CONTEXT_CHARS);
  } else {
    text = newestWithin(history.flatMap(render), FULL_CONTEXT_CHARS);
  }
  return redactor.redact(text).text;
}

export type DependencyResult = { taskId: string; status: string; summary: string; artifacts: string[]; changedFiles: string[] };

/** The child's task message: everything it knows about its task, in one place. */
export function taskPrompt(contract: TaskContract, extras: { parentContext?: string; dependencies?: DependencyResult[]; envelope: string }): string {
  const sections = [
    `# Delegated task: ${contract.taskName}`,
    `Task id: ${contract.taskId}`,
    `Goal: ${contract.goal}`,
    `Deliverable: ${contract.deliverable}`,
    `Acceptance criteria:\n${contract.acceptanceCriteria.map((c) => `- ${c}`).join("\n")}`,
  ];
  const scope = contract.scope;
  if (scope?.paths?.length) sections.push(`Scope — you may only read, search and change: ${scope.paths.join(", ")}`);
  if (scope?.components?.length) sections.push(`Components: ${scope.components.join(", ")}`);
  if (contract.context?.length) sections.push(`Context from the parent:\n${contract.context.map((c) => `- ${c}`).join("\n")}`);
  if (contract.artifactRefs?.length) sections.push(`Artifacts you may open with read: ${contract.artifactRefs.join(" ")}`);
  if (extras.dependencies?.length) {
    const lines = extras.dependencies.map(
      (d) => `- ${d.taskId} (${d.status}): ${d.summary}${d.changedFiles.length ? ` [changed: ${d.changedFiles.join(", ")}]` : ""}${d.artifacts.length ? ` [artifacts: ${d.artifacts.join(" ")}]` : ""}`,
    );
    sections.push(`Results of the tasks this one depends on:\n${lines.join("\n")}`);
  }
  if (extras.parentContext) sections.push(`Parent conversation (for orientation; the task above is what counts):\n${extras.parentContext}`);
  sections.push(extras.envelope);
  return sections.join("\n\n");
}

const GLOB_CHARS = /[*?[\]{}]/;

/** The directory part of a glob before its first wildcard (`src/auth/**` → `src/auth`). */
export function globBase(glob: string): string {
  const segments = glob.split("/");
  const index = segments.findIndex((segment) => GLOB_CHARS.test(segment));
  return (index === -1 ? segments : segments.slice(0, index)).join("/") || ".";
}

function normalizeGlob(glob: string): string | undefined {
  const trimmed = glob.trim().replace(/^\.\/+/, "").replace(/\/+$/, "");
  if (trimmed === "" || isAbsolute(trimmed) || trimmed.includes("\\") || trimmed.includes("\0")) return undefined;
  if (trimmed.split("/").some((segment) => segment === ".." || segment === "." || segment === "")) return undefined;
  return trimmed;
}

export type PathScope = {
  globs: string[];
  allows(target: string): boolean;
  /** Whether everything `glob` can match is inside this scope (a child's scope must be). */
  covers(glob: string): boolean;
};

/** A glob "covers a tree" when it matches everything below its base: `src/**`, or a plain path. */
const coversTree = (glob: string) => glob.endsWith("**") || !GLOB_CHARS.test(glob);
const within = (base: string, path: string) => base === "." || path === base || path.startsWith(`${base}/`);

export function pathScope(globs: string[]): PathScope {
  const compiled = globs.map((glob) => ({ source: glob, glob: new Bun.Glob(glob), base: globBase(glob), deep: coversTree(glob) }));
  return {
    globs,
    allows(target) {
      if (target === "" || target === "." || isAbsolute(target) || target.split("/").includes("..")) {
        // The workspace itself only for a scope that covers all of it.
        return target === "." && compiled.some(({ base, deep }) => deep && base === ".");
      }
      // The glob's directory itself (to list or search it) only when the glob covers all of it.
      return compiled.some(({ glob, base, deep }) => glob.match(target) || (deep && within(base, target)));
    },
    covers(glob) {
      const base = globBase(glob);
      return compiled.some((parent) => parent.source === glob || (parent.deep && within(parent.base, base)));
    },
  };
}

/**
 * Checks a spawn's scope paths: workspace-relative globs without `..`, each inside the parent's
 * own scope when it has one (a child narrows, never widens). No paths: the parent's scope.
 */
export function childScope(paths: string[] | undefined, parent: PathScope | undefined): { ok: true; scope?: PathScope } | { ok: false; error: string } {
  if (paths === undefined || paths.length === 0) return parent ? { ok: true, scope: parent } : { ok: true };
  const globs: string[] = [];
  for (const path of paths) {
    const glob = normalizeGlob(path);
    if (glob === undefined) return { ok: false, error: `scope path '${path}' must be a workspace-relative path or glob without '..' (e.g. src/auth/**)` };
    if (parent && !parent.covers(glob)) {
      return { ok: false, error: `scope path '${path}' is outside this run's own scope (${parent.globs.join(", ")}); a child can only narrow it` };
    }
    globs.push(glob);
  }
  return { ok: true, scope: pathScope(globs) };
}

const PATH_OPERATIONS = new Set(["read", "read-secret", "write-edit", "write-delete", "write-move", "write-sensitive"]);
/** The tools a path-scoped child loses: a command or an MCP tool cannot be confined to paths. */
export function toolsOutsideScope(tools: readonly string[]): string[] {
  return tools.filter((tool) => tool === "run" || tool.startsWith("mcp:"));
}

/** The tools whose targets are workspace paths (`run` and MCP tools are not offered to a scoped child). */
const PATH_TOOLS = new Set(["read", "find", "write"]);

/** The loop's scope check: file calls must stay inside the scope (every path of a multi-path call). */
export function scopeGuard(scope: PathScope): (call: { tool: string; operation: string; target: string }) => string | undefined {
  return (call) => {
    if (!PATH_TOOLS.has(call.tool) || !PATH_OPERATIONS.has(call.operation)) return undefined;
    if (call.target.startsWith("artifact://")) return undefined;
    const outside = call.target.split("\n").find((path) => !scope.allows(path));
    return outside === undefined ? undefined : `${outside} is outside this task's scope (${scope.globs.join(", ")})`;
  };
}
