/**
 * One renderer per tool call in the timeline. Every call gets the same two lines — a status mark
 * with what it does (presenters.ts `toolTitle`), then `⎿ status · duration · first line of output`
 * — and some tools add a bounded body: write its diff, run the last lines of its output, search
 * its first results, find its first matches. Nothing a tool returned is ever drawn in full, and
 * every line is sanitized (tool output and file names are hostile).
 */
import { For, Show } from "solid-js";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { DiffView } from "./diff-view.tsx";
import { toolTitle } from "./presenters.ts";
import { ATTRS, COLORS } from "./theme.ts";
import { formatDuration, type Entry, type ToolEntry } from "./timeline.ts";

/** Bounds of a tool row's body. */
export const TOOL_LIMITS = { diffLines: 12, runLines: 5, listLines: 3, lineChars: 200 };

type ChildEntry = Extract<Entry, { kind: "child" }>;

/** Sanitized, one line, at most `max` characters. */
export function clipLine(text: string, max = TOOL_LIMITS.lineChars): string {
  const line = sanitizeForTerminal(text).replace(/\t/g, "  ").trimEnd();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const input = (tool: ToolEntry) => (typeof tool.input === "object" && tool.input !== null ? tool.input : {}) as Record<string, unknown>;

const MARKS: Record<ToolEntry["status"], string> = { pending: "○", running: "◐", completed: "●", failed: "✗", denied: "⊘", cancelled: "⊘" };

function markColor(status: ToolEntry["status"]) {
  if (status === "running") return COLORS.accent;
  if (status === "completed") return COLORS.ok;
  if (status === "failed" || status === "denied") return COLORS.error;
  return COLORS.dim;
}

/** The header: mark and title; read adds the line range it asked for. */
export function toolHeader(tool: ToolEntry): string {
  let title = toolTitle(tool);
  const args = input(tool);
  if (tool.tool === "read" && (typeof args.offset === "number" || typeof args.limit === "number")) {
    const first = typeof args.offset === "number" ? args.offset : 1;
    title += typeof args.limit === "number" ? ` (lines ${first}–${first + args.limit - 1})` : ` (from line ${first})`;
  }
  if (tool.tool === "delegate" && Array.isArray(args.tasks) && args.tasks.length > 0) {
    const names = args.tasks.map((task) => {
      const fields = (typeof task === "object" && task !== null ? task : {}) as Record<string, unknown>;
      return typeof fields.taskName === "string" ? fields.taskName : typeof fields.id === "string" ? fields.id : "?";
    });
    title += ` ${clipLine(names.slice(0, 4).join(", "), 100)}${names.length > 4 ? ` +${names.length - 4} more` : ""}`;
  }
  return `${MARKS[tool.status]} ${title}`;
}

/** The `⎿` line: status, duration and the gist of the output. */
export function toolSummary(tool: ToolEntry): string {
  if (tool.status === "pending") return "waiting";
  if (tool.status === "running") {
    const last = tool.progress?.split("\n").filter((line) => line.trim() !== "").at(-1);
    return tool.tool !== "run" && last ? clipLine(last, 100) : "running…";
  }
  const output = tool.output ?? "";
  const lines = output === "" ? [] : output.split("\n");
  const first = lines.find((line) => line.trim() !== "") ?? "";
  const duration = tool.durationMs !== undefined ? ` · ${formatDuration(tool.durationMs)}` : "";
  let gist = first ? clipLine(first, 100) : "";
  if (tool.status === "completed" && tool.tool === "search") {
    const count = /\((?:[^()]*, )?(\d+) results?\)/.exec(first);
    if (count) gist = `${count[1]} result${count[1] === "1" ? "" : "s"}`;
  } else if (tool.status === "completed" && tool.tool === "read" && /^\d+\t/.test(first)) {
    // Numbered file lines: how many, and of how many when the read stopped early.
    const numbered = lines.filter((line) => /^\d+\t/.test(line)).length;
    const of = lines.map((line) => /^\(lines \d+-\d+ of (\d+)/.exec(line)).find(Boolean);
    gist = `${numbered} line${numbered === 1 ? "" : "s"}${of ? ` of ${of[1]}` : ""}`;
  } else if (gist && tool.tool !== "write" && lines.length > 1) {
    // write's output carries its diff for the model: the diff is drawn below instead.
    gist += ` (+${lines.length - 1} lines)`;
  }
  return `${tool.status}${duration}${gist ? ` · ${gist}` : ""}`;
}

/** The body lines under the summary (not the diff): bounded, sanitized. */
export function toolBody(tool: ToolEntry): string[] {
  const output = tool.output ?? "";
  switch (tool.tool) {
    case "run": {
      // The first line of a finished command's output is its exit status (in the summary).
      const text = tool.status === "running" ? (tool.progress ?? "") : tool.status === "completed" || tool.status === "failed" ? output.split("\n").slice(1).join("\n") : "";
      const lines = text.split("\n");
      while (lines.length > 0 && lines.at(-1)!.trim() === "") lines.pop();
      if (lines.length === 1 && lines[0] === "(no output)") return [];
      const tail = lines.slice(-TOOL_LIMITS.runLines).map((line) => clipLine(line));
      return lines.length > tail.length ? [`… ${lines.length - tail.length} earlier lines`, ...tail] : tail;
    }
    case "search":
      if (tool.status !== "completed") return [];
      return output
        .split("\n")
        .filter((line) => /^\d+\. /.test(line))
        .slice(0, TOOL_LIMITS.listLines)
        .map((line) => clipLine(line, 120));
    case "find":
      if (tool.status !== "completed") return [];
      return output
        .split("\n")
        .slice(1)
        .filter((line) => line.trim() !== "")
        .slice(0, TOOL_LIMITS.listLines)
        .map((line) => clipLine(line, 160));
    default:
      return [];
  }
}

export function ToolView(props: { tool: ToolEntry }) {
  const failed = () => props.tool.status === "failed" || props.tool.status === "denied";
  return (
    <box flexDirection="column" flexShrink={0}>
      <text fg={markColor(props.tool.status)} wrapMode="none">
        {toolHeader(props.tool)}
      </text>
      <text fg={failed() ? COLORS.error : COLORS.dim} attributes={ATTRS.dim} wrapMode="none">{`  ⎿ ${toolSummary(props.tool)}`}</text>
      <For each={toolBody(props.tool)}>
        {(line) => (
          <text fg={COLORS.dim} attributes={ATTRS.dim} wrapMode="none">{`    ${line}`}</text>
        )}
      </For>
      <Show when={props.tool.tool === "write" && props.tool.status === "completed" && props.tool.diff}>
        <DiffView diff={props.tool.diff!} maxLines={TOOL_LIMITS.diffLines} />
      </Show>
    </box>
  );
}

const CHILD_MARK: Record<string, string> = { running: "◐", completed: "●", failed: "✗", cancelled: "⊘", limit: "◌" };

/** A delegated child run, as a branch of the tree under its delegate call. */
export function childLine(child: ChildEntry, last: boolean): string {
  const summary = child.summary ? clipLine(child.summary.split("\n").find((line) => line.trim() !== "") ?? "", 100) : "";
  return `  ${last ? "└─" : "├─"} ${CHILD_MARK[child.status] ?? "•"} ${clipLine(child.agent, 40)} · ${clipLine(child.task, 80)} · ${clipLine(child.status, 20)}${summary ? ` · ${summary}` : ""}`;
}

export function ChildView(props: { child: ChildEntry; last: boolean }) {
  const color = () => (props.child.status === "completed" ? COLORS.ok : props.child.status === "running" ? COLORS.accent : props.child.status === "failed" ? COLORS.error : COLORS.dim);
  return (
    <text fg={color()} wrapMode="none" flexShrink={0}>
      {childLine(props.child, props.last)}
    </text>
  );
}
