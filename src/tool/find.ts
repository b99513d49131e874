import { statSync } from "node:fs";
import { dirname, relative, sep } from "node:path";
import { z } from "zod";
import { SECRET_FILE_GLOBS, isSecretLikePath } from "../policy/secret-paths.ts";
import { displayPath, isPrivatePath, resolveInRoots } from "../security/roots.ts";
import { isWithin } from "../util/paths.ts";
import { defineTool, type ToolContext } from "./define.ts";
import { pathTarget } from "./targets.ts";
import { SYMBOL_LANGUAGES, type SymbolSearch, symbolNameError, symbolSearch } from "./find-symbol.ts";

/** Never listed or searched, whatever the model's globs or path say: VCS internals, zero's state, dependencies. */
export const HIDDEN_DIRS: readonly string[] = [".git", ".zero-cli", ".devout", "node_modules"];

const DEFAULT_MAX_RESULTS = 100;
/** A matched line longer than this is clipped (minified code would otherwise flood the result). */
const MAX_LINE_CHARS = 400;
/** The shown result stays under the contract's bound, so it is never cut in the middle of a line. */
const SHOWN_CHARS = 40_000;
/** The full listing kept for the artifact; past it ripgrep is stopped and the result says so. */
const COLLECT_CHARS = 8 * 1024 * 1024;
const MAX_FILESIZE = "16M";
const STDERR_CHARS = 2_000;

const input = z
  .object({
    pattern: z
      .string()
      .min(1)
      .optional()
      .describe("Regex (ripgrep syntax); in files mode a glob on file paths, e.g. **/*.test.ts. Not used in symbol mode"),
    mode: z
      .enum(["content", "files", "symbol"])
      .optional()
      .describe("content (default): search file text; files: list matching paths; symbol: where name is defined (the default when name is given)"),
    name: z
      .string()
      .min(1)
      .optional()
      .describe("Symbol mode: an identifier; finds the lines defining it (functions, methods, classes, types, interfaces, enums, constants) in common languages, not its uses"),
    path: z.string().min(1).optional().describe("Directory or file to search (default: the workspace)"),
    glob: z
      .union([z.string().min(1), z.array(z.string().min(1)).max(20)])
      .optional()
      .describe("Only search files matching these globs, e.g. *.ts"),
    fixed: z.boolean().optional().describe("Treat pattern as a literal string"),
    ignoreCase: z.boolean().optional(),
    context: z.number().int().min(0).max(10).optional().describe("Lines of context around each match"),
    maxResults: z.number().int().min(1).max(500).optional().describe(`Most matches or files shown (default ${DEFAULT_MAX_RESULTS})`),
  })
  .strict();

type FindInput = z.infer<typeof input>;
/** What ripgrep is asked for: the model's request, with the definition search in symbol mode. */
type Search = FindInput & { symbol?: SymbolSearch };

type Line = { number: number; text: string; match: boolean };
/** What one ripgrep run produced: paths are absolute; `lines` is empty in files mode. */
type Collected = {
  files: Map<string, Line[]>;
  matches: number;
  /** ripgrep was stopped because the listing reached COLLECT_CHARS. */
  stoppedEarly: boolean;
  /** Content mode: ripgrep finished its search (a `summary` message), so exit code 2 means partial errors. */
  searched: boolean;
  exitCode: number | null;
  stderr: string;
};

/** Escapes a literal path for a gitignore-style glob. */
function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]{}]/g, "\\$&");
}

/**
 * The argument list for ripgrep. Every value the model supplies is one `--flag=value` token, so
 * a pattern or glob starting with `-` can never become a flag. Our exclusions use `--iglob`,
 * which ripgrep adds after every `--glob`, and a later glob wins: a model include glob can
 * never re-include a hidden or secret-like path.
 */
export function ripgrepArgs(request: Search, target: string, privateGlobs: readonly string[]): string[] {
  const args = ["--no-config", "--no-require-git", "--hidden", "--no-follow", "--color=never", `--max-filesize=${MAX_FILESIZE}`];
  if (request.symbol) {
    // Only files of the supported languages. A model include glob overrides a type in ripgrep, so
    // with one the file's language is checked again per line (isDefinition knows no other files).
    args.push("--json", "--case-sensitive", `--regexp=${request.symbol.regexp}`);
    args.push(...request.symbol.globs.map((glob) => `--type-add=zerosymbol:${glob}`), "--type=zerosymbol");
  } else if (request.mode === "files") {
    args.push("--files", "--null", `--glob=${request.pattern}`);
    if (request.ignoreCase) args.push("--glob-case-insensitive");
  } else {
    args.push("--json", `--regexp=${request.pattern}`);
    if (request.fixed) args.push("--fixed-strings");
    args.push(request.ignoreCase ? "--ignore-case" : "--case-sensitive");
    if (request.context) args.push(`--context=${request.context}`);
  }
  const globs = request.glob === undefined ? [] : typeof request.glob === "string" ? [request.glob] : request.glob;
  for (const glob of globs) args.push(`--glob=${glob}`);
  for (const glob of [...HIDDEN_DIRS, ...SECRET_FILE_GLOBS, ...privateGlobs]) args.push(`--iglob=!${glob}`);
  args.push("--", target);
  return args;
}

/** True when a path found under `target` must not be shown (belt and braces over the globs). */
function isHidden(ctx: ToolContext, target: string, path: string): boolean {
  if (isSecretLikePath(path) || isPrivatePath(ctx.roots, path)) return true;
  const inside = path.startsWith(`${target}${sep}`) ? path.slice(target.length + 1) : relative(target, path);
  return inside.split(sep).some((part) => HIDDEN_DIRS.includes(part.toLowerCase()));
}

type RgText = { text?: string; bytes?: string };
type RgMessage = { type: string; data: { path?: RgText; lines?: RgText; line_number?: number } };

function rgText(value: RgText | undefined): string {
  if (value?.text !== undefined) return value.text;
  if (value?.bytes !== undefined) return new TextDecoder().decode(Buffer.from(value.bytes, "base64"));
  return "";
}

/** Raw line text kept a little past the clip, so the redactor sees a token at the clip whole. */
function keepLine(raw: string): string {
  return raw.replace(/\r?\n$/, "").slice(0, MAX_LINE_CHARS + 1024);
}

function clipLine(text: string): string {
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} … [line clipped]` : text;
}

/** Runs ripgrep without a shell, an inherited environment or stdin, and collects its results within bounds. */
async function runRipgrep(ctx: ToolContext, request: Search, target: string, cwd: string, privateGlobs: readonly string[]): Promise<Collected> {
  const files = new Map<string, Line[]>();
  const collected: Collected = { files, matches: 0, stoppedEarly: false, searched: false, exitCode: null, stderr: "" };
  // A minimal environment: RIPGREP_CONFIG_PATH, HOME (a global gitignore) or locale must not change results.
  // Resolved on first use: the package throws at import on a platform it has no binary for,
  // and that must not take the whole CLI down.
  const { rgPath } = await import("@vscode/ripgrep");
  const proc = Bun.spawn([rgPath, ...ripgrepArgs(request, target, privateGlobs)], {
    cwd,
    env: {},
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const kill = () => proc.kill("SIGKILL");
  ctx.signal.addEventListener("abort", kill, { once: true });
  const stderr = (async () => {
    let text = "";
    for await (const chunk of proc.stderr) if (text.length < STDERR_CHARS) text += new TextDecoder().decode(chunk);
    return text.slice(0, STDERR_CHARS);
  })();

  let chars = 0;
  const hidden = new Set<string>();
  const add = (path: string, line?: Line): void => {
    let lines = files.get(path);
    if (lines === undefined) {
      if (hidden.has(path)) return;
      if (isHidden(ctx, target, path)) {
        hidden.add(path);
        return;
      }
      lines = [];
      files.set(path, lines);
      chars += path.length + 2;
    }
    if (line === undefined) return;
    lines.push(line);
    chars += line.text.length + path.length + 8;
    if (line.match) collected.matches += 1;
  };
  const separator = request.mode === "files" ? "\0" : "\n";
  const handle = (record: string): void => {
    if (record === "") return;
    if (request.mode === "files") return add(record);
    const message = JSON.parse(record) as RgMessage;
    if (message.type === "summary") collected.searched = true;
    if (message.type !== "match" && message.type !== "context") return;
    const line = { number: message.data.line_number ?? 0, text: keepLine(rgText(message.data.lines)), match: message.type === "match" };
    const path = rgText(message.data.path);
    // Symbol mode: ripgrep found the lines naming the symbol; keep those that define it in the file's language.
    if (request.symbol && !request.symbol.isDefinition(path, line.text)) return;
    add(path, line);
  };

  try {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of proc.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      const records = pending.split(separator);
      pending = records.pop() ?? "";
      for (const record of records) handle(record);
      if (chars > COLLECT_CHARS) {
        collected.stoppedEarly = true;
        kill();
        break;
      }
    }
    if (!collected.stoppedEarly) handle(pending + decoder.decode());
    collected.exitCode = await proc.exited;
    collected.stderr = (await stderr).trim();
  } catch (error) {
    kill(); // never leave ripgrep running behind a failed call
    throw error;
  } finally {
    ctx.signal.removeEventListener("abort", kill);
  }
  if (ctx.signal.aborted) throw new Error("find was stopped");
  return collected;
}

/** Match and context lines as `path:line: text` / `path-line- text`; `--` marks a gap inside a file. */
function formatFile(shown: string, lines: readonly Line[], redactor: ToolContext["redactor"]): string[] {
  // Redact a file's raw lines together before prefixing and clipping: a key block is only
  // recognizable without the `path:N:` prefixes. The redactor keeps the line count.
  const clean = redactor.redact(lines.map((line) => line.text).join("\n")).text.split("\n");
  const out: string[] = [];
  let previous: number | undefined;
  for (const [index, line] of lines.entries()) {
    if (previous !== undefined && line.number > previous + 1) out.push("--");
    const clipped = clipLine(clean[index] ?? "");
    const text = clipped === "" ? "" : ` ${clipped}`;
    out.push(line.match ? `${shown}:${line.number}:${text}` : `${shown}-${line.number}-${text}`);
    previous = line.number;
  }
  return out;
}

/** The lines of one file up to its `room`-th match, without context that only leads to an omitted match. */
function firstMatches(lines: readonly Line[], room: number, context: number): Line[] {
  const kept: Line[] = [];
  let matches = 0;
  let lastMatch = 0;
  for (const line of lines) {
    if (line.match) {
      if (matches === room) break;
      matches += 1;
      lastMatch = line.number;
    }
    kept.push(line);
  }
  while (kept.length > 0 && matches === room) {
    const last = kept[kept.length - 1];
    if (last === undefined || last.match || last.number <= lastMatch + context) break;
    kept.pop();
  }
  return kept;
}

type Listing = { shown: string[]; shownCount: number; full: string[] };

function contentListing(ctx: ToolContext, collected: Collected, maxResults: number, context: number): Listing {
  const entries = [...collected.files.entries()]
    .map(([path, lines]) => ({ shownPath: displayPath(ctx.roots, path), lines }))
    .sort((a, b) => (a.shownPath < b.shownPath ? -1 : a.shownPath > b.shownPath ? 1 : 0));
  const shown: string[] = [];
  const full: string[] = [];
  let shownCount = 0;
  let chars = 0;
  for (const { shownPath, lines } of entries) {
    if (full.length > 0) full.push("");
    full.push(...formatFile(shownPath, lines, ctx.redactor));
    const room = maxResults - shownCount;
    if (room <= 0 || chars >= SHOWN_CHARS) continue;
    const kept = firstMatches(lines, room, context);
    const block = formatFile(shownPath, kept, ctx.redactor);
    const size = block.reduce((sum, line) => sum + line.length + 1, 1);
    if (shown.length > 0 && chars + size > SHOWN_CHARS) {
      chars = SHOWN_CHARS; // the budget is spent: later files go only to the full listing
      continue;
    }
    if (shown.length > 0) shown.push("");
    shown.push(...block);
    chars += size;
    shownCount += kept.filter((line) => line.match).length;
  }
  return { shown, shownCount, full };
}

function filesListing(ctx: ToolContext, collected: Collected, maxResults: number): Listing {
  const full = [...collected.files.keys()].map((path) => displayPath(ctx.roots, path)).sort();
  const shown: string[] = [];
  let chars = 0;
  for (const path of full) {
    if (shown.length >= maxResults || chars + path.length + 1 > SHOWN_CHARS) break;
    shown.push(path);
    chars += path.length + 1;
  }
  return { shown, shownCount: shown.length, full };
}

/** Resolves and checks the search path; hidden directories and secret-like paths are refused, not searched. */
function searchTarget(ctx: ToolContext, requested: string): { target: string; cwd: string; privateGlobs: string[] } {
  const checked = resolveInRoots(ctx.roots, requested, "read");
  if (!checked.ok) throw new Error(checked.error);
  const { path: target, relative: inRoot } = checked.value;
  const shown = displayPath(ctx.roots, target);
  const hiddenPart = inRoot.split(sep).find((part) => HIDDEN_DIRS.includes(part.toLowerCase()));
  if (hiddenPart !== undefined) {
    throw new Error(`find does not search ${hiddenPart} (${HIDDEN_DIRS.join(", ")} are never searched); use read for a file you know`);
  }
  if (isSecretLikePath(target)) {
    throw new Error(`${shown} is a secret-like path; find never searches it (a direct read asks for permission)`);
  }
  const stat = statSync(target, { throwIfNoEntry: false });
  if (stat === undefined) throw new Error(`${shown} does not exist`);
  if (stat.isFile()) return { target, cwd: dirname(target), privateGlobs: [] };
  if (!stat.isDirectory()) throw new Error(`${shown} is neither a directory nor a regular file`);
  // Private directories inside the search root are pruned by anchored globs (and filtered again per path).
  const privateGlobs = ctx.roots.privateDirs
    .filter((dir) => dir !== target && isWithin(target, dir))
    .map((dir) => `/${escapeGlob(relative(target, dir))}`);
  return { target, cwd: target, privateGlobs };
}

/** The request as ripgrep will run it, or a readable error for arguments that do not fit the mode. */
function checkRequest(request: FindInput): Search {
  const mode = request.mode ?? (request.name !== undefined ? "symbol" : "content");
  if (mode === "symbol") {
    if (request.name === undefined) throw new Error('symbol mode needs name: the identifier whose definitions to find, e.g. {"name": "parseConfig"}');
    const extra = [
      ...(request.pattern !== undefined ? ["pattern"] : []),
      ...(request.fixed ? ["fixed"] : []),
      ...(request.ignoreCase ? ["ignoreCase"] : []),
      ...(request.context ? ["context"] : []),
    ];
    if (extra.length > 0) throw new Error(`symbol mode takes name, path, glob and maxResults, not ${extra.join(", ")}; to search text, use a pattern without name`);
    const invalid = symbolNameError(request.name);
    if (invalid !== undefined) throw new Error(invalid);
    return { ...request, mode, symbol: symbolSearch(request.name) };
  }
  if (request.name !== undefined) throw new Error(`name is for symbol mode; in ${mode} mode give a pattern`);
  if (request.pattern === undefined) {
    throw new Error(`${mode} mode needs a pattern (${mode === "files" ? "a glob on file paths" : "a regex"}); to find where an identifier is defined, give name instead`);
  }
  // In files mode both would be include globs, and ripgrep would list files matching either.
  if (mode === "files" && request.glob !== undefined) throw new Error("in files mode, put the glob in pattern (glob is for content searches)");
  return { ...request, mode };
}

export const findTool = defineTool({
  name: "find",
  description:
    "Search file contents with ripgrep (regex or fixed string); with mode files, list file paths matching a glob; " +
    "with name (symbol mode), list where an identifier is defined: functions, methods, classes, types, constants, not its uses. " +
    "Respects .gitignore; .git, node_modules and secret-like files (.env, keys, credentials) are never searched.",
  input,
  classify: ({ path }, { roots }) => ({ risk: "read", operation: "read", target: pathTarget(path ?? ".", roots) }),
  async execute(raw, ctx) {
    const request = checkRequest(raw);
    const { target, cwd, privateGlobs } = searchTarget(ctx, request.path ?? ".");
    const where = displayPath(ctx.roots, target);
    const collected = await runRipgrep(ctx, request, target, cwd, privateGlobs);
    const files = request.mode === "files";
    const symbol = request.symbol !== undefined ? (request.name ?? "") : undefined;
    const empty = collected.files.size === 0;
    // Exit 1 is "nothing found"; 2 is an error (a bad regex or glob, or unreadable files along the way).
    if (collected.exitCode === 2 && empty && (files || !collected.searched)) {
      throw new Error(`ripgrep failed: ${collected.stderr || "exit code 2"}`);
    }
    const warning = collected.exitCode === 2 && collected.stderr !== "" ? [`(ripgrep reported errors: ${collected.stderr.split("\n").slice(0, 3).join("; ")})`] : [];
    if (empty) {
      if (symbol !== undefined) {
        const hint = `(symbol mode reads ${SYMBOL_LANGUAGES.join(", ")} files; to find every mention, search the content for \\b${symbol}\\b)`;
        return { output: [`no definitions of ${symbol} in ${where} ${hint}`, ...warning].join("\n") };
      }
      const what = files ? `no files match ${JSON.stringify(request.pattern)}` : `no matches for ${JSON.stringify(request.pattern)}`;
      return { output: [`${what} in ${where}`, ...warning].join("\n") };
    }

    const maxResults = request.maxResults ?? DEFAULT_MAX_RESULTS;
    const listing = files ? filesListing(ctx, collected, maxResults) : contentListing(ctx, collected, maxResults, request.context ?? 0);
    const total = files ? collected.files.size : collected.matches;
    const noun = files ? "files" : symbol !== undefined ? "definitions" : "matches";
    const atLeast = collected.stoppedEarly ? "at least " : "";
    const fileCount = `${collected.files.size} ${collected.files.size === 1 ? "file" : "files"}`;
    const found = symbol !== undefined ? `${total === 1 ? "definition" : "definitions"} of ${symbol}` : total === 1 ? "match" : "matches";
    const header = files ? `${atLeast}${fileCount} in ${where}` : `${atLeast}${total} ${found} in ${fileCount} in ${where}`;
    const omitted = total - listing.shownCount;
    if (omitted <= 0 && !collected.stoppedEarly) return { output: [header, ...listing.shown, ...warning].join("\n") };
    const showing = `${header} (showing the first ${listing.shownCount})`;

    const notes: string[] = [];
    try {
      const ref = ctx.artifacts.put(`${header}\n${listing.full.join("\n")}\n`);
      notes.push(`… ${atLeast}${omitted} more ${noun} not shown; the full listing is ${ref.uri} (read it with offset/limit)`);
    } catch {
      notes.push(`… ${atLeast}${omitted} more ${noun} not shown; narrow the pattern, path or glob`);
    }
    if (collected.stoppedEarly) notes.push("(the search stopped at the listing bound; narrow the pattern, path or glob)");
    return { output: [showing, ...listing.shown, "", ...notes, ...warning].join("\n"), truncated: true };
  },
});
