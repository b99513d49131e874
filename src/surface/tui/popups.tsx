/**
 * The popups over the composer: `/help`, the pickers of `/model` (grouped by provider and
 * searchable by typing), `/reasoning`, `/speed`, `/depth`, `/workflow`, and the `/queue` editor.
 * Selection state lives in the app (it handles the keys); these only draw.
 */
import { For } from "solid-js";
import type { EffectiveConfig } from "../../config/schema.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import type { Popup } from "./controller.ts";
import type { QueuedMessage } from "./queue.ts";
import { ATTRS, COLORS } from "./theme.ts";

/** A picker's options after the typed filter, with provider headers for `/model`. */
export function pickerRows(popup: Extract<Popup, { kind: "picker" }>, filter: string, config: EffectiveConfig): { option?: string; header?: string; detail?: string }[] {
  const q = filter.toLowerCase();
  const describe = (option: string) => {
    const model = popup.command === "model" ? config.models[option] : undefined;
    return model ? `${model.profile ?? model.type}/${model.model}` : "";
  };
  const matching = popup.options.filter((option) => q === "" || option.toLowerCase().includes(q) || describe(option).toLowerCase().includes(q));
  if (popup.command !== "model") return matching.map((option) => ({ option }));
  const rows: { option?: string; header?: string; detail?: string }[] = [];
  const groups = new Map<string, string[]>();
  for (const option of matching) {
    const model = config.models[option];
    const provider = model ? (model.profile ?? model.type) : "";
    groups.set(provider, [...(groups.get(provider) ?? []), option]);
  }
  for (const [provider, options] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (provider !== "") rows.push({ header: provider });
    for (const option of options) rows.push({ option, detail: describe(option) });
  }
  return rows;
}

/** The options a picker's Up/Down move over (headers skipped), in shown order. */
export function pickerOptions(popup: Extract<Popup, { kind: "picker" }>, filter: string, config: EffectiveConfig): string[] {
  return pickerRows(popup, filter, config).flatMap((row) => (row.option !== undefined ? [row.option] : []));
}

type Role = "accent" | "dim" | "user";

export type PopupViewProps = {
  popup: Popup;
  config: EffectiveConfig;
  /** The picker's selected option and typed filter. */
  selected: string | undefined;
  filter: string;
  /** The queue editor's selected message and whether it is expanded. */
  queue: QueuedMessage[];
  queueIndex: number;
  expanded: boolean;
};

export function PopupView(props: PopupViewProps) {
  const title = () => {
    const popup = props.popup;
    return popup.kind === "picker" ? `/${popup.command}` : popup.kind === "queue" ? `/queue (${props.queue.length})` : popup.kind === "text" ? popup.title : "help";
  };
  const footer = () => {
    switch (props.popup.kind) {
      case "picker":
        return "type to filter · Up/Down choose · Enter apply · Esc close";
      case "queue":
        return "Up/Down select · Enter expand · E edit · D delete · Ctrl-Up/Ctrl-Down move · Esc close";
      default:
        return "Esc closes";
    }
  };
  const lines = (): { text: string; role?: Role }[] => {
    const popup = props.popup;
    if (popup.kind === "help") return popup.lines.map((text) => ({ text }));
    // Skill text comes from files: cleaned, and cut to a line's width.
    if (popup.kind === "text") return popup.lines.map((text) => ({ text: sanitizeForTerminal(text).slice(0, 200) }));
    if (popup.kind === "picker") {
      const rows = pickerRows(popup, props.filter, props.config);
      const shown = rows.map((row) =>
        row.header !== undefined
          ? { text: row.header, role: "dim" as const }
          : {
              text: `${row.option === props.selected ? "›" : " "} ${row.option}${row.detail ? `  ${row.detail}` : ""}${row.option === popup.current ? "  (current)" : ""}`,
              ...(row.option === props.selected ? { role: "accent" as const } : {}),
            },
      );
      return [...(props.filter ? [{ text: `filter: ${props.filter}`, role: "user" as const }] : []), ...(shown.length > 0 ? shown : [{ text: "  nothing matches", role: "dim" as const }])];
    }
    if (props.queue.length === 0) return [{ text: "  the queue is empty", role: "dim" as const }];
    return props.queue.flatMap((item, index) => {
      const active = index === props.queueIndex;
      const text = sanitizeForTerminal(item.text);
      const body = active && props.expanded ? text.split("\n").slice(0, 20) : [text.split("\n")[0]!.slice(0, 100) + (text.includes("\n") ? " …" : "")];
      return body.map((line, at) => ({ text: `${at === 0 ? (active ? "›" : " ") : " "} ${at === 0 ? `${index + 1}. ` : "   "}${line}`, ...(active ? { role: "accent" as const } : {}) }));
    });
  };
  return (
    <box border borderStyle="rounded" borderColor={COLORS.accent} flexDirection="column" paddingLeft={1} flexShrink={0} title={title()}>
      <For each={lines()}>{(line) => <text fg={line.role ? COLORS[line.role] : COLORS.text} attributes={line.role === "accent" ? ATTRS.strong : line.role === "dim" ? ATTRS.dim : 0}>{line.text}</text>}</For>
      <text fg={COLORS.dim} attributes={ATTRS.dim}>{footer()}</text>
    </box>
  );
}
