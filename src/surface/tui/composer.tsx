/**
 * The composer: a multi-line textarea with the `/` command, `@` file and `$` skill menus above it,
 * and the files its message mentions shown as attachments. The app routes keys here first
 * (`handleKey`), so a menu's arrows and Enter never reach the history or the send.
 */
import type { KeyEvent, TextareaRenderable } from "@opentui/core";
import { createMemo, createSignal, For, Show } from "solid-js";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { applyChoice, mentionedFiles, menuFor, menuWindow, wants, type ComposerMenu, type SkillChoice } from "./composer-menu.ts";
import { ATTRS, COLORS } from "./theme.ts";

/** Enter sends; Shift-Enter, Alt-Enter and Ctrl-J insert a newline. */
const COMPOSER_KEYS = [
  { name: "return", action: "submit" as const },
  { name: "kpenter", action: "submit" as const },
  { name: "return", shift: true, action: "newline" as const },
  { name: "return", meta: true, action: "newline" as const },
  { name: "linefeed", action: "newline" as const },
  { name: "j", ctrl: true, action: "newline" as const },
];

export type ComposerApi = {
  text(): string;
  setText(text: string): void;
  /** The cursor's line and the number of lines (history browsing happens at the edges). */
  lines(): { row: number; count: number };
  /** Keys for an open menu; true when the key was the menu's. */
  handleKey(key: KeyEvent): boolean;
};

export type ComposerProps = {
  compact: boolean;
  placeholder: string;
  /** Enter (the text is read through the api). */
  onSubmit: () => void;
  /** The workspace's files, listed on the first `@`. */
  listFiles: () => Promise<string[]>;
  /** The root agent's skills, listed on the first `$`. */
  listSkills: () => Promise<SkillChoice[]>;
  api: (api: ComposerApi) => void;
};

export function Composer(props: ComposerProps) {
  let area: TextareaRenderable | undefined;
  const [text, setTextSignal] = createSignal("");
  const [cursor, setCursor] = createSignal(0);
  const [files, setFiles] = createSignal<string[] | undefined>();
  const [skills, setSkills] = createSignal<SkillChoice[] | undefined>();
  const [selected, setSelected] = createSignal(0);
  // Esc closes a menu until the text changes.
  const [dismissed, setDismissed] = createSignal<string | undefined>();
  const listing = new Set<string>();

  const sync = () => {
    if (!area) return;
    const now = area.plainText;
    if (now !== text()) setSelected(0);
    setTextSignal(now);
    setCursor(area.cursorOffset);
    const wanted = wants(now, area.cursorOffset);
    if (wanted && !listing.has(wanted)) {
      listing.add(wanted);
      if (wanted === "files") void props.listFiles().then(setFiles);
      else void props.listSkills().then(setSkills);
    }
  };
  const menu = createMemo<ComposerMenu | undefined>(() => (dismissed() === text() ? undefined : menuFor(text(), cursor(), { files: files(), skills: skills() })));
  const attached = createMemo(() => mentionedFiles(text(), files()));

  const setText = (value: string, at = value.length) => {
    if (!area) return;
    area.setText(value);
    area.cursorOffset = at;
    setDismissed(undefined);
    sync();
  };

  const choose = (open: ComposerMenu): void => {
    const item = open.items[Math.min(selected(), open.items.length - 1)];
    if (!item) return;
    const next = applyChoice(text(), open, item);
    setText(next.text, next.cursor);
  };

  const handleKey = (key: KeyEvent): boolean => {
    const open = menu();
    if (!open || key.ctrl || key.meta) return false;
    switch (key.name) {
      case "up":
      case "down": {
        const count = open.items.length;
        setSelected((index) => (index + (key.name === "up" ? count - 1 : 1)) % count);
        return true;
      }
      case "tab":
        choose(open);
        return true;
      case "return":
        if (key.shift) return false;
        choose(open);
        // A command runs at once; a file is only inserted (the message goes on).
        if (open.kind === "command") props.onSubmit();
        return true;
      case "escape":
        setDismissed(text());
        return true;
      default:
        return false;
    }
  };

  props.api({
    text: () => area?.plainText ?? "",
    setText: (value) => setText(value),
    lines: () => ({ row: area?.logicalCursor.row ?? 0, count: area?.lineCount ?? 1 }),
    handleKey,
  });

  const shown = createMemo(() => {
    const open = menu();
    if (!open) return [];
    const { from, to } = menuWindow(open.items.length, selected());
    return open.items.slice(from, to).map((item, offset) => ({ ...item, active: from + offset === selected() }));
  });

  return (
    <box flexDirection="column" flexShrink={0}>
      <Show when={menu()}>
        <box border borderStyle="rounded" borderColor={COLORS.accent} flexDirection="column" paddingLeft={1} title={menu()!.kind === "command" ? "commands" : menu()!.kind === "skill" ? "skills" : "files"}>
          <For each={shown()}>
            {(item) => (
              <text fg={item.active ? COLORS.accent : COLORS.text} attributes={item.active ? ATTRS.strong : 0}>{`${item.active ? "›" : " "} ${sanitizeForTerminal(`${item.label}${item.detail ? `  ${item.detail}` : ""}`)}`.slice(0, 200)}</text>
            )}
          </For>
          <text fg={COLORS.dim} attributes={ATTRS.dim}>{`${menu()!.items.length} match${menu()!.items.length === 1 ? "" : "es"} · Up/Down · Tab or Enter ${menu()!.kind === "command" ? "runs" : "inserts"} · Esc`}</text>
        </box>
      </Show>
      <Show when={attached().length > 0}>
        <text fg={COLORS.dim} attributes={ATTRS.dim}>{`📎 ${attached().map((path) => sanitizeForTerminal(path)).join(", ")}`.slice(0, 300)}</text>
      </Show>
      <box border borderStyle="rounded" borderColor={COLORS.border} paddingLeft={1} paddingRight={1} minHeight={props.compact ? 4 : 3}>
        <textarea
          ref={(node: TextareaRenderable) => (area = node)}
          focused
          minHeight={props.compact ? 2 : 1}
          maxHeight={8}
          keyBindings={COMPOSER_KEYS}
          placeholder={props.placeholder}
          placeholderColor={COLORS.dim}
          textColor={COLORS.text}
          focusedTextColor={COLORS.text}
          onSubmit={props.onSubmit}
          onContentChange={sync}
          onCursorChange={sync}
        />
      </box>
    </box>
  );
}
