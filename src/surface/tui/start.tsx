// Entry of dist/tui.js: loaded lazily by `zero` (tui-command.ts, `await import`) only when the TUI
// starts. Only the view and the pure helpers live in this bundle: the session service and the
// controller's service side are built by the caller (main.js) and handed in.
import { createCliRenderer } from "@opentui/core";
import { render } from "@opentui/solid";
import { createStore, produce } from "solid-js/store";
import type { EffectiveConfig } from "../../config/schema.ts";
import { App } from "./app.tsx";
// Types only: a value import would pull the controller's dependencies (config schemas, tools,
// Zod) into this bundle and cost every launch their evaluation.
import type { Controller, TuiState, Update } from "./controller.ts";
import { setTheme, themeForTerminal, themeFromEnv } from "./theme.ts";
import { createTuiTrace } from "./trace.ts";

export type TuiOptions = {
  config: EffectiveConfig;
  cwd: string;
  /** The store's first state (controller.ts `initialState("")`, made by the caller). */
  initial: TuiState;
  /** Builds the controller over the view's store. */
  createController(update: Update, read: () => TuiState): Controller;
  /** Replays a resumed session's timeline before the first frame. */
  resume: boolean;
  /** main() owns SIGINT/SIGTERM/SIGHUP; it calls the handler given here (io.onInterrupt). */
  onInterrupt?: (handler: () => void) => void;
  /** Lines the service wanted to print while the screen is ours: shown as timeline notices. */
  onLog?: (sink: (line: string) => void) => void;
  /** ZERO_TUI_TRACE: "<mark> <ms since process start>" lines (launch, runs, keys: trace.ts). */
  trace?: (mark: string) => void;
};

/** Runs the TUI until the user leaves (or a signal); resolves after the terminal is restored. */
export async function startTui(options: TuiOptions): Promise<{ sessionId: string; started: boolean; signalled: boolean }> {
  const trace = options.trace ?? (() => {});
  trace("tui-start");
  const tracer = options.trace ? createTuiTrace(options.trace) : undefined;
  const [state, setState] = createStore<TuiState>(options.initial);
  // Until the view mounts nothing observes the store: changes go straight to the object under
  // it. Replaying a resumed session through the store's proxies cost seconds for a few thousand
  // entries; on the plain object it takes milliseconds.
  let mounted = false;
  const apply = (change: (draft: TuiState) => void) => (mounted ? setState(produce(change)) : change(options.initial));
  const update: Update = tracer
    ? (change) => {
        apply(change);
        tracer.running(state.running);
      }
    : apply;
  const controller = options.createController(update, () => state);
  update((draft) => void (draft.sessionId = controller.session.id));
  if (options.resume) controller.replay();
  trace("controller-ready");
  options.onLog?.((line) => update((draft) => void draft.timeline.entries.push({ kind: "notice", id: `log-${++draft.timeline.serial}`, text: line.trimEnd() })));

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  // A signal from here on ends the TUI; one that comes while the terminal is being set up is
  // acted on as soon as there is a renderer to tear down.
  let signalled = false;
  let leave = () => {};
  options.onInterrupt?.(() => {
    signalled = true;
    leave();
  });
  const renderer = await createCliRenderer({
    exitOnCtrlC: false, // the App handles Ctrl-C (twice to quit); main() owns process.exit
    exitSignals: [], // no OpenTUI signal handlers: main() has its own
    useMouse: true,
    // An error anywhere must end the TUI (main() reports it), not open OpenTUI's debug console.
    openConsoleOnError: false,
    ...tracer?.rendererOptions,
    onDestroy: () => {
      process.off("exit", restoreOnExit);
      resolveDone();
    },
  });
  trace("renderer-created");
  tracer?.attach(renderer);
  // Colours: NO_COLOR, else COLORFGBG; refined when the terminal answers OpenTUI's background
  // query (OSC 11), which usually arrives just after the first frame: the view follows.
  const envTheme = themeFromEnv(process.env);
  setTheme(themeForTerminal(envTheme, renderer.themeMode));
  renderer.on("theme_mode", (mode: "dark" | "light") => setTheme(themeForTerminal(envTheme, mode)));
  // A process.exit() anywhere must not leave the terminal in the alternate screen with mouse
  // tracking on: destroy() restores it synchronously.
  function restoreOnExit() {
    if (!renderer.isDestroyed) renderer.destroy();
  }
  process.on("exit", restoreOnExit);
  renderer.once("frame", () => trace("first-frame"));
  leave = () => {
    if (!renderer.isDestroyed) renderer.destroy();
  };
  // OpenTUI catches uncaught errors while it runs and only logs them, so the TUI would go on in
  // an unknown state. Here such an error ends it: the terminal is restored, then it is thrown to
  // main(), which reports it as an internal error (exit 1).
  let crash: { error: unknown } | undefined;
  const onCrash = (error: unknown) => {
    crash ??= { error };
    leave();
  };
  const swallow = (renderer as unknown as { handleError?: (error: unknown) => void }).handleError;
  for (const event of ["uncaughtException", "unhandledRejection"] as const) {
    if (swallow) process.off(event, swallow);
    process.on(event, onCrash);
  }
  try {
    if (signalled) leave();
    else {
      mounted = true;
      await render(() => <App state={state} update={update} actions={controller} config={options.config} cwd={options.cwd} onExit={leave} />, renderer);
    }
  } catch (error) {
    // The terminal first, then the error can be read.
    onCrash(error);
  }
  trace("rendered");
  await done;
  for (const event of ["uncaughtException", "unhandledRejection"] as const) process.off(event, onCrash);
  tracer?.finish();
  controller.close();
  if (crash) throw crash.error;
  return { sessionId: state.sessionId, started: state.started, signalled };
}
