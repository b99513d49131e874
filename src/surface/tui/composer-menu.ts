/**
 * The composer's completion menus, as pure functions of its text and cursor: `/` at the start of
 * the text offers the commands (from the one registry), `@` at the start of a word offers the
 * workspace's files, `$` at the start of a word the root agent's skills (`$name` tells the model
 * to load that skill). Choosing an item replaces the word being typed; the view only draws the menu
 * and moves the selection.
 */
import { completeCommand } from "./commands.ts";
import { mentionedPaths, PARTIAL_MENTION } from "../../util/mentions.ts";

/** How many items a menu shows at once. */
export const MENU_ROWS = 8;

export type MenuItem = { label: string; detail: string; insert: string };

export type ComposerMenu = {
  kind: "command" | "file" | "skill";
  /** Where the word being completed starts (its `/` or `@`) and ends (the cursor). */
  start: number;
  end: number;
  items: MenuItem[];
};

/** A skill the root agent may load: its id and one-line description (already cleaned). */
export type SkillChoice = { id: string; description: string; provenance?: string; file?: string };

/** What the menus offer: undefined until listed (the view asks on first use). */
export type MenuSources = { files?: readonly string[]; skills?: readonly SkillChoice[] };

// At least one letter after `$`: a lone `$` at the end of a message ("costs $") is prose, and
// Enter must send it, not insert a skill.
const PARTIAL_SKILL = /(^|[\s([{,;])\$([\w.-]+)$/;

/** The menu the composer shows for this text and cursor, if any. */
export function menuFor(text: string, cursor: number, sources: MenuSources): ComposerMenu | undefined {
  const before = text.slice(0, cursor);
  const command = /^\/([\w-]*)$/.exec(before);
  if (command && !text.slice(cursor).includes("\n")) {
    const items = completeCommand(before).map((spec) => ({ label: `/${spec.name}`, detail: spec.args ? `${spec.args}  ${spec.description}` : spec.description, insert: `/${spec.name}` }));
    return items.length > 0 ? { kind: "command", start: 0, end: cursor, items } : undefined;
  }
  const skill = PARTIAL_SKILL.exec(before);
  if (skill && sources.skills) {
    const q = skill[2]!.toLowerCase();
    const items = sources.skills
      .filter((choice) => choice.id.toLowerCase().includes(q))
      .sort((a, b) => Number(!a.id.toLowerCase().startsWith(q)) - Number(!b.id.toLowerCase().startsWith(q)))
      .map((choice) => ({ label: `$${choice.id}`, detail: choice.description, insert: `$${choice.id}` }));
    return items.length > 0 ? { kind: "skill", start: cursor - skill[2]!.length - 1, end: cursor, items } : undefined;
  }
  // `@` that starts a word, then a plain path or an opened quote.
  const mention = PARTIAL_MENTION.exec(before);
  const files = sources.files;
  if (!mention || files === undefined) return undefined;
  const start = cursor - mention[2]!.length - 1;
  const query = mention[2]!.replace(/^"/, "");
  const items = matchFiles(files, query, 50).map((path) => ({ label: path, detail: "", insert: mentionFor(path) }));
  return items.length > 0 ? { kind: "file", start, end: cursor, items } : undefined;
}

/** Which listing the word at the cursor needs: `@` the files, `$` the skills. */
export function wants(text: string, cursor: number): "files" | "skills" | undefined {
  const before = text.slice(0, cursor);
  return PARTIAL_MENTION.test(before) ? "files" : PARTIAL_SKILL.test(before) ? "skills" : undefined;
}

/** The composer's text after choosing `item`: the word replaced, a space after it, the cursor there. */
export function applyChoice(text: string, menu: ComposerMenu, item: MenuItem): { text: string; cursor: number } {
  const rest = text.slice(menu.end);
  const spaced = rest.startsWith(" ") ? item.insert : `${item.insert} `;
  return { text: text.slice(0, menu.start) + spaced + rest, cursor: menu.start + item.insert.length + 1 };
}

/** The files a message mentions that are in the listing: shown above the composer as attachments. */
export function mentionedFiles(text: string, files: readonly string[] | undefined): string[] {
  if (!files || !text.includes("@")) return [];
  const listed = new Set(files);
  return mentionedPaths(text).filter((path) => listed.has(path));
}

/** The window of `count` items a menu shows so that `selected` is visible. */
export function menuWindow(count: number, selected: number, rows = MENU_ROWS): { from: number; to: number } {
  const from = Math.min(Math.max(0, selected - rows + 1), Math.max(0, count - rows));
  return { from, to: Math.min(count, from + rows) };
}

/**
 * The files that match what was typed after `@`, best first: the name starting with it, then the
 * name containing it, then the path containing it, then its letters in order. Case-insensitive.
 */
export function matchFiles(files: readonly string[], query: string, max = 50): string[] {
  const q = query.toLowerCase();
  if (q === "") return files.slice(0, max);
  // Runs on every keystroke over up to 20,000 paths: their lower-case forms are made once per
  // listing, and from the best buckets (name starts with, name contains, path contains, letters
  // in order) only the shortest `max` are picked, never the whole list sorted.
  const { lower, names } = lowerCased(files);
  const buckets: number[][] = [[], [], [], []];
  for (let i = 0; i < files.length; i++) {
    const name = names[i]!;
    const path = lower[i]!;
    const bucket = name.startsWith(q) ? 0 : name.includes(q) ? 1 : path.includes(q) ? 2 : inOrder(path, q) ? 3 : -1;
    if (bucket >= 0) buckets[bucket]!.push(i);
  }
  const best: string[] = [];
  for (const bucket of buckets) {
    if (best.length >= max) break;
    best.push(...shortestFirst(bucket.map((i) => files[i]!), max - best.length));
  }
  return best;
}

/** The `count` shortest paths (then by name), in order, without sorting all of them. */
function shortestFirst(paths: readonly string[], count: number): string[] {
  const before = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const kept: string[] = [];
  for (const path of paths) {
    if (kept.length === count && before(path, kept[count - 1]!) >= 0) continue;
    let at = kept.length;
    while (at > 0 && before(path, kept[at - 1]!) < 0) at--;
    kept.splice(at, 0, path);
    if (kept.length > count) kept.pop();
  }
  return kept;
}

const lowered = new WeakMap<readonly string[], { lower: string[]; names: string[] }>();

function lowerCased(files: readonly string[]): { lower: string[]; names: string[] } {
  let cached = lowered.get(files);
  if (!cached) {
    const lower = files.map((path) => path.toLowerCase());
    cached = { lower, names: lower.map((path) => path.slice(path.lastIndexOf("/") + 1)) };
    lowered.set(files, cached);
  }
  return cached;
}

function inOrder(text: string, letters: string): boolean {
  let at = 0;
  for (const letter of letters) {
    at = text.indexOf(letter, at);
    if (at === -1) return false;
    at += 1;
  }
  return true;
}

/** The mention the composer inserts for a file. */
export function mentionFor(path: string): string {
  return /[\s"]/.test(path) ? `@"${path.replace(/"/g, "")}"` : `@${path}`;
}
