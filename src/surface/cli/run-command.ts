import { loadConfig } from "../../config/load.ts";
import { EXIT, type RuntimeEvent } from "../../protocol/events.ts";
import { RunCancelledBeforeStart } from "../../session/service.ts";
import { UsageError } from "../../util/errors.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { RUN_HELP } from "./help.ts";
import { createHumanPrinter } from "./human-output.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { cliSessionService } from "./session-access.ts";
import { RUN_OPTION_SPECS, resolveRunOptions } from "./run-options.ts";

const RUN_OPTIONS = {
  ...RUN_OPTION_SPECS,
  json: { type: "boolean" },
  workflow: { type: "string", short: "w" },
  resume: { type: "string" },
  "resume-run": { type: "string" },
} as const;

export async function runCommand(io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs("run", io.argv, RUN_OPTIONS, true);
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const { workspace, extraDirs, overrides, attach } = resolveRunOptions(values, io.cwd);

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
  const workflow = stringFlag(values.workflow);
  if (workflow !== undefined && (resume !== undefined || resumeRun !== undefined)) {
    throw new UsageError(`--workflow cannot be combined with ${resume !== undefined ? "--resume" : "--resume-run"}: a resumed session keeps its own orchestration`, { command: "run" });
  }
  if (resumeRun !== undefined && extraDirs.length > 0) {
    throw new UsageError("--resume-run keeps the run's roots; --add-dir cannot widen them", { command: "run" });
  }
  const { service, close } = cliSessionService(io, loaded, { workspace, extraDirs, overrides, surface: "cli" });
  try {
    const session = service.open(
      resume !== undefined ? { kind: "resume", ref: resume } : resumeRun !== undefined ? { kind: "resume-run", ref: resumeRun } : { kind: "new" },
    );
    // Events arrive redacted by the session service; the printer only renders them.
    const print = values.json ? (event: RuntimeEvent) => io.stdout(`${JSON.stringify(event)}\n`) : createHumanPrinter(io.stdout, io.stderr);
    const run = session.send(task, { listeners: [print], attach, ...(workflow !== undefined ? { workflow } : {}) });
    io.onInterrupt(() => run.cancel());
    const outcome = await run.done;
    if (outcome.persistWarning) io.stderr(`zero: ${outcome.persistWarning}\n`);
    return outcome.exitCode;
  } catch (error) {
    if (!(error instanceof RunCancelledBeforeStart)) throw error;
    io.stderr(`zero: ${error.message}\n`);
    return EXIT.cancelled;
  } finally {
    await close();
  }
}
