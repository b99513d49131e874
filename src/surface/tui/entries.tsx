/**
 * The timeline's rows as boxes: one renderer per entry kind (user turn, answer as Markdown,
 * reasoning, tool call — one view per tool, see tool-views.tsx —, child run as a branch of its
 * delegate call's tree, notice, error, approval decision) and the "Worked for …" summary row.
 * Everything drawn from a model, a tool or a repository is sanitized first.
 */
import { Index, Match, Show, Switch, type Accessor } from "solid-js";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { MarkdownText, growingSanitizer } from "./markdown.tsx";
import { ATTRS, COLORS } from "./theme.ts";
import { formatDuration, type Entry, type Row } from "./timeline.ts";
import { ChildView, clipLine, ToolView } from "./tool-views.tsx";

const clean = (text: string) => sanitizeForTerminal(text);

type Of<K extends Entry["kind"]> = Extract<Entry, { kind: K }>;

export type EntryRowsProps = {
  rows: Row[];
  /**
   * The root run in flight (`timeline.activeRunId`), `null` when none: its answer is parsed as a
   * stream, the others as finished. Left undefined, every answer is treated as streaming, which
   * draws correctly either way (a finished answer is merely styled a little later).
   */
  activeRunId?: string | null;
  /** A click on a "Worked for …" row. */
  onToggleRun?: (runId: string) => void;
};

export function EntryRows(props: EntryRowsProps) {
  const streaming = (entry: Entry) => props.activeRunId === undefined || ("runId" in entry && entry.runId === props.activeRunId);
  const lastChild = (index: number) => {
    const next = props.rows[index + 1];
    return !next || next.kind !== "entry" || next.entry.kind !== "child";
  };
  return (
    <Index each={props.rows}>
      {(row, index) => (
        <Show
          when={row().kind === "worked" ? (row() as Extract<Row, { kind: "worked" }>) : undefined}
          fallback={
            <Show
              when={row().kind === "footer" ? (row() as Extract<Row, { kind: "footer" }>) : undefined}
              fallback={<EntryView entry={(row() as Extract<Row, { kind: "entry" }>).entry} streaming={streaming((row() as Extract<Row, { kind: "entry" }>).entry)} lastChild={lastChild(index)} />}
            >
              {(footer: Accessor<Extract<Row, { kind: "footer" }>>) => (
                <text fg={COLORS.dim} attributes={ATTRS.dim} flexShrink={0}>
                  {clean(`  ${footer().run.agent} · ${footer().run.model}`)}
                </text>
              )}
            </Show>
          }
        >
          {(worked: Accessor<Extract<Row, { kind: "worked" }>>) => (
            <text fg={COLORS.dim} attributes={ATTRS.dim} flexShrink={0} onMouseDown={() => props.onToggleRun?.(worked().run.runId)}>
              {workedText(worked())}
            </text>
          )}
        </Show>
      )}
    </Index>
  );
}

function workedText(row: Extract<Row, { kind: "worked" }>): string {
  const run = row.run;
  const took = formatDuration((run.endedAt ?? run.startedAt) - run.startedAt);
  return `${run.collapsed ? "▸" : "▾"} Worked for ${took} · ${row.hidden} step${row.hidden === 1 ? "" : "s"}${run.status !== "completed" ? ` · ${run.status}` : ""}  (Ctrl-O)`;
}

/** The files sent with a turn, a few by name. */
export function attachedText(files: string[]): string {
  const shown = files.slice(0, 4).map((file) => clipLine(file, 60));
  return `  ⎿ attached ${shown.join(", ")}${files.length > shown.length ? ` +${files.length - shown.length} more` : ""}`;
}

function decisionText(entry: Of<"decision">): string {
  const verb = entry.answer === "deny" ? "✗ denied" : entry.answer === "always" ? "✓ allowed for this session:" : "✓ allowed once:";
  return `${verb} ${clean(entry.tool)}`;
}

function ReasoningText(props: { text: string; streaming: boolean }) {
  const sanitize = growingSanitizer();
  return (
    <text fg={COLORS.reasoning} attributes={ATTRS.dim} flexShrink={0}>
      {`thinking: ${sanitize(props.text, !props.streaming)}`}
    </text>
  );
}

function EntryView(props: { entry: Entry; streaming: boolean; lastChild: boolean }) {
  const as = <K extends Entry["kind"]>(kind: K) => (props.entry.kind === kind ? (props.entry as Of<K>) : undefined);
  return (
    <box flexDirection="column" flexShrink={0} marginTop={props.entry.kind === "user" ? 1 : 0}>
      <Switch>
        <Match when={as("user")}>
          {(entry: Accessor<Of<"user">>) => (
            <>
              <text fg={COLORS.user} attributes={ATTRS.strong}>{`› ${clean(entry().text)}`}</text>
              <Show when={(entry().attachments?.length ?? 0) > 0}>
                <text fg={COLORS.dim} attributes={ATTRS.dim} wrapMode="none">
                  {attachedText(entry().attachments)}
                </text>
              </Show>
            </>
          )}
        </Match>
        <Match when={as("assistant")}>{(entry: Accessor<Of<"assistant">>) => <MarkdownText text={entry().text} streaming={props.streaming} />}</Match>
        <Match when={as("reasoning")}>{(entry: Accessor<Of<"reasoning">>) => <ReasoningText text={entry().text} streaming={props.streaming} />}</Match>
        <Match when={as("tool")}>{(entry: Accessor<Of<"tool">>) => <ToolView tool={entry()} />}</Match>
        <Match when={as("child")}>{(entry: Accessor<Of<"child">>) => <ChildView child={entry()} last={props.lastChild} />}</Match>
        <Match when={as("notice")}>{(entry: Accessor<Of<"notice">>) => <text fg={COLORS.dim} attributes={ATTRS.dim}>{`· ${clean(entry().text)}`}</text>}</Match>
        <Match when={as("error")}>{(entry: Accessor<Of<"error">>) => <text fg={COLORS.error} attributes={ATTRS.strong}>{`✗ ${clean(entry().text)}`}</text>}</Match>
        <Match when={as("decision")}>{(entry: Accessor<Of<"decision">>) => <text fg={entry().answer === "deny" ? COLORS.error : COLORS.ok}>{decisionText(entry())}</text>}</Match>
      </Switch>
    </box>
  );
}
