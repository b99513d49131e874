/**
 * Matching a rule's target pattern against a call's target. Two kinds:
 *
 * - `path` (files, URLs, search, MCP names): a glob, by Bun's own matcher — `*` within one path
 *   segment, `**` across segments, `?`, `[…]`, `{a,b}`; anchored at both ends. Targets are
 *   canonical (symlinks resolved, workspace-relative inside it, absolute outside), so `src/**`
 *   can't be reached through `src/../.git` or a link.
 * - `command`: `*` matches any run of characters and `?` any one, except the characters that let
 *   a command do more than its first program: `; & | < > ( ) $ \`` and line breaks. So
 *   `git status*` covers `git status --short` but never `git status; rm -rf x`,
 *   `git status $(curl x)` or `git status > ~/.bashrc`. Those characters match only when the
 *   pattern spells them out; `\` makes the next pattern character literal.
 *
 * Pure and total; linear-time in practice (no backtracking regex), whatever the pattern.
 */

export type TargetKind = "path" | "command";

/** Characters a command wildcard never matches. */
const COMMAND_OPERATORS = new Set([";", "&", "|", "<", ">", "(", ")", "$", "`", "\n", "\r"]);

type Token = { kind: "literal"; char: string } | { kind: "any" } | { kind: "one" };

const globs = new Map<string, InstanceType<typeof Bun.Glob>>();
const MAX_CACHED = 256;

function glob(pattern: string): InstanceType<typeof Bun.Glob> {
  let compiled = globs.get(pattern);
  if (compiled === undefined) {
    compiled = new Bun.Glob(pattern);
    if (globs.size >= MAX_CACHED) globs.clear();
    globs.set(pattern, compiled);
  }
  return compiled;
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  const chars = [...pattern];
  for (let k = 0; k < chars.length; k++) {
    const c = chars[k]!;
    if (c === "\\" && k + 1 < chars.length) {
      tokens.push({ kind: "literal", char: chars[++k]! });
    } else if (c === "*") {
      if (tokens.at(-1)?.kind !== "any") tokens.push({ kind: "any" });
    } else if (c === "?") {
      tokens.push({ kind: "one" });
    } else {
      tokens.push({ kind: "literal", char: c });
    }
  }
  return tokens;
}

/** Splits at operator characters: the pieces between them, and the operators in order. */
function split<T>(items: readonly T[], isOperator: (item: T) => string | undefined): { pieces: T[][]; operators: string[] } {
  const pieces: T[][] = [[]];
  const operators: string[] = [];
  for (const item of items) {
    const operator = isOperator(item);
    if (operator === undefined) pieces[pieces.length - 1]!.push(item);
    else {
      operators.push(operator);
      pieces.push([]);
    }
  }
  return { pieces, operators };
}

/** Classic wildcard matching (greedy, backtracking only to the last star): O(pattern × text) at worst. */
function wildcard(tokens: readonly Token[], text: readonly string[]): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const token = tokens[p];
    if (token !== undefined && (token.kind === "one" || (token.kind === "literal" && token.char === text[t]))) {
      p++;
      t++;
    } else if (token?.kind === "any") {
      star = p++;
      mark = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (tokens[p]?.kind === "any") p++;
  return p === tokens.length;
}

/**
 * A command pattern: the operator characters of pattern and command must line up one for one
 * (wildcards never produce one), and each stretch between them matches as a plain wildcard.
 */
function matchCommand(pattern: string, command: string): boolean {
  const tokens = split(tokenize(pattern), (token) => (token.kind === "literal" && COMMAND_OPERATORS.has(token.char) ? token.char : undefined));
  const chars = split([...command], (char) => (COMMAND_OPERATORS.has(char) ? char : undefined));
  if (tokens.operators.length !== chars.operators.length) return false;
  if (tokens.operators.some((operator, k) => operator !== chars.operators[k])) return false;
  return tokens.pieces.every((piece, k) => wildcard(piece, chars.pieces[k]!));
}

/**
 * True when `target` matches `pattern` (see the module comment). Never throws: `undefined` when
 * the pattern cannot be judged, so the caller can fail closed.
 */
export function matchTarget(pattern: string, target: string, kind: TargetKind): boolean | undefined {
  try {
    if (kind === "command") return matchCommand(pattern, target);
    return glob(pattern).match(target);
  } catch {
    return undefined;
  }
}
