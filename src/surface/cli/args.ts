import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../../util/errors.ts";

type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

export type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };

/**
 * Strict flag parsing with our own messages: unknown flags and missing values
 * are usage errors that name the flag and point at the command's help.
 */
export function parseCommandArgs(command: string, argv: string[], options: OptionSpec, allowPositionals: boolean): Parsed {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, strict: true, allowPositionals });
    return { values: values as Parsed["values"], positionals };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : String(error);
    // Node names an option that has a short alias as '-m, --model <value>': name the long flag.
    const flag = /'(?:-[^-' ], )?(-{1,2}[^' ]+)/.exec(message)?.[1];
    const quoted = /'([^']*)'/.exec(message)?.[1];
    const hint = `run 'zero ${command} --help' for the options`;
    const fail = (text: string) => new UsageError(text, { command });
    // The first quoted token is the option; the message may quote more (a suggested `--`).
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw fail(`unknown option ${quoted === undefined ? message : quoted.startsWith("-") ? quoted : `-${quoted}`}; ${hint}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      // "argument missing" and "argument is ambiguous" (`--resume --help`: the next token is a flag).
      throw fail(`option ${flag ?? ""} ${/argument missing|ambiguous/.test(message) ? "needs a value" : "does not take a value"}; ${hint}`);
    }
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw fail(`unexpected argument '${quoted ?? ""}'; ${hint}`);
    throw fail(message);
  }
}

/** Validates an enumerated flag value, naming the allowed values on error. */
export function enumFlag<T extends string>(flag: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`invalid value '${String(value)}' for --${flag} (allowed: ${allowed.join(", ")})`);
}

export function stringFlag(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function listFlag(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
