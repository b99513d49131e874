import { loadConfig } from "../../config/load.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { resolveRunResume, resolveSessionResume } from "../../session/resume.ts";
import { knownSecretValues, prepareRun } from "../../session/run.ts";
import { createRedactor } from "../../security/redact.ts";
import { UsageError } from "../../util/errors.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { RUN_HELP } from "./help.ts";
import { createHumanPrinter } from "./human-output.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { openWorkspaceStore } from "./sessions-command.ts";
import { RUN_OPTION_SPECS, resolveRunOptions } from "./run-options.ts";

const RUN_OPTIONS = {
  ...RUN_OPTION_SPECS,
  json: { type: "boolean" },
  resume: { type: "string" },
  "resume-run": { type: "string" },
} as const;

export async function runCommand(io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs("run", io.argv, RUN_OPTIONS, true);
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const { workspace, extraDirs, overrides } = resolveRunOptions(values, io.cwd);

  let task = positionals.join(" ").trim();
  if (task === "") task = ((await io.readStdin()) ?? "").trim();
  if (task === "") throw new UsageError("a task is required (as an argument or on standard input); see 'zero run --help'", { command: "run" });

  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  const resume = stringFlag(values.resume);
  const resumeRun = stringFlag(values["resume-run"]);
  if (resume !== undefined && resumeRun !== undefined) {
    throw new UsageError("--resume and --resume-run cannot be combined: the first starts a new run in a saved session, the second continues an interrupted run", { command: "run" });
  }
  if (resumeRun !== undefined && extraDirs.length > 0) {
    throw new UsageError("--resume-run keeps the run's roots; --add-dir cannot widen them", { command: "run" });
  }
  const store = openWorkspaceStore(io, loaded, workspace, io.env);
  const resumeContext = { workspace, surface: "cli" as const, config: loaded.config, ...(overrides.model !== undefined ? { modelOverride: overrides.model } : {}) };
  const continuation =
    resume !== undefined
      ? resolveSessionResume(store, resume, resumeContext)
      : resumeRun !== undefined
        ? resolveRunResume(store, resumeRun, resumeContext)
        : undefined;
  const run = await prepareRun({
    config: loaded.config,
    env: io.env,
    workspace,
    extraDirs,
    task,
    surface: "cli",
    ...(store ? { store } : {}),
    ...(continuation ? { continuation } : {}),
    overrides,
  });

  io.onInterrupt(() => run.cancel());
  const print = values.json
    ? (event: RuntimeEvent) => io.stdout(`${JSON.stringify(event)}\n`)
    : createHumanPrinter(io.stdout, io.stderr, createRedactor({ knownSecrets: knownSecretValues(loaded.config, io.env) }));
  try {
    const outcome = await run.execute([print]);
    if (outcome.persistWarning) io.stderr(`zero: ${outcome.persistWarning}\n`);
    return outcome.exitCode;
  } finally {
    store?.close();
  }
}
