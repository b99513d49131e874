import { findNodeAtLocation, parseTree, printParseErrorCode, type Node } from "jsonc-parser";
import { ConfigError } from "./errors.ts";

export type KeyPath = ReadonlyArray<string | number>;

/** Editors do not count a UTF-8 byte order mark as a column, and jsonc-parser rejects it. */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** `agents.build.tools[2]`; keys that are not plain identifiers are quoted so the path stays unambiguous. */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/** 1-based line and column (UTF-16 units, as editors count them) of an offset in `text`. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/**
 * Finds where a key path lives in one JSONC document. The tree is built on first use only, because
 * locations are needed only when something is wrong.
 */
export type Locator = (path: KeyPath, pointAt?: "value" | "key") => { line: number; column: number };

export function createLocator(text: string): Locator {
  let root: Node | undefined | null = null;
  return (path, pointAt = "value") => {
    if (root === null) root = parseTree(text, [], { allowTrailingComma: true }) ?? undefined;
    if (root === undefined) return { line: 1, column: 1 };
    // A missing key (a required field, a value a lower layer supplied) points at its nearest parent.
    for (let depth = path.length; depth >= 0; depth--) {
      const node = findNodeAtLocation(root, path.slice(0, depth) as Array<string | number>);
      if (node === undefined) continue;
      const exact = depth === path.length;
      const keyNode = node.parent?.type === "property" ? node.parent.children?.[0] : undefined;
      const target = exact && pointAt === "key" && keyNode !== undefined ? keyNode : node;
      return lineColumnAt(text, target.offset);
    }
    return { line: 1, column: 1 };
  };
}

/** A ConfigError pointing at `path` inside `file`. */
export function configErrorAt(
  file: string,
  locate: Locator,
  path: KeyPath,
  problem: string,
  pointAt: "value" | "key" = "value",
): ConfigError {
  return new ConfigError(problem, { file, ...locate(path, pointAt), keyPath: formatKeyPath(path) });
}

const SYNTAX_PROBLEMS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' between entries",
  CloseBraceExpected: "expected '}' to close the object",
  CloseBracketExpected: "expected ']' to close the list",
  EndOfFileExpected: "unexpected text after the end of the document",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated block comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "incomplete number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape sequence in string",
  InvalidCharacter: "control character in string",
};

/** Words for a jsonc-parser error code (the numeric enum is `const`, so it is read through its name). */
export function describeSyntaxError(code: number): string {
  const name = printParseErrorCode(code as Parameters<typeof printParseErrorCode>[0]);
  return `invalid JSONC: ${SYNTAX_PROBLEMS[name] ?? name}`;
}
