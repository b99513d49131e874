/**
 * The TUI's view: the start screen, the chat timeline, the composer, the approval prompt, the
 * popups and the status line, drawn with OpenTUI + Solid from a store of `TuiState`. Behaviour
 * lives in the controller (`actions`); this file maps keys to it and state to boxes.
 */
import type { KeyEvent, ScrollBoxRenderable, TextareaRenderable } from "@opentui/core";
import { useKeyboard } from "@opentui/solid";
import { createEffect, createMemo, createSignal, For, onCleanup, Show } from "solid-js";
import type { EffectiveConfig } from "../../config/schema.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import type { Controller, TuiState, Update } from "./controller.ts";
import { newer, older } from "./history.ts";
import { EntryRows } from "./entries.tsx";
import { approvalLines, formatTokens, statusLine } from "./presenters.ts";
import { COLORS } from "./theme.ts";
import { formatDuration, toggleRun, visibleRows } from "./timeline.ts";

export type TuiActions = Pick<Controller, "submit" | "cancel" | "answer" | "choose">;

export type AppProps = {
  state: TuiState;
  update: Update;
  actions: TuiActions;
  config: EffectiveConfig;
  /** The workspace, shown in the approval prompt. */
  cwd: string;
  /** Called once when the user leaves (two Ctrl-C, /quit); the caller destroys the renderer. */
  onExit: () => void;
  /** The clock of the "Working for …" timer (tests pin it). */
  now?: () => number;
  /** Milliseconds between timer ticks; 0 = no timer (tests). */
  tickMs?: number;
};


/** Enter sends; Shift-Enter, Alt-Enter and Ctrl-J insert a newline. */
const COMPOSER_KEYS = [
  { name: "return", action: "submit" as const },
  { name: "kpenter", action: "submit" as const },
  { name: "return", shift: true, action: "newline" as const },
  { name: "return", meta: true, action: "newline" as const },
  { name: "linefeed", action: "newline" as const },
  { name: "j", ctrl: true, action: "newline" as const },
];

const clean = (text: string) => sanitizeForTerminal(text);

export function App(props: AppProps) {
  const now = props.now ?? Date.now;
  const [clock, setClock] = createSignal(now());
  const [hint, setHint] = createSignal("");
  const [pickerIndex, setPickerIndex] = createSignal(0);
  let composer: TextareaRenderable | undefined;
  let timeline: ScrollBoxRenderable | undefined;
  let lastCtrlC = 0;
  let exited = false;

  const exit = () => {
    if (exited) return;
    exited = true;
    props.onExit();
  };

  // The live timer: only ticks while a run is active.
  createEffect(() => {
    const tick = props.tickMs ?? 1000;
    if (!props.state.running || tick <= 0) return;
    setClock(now());
    const timer = setInterval(() => setClock(now()), tick);
    onCleanup(() => clearInterval(timer));
  });
  createEffect(() => {
    if (props.state.quitting) exit();
  });
  createEffect(() => {
    const popup = props.state.popup;
    if (popup?.kind === "picker") setPickerIndex(Math.max(0, popup.options.indexOf(popup.current)));
  });

  const rows = createMemo(() => visibleRows(props.state.timeline));
  const status = () =>
    statusLine(props.config, props.state.choices, {
      ...(props.state.timeline.context ? { context: props.state.timeline.context } : {}),
      costUsd: props.state.timeline.costUsd,
      queued: props.state.queue.items.length,
    });
  const controls = () => statusLine(props.config, props.state.choices, { costUsd: 0, queued: 0 });
  const approval = () => props.state.approvals[0];
  const activeRun = () => {
    const id = props.state.timeline.activeRunId;
    return id ? props.state.timeline.runs[id] : undefined;
  };

  const setComposer = (text: string) => {
    if (!composer) return;
    composer.setText(text);
    composer.cursorOffset = text.length;
  };

  const submit = () => {
    const text = composer?.plainText ?? "";
    const result = props.actions.submit(text);
    if (result === "full") return setHint("the queue is full: the message stays in the composer");
    if (result === "empty") return;
    setHint(result === "queued" ? "queued: it runs when the active run ends" : "");
    setComposer("");
  };

  const toggleLastWorked = () => {
    const worked = [...rows()].reverse().find((row) => row.kind === "worked");
    if (worked && worked.kind === "worked") props.update((state) => toggleRun(state.timeline, worked.run.runId));
  };

  const handleKey = (key: KeyEvent) => {
    const consume = () => key.preventDefault();
    // Ctrl-C: clear the composer; twice within a second: leave.
    if (key.ctrl && key.name === "c") {
      consume();
      const at = now();
      if (at - lastCtrlC < 1000) return exit();
      lastCtrlC = at;
      setComposer("");
      setHint("press Ctrl-C again to quit");
      return;
    }
    const pending = approval();
    // Y/A/N answer only while the composer is empty: a letter typed mid-message (a queued one)
    // must never become "allow for the session". Esc always denies.
    if (pending && (key.name === "escape" || (composer?.plainText ?? "") === "")) {
      const answer = key.name === "y" ? "once" : key.name === "a" ? "always" : key.name === "n" || key.name === "escape" ? "deny" : undefined;
      if (answer && !key.ctrl && !key.meta) {
        consume();
        props.actions.answer(answer);
      }
      return;
    }
    if (pending) setHint("an approval waits: empty the composer (Ctrl-C) to answer with Y / A / N, or Esc to deny");
    const popup = props.state.popup;
    if (popup) {
      if (key.name === "escape") {
        consume();
        return props.update((state) => void delete state.popup);
      }
      if (popup.kind === "picker") {
        if (key.name === "up" || key.name === "down") {
          consume();
          const count = popup.options.length;
          setPickerIndex((index) => (index + (key.name === "up" ? count - 1 : 1)) % count);
          return;
        }
        if (key.name === "return") {
          consume();
          const choice = popup.options[pickerIndex()];
          props.update((state) => void delete state.popup);
          if (choice !== undefined) props.actions.choose(popup.command as Parameters<TuiActions["choose"]>[0], choice);
          return;
        }
      }
      return;
    }
    if (key.name === "escape") {
      consume();
      if (props.actions.cancel()) setHint("cancelled");
      return;
    }
    if (key.ctrl && key.name === "o") {
      consume();
      return toggleLastWorked();
    }
    if (key.ctrl && key.name === "l") {
      consume();
      return void props.actions.submit("/clear");
    }
    if (key.name === "pageup" || key.name === "pagedown") {
      consume();
      timeline?.scrollBy((key.name === "pageup" ? -1 : 1) * Math.max(1, (timeline?.height ?? 10) - 2));
      return;
    }
    // History at the edges of the composer.
    if ((key.name === "up" || key.name === "down") && !key.ctrl && !key.meta && !key.shift && composer) {
      const row = composer.logicalCursor.row;
      const last = Math.max(0, composer.lineCount - 1);
      if (key.name === "up" && row === 0) {
        let text: string | undefined;
        const current = composer.plainText;
        props.update((state) => void (text = older(state.history, current)));
        if (text !== undefined) {
          consume();
          setComposer(text);
        }
      } else if (key.name === "down" && row === last) {
        let text: string | undefined;
        props.update((state) => void (text = newer(state.history)));
        if (text !== undefined) {
          consume();
          setComposer(text);
        }
      }
    }
  };
  useKeyboard(handleKey);

  const composerBox = (compact: boolean) => (
    <box border borderStyle="rounded" borderColor={COLORS.border} paddingLeft={1} paddingRight={1} minHeight={compact ? 4 : 3} flexShrink={0}>
      <textarea
        ref={(node: TextareaRenderable) => (composer = node)}
        focused
        minHeight={compact ? 2 : 1}
        maxHeight={8}
        keyBindings={COMPOSER_KEYS}
        placeholder={props.state.running ? "queue a message for after this run…" : "Ask zero to do something…  (/help for commands)"}
        placeholderColor={COLORS.dim}
        onSubmit={submit}
      />
    </box>
  );

  return (
    <box flexDirection="column" width="100%" height="100%" paddingLeft={1} paddingRight={1}>
      <Show
        when={props.state.started}
        fallback={
          // The start screen.
          <box flexDirection="column" flexGrow={1} alignItems="center" justifyContent="center">
            <ascii_font text="ZERO" font="tiny" color={COLORS.accent} />
            <text fg={COLORS.dim}>a multi-agent coding agent</text>
            <box width="80%" maxWidth={100} minWidth={30} flexDirection="column" marginTop={1}>
              {composerBox(true)}
              <text fg={COLORS.dim}>{controls()}</text>
            </box>
          </box>
        }
      >
        <scrollbox ref={(node: ScrollBoxRenderable) => (timeline = node)} flexGrow={1} stickyScroll stickyStart="bottom">
          <EntryRows rows={rows()} />
          <Show when={props.state.running && activeRun()}>
            <text fg={COLORS.accent}>{`◌ Working for ${formatDuration(clock() - (activeRun()?.startedAt ?? clock()))}  (Esc cancels)`}</text>
          </Show>
        </scrollbox>
      </Show>
      <Show when={props.state.popup}>
        <PopupView popup={props.state.popup!} pickerIndex={pickerIndex()} />
      </Show>
      <Show when={approval()}>
        <box border borderStyle="rounded" borderColor={COLORS.user} title="approval" flexDirection="column" paddingLeft={1} flexShrink={0}>
          <For each={approvalLines(approval()!, props.cwd)}>{(line: string) => <text>{line}</text>}</For>
        </box>
      </Show>
      <Show when={props.state.queue.items.length > 0}>
        <text fg={COLORS.dim}>{`${props.state.queue.items.length} queued · next: ${clean(props.state.queue.items[0]?.text.split("\n")[0] ?? "").slice(0, 60)}  (/queue)`}</text>
      </Show>
      <Show when={props.state.started}>{composerBox(false)}</Show>
      <box flexDirection="row" flexShrink={0} height={1}>
        <text fg={COLORS.dim} flexGrow={1}>
          {props.state.started ? status() : `context ${props.state.timeline.context ? formatTokens(props.state.timeline.context.tokens) : "0"} used`}
        </text>
        <text fg={COLORS.user}>{hint()}</text>
        <Show when={!props.state.started}>
          <text fg={COLORS.accent} onMouseDown={() => setHint("settings arrive in part 2 (for now edit zero-cli.jsonc)")}>
            {"  ⚙"}
          </text>
        </Show>
      </box>
    </box>
  );
}

function PopupView(props: { popup: NonNullable<TuiState["popup"]>; pickerIndex: number }) {
  const lines = (): string[] => {
    const popup = props.popup;
    if (popup.kind === "help") return popup.lines;
    if (popup.kind === "picker") return popup.options.map((option, index) => `${index === props.pickerIndex ? "›" : " "} ${option}${option === popup.current ? "  (current)" : ""}`);
    return ["the queue editor arrives in part 2"];
  };
  return (
    <box border borderStyle="rounded" borderColor={COLORS.accent} flexDirection="column" paddingLeft={1} flexShrink={0} title={props.popup.kind === "picker" ? `/${props.popup.command}` : props.popup.kind}>
      <For each={lines()}>{(line: string) => <text fg={line.startsWith("›") ? COLORS.accent : undefined}>{line}</text>}</For>
      <text fg={COLORS.dim}>{props.popup.kind === "picker" ? "Up/Down choose · Enter apply · Esc close" : "Esc closes"}</text>
    </box>
  );
}
