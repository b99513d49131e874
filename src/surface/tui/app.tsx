/**
 * The TUI's view: the start screen, the chat timeline, the composer, the approval prompt, the
 * popups and the status line, drawn with OpenTUI + Solid from a store of `TuiState`. Behaviour
 * lives in the controller (`actions`); this file maps keys to it and state to boxes.
 */
import type { KeyEvent, ScrollBoxRenderable } from "@opentui/core";
import { useKeyboard } from "@opentui/solid";
import { createEffect, createMemo, createSignal, For, onCleanup, Show, untrack } from "solid-js";
import type { EffectiveConfig } from "../../config/schema.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import type { Controller, TuiState, Update } from "./controller.ts";
import { newer, older } from "./history.ts";
import { Composer, type ComposerApi } from "./composer.tsx";
import { EntryRows } from "./entries.tsx";
import { PopupView, pickerOptions } from "./popups.tsx";
import { approvalLines, controls, formatTokens, statusLine } from "./presenters.ts";
import { ATTRS, COLORS } from "./theme.ts";
import { formatDuration, toggleRun, visibleRows } from "./timeline.ts";

export type TuiActions = Pick<Controller, "cancel" | "answer" | "choose" | "command" | "editQueued" | "deleteQueued" | "moveQueued" | "stopEditing" | "listFiles" | "listSkills"> & {
  /** "held": the screen is up before the runtime; the message is sent as soon as it is attached. */
  submit(text: string): ReturnType<Controller["submit"]> | "held";
};

export type AppProps = {
  state: TuiState;
  update: Update;
  actions: TuiActions;
  /** Undefined while the screen is up before the runtime (src/index.ts opens it first). */
  config: EffectiveConfig | undefined;
  /** The workspace, shown in the approval prompt. */
  cwd: string;
  /** Called once when the user leaves (two Ctrl-C, /quit); the caller destroys the renderer. */
  onExit: () => void;
  /** The clock of the "Working for …" timer (tests pin it). */
  now?: () => number;
  /** Milliseconds between timer ticks; 0 = no timer (tests). */
  tickMs?: number;
};

const clean = (text: string) => sanitizeForTerminal(text);

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export function App(props: AppProps) {
  const now = props.now ?? Date.now;
  const [clock, setClock] = createSignal(now());
  const [hint, setHint] = createSignal("");
  const [pickerIndex, setPickerIndex] = createSignal(0);
  const [pickerFilter, setPickerFilter] = createSignal("");
  // The /queue editor's selection, by message id: the list changes under it as runs take messages.
  const [queueSelected, setQueueSelected] = createSignal<number | undefined>();
  const queueIndex = () => {
    const items = props.state.queue.items;
    const at = items.findIndex((item) => item.id === queueSelected());
    return at === -1 ? 0 : at;
  };
  const setQueueIndex = (index: number) => setQueueSelected(props.state.queue.items[index]?.id);
  const [expanded, setExpanded] = createSignal(false);
  let composer: ComposerApi | undefined;
  let timeline: ScrollBoxRenderable | undefined;
  let lastCtrlC = 0;
  let hintTimer: ReturnType<typeof setTimeout> | undefined;
  let exited = false;
  onCleanup(() => clearTimeout(hintTimer));

  const exit = () => {
    if (exited) return;
    exited = true;
    props.onExit();
  };
  /** A hint in the footer; a passing one goes after a few seconds. */
  const say = (text: string, forMs = 0) => {
    clearTimeout(hintTimer);
    setHint(text);
    if (forMs > 0) hintTimer = setTimeout(() => setHint(""), forMs);
  };

  // The live timer and the spinner: they only tick while a run is active.
  createEffect(() => {
    const tick = props.tickMs ?? 120;
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
    setPickerFilter("");
    setExpanded(false);
    if (popup?.kind === "picker" && props.config) setPickerIndex(Math.max(0, pickerOptions(popup, "", props.config).indexOf(popup.current)));
    if (popup?.kind === "queue") untrack(() => setQueueIndex(0));
  });

  const rows = createMemo(() => visibleRows(props.state.timeline));
  const status = () =>
    !props.config
      ? "starting…"
      : statusLine(props.config, props.state.choices, {
      ...(props.state.timeline.context ? { context: props.state.timeline.context } : {}),
      costUsd: props.state.timeline.costUsd,
      queued: props.state.queue.items.length,
    });
  const approval = () => props.state.approvals[0];
  const activeRun = () => {
    const id = props.state.timeline.activeRunId;
    return id ? props.state.timeline.runs[id] : undefined;
  };
  /** "Thinking…" until the active run's answer starts streaming (and again after each tool). */
  const thinking = () => {
    const last = props.state.timeline.entries.at(-1);
    return !(last && last.kind === "assistant" && last.runId === props.state.timeline.activeRunId);
  };
  const picker = () => (props.state.popup?.kind === "picker" ? props.state.popup : undefined);
  const pickerChoices = () => (picker() && props.config ? pickerOptions(picker()!, pickerFilter(), props.config) : []);

  const submit = () => {
    const text = composer?.text() ?? "";
    const result = props.actions.submit(text);
    if (result === "full") return say("the queue is full: the message stays in the composer");
    if (result === "empty") return;
    if (result === "held") {
      composer?.setText("");
      return say("zero is starting: the message goes as soon as it is ready", 3000);
    }
    say(result === "queued" ? "queued: it runs when the active run ends" : result === "edited" ? "the queued message is updated" : "", 4000);
    composer?.setText("");
  };

  const toggleLastWorked = () => {
    const worked = [...rows()].reverse().find((row) => row.kind === "worked");
    if (worked && worked.kind === "worked") props.update((state) => toggleRun(state.timeline, worked.run.runId));
  };

  /** Ctrl-Up / Ctrl-Down outside the queue editor: the previous or next of the user's prompts. */
  const jumpToPrompt = (direction: -1 | 1) => {
    if (!timeline) return;
    const children = timeline.content.getChildren();
    const top = timeline.scrollTop;
    const offsets = rows().flatMap((row, index) => (row.kind === "entry" && row.entry.kind === "user" && children[index] ? [children[index]!.y - timeline!.content.y] : []));
    // A prompt within a line of the top is the one in view: go past it.
    const target = direction < 0 ? offsets.filter((offset) => offset < top - 1).at(-1) : offsets.find((offset) => offset > top + 1);
    if (target !== undefined) timeline.scrollTo(target);
    else if (direction > 0) timeline.scrollTo(timeline.scrollHeight);
    timeline.requestRender();
  };

  const popupKey = (key: KeyEvent, popup: NonNullable<TuiState["popup"]>): void => {
    if (key.name === "escape") return props.update((state) => void delete state.popup);
    if (popup.kind === "picker") {
      const options = pickerChoices();
      if (key.name === "up" || key.name === "down") {
        if (options.length > 0) setPickerIndex((index) => (index + (key.name === "up" ? options.length - 1 : 1)) % options.length);
      } else if (key.name === "return") {
        const choice = options[Math.min(pickerIndex(), options.length - 1)];
        props.update((state) => void delete state.popup);
        if (choice !== undefined) props.actions.choose(popup.command as Parameters<TuiActions["choose"]>[0], choice);
      } else if (key.name === "backspace") {
        setPickerFilter((filter) => filter.slice(0, -1));
        setPickerIndex(0);
      } else if (key.sequence.length === 1 && key.sequence >= " " && !key.ctrl && !key.meta) {
        setPickerFilter((filter) => (filter + key.sequence).slice(0, 40));
        setPickerIndex(0);
      }
      return;
    }
    if (popup.kind === "queue") {
      const items = props.state.queue.items;
      const index = queueIndex();
      const item = items[index];
      if ((key.name === "up" || key.name === "down") && (key.ctrl || key.meta)) {
        // The selection follows the message (it is selected by id).
        if (item) props.actions.moveQueued(item.id, key.name === "up" ? -1 : 1);
      } else if (key.name === "up" || key.name === "down") {
        if (items.length > 0) setQueueIndex((index + (key.name === "up" ? items.length - 1 : 1)) % items.length);
        setExpanded(false);
      } else if (key.name === "return") {
        setExpanded((open) => !open);
      } else if (key.name === "d" && item) {
        // The next one (or the one before, at the end) is selected after it goes.
        setQueueSelected((items[index + 1] ?? items[index - 1])?.id);
        props.actions.deleteQueued(item.id);
      } else if (key.name === "e" && item) {
        const text = props.actions.editQueued(item.id);
        props.update((state) => void delete state.popup);
        if (text !== undefined) {
          composer?.setText(text);
          say("editing a queued message: Enter puts it back in its place, Ctrl-C leaves it as it was");
        }
      }
    }
    // help: every other key is the popup's (Enter must not send the composer's text).
  };

  const handleKey = (key: KeyEvent) => {
    const consume = () => key.preventDefault();
    // Ctrl-C: clear the composer (and leave editing a queued message); twice within a second: leave.
    if (key.ctrl && key.name === "c") {
      consume();
      const at = now();
      if (at - lastCtrlC < 1000) return exit();
      lastCtrlC = at;
      composer?.setText("");
      if (props.state.editing !== undefined) props.actions.stopEditing();
      say("press Ctrl-C again to quit", 1000);
      return;
    }
    // An open popup has every key (a letter typed to filter a picker must never answer an
    // approval); Esc closes it, and then the approval can be answered.
    const popup = props.state.popup;
    if (popup) {
      consume();
      return popupKey(key, popup);
    }
    const pending = approval();
    // Y/A/N answer only while the composer is empty: a letter typed mid-message (a queued one)
    // must never become "allow for the session". Esc always denies.
    if (pending && (key.name === "escape" || (composer?.text() ?? "") === "")) {
      const answer = key.name === "y" ? "once" : key.name === "a" ? "always" : key.name === "n" || key.name === "escape" ? "deny" : undefined;
      if (answer && !key.ctrl && !key.meta) {
        consume();
        props.actions.answer(answer);
      }
      return;
    }
    if (pending) say("an approval waits: empty the composer (Ctrl-C) to answer with Y / A / N, or Esc to deny", 4000);
    if (composer?.handleKey(key)) return consume();
    if (key.name === "escape") {
      consume();
      if (props.actions.cancel()) say("cancelled", 3000);
      return;
    }
    if (key.ctrl && key.name === "o") {
      consume();
      return toggleLastWorked();
    }
    if (key.ctrl && key.name === "l") {
      consume();
      return props.actions.command("clear");
    }
    if (key.name === "pageup" || key.name === "pagedown") {
      consume();
      timeline?.scrollBy((key.name === "pageup" ? -1 : 1) * Math.max(1, (timeline?.height ?? 10) - 2));
      timeline?.requestRender();
      return;
    }
    if ((key.name === "up" || key.name === "down") && (key.ctrl || key.meta)) {
      consume();
      return jumpToPrompt(key.name === "up" ? -1 : 1);
    }
    // History at the edges of the composer.
    if ((key.name === "up" || key.name === "down") && !key.shift && composer) {
      const { row, count } = composer.lines();
      let text: string | undefined;
      if (key.name === "up" && row === 0) {
        const current = composer.text();
        props.update((state) => void (text = older(state.history, current)));
      } else if (key.name === "down" && row === Math.max(0, count - 1)) {
        props.update((state) => void (text = newer(state.history)));
      }
      if (text !== undefined) {
        consume();
        composer.setText(text);
      }
    }
  };
  useKeyboard(handleKey);

  const composerView = (compact: boolean) => (
    <Composer
      compact={compact}
      placeholder={props.state.editing !== undefined ? "editing a queued message (Enter puts it back)" : props.state.running ? "queue a message for after this run…" : "Ask zero to do something…  (/ commands · @ files · $ skills)"}
      onSubmit={submit}
      listFiles={props.actions.listFiles}
      listSkills={props.actions.listSkills}
      api={(api) => (composer = api)}
    />
  );

  return (
    <box flexDirection="column" width="100%" height="100%" paddingLeft={1} paddingRight={1}>
      <Show
        when={props.state.started}
        fallback={
          // The start screen.
          <box flexDirection="column" flexGrow={1} alignItems="center" justifyContent="center">
            <ascii_font text="ZERO" font="tiny" color={COLORS.accent} />
            <text fg={COLORS.dim} attributes={ATTRS.dim}>a multi-agent coding agent</text>
            <box width="80%" maxWidth={100} minWidth={30} flexDirection="column" marginTop={1}>
              {composerView(true)}
              <box flexDirection="row" flexShrink={0}>
                <text fg={COLORS.dim} attributes={ATTRS.dim}>{props.config ? `${props.config.defaultAgent} · ` : "starting…"}</text>
                <For each={props.config ? controls(props.config, props.state.choices) : []}>
                  {(control, index) => (
                    <text fg={COLORS.dim} attributes={ATTRS.dim} onMouseDown={() => props.actions.command(control.command)}>
                      {`${index() > 0 ? " · " : ""}${clean(control.text)}`}
                    </text>
                  )}
                </For>
              </box>
            </box>
          </box>
        }
      >
        <scrollbox ref={(node: ScrollBoxRenderable) => (timeline = node)} flexGrow={1} stickyScroll stickyStart="bottom">
          <EntryRows rows={rows()} activeRunId={props.state.timeline.activeRunId ?? null} onToggleRun={(runId) => props.update((state) => toggleRun(state.timeline, runId))} />
          <Show when={props.state.running && activeRun()}>
            <text fg={COLORS.accent}>{`${SPINNER[Math.floor(clock() / 120) % SPINNER.length]} ${thinking() ? "Thinking… · " : ""}Working for ${formatDuration(clock() - (activeRun()?.startedAt ?? clock()))}  (Esc cancels)`}</text>
          </Show>
        </scrollbox>
      </Show>
      <Show when={props.state.popup && props.config}>
        <PopupView popup={props.state.popup!} config={props.config!} selected={pickerChoices()[pickerIndex()]} filter={pickerFilter()} queue={props.state.queue.items} queueIndex={queueIndex()} expanded={expanded()} />
      </Show>
      <Show when={approval()}>
        <box border borderStyle="rounded" borderColor={COLORS.user} title="approval" flexDirection="column" paddingLeft={1} flexShrink={0}>
          <For each={approvalLines(approval()!, props.cwd)}>{(line: string) => <text fg={COLORS.text}>{line}</text>}</For>
        </box>
      </Show>
      <Show when={props.state.queue.items.length > 0}>
        <text fg={COLORS.dim} attributes={ATTRS.dim} onMouseDown={() => props.actions.command("queue")}>{`${props.state.queue.items.length} queued · next: ${clean(props.state.queue.items[0]?.text.split("\n")[0] ?? "").slice(0, 60)}  (/queue to edit)`}</text>
      </Show>
      <Show when={props.state.started}>{composerView(false)}</Show>
      <box flexDirection="row" flexShrink={0} height={1}>
        <text fg={COLORS.dim} attributes={ATTRS.dim} flexGrow={1}>
          {props.state.started ? status() : `context ${props.state.timeline.context ? formatTokens(props.state.timeline.context.tokens) : "0"} used`}
        </text>
        <text fg={COLORS.user}>{hint()}</text>
        <Show when={!props.state.started}>
          <text fg={COLORS.accent} onMouseDown={() => say("settings arrive in part 2 (for now edit zero-cli.jsonc)", 4000)}>
            {"  ⚙"}
          </text>
        </Show>
      </box>
    </box>
  );
}
