import * as z from "zod";
import { parse, stripComments, type ParseError } from "jsonc-parser";
import { ConfigError } from "./errors.ts";
import { configFileSchema, forbiddenApiKey, type ConfigFile } from "./schema.ts";
import { createLocator, describeSyntaxError, formatKeyPath, lineColumnAt, withoutBom, type KeyPath } from "./location.ts";

const MAX_REPORTED_PROBLEMS = 10;

/** Parses JSONC (comments and trailing commas allowed). A blank or comment-only file is `{}`. */
export function parseJsonc(file: string, text: string): unknown {
  const source = withoutBom(text);
  const errors: ParseError[] = [];
  const value: unknown = parse(source, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first === undefined) return value;
  if (stripComments(source).trim() === "") return {};
  const where = lineColumnAt(source, first.offset);
  // A syntax error at the very end means something was left open.
  const problem =
    first.offset >= source.trimEnd().length
      ? "invalid JSONC: unexpected end of file (a closing } or ] is missing)"
      : describeSyntaxError(first.error);
  throw new ConfigError(problem, { file, ...where });
}

/** Validates one parsed file; every problem found is reported with its file, line and column. */
export function validateConfigFile(file: string, text: string, value: unknown): ConfigFile {
  // jitless: the config is parsed once or twice per process, so compiling a fast path for every
  // object schema (Zod's default) costs ~7 ms on the first parse and never pays back.
  const result = configFileSchema.safeParse(value, { error: issueMessage, jitless: true });
  if (result.success) return result.data;
  const found: FoundProblem[] = [];
  collectProblems(result.error.issues, [], found);
  const locate = createLocator(withoutBom(text));
  const errors = found
    .map((problem) => {
      const where = locate(problem.path, problem.pointAtKey ? "key" : "value");
      return new ConfigError(problem.message, { file, ...where, keyPath: formatKeyPath(problem.path) });
    })
    // Report in file order, as a reader scans the file.
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  const [first, ...rest] = errors;
  if (first === undefined) throw new ConfigError("invalid configuration", { file });
  const more = rest.slice(0, MAX_REPORTED_PROBLEMS - 1).map((error) => error.message);
  if (rest.length >= MAX_REPORTED_PROBLEMS) more.push(`… and ${rest.length - more.length} more problems`);
  return throwWith(first, more);
}

function throwWith(first: ConfigError, moreLines: string[]): never {
  const where = { file: first.file, line: first.line, column: first.column, keyPath: first.keyPath };
  throw new ConfigError(first.problem, where, moreLines);
}

type FoundProblem = { path: Array<string | number>; message: string; pointAtKey: boolean };

function collectProblems(issues: readonly z.core.$ZodIssue[], prefix: KeyPath, out: FoundProblem[]): void {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path.map(toKey)];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const branch = issue.errors.find((problems) => !problems.some(isRootTypeMismatch));
      if (branch !== undefined) {
        collectProblems(branch, path, out);
        continue;
      }
    }
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({ path: [...path, key], message: issue.message.replace("unknown key", `unknown key "${key}"`), pointAtKey: true });
      }
      continue;
    }
    out.push({ path, message: issue.message, pointAtKey: issue.code === "invalid_key" });
  }
}

/** A union branch that failed because the value has another type altogether is not the one meant. */
function isRootTypeMismatch(issue: z.core.$ZodIssue): boolean {
  return issue.path.length === 0 && issue.code === "invalid_type";
}

function toKey(part: PropertyKey): string | number {
  return typeof part === "number" ? part : String(part);
}

/** Zod error map: every message reads as the problem part of `<file>:<l>:<c>: <key>: <problem>`. */
function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      if (issue.expected === "never") return "is not allowed here";
      return `expected ${typeWords(issue.expected)}, got ${describeValue(issue.input)}`;
    case "invalid_value":
      return `invalid value ${describeValue(issue.input)} (allowed: ${(issue.values as unknown[]).map(String).join(", ")})`;
    case "unrecognized_keys":
      return `unknown key (allowed: ${allowedKeys(issue.inst).join(", ")})`;
    case "too_small":
      return tooSmall(issue.origin, Number(issue.minimum), issue.inclusive !== false);
    case "too_big":
      return issue.origin === "array"
        ? `must list at most ${issue.maximum} items`
        : `must be ${issue.inclusive === false ? "less than" : "at most"} ${issue.maximum}`;
    case "invalid_union":
      return unionMessage(issue);
    case "invalid_key":
      return `invalid name ${describeValue(issue.input)}: ${issue.issues[0]?.message ?? "not allowed"}`;
    case "invalid_format":
      return "has an invalid format";
    default:
      return undefined;
  }
}

function tooSmall(origin: string, minimum: number, inclusive: boolean): string {
  if (origin === "string" && minimum === 1) return "must not be empty";
  if (origin === "array") return minimum === 1 ? "must list at least one item" : `must list at least ${minimum} items`;
  return `must be ${inclusive ? "at least" : "greater than"} ${minimum}`;
}

function unionMessage(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidUnion>): string {
  if (issue.discriminator !== undefined) {
    const allowed = ((issue.options as unknown[] | undefined) ?? []).map(String).join(", ");
    const input = issue.input;
    const value = typeof input === "object" && input !== null ? (input as Record<string, unknown>)[issue.discriminator] : undefined;
    if (value === "sse" && allowed === "stdio, http") return `"sse" (the legacy HTTP+SSE transport) is not supported: use "http" (Streamable HTTP) with the server's Streamable HTTP endpoint`;
    return value === undefined ? `is required (allowed: ${allowed})` : `invalid value ${describeValue(value)} (allowed: ${allowed})`;
  }
  const expected = issue.errors.flatMap((problems) =>
    problems.filter(isRootTypeMismatch).map((problem) => typeWords((problem as z.core.$ZodIssueInvalidType).expected)),
  );
  const unique = [...new Set(expected)];
  return unique.length === 0 ? "invalid value" : `expected ${unique.join(" or ")}, got ${describeValue(issue.input)}`;
}

function allowedKeys(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  if (shape === undefined) return [];
  return Object.entries(shape)
    .filter(([, schema]) => schema !== forbiddenApiKey)
    .map(([key]) => key);
}

function typeWords(expected: string): string {
  switch (expected) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "int":
      return "an integer";
    case "boolean":
      return "true or false";
    case "array":
      return "a list";
    case "object":
    case "record":
      return "an object";
    default:
      return expected;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}
