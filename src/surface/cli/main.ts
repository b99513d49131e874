import { isatty } from "node:tty";
import { ConfigError } from "../../config/errors.ts";
import { StoreError } from "../../store/errors.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { agentsCommand, initCommand, trustCommand } from "./config-commands.ts";
import type { EarlySignals } from "../../util/early-signals.ts";
import type { TuiScreen } from "../tui/start.tsx";
import type { CliIo } from "./io.ts";
import { execCommand } from "./exec-command.ts";
import { hostCommand } from "./host-command.ts";
import { mcpCommand } from "./mcp-command.ts";
import { runCommand } from "./run-command.ts";
import { sessionsCommand } from "./sessions-command.ts";
import { skillsCommand } from "./skills-command.ts";
import { tuiCommand } from "./tui-command.ts";
import { createOutput, stdinMayHaveData } from "./stdio.ts";

const COMMANDS: Record<string, (io: CliIo) => number | Promise<number>> = {
  run: runCommand,
  exec: execCommand,
  host: hostCommand,
  sessions: sessionsCommand,
  agents: agentsCommand,
  init: initCommand,
  trust: trustCommand,
  mcp: mcpCommand,
  skills: skillsCommand,
  // `zero` with no arguments in a terminal, and `zero --resume <id>` (src/index.ts routes both here).
  tui: tuiCommand,
  // Loaded on use: only this command needs the ACP SDK.
  acp: async (io) => (await import("../acp/command.ts")).acpCommand(io),
};

async function readAllStdin(): Promise<string | undefined> {
  return stdinMayHaveData() ? await Bun.stdin.text() : undefined;
}

/** Runs one CLI command and returns its exit code; user errors never show a stack. */
export async function main(argv: string[], options: { early?: EarlySignals; tuiScreen?: TuiScreen } = {}): Promise<number> {
  const [command, ...rest] = argv;
  const handler = command === undefined ? undefined : COMMANDS[command];
  // Signals are handled from the first moment: before a run exists there is
  // nothing to clean up (exit 130 at once); once a run registers, the first
  // signal cancels it and a second one exits without waiting.
  let cancelRun: (() => void) | undefined;
  let interrupts = 0;
  const interrupt = () => {
    interrupts += 1;
    if (cancelRun === undefined || interrupts > 1) process.exit(130);
    cancelRun();
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  // Signals that came while this bundle loaded: acted on once the command had its chance to
  // register what a signal means for it (below).
  const held = options.early?.release() ?? [];
  // A closed terminal: the same as SIGTERM (exit handlers stop MCP servers, worktrees go). Only
  // with a terminal attached: under nohup (no terminal) the inherited "ignore" must stand.
  // (isatty, not process.stdout: that costs ~10 ms of set-up.)
  if (isatty(0) || isatty(1)) process.on("SIGHUP", interrupt);
  // When stdout's reader goes away the run is cancelled, as SIGPIPE would end a Unix tool.
  const stdout = createOutput(Bun.stdout, () => cancelRun?.());
  const rawStderr = createOutput(Bun.stderr);
  // Every stderr line may quote model or repository text (tool names, paths): never let it drive the terminal.
  const stderr = { write: (text: string) => rawStderr.write(sanitizeForTerminal(text)), close: () => rawStderr.close() };
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
      cancelRun = handler;
    },
    async exit(code) {
      await Promise.all([stdout.close(), stderr.close()]);
      process.exit(code);
    },
    ...(options.tuiScreen ? { tuiScreen: options.tuiScreen } : {}),
  };
  let code: number;
  try {
    const running = handler(io);
    // The command's synchronous start has run (and registered its cancel, if it has one).
    // Each held signal counts: a second one forces the exit, as it would have.
    for (const _signal of held) interrupt();
    code = await running;
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof StoreError) {
      const prefix = error instanceof UsageError && error.command ? `zero ${error.command}` : "zero";
      stderr.write(`${prefix}: ${error.message}\n`);
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
