import type { ErrorObject, ValidateFunction } from "ajv";
import { errorMessage } from "../util/errors.ts";

/**
 * Input validation for tools that come with a JSON Schema (MCP servers, plugins): Ajv, loaded only
 * when such a tool exists, with errors that name the field like the Zod tools' do.
 */

export type JsonSchema = Record<string, unknown>;
/** The validated value, or the issues (each naming its field) without the tool's name. */
export type InputValidator = (raw: unknown) => { ok: true; value: unknown } | { ok: false; error: string };

type AjvInstance = { compile(schema: object): ValidateFunction };
type AjvClass = new (options: Record<string, unknown>) => AjvInstance;
type Draft = "2020-12" | "2019-09" | "draft-07";

const validators = new Map<Draft, AjvInstance>();

/**
 * One Ajv per draft, created on first use: Ajv is loaded only when a JSON Schema tool exists
 * (it costs start-up time every run would otherwise pay). Not strict (MCP schemas carry
 * annotations and formats Ajv does not know; unknown formats are not checked), every error
 * reported, nothing logged (protocol surfaces own stdout and stderr).
 */
function validatorFor(draft: Draft): AjvInstance {
  let ajv = validators.get(draft);
  if (ajv === undefined) {
    // Literal requires, so the bundler includes them; each module is evaluated on its first call.
    const loaded = (draft === "2020-12" ? require("ajv/dist/2020") : draft === "2019-09" ? require("ajv/dist/2019") : require("ajv")) as { default: AjvClass };
    ajv = new loaded.default({ strict: false, allErrors: true, logger: false });
    validators.set(draft, ajv);
  }
  return ajv;
}

/** The draft a schema names; undefined when it names none. Throws for one Ajv does not implement. */
function draftOf(name: string, schema: JsonSchema): Draft | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return undefined;
  if (typeof declared !== "string") throw new Error(`the input schema of ${name} has a $schema that is not a string`);
  if (declared.includes("2020-12")) return "2020-12";
  if (declared.includes("2019-09")) return "2019-09";
  if (declared.includes("draft-07") || declared.includes("draft-06")) return "draft-07";
  throw new Error(`the input schema of ${name} uses ${declared}, which is not supported (use draft-07, 2019-09 or 2020-12)`);
}

/** JSON Pointer → field path as the model wrote it (`/edits/0/path` → `edits.0.path`). */
function fieldPath(pointer: string, extra?: unknown): string {
  const segments = pointer === "" ? [] : pointer.slice(1).split("/").map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (typeof extra === "string") segments.push(extra);
  return segments.length > 0 ? segments.join(".") : "input";
}

const MAX_LISTED = 20;
const MAX_ISSUES = 10;

function describeValues(values: unknown): string {
  if (!Array.isArray(values)) return "";
  const shown = values.slice(0, MAX_LISTED).map((value) => JSON.stringify(value)).join(", ");
  return values.length > MAX_LISTED ? `${shown}, … (${values.length} in all)` : shown;
}

/** Ajv's errors as one line a model can act on, each naming its field like the Zod messages do. */
function formatAjvErrors(errors: readonly ErrorObject[]): string {
  // The branches of a failed oneOf/anyOf each report their own mismatch; the combinator's own error says it better.
  const combinators = errors.filter((e) => e.keyword === "oneOf" || e.keyword === "anyOf").map((e) => `${e.schemaPath}/`);
  const issues: string[] = [];
  for (const error of errors) {
    if (combinators.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const params = error.params as Record<string, unknown>;
    let issue: string;
    switch (error.keyword) {
      case "required":
        issue = `${fieldPath(error.instancePath, params.missingProperty)}: required`;
        break;
      case "additionalProperties":
        issue = `${fieldPath(error.instancePath, params.additionalProperty)}: not allowed (unknown field)`;
        break;
      case "enum":
        issue = `${fieldPath(error.instancePath)}: must be one of ${describeValues(params.allowedValues)}`;
        break;
      case "const":
        issue = `${fieldPath(error.instancePath)}: must be ${JSON.stringify(params.allowedValue)}`;
        break;
      case "oneOf":
        issue = `${fieldPath(error.instancePath)}: must match exactly one of the allowed shapes${Array.isArray(params.passingSchemas) ? " (it matches several)" : ""}`;
        break;
      case "anyOf":
        issue = `${fieldPath(error.instancePath)}: must match one of the allowed shapes`;
        break;
      default:
        issue = `${fieldPath(error.instancePath)}: ${error.message ?? `fails ${error.keyword}`}`;
    }
    if (!issues.includes(issue)) issues.push(issue);
  }
  const shown = issues.slice(0, MAX_ISSUES).join("; ");
  return issues.length > MAX_ISSUES ? `${shown}; and ${issues.length - MAX_ISSUES} more` : shown || "input: does not match the schema";
}

/**
 * Compiles a tool's JSON Schema once: the schema for the model (a copy, without `$schema`) and
 * the validator. The validated value is a copy of the input, so a tool can't change what was
 * recorded as the model's call.
 */
export function compileJsonSchema(name: string, schema: JsonSchema): { inputSchema: Record<string, unknown>; validate: InputValidator } {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) throw new Error(`the input schema of ${name} is not a JSON Schema object`);
  if (schema.type !== "object") throw new Error(`the input schema of ${name} must describe an object (type: "object")`);
  const inputSchema = structuredClone(schema);
  delete inputSchema.$schema;
  const draft = draftOf(name, schema);
  // Compiled without $schema (the instance is the draft) and $id (ids would collide across tools in one instance).
  const compilable = structuredClone(inputSchema);
  delete compilable.$id;
  let check: ValidateFunction;
  try {
    check = validatorFor(draft ?? "2020-12").compile(compilable);
  } catch (error) {
    if (draft !== undefined) throw new Error(`the input schema of ${name} is invalid: ${errorMessage(error)}`);
    try {
      // No $schema: 2020-12 first (MCP's default dialect), then draft-07 (tuple `items` arrays and the like).
      check = validatorFor("draft-07").compile(compilable);
    } catch {
      throw new Error(`the input schema of ${name} is invalid: ${errorMessage(error)}`);
    }
  }
  return {
    inputSchema,
    validate(raw) {
      let valid: boolean;
      try {
        valid = check(raw) === true;
      } catch (error) {
        return { ok: false, error: `input: could not be validated (${errorMessage(error)})` };
      }
      if (!valid) return { ok: false, error: formatAjvErrors(check.errors ?? []) };
      try {
        return { ok: true, value: structuredClone(raw) };
      } catch {
        return { ok: false, error: "input: is not plain JSON data" };
      }
    },
  };
}
