import { describe, expect, test } from "bun:test";
import { UsageError } from "../../util/errors.ts";
import { parseCommandArgs } from "./args.ts";

const OPTIONS = {
  model: { type: "string", short: "m" },
  yes: { type: "boolean", short: "y" },
  cwd: { type: "string" },
  json: { type: "boolean" },
} as const;

function usageError(argv: string[]): string {
  try {
    parseCommandArgs("run", argv, OPTIONS, true);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`expected a usage error for ${argv.join(" ")}`);
}

describe("parseCommandArgs errors", () => {
  test("a missing value names the long flag, also when the option has a short alias", () => {
    expect(usageError(["--model"])).toBe("option --model needs a value; run 'zero run --help' for the options");
    expect(usageError(["-m"])).toBe("option --model needs a value; run 'zero run --help' for the options");
    expect(usageError(["--cwd"])).toBe("option --cwd needs a value; run 'zero run --help' for the options");
  });

  test("a value given to a boolean flag names the long flag", () => {
    expect(usageError(["--yes=1"])).toBe("option --yes does not take a value; run 'zero run --help' for the options");
    expect(usageError(["--json=x"])).toBe("option --json does not take a value; run 'zero run --help' for the options");
  });

  test("unknown options and arguments are named as written", () => {
    expect(usageError(["--nope"])).toBe("unknown option --nope; run 'zero run --help' for the options");
    expect(usageError(["-q"])).toBe("unknown option -q; run 'zero run --help' for the options");
    // `-y=1` is read as the short options y, = and 1; Node's message then also quotes '--'.
    expect(usageError(["-y=1"])).toBe("unknown option -=; run 'zero run --help' for the options");
    expect(() => parseCommandArgs("trust", ["extra"], OPTIONS, false)).toThrow("unexpected argument 'extra'");
  });

  test("valid flags parse", () => {
    expect(parseCommandArgs("run", ["-m", "fast", "--yes", "task"], OPTIONS, true)).toEqual({ values: { model: "fast", yes: true }, positionals: ["task"] });
  });
});
