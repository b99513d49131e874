/**
 * A tokenizer for POSIX shell command lines: enough to tell which programs a command would start
 * (quotes removed, operators split, command substitutions and heredocs found) — not an
 * interpreter, so no expansion is performed: `$x` stays the text `$x`.
 *
 * Pure, total (never throws, whatever the input) and linear in the input; nesting deeper than
 * MAX_DEPTH is not followed and is reported as `truncated`, so callers can fail closed.
 */

/** One simple command: its words after quote removal, without redirections and their targets. */
export type SimpleCommand = {
  words: string[];
  /** Heredoc bodies attached to this command, in order (`quoted`: the delimiter was quoted, so nothing in it expands). */
  heredocs: { body: string; quoted: boolean }[];
};

export type ParsedShell = {
  /** Every simple command, including those inside `$(…)`, backticks, `<(…)` and heredoc substitutions. */
  commands: SimpleCommand[];
  /** Nesting went deeper than MAX_DEPTH: some commands were not looked into. */
  truncated: boolean;
};

/** How deep substitutions (and callers' `sh -c` strings) are followed. */
export const MAX_DEPTH = 16;

type PendingHeredoc = { delimiter: string; stripTabs: boolean; quoted: boolean; command: SimpleCommand };

type State = {
  src: string;
  i: number;
  depth: number;
  out: SimpleCommand[];
  flags: { truncated: boolean };
  pending: PendingHeredoc[];
  /** The normalized text (top level only), or undefined when not collected. */
  norm: string[] | undefined;
  /** Characters in `norm`, and how many of them end with the last one that is not a trailing line break. */
  normLength?: number;
  keep?: number;
  /** The last thing written is a space that separates words. */
  gap?: boolean;
  /** Nothing was written yet, or the last thing written is a line break that separates commands. */
  lineStart?: boolean;
};

const BLANK = new Set([" ", "\t"]);

/** A run of characters with no meaning to the tokenizer. */
const PLAIN = /[^ \t\n;&|()<>'"\\$`#]+/y;
const ARRAY_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=$/;

function isDigits(text: string): boolean {
  return /^[0-9]+$/.test(text);
}

/** Splits a command line into simple commands (see the module comment). */
export function parseShell(source: string, depth = 0): ParsedShell {
  const flags = { truncated: depth > MAX_DEPTH };
  const out: SimpleCommand[] = [];
  if (!flags.truncated) {
    const state: State = { src: source, i: 0, depth, out, flags, pending: [], norm: undefined };
    parseSequence(state, null);
  }
  return { commands: out, truncated: flags.truncated };
}

/**
 * The command with insignificant whitespace normalized: runs of unquoted blanks become one
 * space, blanks at the start and end of a line go, and so do line breaks before and after
 * everything. Quoted text, heredoc bodies, line continuations and the line breaks between
 * commands are kept exactly, so two commands that normalize alike split alike (a property test
 * checks it), and one never absorbs another.
 */
export function normalizeCommand(source: string): string {
  const norm: string[] = [];
  const state: State = { src: source, i: 0, depth: 0, out: [], flags: { truncated: false }, pending: [], norm };
  parseSequence(state, null);
  // Line breaks that end the command separate nothing: dropped (see emit).
  return norm.join("").slice(0, state.keep ?? 0);
}

/**
 * Adds to the normalized text. A `separator` (an unquoted line break, a space between words) is
 * dropped before anything else was written and, at the end, cut off by normalizeCommand.
 */
function emit(state: State, text: string, separator = false): void {
  if (!state.norm || text === "") return;
  if (separator && (state.keep ?? 0) === 0) return;
  state.norm.push(text);
  state.normLength = (state.normLength ?? 0) + text.length;
  if (!separator) state.keep = state.normLength;
  state.gap = false;
  state.lineStart = separator && text === "\n";
}

/**
 * Parses commands until the end of the source, or until `closer` (`)` of a `$(…)`) at depth 0.
 * Returns with `state.i` after the closer.
 */
function parseSequence(state: State, closer: ")" | null): void {
  const { src } = state;
  let words: string[] = [];
  let command: SimpleCommand = { words, heredocs: [] };
  let word: string | null = null;
  let wordQuoted = false;
  let skipNext = false;
  let heredocNext: { stripTabs: boolean } | undefined;
  /** The current command opened a heredoc whose body is still to come. */
  let awaitsBody = false;
  let parens = 0;

  const finishWord = () => {
    if (word === null) return;
    if (heredocNext) {
      // The delimiter: quote removal applies; any quoting turns expansion off in the body.
      state.pending.push({ delimiter: word, stripTabs: heredocNext.stripTabs, quoted: wordQuoted, command });
      awaitsBody = true;
      heredocNext = undefined;
    } else if (skipNext) {
      skipNext = false; // a redirection target is not an argument
    } else {
      words.push(word);
    }
    word = null;
    wordQuoted = false;
  };
  const finishCommand = () => {
    finishWord();
    skipNext = false;
    heredocNext = undefined;
    if (command.words.length > 0 || command.heredocs.length > 0 || awaitsBody) state.out.push(command);
    words = [];
    command = { words, heredocs: [] };
    awaitsBody = false;
  };
  const append = (text: string) => {
    word = (word ?? "") + text;
  };

  while (state.i < src.length) {
    const c = src[state.i]!;
    if (closer === ")" && c === ")" && parens === 0) {
      finishCommand();
      emit(state, c);
      state.i++;
      return;
    }
    if (BLANK.has(c)) {
      finishWord();
      let j = state.i;
      while (j < src.length && BLANK.has(src[j]!)) j++;
      const next = src[j];
      const atLineStart = state.lineStart !== false;
      if (next === undefined && closer !== null) {
        emit(state, src.slice(state.i, j)); // inside an unclosed $( the blanks are the word's text
      } else if (!atLineStart && !state.gap && next !== undefined && next !== "\n") {
        emit(state, " ", true);
        state.gap = true;
      }
      state.i = j;
      continue;
    }
    if (c === "\n") {
      finishCommand();
      emit(state, c, true);
      state.i++;
      readHeredocBodies(state);
      continue;
    }
    if (c === "#" && word === null) {
      // A comment runs to the end of the line.
      let j = src.indexOf("\n", state.i);
      if (j === -1) j = src.length;
      emit(state, src.slice(state.i, j));
      state.i = j;
      continue;
    }
    if (c === "\\") {
      const next = src[state.i + 1];
      if (next === "\n") {
        emit(state, "\\\n"); // a line continuation joins the lines (kept as written)
        state.i += 2;
        continue;
      }
      if (next === undefined) {
        emit(state, c);
        state.i++;
        continue;
      }
      append(next);
      wordQuoted = true;
      emit(state, c + next);
      state.i += 2;
      continue;
    }
    if (c === "'") {
      const end = src.indexOf("'", state.i + 1);
      const stop = end === -1 ? src.length : end + 1;
      append(src.slice(state.i + 1, end === -1 ? src.length : end));
      wordQuoted = true;
      emit(state, src.slice(state.i, stop));
      state.i = stop;
      continue;
    }
    if (c === '"') {
      state.i++;
      const text = readDoubleQuoted(state);
      word = (word ?? "") + text;
      wordQuoted = true;
      continue;
    }
    if (c === "$") {
      const next = src[state.i + 1];
      if (next === "'") {
        const start = state.i;
        state.i += 2;
        const text = readAnsiQuoted(state);
        word = (word ?? "") + text;
        wordQuoted = true;
        emit(state, src.slice(start, state.i));
        continue;
      }
      if (next === "(" || next === "{") {
        const start = state.i;
        emit(state, `$${next}`);
        state.i += 2;
        if (next === "(") readSubstitution(state);
        else readBraced(state);
        // The expansion's value is unknown: the word keeps its source text.
        word = (word ?? "") + src.slice(start, state.i);
        continue;
      }
      append(c);
      emit(state, c);
      state.i++;
      continue;
    }
    if (c === "`") {
      const start = state.i;
      state.i++;
      readBackticks(state);
      word = (word ?? "") + src.slice(start, state.i);
      emit(state, src.slice(start, state.i));
      continue;
    }
    if (c === "<" || c === ">") {
      // A number right before the operator is the descriptor (2>file), not an argument.
      if (word !== null && !wordQuoted && isDigits(word)) {
        word = null;
      } else {
        finishWord();
      }
      const next = src[state.i + 1];
      if (next === "(") {
        // Process substitution: its commands run; it stands for a file name.
        emit(state, `${c}(`);
        state.i += 2;
        readSubstitution(state);
        continue;
      }
      let op = c;
      if (c === "<" && src.startsWith("<<<", state.i)) op = "<<<";
      else if (c === "<" && src.startsWith("<<-", state.i)) op = "<<-";
      else if (c === "<" && next === "<") op = "<<";
      else if (next === ">" || next === "&" || next === "|" || (c === "<" && next === ">")) op = c + next;
      emit(state, op);
      state.i += op.length;
      if (op === "<<" || op === "<<-") heredocNext = { stripTabs: op === "<<-" };
      else skipNext = true;
      continue;
    }
    if (c === "&" && src[state.i + 1] === ">") {
      // &>file and &>>file redirect both streams.
      finishWord();
      const op = src.startsWith("&>>", state.i) ? "&>>" : "&>";
      emit(state, op);
      state.i += op.length;
      skipNext = true;
      continue;
    }
    if (c === ";" || c === "&" || c === "|") {
      finishCommand();
      let op = c;
      const next = src[state.i + 1];
      if ((c === ";" && next === ";") || (c === "&" && next === "&") || (c === "|" && (next === "|" || next === "&")) || (c === ";" && next === "&")) op = c + next;
      emit(state, op);
      state.i += op.length;
      continue;
    }
    if (c === "(" && word !== null && ARRAY_ASSIGNMENT.test(word)) {
      // name=(a b c): an array literal is one word, not a subshell.
      const start = state.i;
      state.i++;
      skipBalanced(state, "(", ")", false);
      word += src.slice(start, state.i);
      emit(state, src.slice(start, state.i));
      continue;
    }
    if (c === "(") {
      finishCommand();
      parens++;
      emit(state, c);
      state.i++;
      continue;
    }
    if (c === ")") {
      finishCommand();
      if (parens > 0) parens--;
      emit(state, c);
      state.i++;
      continue;
    }
    // Ordinary characters: the whole run at once.
    PLAIN.lastIndex = state.i;
    const run = PLAIN.exec(src)?.[0] ?? c;
    append(run);
    emit(state, run);
    state.i += run.length;
  }
  finishCommand();
  // Heredocs opened on the last line, with no line break after it: empty bodies, as the shell reads them.
  if (closer === null && state.pending.length > 0) readHeredocBodies(state);
}

/** After a line break: the bodies of the heredocs opened on that line, in order. */
function readHeredocBodies(state: State): void {
  const pending = state.pending.splice(0);
  const { src } = state;
  for (const heredoc of pending) {
    const lines: string[] = [];
    for (;;) {
      if (state.i >= src.length) break;
      let end = src.indexOf("\n", state.i);
      if (end === -1) end = src.length;
      const raw = src.slice(state.i, end);
      const line = heredoc.stripTabs ? raw.replace(/^\t+/, "") : raw;
      const newline = end < src.length ? "\n" : "";
      state.i = Math.min(end + 1, src.length);
      if (line === heredoc.delimiter) {
        // The line break after the delimiter separates commands; those in the body are text.
        emit(state, raw);
        emit(state, newline, true);
        break;
      }
      emit(state, raw + newline);
      lines.push(line);
    }
    const body = lines.length > 0 ? `${lines.join("\n")}\n` : "";
    heredoc.command.heredocs.push({ body, quoted: heredoc.quoted });
    // An unquoted heredoc expands: its substitutions run.
    if (!heredoc.quoted) scanExpansions(body, state);
  }
}

/** Finds the substitutions in text that expands like a double-quoted string (a heredoc body). */
function scanExpansions(text: string, parent: State): void {
  const state: State = { src: text, i: 0, depth: parent.depth, out: parent.out, flags: parent.flags, pending: [], norm: undefined };
  while (state.i < text.length) {
    const c = text[state.i]!;
    if (c === "\\") {
      state.i += 2;
    } else if (c === "$" && (text[state.i + 1] === "(" || text[state.i + 1] === "{")) {
      const brace = text[state.i + 1] === "{";
      state.i += 2;
      if (brace) readBraced(state);
      else readSubstitution(state);
    } else if (c === "`") {
      state.i++;
      readBackticks(state);
    } else {
      state.i++;
    }
  }
}

/** Inside "…" (after the opening quote): returns the text after quote removal; `state.i` ends after the closing quote. */
function readDoubleQuoted(state: State): string {
  const { src } = state;
  const start = state.i - 1;
  let text = "";
  let emittedFrom = start;
  while (state.i < src.length) {
    const c = src[state.i]!;
    if (c === '"') {
      state.i++;
      emit(state, src.slice(emittedFrom, state.i));
      return text;
    }
    if (c === "\\") {
      const next = src[state.i + 1];
      if (next === "\n") {
        state.i += 2;
      } else if (next === "$" || next === "`" || next === '"' || next === "\\") {
        text += next;
        state.i += 2;
      } else {
        text += c;
        state.i++;
      }
      continue;
    }
    if (c === "$" && (src[state.i + 1] === "(" || src[state.i + 1] === "{")) {
      const from = state.i;
      emit(state, src.slice(emittedFrom, state.i + 2));
      const brace = src[state.i + 1] === "{";
      state.i += 2;
      if (brace) readBraced(state);
      else readSubstitution(state);
      emittedFrom = state.i;
      text += src.slice(from, state.i);
      continue;
    }
    if (c === "`") {
      const from = state.i;
      state.i++;
      readBackticks(state);
      text += src.slice(from, state.i);
      continue;
    }
    text += c;
    state.i++;
  }
  emit(state, src.slice(emittedFrom, state.i));
  return text;
}

/** Inside $'…' (after the opening quote): C-style escapes; `state.i` ends after the closing quote. */
function readAnsiQuoted(state: State): string {
  const { src } = state;
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v" };
  let text = "";
  while (state.i < src.length) {
    const c = src[state.i]!;
    if (c === "'") {
      state.i++;
      return text;
    }
    if (c === "\\" && state.i + 1 < src.length) {
      const next = src[state.i + 1]!;
      text += simple[next] ?? `\\${next}`;
      state.i += 2;
      continue;
    }
    text += c;
    state.i++;
  }
  return text;
}

/** After `$(` or `<(`/`>(`: the commands inside, one level deeper. */
function readSubstitution(state: State): void {
  if (state.depth + 1 > MAX_DEPTH) {
    state.flags.truncated = true;
    skipBalanced(state, "(", ")");
    return;
  }
  state.depth++;
  parseSequence(state, ")");
  state.depth--;
}

/** After `${`: to the matching `}`, following substitutions inside (`${x:-$(cmd)}`). */
function readBraced(state: State): void {
  const { src } = state;
  let depth = 1;
  let from = state.i;
  while (state.i < src.length) {
    const c = src[state.i]!;
    if (c === "\\") {
      state.i += 2;
      continue;
    }
    if (c === "'") {
      const end = src.indexOf("'", state.i + 1);
      state.i = end === -1 ? src.length : end + 1;
      continue;
    }
    if (c === "$" && src[state.i + 1] === "(") {
      emit(state, src.slice(from, state.i + 2));
      state.i += 2;
      readSubstitution(state);
      from = state.i;
      continue;
    }
    if (c === "`") {
      emit(state, src.slice(from, state.i));
      state.i++;
      const start = state.i - 1;
      readBackticks(state);
      emit(state, src.slice(start, state.i));
      from = state.i;
      continue;
    }
    if (c === "{") depth++;
    if (c === "}") {
      depth--;
      if (depth === 0) {
        state.i++;
        emit(state, src.slice(from, state.i));
        return;
      }
    }
    state.i++;
  }
  emit(state, src.slice(from, state.i));
}

/**
 * After an opening backtick: the old-style substitution runs to the next unescaped backtick;
 * inside, `\`` `\\` and `\$` stand for the character itself. Its text is parsed on its own.
 * Not emitted: the caller copies the source verbatim.
 */
function readBackticks(state: State): void {
  const { src } = state;
  let inner = "";
  while (state.i < src.length) {
    const c = src[state.i]!;
    if (c === "`") {
      state.i++;
      break;
    }
    if (c === "\\" && (src[state.i + 1] === "`" || src[state.i + 1] === "\\" || src[state.i + 1] === "$")) {
      inner += src[state.i + 1];
      state.i += 2;
      continue;
    }
    inner += c;
    state.i++;
  }
  if (state.depth + 1 > MAX_DEPTH) {
    state.flags.truncated = true;
    return;
  }
  const nested: State = { src: inner, i: 0, depth: state.depth + 1, out: state.out, flags: state.flags, pending: [], norm: undefined };
  parseSequence(nested, null);
}

/** Past the matching close bracket, quotes respected, without parsing (too deep to follow). */
function skipBalanced(state: State, open: string, close: string, emitted = true): void {
  const { src } = state;
  const from = state.i;
  let depth = 1;
  while (state.i < src.length) {
    const c = src[state.i]!;
    if (c === "\\") {
      state.i += 2;
      continue;
    }
    if (c === "'" || c === '"') {
      const end = src.indexOf(c, state.i + 1);
      state.i = end === -1 ? src.length : end + 1;
      continue;
    }
    if (c === open) depth++;
    if (c === close) {
      depth--;
      if (depth === 0) {
        state.i++;
        break;
      }
    }
    state.i++;
  }
  if (emitted) emit(state, src.slice(from, Math.min(state.i, src.length)));
}
