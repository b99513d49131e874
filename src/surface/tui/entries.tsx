/**
 * The timeline's rows as boxes: one renderer per entry kind (user turn, answer, reasoning, tool
 * call, child run, notice, error, approval decision) and the "Worked for …" summary row.
 */
import { Index, Show } from "solid-js";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { toolTitle } from "./presenters.ts";
import { COLORS } from "./theme.ts";
import { formatDuration, type Entry, type Row, type ToolEntry } from "./timeline.ts";

const clean = (text: string) => sanitizeForTerminal(text);

export function EntryRows(props: { rows: Row[] }) {
  return <Index each={props.rows}>{(row) => <RowView row={row()} />}</Index>;
}

function RowView(props: { row: Row }) {
  const worked = () => (props.row.kind === "worked" ? props.row : undefined);
  return (
    <Show when={worked()} fallback={<EntryView entry={(props.row as Extract<Row, { kind: "entry" }>).entry} />}>
      <text fg={COLORS.dim}>{workedText(worked()!)}</text>
    </Show>
  );
}

function workedText(row: Extract<Row, { kind: "worked" }>): string {
  const run = row.run;
  const took = formatDuration((run.endedAt ?? run.startedAt) - run.startedAt);
  return `${run.collapsed ? "▸" : "▾"} Worked for ${took} · ${row.hidden} step${row.hidden === 1 ? "" : "s"}${run.status !== "completed" ? ` · ${run.status}` : ""}  (Ctrl-O)`;
}

function toolSummary(tool: ToolEntry): string {
  if (tool.status === "pending") return "waiting";
  if (tool.status === "running") return tool.progress ? clean(tool.progress) : "running…";
  const first = clean(tool.output ?? "").split("\n").find((line) => line.trim() !== "") ?? "";
  const lines = tool.output ? tool.output.split("\n").length : 0;
  const duration = tool.durationMs !== undefined ? ` · ${formatDuration(tool.durationMs)}` : "";
  return `${tool.status}${duration}${first ? ` · ${first.slice(0, 100)}${lines > 1 ? ` (+${lines - 1} lines)` : ""}` : ""}`;
}

const TOOL_MARK: Record<ToolEntry["status"], [string, string]> = {
  pending: ["○", COLORS.dim],
  running: ["◐", COLORS.accent],
  completed: ["●", COLORS.ok],
  failed: ["✗", COLORS.error],
  denied: ["⊘", COLORS.error],
  cancelled: ["⊘", COLORS.dim],
};

/** One entry as lines of text with a colour each. */
function entryLines(entry: Entry): { text: string; fg?: string }[] {
  switch (entry.kind) {
    case "user":
      return [{ text: `› ${clean(entry.text)}`, fg: COLORS.user }];
    case "assistant":
      return [{ text: clean(entry.text) }];
    case "reasoning":
      return [{ text: `thinking: ${clean(entry.text)}`, fg: COLORS.reasoning }];
    case "tool": {
      const [mark, fg] = TOOL_MARK[entry.status];
      return [
        { text: `${mark} ${toolTitle(entry)}`, fg },
        { text: `  ⎿ ${toolSummary(entry)}`, fg: COLORS.dim },
      ];
    }
    case "child":
      return [{ text: `  ↳ ${clean(entry.agent)}: ${clean(entry.task)} · ${entry.status}${entry.summary ? ` · ${clean(entry.summary).split("\n")[0]}` : ""}`, fg: COLORS.dim }];
    case "notice":
      return [{ text: `· ${clean(entry.text)}`, fg: COLORS.dim }];
    case "error":
      return [{ text: `✗ ${clean(entry.text)}`, fg: COLORS.error }];
    case "decision": {
      const verb = entry.answer === "deny" ? "✗ denied" : entry.answer === "always" ? "✓ allowed for this session:" : "✓ allowed once:";
      return [{ text: `${verb} ${clean(entry.tool)}`, fg: entry.answer === "deny" ? COLORS.error : COLORS.ok }];
    }
  }
}

function EntryView(props: { entry: Entry }) {
  return (
    <box flexDirection="column" flexShrink={0} marginTop={props.entry.kind === "user" ? 1 : 0}>
      <Index each={entryLines(props.entry)}>{(line) => <text fg={line().fg}>{line().text}</text>}</Index>
    </box>
  );
}
