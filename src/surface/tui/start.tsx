// Entry of dist/tui.js: loaded lazily by `zero` (tui-command.ts, `await import`) only when the TUI
// starts. Only the view and the pure helpers live in this bundle: the session service and the
// controller's service side are built by the caller (main.js) and handed in.
import { createCliRenderer } from "@opentui/core";
import { render } from "@opentui/solid";
import { createStore, produce } from "solid-js/store";
import type { EffectiveConfig } from "../../config/schema.ts";
import { App } from "./app.tsx";
import { initialState, type Controller, type TuiState, type Update } from "./controller.ts";

export type TuiOptions = {
  config: EffectiveConfig;
  cwd: string;
  /** Builds the controller over the view's store. */
  createController(update: Update, read: () => TuiState): Controller;
  /** Replays a resumed session's timeline before the first frame. */
  resume: boolean;
  /** main() owns SIGINT/SIGTERM/SIGHUP; it calls the handler given here (io.onInterrupt). */
  onInterrupt?: (handler: () => void) => void;
  /** Lines the service wanted to print while the screen is ours: shown as timeline notices. */
  onLog?: (sink: (line: string) => void) => void;
  /** ZERO_TUI_TRACE: "<mark> <ms since process start>" lines (launch to first frame). */
  trace?: (mark: string) => void;
};

/** Runs the TUI until the user leaves (or a signal); resolves after the terminal is restored. */
export async function startTui(options: TuiOptions): Promise<{ sessionId: string; started: boolean; signalled: boolean }> {
  const trace = options.trace ?? (() => {});
  trace("tui-start");
  const [state, setState] = createStore<TuiState>(initialState(""));
  const update: Update = (change) => setState(produce(change));
  const controller = options.createController(update, () => state);
  update((draft) => void (draft.sessionId = controller.session.id));
  if (options.resume) controller.replay();
  options.onLog?.((line) => update((draft) => void draft.timeline.entries.push({ kind: "notice", id: `log-${++draft.timeline.serial}`, text: line.trimEnd() })));

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const renderer = await createCliRenderer({
    exitOnCtrlC: false, // the App handles Ctrl-C (twice to quit); main() owns process.exit
    exitSignals: [], // no OpenTUI signal handlers: main() has its own
    useMouse: true,
    // An error anywhere must end the TUI (main() reports it), not open OpenTUI's debug console.
    openConsoleOnError: false,
    onDestroy: () => {
      process.off("exit", restoreOnExit);
      resolveDone();
    },
  });
  // A process.exit() anywhere must not leave the terminal in the alternate screen with mouse
  // tracking on: destroy() restores it synchronously.
  function restoreOnExit() {
    if (!renderer.isDestroyed) renderer.destroy();
  }
  process.on("exit", restoreOnExit);
  renderer.once("frame", () => trace("first-frame"));
  const leave = () => {
    if (!renderer.isDestroyed) renderer.destroy();
  };
  let signalled = false;
  options.onInterrupt?.(() => {
    signalled = true;
    leave();
  });
  try {
    await render(() => <App state={state} update={update} actions={controller} config={options.config} cwd={options.cwd} onExit={leave} />, renderer);
  } catch (error) {
    // The terminal first, then the error can be read.
    leave();
    controller.close();
    throw error;
  }
  await done;
  controller.close();
  return { sessionId: state.sessionId, started: state.started, signalled };
}
