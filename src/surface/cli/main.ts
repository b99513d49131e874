import { ConfigError } from "../../config/errors.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { agentsCommand, initCommand, trustCommand } from "./config-commands.ts";
import { runCommand, type CliIo } from "./run-command.ts";
import { createOutput, stdinMayHaveData } from "./stdio.ts";

const COMMANDS: Record<string, (io: CliIo) => number | Promise<number>> = {
  run: runCommand,
  agents: agentsCommand,
  init: initCommand,
  trust: trustCommand,
};

async function readAllStdin(): Promise<string | undefined> {
  return stdinMayHaveData() ? await Bun.stdin.text() : undefined;
}

/** Runs one CLI command and returns its exit code; user errors never show a stack. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const handler = command === undefined ? undefined : COMMANDS[command];
  const stdout = createOutput(Bun.stdout);
  const stderr = createOutput(Bun.stderr);
  if (!handler) {
    stderr.write(`zero: unknown command '${command}'; run 'zero --help' for the commands\n`);
    await stderr.close();
    return 2;
  }
  const io: CliIo = {
    argv: rest,
    env: process.env,
    cwd: process.cwd(),
    stdout: stdout.write,
    stderr: stderr.write,
    readStdin: readAllStdin,
    onInterrupt(handler) {
      process.on("SIGINT", handler);
      process.on("SIGTERM", handler);
    },
  };
  let code: number;
  try {
    code = await handler(io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      stderr.write(`zero: ${error.message}\n`);
      code = 2;
    } else {
      stderr.write(`zero: internal error: ${errorMessage(error)}\n`);
      if (process.env.ZERO_CLI_DEBUG) stderr.write(`${(error as Error)?.stack ?? ""}\n`);
      code = 1;
    }
  }
  await Promise.all([stdout.close(), stderr.close()]);
  return code;
}
