/**
 * Reading a unified diff the way `git apply` will, to find every path it could touch before git
 * runs. Hunk bodies are skipped by their header counts (as git does), so a removed line that starts
 * with "--" is not mistaken for a file header; everything outside hunks that names a path is
 * collected. Where a header is ambiguous (spaces in unquoted names) every reading is collected, so
 * the check is never looser than git's interpretation.
 */

export type PatchPaths = {
  /** The -p level for git apply: 1 for a/ b/ prefixed patches, 0 for plain paths. */
  strip: 0 | 1;
  /** Paths relative to the workspace, after stripping, each to be checked. */
  paths: string[];
};

export type PatchInspection = { ok: true; value: PatchPaths } | { ok: false; error: string };

const DEV_NULL = "/dev/null";
const HUNK_HEADER = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const MODE_LINE = /^(?:old mode|new mode|deleted file mode|new file mode) ([0-7]+)\s*$/;
const INDEX_LINE = /^index [0-9a-fA-F]+\.\.[0-9a-fA-F]+(?: ([0-7]+))?\s*$/;
const EXACT_NAME_LINE = /^(rename from|rename to|rename old|rename new|copy from|copy to) (.*)$/;

const C_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", '"': '"', "\\": "\\" };

/**
 * Reads a C-style quoted name (git quotes names with special bytes) starting at `text[0] === '"'`.
 * Returns the name and the rest after the closing quote, or undefined when malformed.
 */
function unquote(text: string): { name: string; rest: string } | undefined {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 1; i < text.length; i++) {
    const char = text[i] ?? "";
    if (char === '"') {
      const name = new TextDecoder().decode(new Uint8Array(bytes));
      return { name, rest: text.slice(i + 1) };
    }
    if (char !== "\\") {
      bytes.push(...encoder.encode(char));
      continue;
    }
    const next = text[i + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(text.slice(i + 1, i + 4));
    if (octal !== null) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else if (C_ESCAPES[next] !== undefined) {
      bytes.push(...encoder.encode(C_ESCAPES[next]));
      i += 1;
    } else {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The readings of a `---`/`+++` name: a quoted name exactly; otherwise the text up to a tab (git
 * drops a trailing timestamp) and every prefix ending before a space (git may cut a name there).
 */
function headerNames(raw: string): string[] | undefined {
  if (raw.startsWith('"')) {
    const quoted = unquote(raw);
    return quoted === undefined ? undefined : [quoted.name];
  }
  const name = raw.split("\t")[0] ?? "";
  const readings = new Set([name, name.trimEnd()]);
  for (let index = name.indexOf(" "); index !== -1; index = name.indexOf(" ", index + 1)) readings.add(name.slice(0, index));
  return [...readings].filter((reading) => reading !== "");
}

/** Every way of splitting `diff --git <old> <new>` into two names. */
function gitHeaderNames(rest: string): string[][] | undefined {
  if (rest.startsWith('"')) {
    const first = unquote(rest);
    if (first === undefined) return undefined;
    const second = first.rest.trimStart();
    const other = second.startsWith('"') ? unquote(second)?.name : second;
    return other === undefined ? undefined : [[first.name, other]];
  }
  const splits: string[][] = [];
  for (let index = rest.indexOf(" "); index !== -1; index = rest.indexOf(" ", index + 1)) {
    const second = rest.slice(index + 1);
    const other = second.startsWith('"') ? unquote(second)?.name : second;
    if (other === undefined) return undefined;
    splits.push([rest.slice(0, index), other]);
  }
  return splits.length > 0 ? splits : undefined;
}

type Collected = { oldNames: string[]; newNames: string[]; gitSplits: string[][]; exactNames: string[]; headers: number };

/** The body lines of a patch's hunks, without their leading marker. */
export type PatchLines = { added: string[]; removed: string[]; context: string[] };

/** Walks the patch; returns the names it found or the reason it must be refused. `lines` receives the hunk bodies. */
function collect(patch: string, lines?: PatchLines): Collected | string {
  const collected: Collected = { oldNames: [], newNames: [], gitSplits: [], exactNames: [], headers: 0 };
  let oldLeft = 0;
  let newLeft = 0;
  for (const rawLine of patch.split("\n")) {
    if (oldLeft > 0 || newLeft > 0) {
      const marker = rawLine[0];
      if (marker === " " || rawLine === "" || rawLine === "\r") {
        lines?.context.push(rawLine.slice(1));
        oldLeft -= 1;
        newLeft -= 1;
        continue;
      }
      if (marker === "-") {
        lines?.removed.push(rawLine.slice(1));
        oldLeft -= 1;
        continue;
      }
      if (marker === "+") {
        lines?.added.push(rawLine.slice(1));
        newLeft -= 1;
        continue;
      }
      if (marker === "\\") continue;
      // Git refuses a hunk that ends early; read the line as a header so it is still checked.
      oldLeft = 0;
      newLeft = 0;
    }
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    const hunk = HUNK_HEADER.exec(line);
    if (hunk !== null) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      continue;
    }
    if (line.startsWith("--- ") || line.startsWith("+++ ")) {
      const names = headerNames(line.slice(4));
      if (names === undefined) return `malformed quoted file name in ${JSON.stringify(line)}`;
      (line.startsWith("---") ? collected.oldNames : collected.newNames).push(...names);
      collected.headers += 1;
      continue;
    }
    if (line.startsWith("diff --git ")) {
      const splits = gitHeaderNames(line.slice("diff --git ".length));
      if (splits === undefined) return `malformed file names in ${JSON.stringify(line)}`;
      collected.gitSplits.push(...splits);
      collected.headers += 1;
      continue;
    }
    const exact = EXACT_NAME_LINE.exec(line);
    if (exact !== null) {
      const value = exact[2] ?? "";
      const name = value.startsWith('"') ? unquote(value)?.name : value;
      if (name === undefined) return `malformed quoted file name in ${JSON.stringify(line)}`;
      collected.exactNames.push(name);
      continue;
    }
    const mode = MODE_LINE.exec(line)?.[1] ?? INDEX_LINE.exec(line)?.[1];
    if (mode === "120000") return "the patch creates or changes a symbolic link (mode 120000); symlinks cannot be written by patch";
    if (mode === "160000") return "the patch changes a submodule (mode 160000); submodules cannot be written by patch";
    if (line.startsWith("GIT binary patch") || (line.startsWith("Binary files ") && line.endsWith(" differ"))) {
      return "the patch contains a binary change; only text patches can be applied";
    }
  }
  return collected;
}

/**
 * Finds the strip level and every path the patch names. The patch uses git's a/ b/ prefixes when
 * every old name starts with "a/" and every new name with "b/" (/dev/null aside); then -p1 strips
 * them. Otherwise names are plain workspace-relative paths (-p0). Rename and copy lines carry no
 * prefix in either case.
 */
export function inspectPatch(patch: string): PatchInspection {
  if (patch.trim() === "") return { ok: false, error: "the patch is empty" };
  const collected = collect(patch);
  if (typeof collected === "string") return { ok: false, error: collected };
  if (collected.headers === 0) {
    return { ok: false, error: "no file headers found: a unified diff needs ---/+++ lines (or diff --git headers)" };
  }
  const olds = collected.oldNames.filter((name) => name !== DEV_NULL);
  const news = collected.newNames.filter((name) => name !== DEV_NULL);
  const gitPrefixed = collected.gitSplits.filter(([a, b]) => a?.startsWith("a/") && b?.startsWith("b/"));
  const prefixed =
    olds.every((name) => name.startsWith("a/")) &&
    news.every((name) => name.startsWith("b/")) &&
    (collected.gitSplits.length === 0 || gitPrefixed.length > 0) &&
    olds.length + news.length + gitPrefixed.length > 0;
  const strip = prefixed ? 1 : 0;
  // With prefixes, only the splits git could mean are kept; every one of them is still checked.
  const splits = prefixed ? gitPrefixed : collected.gitSplits;
  const stripName = (name: string) => (strip === 1 ? name.slice(2) : name);
  const paths = new Set<string>();
  for (const name of [...olds, ...news, ...splits.flat()]) paths.add(stripName(name));
  for (const name of collected.exactNames) paths.add(name);
  return { ok: true, value: { strip, paths: [...paths] } };
}

/** The added, removed and context lines of every hunk (empty lists for a patch that cannot be read). */
export function patchLines(patch: string): PatchLines {
  const lines: PatchLines = { added: [], removed: [], context: [] };
  return typeof collect(patch, lines) === "string" ? { added: [], removed: [], context: [] } : lines;
}
