/**
 * The YAML frontmatter of a SKILL.md, read strictly. A package's `name` and `description` must
 * mean the same thing to every YAML reader (Codex's included), so this is not a YAML parser but a
 * small checker of one unambiguous subset:
 *
 * - the file starts with a `---` line (a UTF-8 BOM before it is allowed), the frontmatter ends at
 *   the next `---` line; LF or CRLF line ends, never a lone CR;
 * - every line at column 0 is a top-level `key: value` with a plain key; indented lines continue
 *   the key above them; no tabs in indentation, no document markers (`...`), no directives;
 * - each key appears once; `name` and `description` must both be there;
 * - `name` and `description` are text: a plain scalar (one or more lines), a single- or
 *   double-quoted string closed on its own line, or a literal/folded block (`|`, `>`, with `-`/`+`);
 *   never an anchor, alias, tag, list, mapping, or a plain value YAML would read as a null,
 *   boolean or number;
 * - other keys (`license`, `metadata`, `allowed-tools`, …) are ignored, but they may not hold
 *   anchors, aliases, tags or merge keys, and a quoted or flow value must close on its line.
 *
 * Both values are folded to one line (runs of whitespace become one space), as Codex does.
 */
import { isInvisibleCodePoint } from "../security/terminal.ts";

export type Frontmatter = { name: string; description: string };

export class FrontmatterError extends Error {
  override readonly name = "FrontmatterError";
}

const KEY_LINE = /^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?:[ \t]+(.*)|[ \t]*)$/;
const BLOCK_HEADER = /^([|>])([+-]?)[ \t]*(?:#.*)?$/;
/** Plain values YAML 1.1 or 1.2 resolves to something other than a string. */
const NOT_TEXT = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N)$/;
const NUMBER = /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|\.(?:inf|Inf|INF)|[0-9]+(?::[0-5]?[0-9])+(?:\.[0-9]*)?)$|^\.(?:nan|NaN|NAN)$/;
/** An anchor, alias or tag where a YAML node starts (quoted text removed first). */
const NODE_PROPERTY = /(?:^|:[ \t]+|-[ \t]+|\?[ \t]+|[[{,][ \t]*)[&*!]/;

type Entry = { key: string; line: number; first: string; rest: Array<{ text: string; line: number }> };

/** Parses the frontmatter of a whole SKILL.md text; throws FrontmatterError with the reason. */
export function parseFrontmatter(text: string): Frontmatter {
  const lines = frontmatterLines(text);
  const entries = new Map<string, Entry>();
  let current: Entry | undefined;
  for (const [index, raw] of lines.entries()) {
    const line = index + 2; // 1-based, after the opening `---`
    if (/^[ ]*\t/.test(raw)) throw new FrontmatterError(`line ${line}: a tab in the indentation`);
    if (/^[ \t]/.test(raw) || raw === "") {
      if (current === undefined) {
        if (raw.trim() === "" || raw.trim().startsWith("#")) continue;
        throw new FrontmatterError(`line ${line}: an indented line that belongs to no key`);
      }
      current.rest.push({ text: raw, line });
      continue;
    }
    if (raw.startsWith("#")) {
      current = undefined;
      continue;
    }
    if (raw.startsWith("...")) throw new FrontmatterError(`line ${line}: a YAML document marker inside the frontmatter`);
    if (/^<<[ \t]*:/.test(raw)) throw new FrontmatterError(`line ${line}: merge keys are not allowed`);
    const match = KEY_LINE.exec(raw);
    if (!match) throw new FrontmatterError(`line ${line}: expected "key: value" with a plain key`);
    const key = match[1]!;
    if (entries.has(key)) throw new FrontmatterError(`line ${line}: duplicate key "${key}"`);
    current = { key, line, first: (match[2] ?? "").trimEnd(), rest: [] };
    entries.set(key, current);
  }
  for (const entry of entries.values()) if (entry.key !== "name" && entry.key !== "description") checkIgnored(entry);
  const name = entries.get("name");
  const description = entries.get("description");
  if (name === undefined) throw new FrontmatterError('missing "name"');
  if (description === undefined) throw new FrontmatterError('missing "description"');
  return { name: textValue(name), description: textValue(description) };
}

/** The lines between the opening and the closing `---`. */
function frontmatterLines(text: string): string[] {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  // Line by line up to the closing marker: the Markdown body is never split or scanned.
  const lines: string[] = [];
  let offset = start;
  for (;;) {
    if (offset >= text.length && lines.length > 0) break;
    const newline = text.indexOf("\n", offset);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(offset, end > offset && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
    if (line.includes("\r")) throw new FrontmatterError("a carriage return that does not end a line (CRLF or LF line ends only)");
    if (lines.length === 0 && line.trimEnd() !== "---") throw new FrontmatterError('no YAML frontmatter: the file must start with a "---" line');
    if (lines.length > 0 && line.trimEnd() === "---") return lines.slice(1);
    lines.push(line);
    if (newline === -1) break;
    offset = newline + 1;
  }
  throw new FrontmatterError('the frontmatter has no closing "---" line');
}

/** The value of `name` or `description` as one line of text. */
function textValue(entry: Entry): string {
  const { key, first, rest } = entry;
  const where = `"${key}" (line ${entry.line})`;
  let value: string;
  if (first === "" || first.startsWith("#")) value = plainLines(rest, where);
  else if (first.startsWith('"') || first.startsWith("'")) {
    value = quoted(first, where);
    onlyBlankOrComments(rest, where);
  } else if (first.startsWith("|") || first.startsWith(">")) value = block(first, rest, where);
  else value = plain(first, rest, where);
  const unsafe = unsafeCharacter(value);
  if (unsafe !== undefined) throw new FrontmatterError(`${where} contains the unsafe character ${unsafe}`);
  return value.split(/\s+/).filter((word) => word !== "").join(" ");
}

/** A plain value on the key's line, possibly continued on indented lines. */
function plain(first: string, rest: Entry["rest"], where: string): string {
  const parts = [plainPart(first, where)];
  for (const { text } of rest) {
    const trimmed = text.trim();
    if (trimmed === "") continue;
    if (trimmed.startsWith("#")) throw new FrontmatterError(`${where}: a comment inside a plain value; quote the value`);
    parts.push(plainPart(trimmed, where));
  }
  const value = parts.join(" ");
  if (parts.length === 1 && (NOT_TEXT.test(value) || NUMBER.test(value))) {
    throw new FrontmatterError(`${where}: YAML reads ${JSON.stringify(value)} as a ${NOT_TEXT.test(value) ? "null or boolean" : "number"}, not text; quote it`);
  }
  return value;
}

/** The value only on the lines below the key (`description:` then indented text). */
function plainLines(rest: Entry["rest"], where: string): string {
  const lines = rest.filter(({ text }) => text.trim() !== "" && !text.trim().startsWith("#"));
  if (lines.length === 0) throw new FrontmatterError(`${where} is empty`);
  const [head, ...tail] = lines;
  return plain(head!.text.trim(), tail, where);
}

/** One line of a plain scalar: no indicator at its start, no ": " or " #" inside. */
function plainPart(text: string, where: string): string {
  const head = text[0]!;
  if ("&*!".includes(head)) throw new FrontmatterError(`${where}: anchors, aliases and tags are not allowed`);
  if ("[{".includes(head)) throw new FrontmatterError(`${where} must be text, not a list or a mapping`);
  if (/^[-?:](?:[ \t]|$)/.test(text)) throw new FrontmatterError(`${where} must be text, not a list or a mapping`);
  if ("|>'\"".includes(head)) throw new FrontmatterError(`${where}: a quote or block indicator inside a plain value; quote the whole value`);
  if (",%@`".includes(head)) throw new FrontmatterError(`${where} starts with the reserved character ${JSON.stringify(head)}; quote the value`);
  const comment = text.search(/[ \t]#/);
  const value = (comment === -1 ? text : text.slice(0, comment)).trimEnd();
  if (/:(?:[ \t]|$)/.test(value)) throw new FrontmatterError(`${where} contains ": ", which YAML reads as a mapping; quote the value`);
  return value;
}

/** A single- or double-quoted string that closes on its line (a comment may follow). */
function quoted(first: string, where: string): string {
  const quote = first[0]!;
  let out = "";
  let index = 1;
  for (;;) {
    if (index >= first.length) throw new FrontmatterError(`${where}: a quoted value must close on its own line`);
    const char = first[index]!;
    if (char === quote) {
      if (quote === "'" && first[index + 1] === "'") {
        out += "'";
        index += 2;
        continue;
      }
      break;
    }
    if (quote === '"' && char === "\\") {
      const [decoded, length] = escape(first, index, where);
      out += decoded;
      index += length;
      continue;
    }
    out += char;
    index += 1;
  }
  const after = first.slice(index + 1).trim();
  if (after !== "" && !after.startsWith("#")) throw new FrontmatterError(`${where}: text after the closing quote`);
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "0": "\0", a: "\x07", b: "\b", t: "\t", "\t": "\t", n: "\n", v: "\v", f: "\f", r: "\r", e: "\x1b",
  " ": " ", '"': '"', "/": "/", "\\": "\\", N: "\x85", _: "\xa0", L: "\u2028", P: "\u2029",
};

/** One escape of a double-quoted string at `index` (the backslash): its text and length. */
function escape(text: string, index: number, where: string): [string, number] {
  const code = text[index + 1];
  if (code !== undefined && Object.hasOwn(SIMPLE_ESCAPES, code)) return [SIMPLE_ESCAPES[code]!, 2];
  const digits = code === "x" ? 2 : code === "u" ? 4 : code === "U" ? 8 : 0;
  const hex = text.slice(index + 2, index + 2 + digits);
  if (digits === 0 || !new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) {
    throw new FrontmatterError(`${where}: an invalid escape ${JSON.stringify(text.slice(index, index + 2))}`);
  }
  const point = Number.parseInt(hex, 16);
  if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) throw new FrontmatterError(`${where}: an escape of no Unicode character`);
  return [String.fromCodePoint(point), 2 + digits];
}

/** A literal or folded block: every content line indented at least as far as its first one. */
function block(first: string, rest: Entry["rest"], where: string): string {
  if (!BLOCK_HEADER.test(first)) throw new FrontmatterError(`${where}: only "|" or ">" (optionally with "-" or "+") may start a block; no indentation digits`);
  const content = rest.filter(({ text }) => text.trim() !== "");
  if (content.length === 0) throw new FrontmatterError(`${where} is empty`);
  const indent = content[0]!.text.length - content[0]!.text.trimStart().length;
  for (const { text, line } of content) {
    if (text.length - text.trimStart().length < indent) throw new FrontmatterError(`${where}: line ${line} is indented less than the block's first line`);
  }
  return content.map(({ text }) => text.slice(indent)).join("\n");
}

function onlyBlankOrComments(rest: Entry["rest"], where: string): void {
  const extra = rest.find(({ text }) => text.trim() !== "" && !text.trim().startsWith("#"));
  if (extra !== undefined) throw new FrontmatterError(`${where}: line ${extra.line} continues a quoted value; keep it on one line`);
}

/** Keys zero does not read: still no anchors, aliases, tags, or quoted/flow values left open across lines. */
function checkIgnored(entry: Entry): void {
  const where = `"${entry.key}" (line ${entry.line})`;
  for (const text of [entry.first, ...entry.rest.map((line) => line.text.trim())]) {
    if (text === "" || text.startsWith("#")) continue;
    const unquoted = stripQuoted(text, where);
    if (NODE_PROPERTY.test(unquoted)) throw new FrontmatterError(`${where}: anchors, aliases and tags are not allowed`);
    if (/(?:^|[ \t])<<[ \t]*:/.test(unquoted)) throw new FrontmatterError(`${where}: merge keys are not allowed`);
    if (/^[[{]/.test(unquoted) && !balancedFlow(unquoted)) throw new FrontmatterError(`${where}: a list or mapping must close on its line`);
  }
}

/** The text with every quoted string removed; throws when a quote is left open. */
function stripQuoted(text: string, where: string): string {
  let out = "";
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const startsQuote = (char === '"' || char === "'") && (index === 0 || /[\s[{,:-]/.test(text[index - 1]!));
    if (!startsQuote) {
      out += char;
      index += 1;
      continue;
    }
    let end = index + 1;
    while (end < text.length) {
      if (char === '"' && text[end] === "\\") end += 2;
      else if (text[end] === char && char === "'" && text[end + 1] === "'") end += 2;
      else if (text[end] === char) break;
      else end += 1;
    }
    if (end >= text.length) throw new FrontmatterError(`${where}: a quoted value must close on its own line`);
    out += '""';
    index = end + 1;
  }
  return out;
}

function balancedFlow(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === "[" || char === "{") depth += 1;
    else if (char === "]" || char === "}") depth -= 1;
  }
  return depth === 0;
}

/**
 * The first character that must not be in a skill's name, description or path, shown escaped: a
 * control character (in text, tab and newline aside: block values have them), DEL, a C1 control,
 * or an invisible/format character such as a bidi override or a zero-width space.
 */
export function unsafeCharacter(text: string, allowTabAndNewline = true): string | undefined {
  for (const char of text) {
    const point = char.codePointAt(0)!;
    const allowed = allowTabAndNewline && (point === 0x09 || point === 0x0a);
    const control = (point < 0x20 && !allowed) || (point >= 0x7f && point <= 0x9f);
    if (control || isInvisibleCodePoint(point)) return `U+${point.toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return undefined;
}
