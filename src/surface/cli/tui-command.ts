/**
 * `zero` with no arguments in a terminal (and `zero --resume <id>`): the interactive TUI. This
 * side builds the session service and the controller (both already in main.js); the view
 * (OpenTUI + Solid, dist/tui.js) is imported only now, through a variable so the bundler never
 * pulls it into main.js.
 */
import { isatty } from "node:tty";
import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import { UsageError } from "../../util/errors.ts";
import { traceMarks } from "../../util/trace-marks.ts";
import type { SkillChoice } from "../tui/composer-menu.ts";
import { createController } from "../tui/controller.ts";
import { skillsForAgent } from "../../skill/catalog.ts";
import type { SkillCatalog } from "../../skill/discover.ts";
import { SKILL_LIMITS } from "../../skill/package.ts";
import { readRegularFile } from "../../security/files.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { TUI_HELP } from "./help.ts";
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
  try {
    return await runTui(io);
  } catch (error) {
    // A screen opened early (plain `zero`) goes before main() prints what went wrong.
    io.tuiScreen?.abort();
    throw error;
  }
}

async function runTui(io: CliIo): Promise<number> {
  const traceMark = traceMarks(io.env.ZERO_TUI_TRACE);
  const trace = (mark: string) => traceMark?.(mark);
  trace("tui-command");
  // --help anywhere wins (`zero --resume --help` must not read --help as the session id).
  if (io.argv.includes("--help") || io.argv.includes("-h")) {
    io.stdout(TUI_HELP);
    return 0;
  }
  const { values } = parseCommandArgs("tui", io.argv, TUI_OPTIONS, false);
  if (!isatty(0) || !isatty(1)) {
    throw new UsageError("the interactive TUI needs a terminal (TTY stdin and stdout); use 'zero run <task>' to run a task headlessly");
  }
  // The view bundle starts loading now, beside the config and the session service: some of
  // Bun's module loading happens off the main thread (~15 ms earlier first frame, measured by
  // bench/tui.ts). Awaited below; a config error meanwhile must not leave it unhandled.
  // (Plain `zero` opened the screen before main.js loaded: src/index.ts.)
  const view = io.tuiScreen ? undefined : (import(TUI_MODULE) as Promise<typeof import("../tui/start.tsx")>);
  view?.catch(() => {});
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const resume = stringFlag(values.resume);
  // While the screen is the TUI's, lines for stderr become timeline notices (a direct write
  // would corrupt the frame); before it starts they wait.
  const waiting: string[] = [];
  let sink: ((line: string) => void) | undefined;
  const tuiIo: CliIo = { ...io, stderr: (text) => (sink ? sink(text) : void waiting.push(text)) };
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(tuiIo, loaded);
  trace("config-loaded");
  const { service, close, skills } = cliSessionService(tuiIo, loaded, { workspace, extraDirs: [], overrides: {}, surface: "tui", interactive: true });
  trace("service-built");
  let result: { sessionId: string; started: boolean; signalled: boolean };
  try {
    const screen = io.tuiScreen ?? (await (await view!).openTui(traceMark ? { trace: traceMark } : {}));
    trace("tui-module-loaded");
    result = await screen.attach({
      config: loaded.config,
      cwd: workspace,
      resume: resume !== undefined,
      createController: (update, read) => createController({ service, config: loaded.config, workspace, update, read, skills: () => rootSkills(loaded, skills), skillText, ...(resume !== undefined ? { resume } : {}) }),
      onInterrupt: io.onInterrupt,
      onLog: (line) => {
        sink = line;
        for (const text of waiting.splice(0)) line(text);
      },
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

/** The `$` menu's and `/skills`' skills: the root agent's, from the catalog the runs use. */
function rootSkills(loaded: LoadedConfig, catalog: SkillCatalog | undefined): SkillChoice[] {
  const agent = loaded.config.agents[loaded.config.defaultAgent];
  if (!agent || !catalog) return [];
  return skillsForAgent(catalog, agent).map((skill) => ({ id: skill.id, description: skill.description, provenance: skill.provenance, file: skill.file }));
}

/** A skill's SKILL.md for `/skills <name>`: a regular file, bounded like the package check; UTF-8 or nothing. */
function skillText(file: string): string | undefined {
  try {
    const head = readRegularFile(file, SKILL_LIMITS.fileBytes);
    return new TextDecoder("utf-8", { fatal: true }).decode(head.bytes);
  } catch {
    return undefined;
  }
}
