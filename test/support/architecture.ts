/**
 * The layer rules of ARCHITECTURE.md as a pure function over source text, so
 * `test/architecture.test.ts` can check the real tree and prove with synthetic files that it fails.
 *
 * Imports are found by a small tokenizer (comments, strings, templates and regex literals are
 * skipped), not by regexes over raw text, so an import named inside a comment or string is ignored.
 * Type-only imports count: they couple layers just the same.
 */
import { posix } from "node:path";

/** Lowest first. A folder may import from its own level's folder and from lower levels. */
export const LAYERS: readonly (readonly string[])[] = [
  ["protocol"],
  ["util"],
  ["config"],
  ["store"],
  ["llm"],
  ["policy"],
  ["security"],
  ["tool"],
  ["agent"],
  ["session"],
  ["skill", "mcp", "plugin", "workflow"], // one level; they may not import each other
  ["surface"],
];

/** npm packages only one part of the tree may use: the adapter boundaries. */
const PACKAGE_OWNERS: readonly { matches: (name: string) => boolean; owner: string }[] = [
  { matches: (name) => name === "ai" || name.startsWith("@ai-sdk/"), owner: "src/llm/" },
  { matches: (name) => name.startsWith("@opentui/") || name === "solid-js", owner: "src/surface/tui/" },
  { matches: (name) => name.startsWith("@agentclientprotocol/"), owner: "src/surface/acp/" },
];

export type SourceFile = { path: string; source: string };

/** Every violation of the layer rules, as readable lines. Paths are repository-relative. */
export function checkImports(files: SourceFile[]): string[] {
  const violations: string[] = [];
  for (const file of files) {
    const path = posix.normalize(file.path);
    if (!path.startsWith("src/")) continue; // only src/ is layered
    const folder = layerFolder(path);
    if (folder === undefined) {
      violations.push(`${path}: files directly under src/ other than src/index.ts belong to no layer`);
      continue;
    }
    if (levelOf(folder) === undefined) {
      violations.push(`${path}: ${folder} is not a known layer (add it to the layer list deliberately)`);
      continue;
    }
    for (const specifier of findImportSpecifiers(file.source)) {
      const problem = checkOne(path, folder, specifier);
      if (problem !== undefined) violations.push(problem);
    }
  }
  return violations;
}

function checkOne(path: string, folder: string, specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/")) {
    const target = specifier.startsWith("/") ? specifier : posix.join(posix.dirname(path), specifier);
    return checkLocal(path, folder, target);
  }
  const name = packageName(specifier);
  for (const rule of PACKAGE_OWNERS) {
    if (rule.matches(name) && !path.startsWith(rule.owner)) {
      return `${path} imports ${specifier}: only ${rule.owner} may import ${name}`;
    }
  }
  return undefined;
}

function checkLocal(path: string, folder: string, target: string): string | undefined {
  if (!target.startsWith("src/")) {
    if (target === "package.json") return undefined; // the package manifest is data (the version), not a layer
    if (target.startsWith("test/support/")) {
      return isTestFile(path) ? undefined : `${path} imports ${target}: only test files may import test/support/`;
    }
    return `${path} imports ${target}: src/ may only import from src/ (and its tests from test/support/)`;
  }
  const targetFolder = targetLayerFolder(target);
  if (targetFolder === undefined) return `${path} imports ${target}: it belongs to no layer`;
  if (targetFolder === folder) return undefined;
  const from = levelOf(folder);
  const to = levelOf(targetFolder);
  if (to === undefined) return `${path} imports ${target}: ${targetFolder} is not a known layer`;
  if (from === undefined || to >= from) return `${path} imports ${target}: ${folder} may not import ${targetFolder}`;
  return undefined;
}

/** The layer folder of a file under src/; `src/index.ts` is the entry and counts as surface. */
function layerFolder(path: string): string | undefined {
  const parts = path.split("/");
  if (parts.length === 2) return parts[1] === "index.ts" ? "surface" : undefined;
  return parts[1];
}

/** Like `layerFolder`, but `src/agent` (a directory import) names the agent folder. */
function targetLayerFolder(target: string): string | undefined {
  const parts = target.split("/");
  if (parts.length === 2 && levelOf(parts[1] ?? "") !== undefined) return parts[1];
  return layerFolder(target);
}

function levelOf(folder: string): number | undefined {
  const level = LAYERS.findIndex((folders) => folders.includes(folder));
  return level < 0 ? undefined : level;
}

function isTestFile(path: string): boolean {
  return /\.test\.tsx?$/.test(path);
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

type Token = { kind: "name" | "string" | "punct"; value: string };

/**
 * Module specifiers of `import … from "x"`, `export … from "x"`, `import "x"`, `import("x")`
 * (also TS `import("x")` types) and `require("x")`, each with a string literal.
 */
export function findImportSpecifiers(source: string): string[] {
  const tokens = tokenize(source);
  const specifiers: string[] = [];
  const at = (index: number): Token | undefined => tokens[index];
  const is = (index: number, kind: Token["kind"], value?: string): boolean => {
    const token = at(index);
    return token !== undefined && token.kind === kind && (value === undefined || token.value === value);
  };
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    if (token === undefined || token.kind !== "name" || is(index - 1, "punct", ".")) continue;
    if (token.value === "import") {
      if (is(index + 1, "string")) {
        specifiers.push(at(index + 1)?.value ?? "");
      } else if (is(index + 1, "punct", "(")) {
        if (is(index + 2, "string")) specifiers.push(at(index + 2)?.value ?? "");
      } else if (is(index + 1, "name") || is(index + 1, "punct", "{") || is(index + 1, "punct", "*")) {
        // import x, { y as z }, * as ns, type T … from "spec"
        for (let scan = index + 1; scan < tokens.length; scan++) {
          if (is(scan, "name", "from") && is(scan + 1, "string")) {
            specifiers.push(at(scan + 1)?.value ?? "");
            break;
          }
          if (is(scan, "punct", ";") || is(scan, "punct", "=") || is(scan, "punct", "(")) break;
        }
      }
    } else if (token.value === "export") {
      let scan = index + 1;
      if (is(scan, "name", "type")) scan++;
      if (is(scan, "punct", "*")) {
        scan++;
        if (is(scan, "name", "as")) scan += 2;
      } else if (is(scan, "punct", "{")) {
        while (scan < tokens.length && !is(scan, "punct", "}")) scan++;
        scan++;
      } else {
        continue;
      }
      if (is(scan, "name", "from") && is(scan + 1, "string")) specifiers.push(at(scan + 1)?.value ?? "");
    } else if (token.value === "require" && is(index + 1, "punct", "(") && is(index + 2, "string")) {
      specifiers.push(at(index + 2)?.value ?? "");
    }
  }
  return specifiers;
}

/** Keywords after which a `/` starts a regex literal rather than a division. */
const REGEX_AFTER = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw",
  "case", "do", "else", "yield", "await"]);

/**
 * Splits source into names, string literals and punctuation; comments, template text and regex
 * literals are dropped. A quote or slash with no closing partner on its line is taken as a lone
 * character, so stray apostrophes in JSX text cannot swallow the rest of the file.
 */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  // What each open `{` belongs to: a block/object, or a `${` inside a template literal.
  const braces: ("block" | "template")[] = [];
  let index = 0;

  // Scans template text from `index` until the closing backtick or a `${`.
  const scanTemplate = (): void => {
    let text = "";
    let substituted = false;
    while (index < source.length) {
      const char = source[index];
      if (char === "\\") {
        text += source.slice(index, index + 2);
        index += 2;
      } else if (char === "`") {
        index++;
        if (!substituted) tokens.push({ kind: "string", value: text });
        return;
      } else if (char === "$" && source[index + 1] === "{") {
        index += 2;
        braces.push("template");
        tokens.push({ kind: "punct", value: "${" });
        substituted = true;
        return;
      } else {
        text += char;
        index++;
      }
    }
  };

  while (index < source.length) {
    const char = source[index] ?? "";
    const next = source[index + 1];
    if (/\s/.test(char)) {
      index++;
    } else if (char === "/" && next === "/") {
      const end = source.indexOf("\n", index);
      index = end < 0 ? source.length : end;
    } else if (char === "/" && next === "*") {
      const end = source.indexOf("*/", index + 2);
      index = end < 0 ? source.length : end + 2;
    } else if (char === "'" || char === '"') {
      const end = closingQuote(source, index, char);
      if (end < 0) {
        tokens.push({ kind: "punct", value: char });
        index++;
      } else {
        tokens.push({ kind: "string", value: unescape(source.slice(index + 1, end)) });
        index = end + 1;
      }
    } else if (char === "`") {
      index++;
      scanTemplate();
    } else if (char === "/" && startsRegex(tokens[tokens.length - 1])) {
      const end = closingRegexSlash(source, index);
      if (end < 0) {
        tokens.push({ kind: "punct", value: char });
        index++;
      } else {
        index = end + 1;
        while (index < source.length && /[\w$]/.test(source[index] ?? "")) index++; // flags
        tokens.push({ kind: "string", value: "" }); // a regex is an operand, like a string
      }
    } else if (/[\w$]/.test(char) || char.charCodeAt(0) > 0x7f) {
      let end = index + 1;
      while (end < source.length && (/[\w$]/.test(source[end] ?? "") || (source.charCodeAt(end) > 0x7f))) end++;
      tokens.push({ kind: "name", value: source.slice(index, end) });
      index = end;
    } else if (char === "{") {
      braces.push("block");
      tokens.push({ kind: "punct", value: char });
      index++;
    } else if (char === "}") {
      index++;
      if (braces.pop() === "template") scanTemplate();
      else tokens.push({ kind: "punct", value: char });
    } else {
      tokens.push({ kind: "punct", value: char });
      index++;
    }
  }
  return tokens;
}

function startsRegex(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === "string") return false;
  if (previous.kind === "name") return REGEX_AFTER.has(previous.value);
  return previous.value !== ")" && previous.value !== "]" && previous.value !== "}";
}

/** Index of the quote closing the string opened at `start`, or -1 when the line ends first. */
function closingQuote(source: string, start: number, quote: string): number {
  for (let index = start + 1; index < source.length; index++) {
    const char = source[index];
    if (char === "\\") index++;
    else if (char === quote) return index;
    else if (char === "\n") return -1;
  }
  return -1;
}

/** Index of the slash closing the regex opened at `start`, or -1 when the line ends first. */
function closingRegexSlash(source: string, start: number): number {
  let inClass = false;
  for (let index = start + 1; index < source.length; index++) {
    const char = source[index];
    if (char === "\\") index++;
    else if (char === "\n") return -1;
    else if (char === "[") inClass = true;
    else if (char === "]") inClass = false;
    else if (char === "/" && !inClass) return index;
  }
  return -1;
}

/** Enough unescaping for module specifiers, which are plain paths in practice. */
function unescape(raw: string): string {
  return raw.replace(/\\(.)/g, "$1");
}
