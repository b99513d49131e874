/**
 * The TUI's colours, in one place. Three themes: `dark` and `light` palettes, and `none` for
 * NO_COLOR (https://no-color.org: set and non-empty → no colour at all; meaning is carried by
 * bold, dim, italic and underline instead). The active theme is a Solid signal, so every view that
 * reads `COLORS.x` (or `syntaxStyle()`) inside JSX follows a switch made after the first frame
 * (the terminal's background reported late, see start.tsx).
 *
 * Ordinary text uses the terminal's own foreground (`RGBA.defaultForeground()`, drawn as SGR 39),
 * never a fixed white or black, so it reads on any background.
 */
import { RGBA, SyntaxStyle, TextAttributes, type ColorInput, type StyleDefinitionInput } from "@opentui/core";
import { createSignal } from "solid-js";

export type ThemeName = "dark" | "light" | "none";

export type Palette = {
  /** Ordinary text: the terminal's foreground. */
  text: ColorInput;
  dim: ColorInput;
  accent: ColorInput;
  user: ColorInput;
  ok: ColorInput;
  error: ColorInput;
  reasoning: ColorInput;
  border: ColorInput;
  /** Diff lines: their text and the row behind them. */
  added: ColorInput;
  removed: ColorInput;
  addedBg: ColorInput;
  removedBg: ColorInput;
};

const TERMINAL_FG = RGBA.defaultForeground();
const NONE = "transparent";

const PALETTES: Record<ThemeName, Palette> = {
  dark: {
    text: TERMINAL_FG,
    dim: "#8a8a8a",
    accent: "#7aa2f7",
    user: "#e0af68",
    ok: "#9ece6a",
    error: "#f7768e",
    reasoning: "#737aa2",
    border: "#565f89",
    added: "#9ece6a",
    removed: "#f7768e",
    addedBg: "#1d3320",
    removedBg: "#3d1d24",
  },
  light: {
    text: TERMINAL_FG,
    dim: "#6e6e6e",
    accent: "#2e5cb8",
    user: "#8a5a00",
    ok: "#2d7a1f",
    error: "#c4204a",
    reasoning: "#5a5f8a",
    border: "#9aa0b8",
    added: "#2d7a1f",
    removed: "#c4204a",
    addedBg: "#dcf3d8",
    removedBg: "#fadede",
  },
  none: {
    text: TERMINAL_FG,
    dim: TERMINAL_FG,
    accent: TERMINAL_FG,
    user: TERMINAL_FG,
    ok: TERMINAL_FG,
    error: TERMINAL_FG,
    reasoning: TERMINAL_FG,
    border: TERMINAL_FG,
    added: TERMINAL_FG,
    removed: TERMINAL_FG,
    addedBg: NONE,
    removedBg: NONE,
  },
};

/**
 * The theme the environment asks for: NO_COLOR set and non-empty → `none`; else COLORFGBG
 * ("fg;bg" or "fg;x;bg", set by rxvt, Konsole and others) when its background is a light ANSI
 * colour (7 or 9–15) → `light`; else `dark`. The terminal's own answer (OSC 11) may refine
 * dark/light later (`themeForTerminal`).
 */
export function themeFromEnv(env: Record<string, string | undefined>): ThemeName {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return "none";
  const bg = env.COLORFGBG?.split(";").at(-1);
  if (bg !== undefined && /^\d+$/.test(bg)) {
    const index = Number(bg);
    if (index === 7 || (index >= 9 && index <= 15)) return "light";
  }
  return "dark";
}

/** The theme once the terminal reported its background; NO_COLOR always wins. */
export function themeForTerminal(current: ThemeName, mode: "dark" | "light" | null | undefined): ThemeName {
  if (current === "none" || !mode) return current;
  return mode;
}

const [active, setActive] = createSignal<ThemeName>("dark");

/** Sets the active theme (once before the first render, again if the terminal reports otherwise). */
export function setTheme(name: ThemeName): void {
  setActive(name);
}

export function themeName(): ThemeName {
  return active();
}

export function palette(): Palette {
  return PALETTES[active()];
}

/** True when colour is off (NO_COLOR): renderers then lean on attributes. */
export function monochrome(): boolean {
  return active() === "none";
}

/**
 * The colours by role, read through the active theme: `fg={COLORS.dim}` in JSX follows a theme
 * switch. The keys are the palette's.
 */
export const COLORS: Readonly<Palette> = Object.defineProperties(
  {} as Palette,
  Object.fromEntries(
    (Object.keys(PALETTES.dark) as (keyof Palette)[]).map((key) => [key, { enumerable: true, get: () => PALETTES[active()][key] }]),
  ),
);

/** Text attributes by role; with colour off, dim rows are drawn dim and headings bold. */
export const ATTRS = {
  get dim(): number {
    return monochrome() ? TextAttributes.DIM : 0;
  },
  get strong(): number {
    return TextAttributes.BOLD;
  },
};

/** Styles for tree-sitter captures (code) and the Markdown renderer's groups (markup.*). */
function syntaxStyles(name: ThemeName): Record<string, StyleDefinitionInput> {
  const p = PALETTES[name];
  const base: Record<string, StyleDefinitionInput> = {
    default: { fg: p.text },
    conceal: { fg: p.dim },
    // A dotted name falls back to its first segment only: every level is named.
    ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((level) => [`markup.heading.${level}`, { fg: p.accent, bold: true, ...(level === 1 ? { underline: true } : {}) }])),
    "markup.heading": { fg: p.accent, bold: true },
    "markup.strong": { bold: true },
    "markup.italic": { italic: true },
    "markup.strikethrough": { dim: true },
    "markup.quote": { fg: p.dim, italic: true },
    "markup.list": { fg: p.accent },
    "markup.link": { fg: p.accent, underline: true },
    "markup.link.url": { fg: p.dim, underline: true },
    "markup.link.label": { fg: p.accent, underline: true },
    "markup.raw": { fg: p.user },
    "markup.raw.block": { fg: p.text },
    comment: { fg: p.dim, italic: true },
  };
  if (name === "none") return { ...base, "markup.raw": { bold: true }, comment: { dim: true, italic: true }, keyword: { bold: true } };
  const code =
    name === "dark"
      ? { keyword: "#bb9af7", string: "#9ece6a", number: "#ff9e64", fn: "#7aa2f7", type: "#2ac3de", property: "#73daca", operator: "#89ddff", punctuation: "#9aa5ce" }
      : { keyword: "#7847bd", string: "#587539", number: "#b15c00", fn: "#2e7de9", type: "#007197", property: "#387068", operator: "#006a83", punctuation: "#6172b0" };
  return {
    ...base,
    keyword: { fg: code.keyword },
    string: { fg: code.string },
    "string.escape": { fg: code.operator },
    number: { fg: code.number },
    boolean: { fg: code.number },
    constant: { fg: code.number },
    "constant.builtin": { fg: code.number },
    function: { fg: code.fn },
    "function.call": { fg: code.fn },
    "function.method": { fg: code.fn },
    "function.method.call": { fg: code.fn },
    constructor: { fg: code.type },
    type: { fg: code.type },
    "type.builtin": { fg: code.type },
    property: { fg: code.property },
    "variable.member": { fg: code.property },
    "variable.builtin": { fg: code.keyword },
    operator: { fg: code.operator },
    punctuation: { fg: code.punctuation },
    "punctuation.special": { fg: code.operator },
  };
}

const styles = new Map<ThemeName, SyntaxStyle>();

/** The active theme's syntax style (one per theme for the process: they live in native memory). */
export function syntaxStyle(): SyntaxStyle {
  const name = active();
  let style = styles.get(name);
  if (!style) {
    style = SyntaxStyle.fromStyles(syntaxStyles(name));
    styles.set(name, style);
  }
  return style;
}
