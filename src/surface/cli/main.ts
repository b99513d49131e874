import { ConfigError } from "../../config/errors.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { agentsCommand, initCommand, trustCommand } from "./config-commands.ts";
import { runCommand, type CliIo } from "./run-command.ts";

const COMMANDS: Record<string, (io: CliIo) => number | Promise<number>> = {
  run: runCommand,
  agents: agentsCommand,
  init: initCommand,
  trust: trustCommand,
};

async function readAllStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  return await Bun.stdin.text();
}

function write(stream: NodeJS.WriteStream) {
  return (text: string) => {
    stream.write(text);
  };
}

/** Flushes stdout before exit so a piped consumer receives every line. */
async function drain(stream: NodeJS.WriteStream): Promise<void> {
  if (!stream.writableNeedDrain) return;
  await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
}

/** Runs one CLI command and returns its exit code; user errors never show a stack. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const handler = command === undefined ? undefined : COMMANDS[command];
  if (!handler) {
    process.stderr.write(`zero: unknown command '${command}'; run 'zero --help' for the commands\n`);
    return 2;
  }
  const io: CliIo = {
    argv: rest,
    env: process.env,
    cwd: process.cwd(),
    stdout: write(process.stdout),
    stderr: write(process.stderr),
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
      process.stderr.write(`zero: ${error.message}\n`);
      code = 2;
    } else {
      process.stderr.write(`zero: internal error: ${errorMessage(error)}\n`);
      if (process.env.ZERO_CLI_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ""}\n`);
      code = 1;
    }
  }
  await drain(process.stdout);
  return code;
}
