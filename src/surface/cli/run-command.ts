import { PERMISSION_MODES, REASONING_EFFORTS, SPEEDS, WORK_DEPTHS } from "../../config/schema.ts";
import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { prepareRun } from "../../session/run.ts";
import type { Env } from "../../util/env.ts";
import { UsageError } from "../../util/errors.ts";
import { enumFlag, listFlag, parseCommandArgs, stringFlag } from "./args.ts";
import { RUN_HELP } from "./help.ts";
import { createHumanPrinter } from "./human-output.ts";
import { existingDirectory, workspaceFrom } from "./workspace.ts";


export type CliIo = {
  argv: string[];
  env: Env;
  cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of standard input, or undefined when it is a terminal. */
  readStdin(): Promise<string | undefined>;
  /** Registers what a first SIGINT/SIGTERM (or a closed stdout) does: cancel the run. */
  onInterrupt(handler: () => void): void;
};

const RUN_OPTIONS = {
  model: { type: "string", short: "m" },
  cwd: { type: "string" },
  "add-dir": { type: "string", multiple: true },
  "permission-mode": { type: "string" },
  yes: { type: "boolean", short: "y" },
  json: { type: "boolean" },
  "reasoning-effort": { type: "string" },
  speed: { type: "string" },
  depth: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** One-line notices about the configuration: an untrusted project file, a deprecated file name. */
export function reportConfigNotices(io: CliIo, loaded: LoadedConfig): void {
  const file = loaded.ignoredProjectFile;
  if (file && loaded.ignoredBecause) io.stderr(`zero: not loading project config ${file}: ${loaded.ignoredBecause}\n`);
  else if (file) io.stderr(`zero: ignoring untrusted project config ${file} (review it, then run 'zero trust')\n`);
  for (const source of loaded.sources) {
    if (/(^|\/)\.?devout(\.jsonc|\/)/.test(source.file)) {
      io.stderr(`zero: ${source.file} uses a deprecated name; rename it to zero-cli.jsonc (or .zero-cli/config.jsonc)\n`);
    }
  }
}

export async function runCommand(io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs("run", io.argv, RUN_OPTIONS, true);
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  let permissionMode = enumFlag("permission-mode", values["permission-mode"], PERMISSION_MODES);
  if (values.yes) {
    if (permissionMode !== undefined && permissionMode !== "full-access") {
      throw new UsageError(`--yes means --permission-mode full-access; it conflicts with --permission-mode ${permissionMode}`);
    }
    permissionMode = "full-access";
  }
  const reasoningEffort = enumFlag("reasoning-effort", values["reasoning-effort"], REASONING_EFFORTS);
  const speed = enumFlag("speed", values.speed, SPEEDS);
  const depth = enumFlag("depth", values.depth, WORK_DEPTHS);
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const extraDirs = listFlag(values["add-dir"]).map((dir) => existingDirectory("--add-dir", dir, io.cwd));

  let task = positionals.join(" ").trim();
  if (task === "") task = ((await io.readStdin()) ?? "").trim();
  if (task === "") throw new UsageError("a task is required (as an argument or on standard input); see 'zero run --help'", { command: "run" });

  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  const run = await prepareRun({
    config: loaded.config,
    env: io.env,
    workspace,
    extraDirs,
    task,
    surface: "cli",
    overrides: {
      ...(stringFlag(values.model) !== undefined ? { model: stringFlag(values.model) } : {}),
      ...(permissionMode ? { permissionMode } : {}),
      ...(reasoningEffort ? { reasoningEffort } : {}),
      ...(speed ? { speed } : {}),
      ...(depth ? { depth } : {}),
    },
  });

  io.onInterrupt(() => run.cancel());
  const print = values.json
    ? (event: RuntimeEvent) => io.stdout(`${JSON.stringify(event)}\n`)
    : createHumanPrinter(io.stdout, io.stderr);
  const outcome = await run.execute([print]);
  return outcome.exitCode;
}
