// Entry point. Start it through bin/zero, which runs Bun with the workspace's
// .env and bunfig.toml disabled; never as `bun src/index.ts` from an untrusted directory.
// Deliberately no `#!/usr/bin/env bun` line: started through such a shebang, Bun would load
// the current directory's .env and run its bunfig.toml preloads before any of our code.
// bin/zero is the one executable the package ships (test/e2e/hostile-workspace.test.ts).
import { MAIN_HELP } from "./surface/cli/help.ts";
import { holdSignals } from "./util/early-signals.ts";
import { traceMarks } from "./util/trace-marks.ts";
import { VERSION } from "./util/version.ts";

// The bundle build sets this to "./main.js" (a separate bytecode-cached file), so
// `--version` and `--help` never load the ~1 MB runtime bundle.
declare const ZERO_BUNDLED_MAIN: string | undefined;
const mainModule = typeof ZERO_BUNDLED_MAIN === "string" ? ZERO_BUNDLED_MAIN : "./surface/cli/main.ts";
declare const ZERO_BUNDLED_TUI: string | undefined;
const tuiModule = typeof ZERO_BUNDLED_TUI === "string" ? ZERO_BUNDLED_TUI : "./surface/tui/source.ts";

const args = process.argv.slice(2);
/** Flags that mean the TUI when they come first (`zero --resume <id>`, `zero -C <dir>`). */
const TUI_FLAGS = ["--resume", "-C", "--cwd"];
const first = args[0];
// Bun.write, not process.stdout: the latter costs ~10 ms of setup on every start.
if (first === "--version" || first === "-v") {
  void Bun.write(Bun.stdout, `${VERSION}\n`);
} else if (first === "--help" || first === "-h" || first === "help" || (first === undefined && !inTerminal())) {
  void Bun.write(Bun.stdout, MAIN_HELP);
} else {
  // Everything else loads the real CLI lazily so the two paths above stay fast.
  // (No top-level await: the bundle is CommonJS so Bun can cache its bytecode.)
  // Until main answers, the exit code is an internal error: a process whose work never settles
  // (a plugin promise that never resolves) must not end as a success.
  process.exitCode = 1;
  // No arguments in a terminal, or --resume: the interactive TUI (`tui` is its internal command name).
  const argv = first === undefined || TUI_FLAGS.includes(first) || TUI_FLAGS.some((flag) => first.startsWith(`${flag}=`)) ? ["tui", ...args] : args;
  // A Ctrl-C while main.js loads is held for main() to act on, not fatal before it can answer.
  const early = holdSignals();
  // Plain `zero` in a terminal: the TUI's screen is drawn first, while the runtime loads (main()
  // attaches it; an error before that restores the terminal, then is printed).
  const screen = first === undefined ? openScreenEarly() : Promise.resolve(undefined);
  let opened: import("./surface/tui/start.tsx").TuiScreen | undefined;
  void screen
    .then(async (tuiScreen) => {
      opened = tuiScreen;
      const { main } = (await import(mainModule)) as typeof import("./surface/cli/main.ts");
      process.exit(await main(argv, { early, ...(tuiScreen ? { tuiScreen } : {}) }));
    })
    .catch((error: unknown) => {
      opened?.abort(); // the terminal back before the message
      process.stderr.write(`zero: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}

/** The TUI's screen, mounted (dist/tui.js, or the source entry that registers the JSX transform). */
async function openScreenEarly(): Promise<import("./surface/tui/start.tsx").TuiScreen> {
  const trace = traceMarks(process.env.ZERO_TUI_TRACE);
  trace?.("index-open");
  const { openTui } = (await import(tuiModule)) as typeof import("./surface/tui/start.tsx");
  const screen = await openTui(trace ? { trace } : {});
  await screen.mount();
  return screen;
}

/**
 * Whether stdin and stdout are both a terminal (then `zero` alone opens the TUI). node:tty is
 * loaded only here: importing it up front cost `--version` ~20 ms and 6 MiB.
 */
function inTerminal(): boolean {
  const { isatty } = require("node:tty") as typeof import("node:tty");
  return isatty(0) && isatty(1);
}
