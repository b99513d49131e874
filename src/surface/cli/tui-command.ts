/**
 * `zero` with no arguments in a terminal (and `zero --resume <id>`): the interactive TUI. This
 * side builds the session service and the controller (both already in main.js); the view
 * (OpenTUI + Solid, dist/tui.js) is imported only now, through a variable so the bundler never
 * pulls it into main.js.
 */
import { appendFileSync } from "node:fs";
import { isatty } from "node:tty";
import { loadConfig } from "../../config/load.ts";
import { UsageError } from "../../util/errors.ts";
import { createController } from "../tui/controller.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { cliSessionService } from "./session-access.ts";
import { workspaceFrom } from "./workspace.ts";

// The bundle build sets this to "./tui.js" (dist/tui.js: an ESM bundle with OpenTUI and Solid's
// browser build inside). From source, ../tui/source.ts registers the Solid JSX transform first.
declare const ZERO_BUNDLED_TUI: string | undefined;
const TUI_MODULE = typeof ZERO_BUNDLED_TUI === "string" ? ZERO_BUNDLED_TUI : "../tui/source.ts";

const TUI_OPTIONS = {
  resume: { type: "string" },
  cwd: { type: "string", short: "C" },
} as const;

export async function tuiCommand(io: CliIo): Promise<number> {
  const traceFile = io.env.ZERO_TUI_TRACE;
  const trace = (mark: string) => {
    if (traceFile) appendFileSync(traceFile, `${mark} ${performance.now().toFixed(1)}\n`);
  };
  trace("tui-command");
  const { values } = parseCommandArgs("tui", io.argv, TUI_OPTIONS, false);
  if (!isatty(0) || !isatty(1)) {
    throw new UsageError("the interactive TUI needs a terminal (TTY stdin and stdout); use 'zero run <task>' to run a task headlessly");
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const resume = stringFlag(values.resume);
  // While the screen is the TUI's, lines for stderr become timeline notices (a direct write
  // would corrupt the frame); before it starts they wait.
  const waiting: string[] = [];
  let sink: ((line: string) => void) | undefined;
  const tuiIo: CliIo = { ...io, stderr: (text) => (sink ? sink(text) : void waiting.push(text)) };
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(tuiIo, loaded);
  const { service, close } = cliSessionService(tuiIo, loaded, { workspace, extraDirs: [], overrides: {}, surface: "tui", interactive: true });
  let result: { sessionId: string; started: boolean; signalled: boolean };
  try {
    const { startTui } = (await import(TUI_MODULE)) as typeof import("../tui/start.tsx");
    trace("tui-module-loaded");
    result = await startTui({
      config: loaded.config,
      cwd: workspace,
      resume: resume !== undefined,
      createController: (update, read) => createController({ service, config: loaded.config, update, read, ...(resume !== undefined ? { resume } : {}) }),
      onInterrupt: io.onInterrupt,
      onLog: (line) => {
        sink = line;
        for (const text of waiting.splice(0)) line(text);
      },
      trace,
    });
  } finally {
    sink = undefined;
    await close();
  }
  for (const text of waiting) io.stderr(text);
  if (result.started) io.stdout(`resume with: zero --resume ${result.sessionId}\n`);
  // Ended by a signal (SIGINT/SIGTERM/SIGHUP): a supervisor must not read it as success.
  return result.signalled ? 130 : 0;
}
