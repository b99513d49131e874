// Entry of dist/tui.js: loaded lazily, only when the TUI starts. Only the view and the pure
// helpers live in this bundle: the session service and the controller's service side are built
// by the caller (main.js) and handed in through `attach`.
//
// Two ways in. `zero` with no arguments opens the screen before the runtime bundle has even
// loaded (src/index.ts: `openTui`, then `mount`), so the start screen is drawn while main.js loads,
// and main() attaches the runtime when it is ready. Every other start (`zero --resume`, `-C`)
// opens and attaches at once (`startTui`): a resumed session is replayed before the first frame.
import { createCliRenderer, type CliRenderer } from "@opentui/core";
import { render } from "@opentui/solid";
import { createSignal } from "solid-js";
import { createStore, produce } from "solid-js/store";
import type { EffectiveConfig } from "../../config/schema.ts";
import { App } from "./app.tsx";
// Types only: a value import would pull the controller's dependencies (config schemas, tools,
// Zod) into this bundle and cost every launch their evaluation.
import type { Controller, TuiState, Update } from "./controller.ts";
import { lateActions } from "./late-actions.ts";
import { showLinkTargets } from "./links.ts";
import { initialState } from "./state.ts";
import { setTheme, themeForTerminal, themeFromEnv } from "./theme.ts";
import { createTuiTrace } from "./trace.ts";

export type ScreenOptions = {
  /** ZERO_TUI_TRACE: "<mark> <ms since process start>" lines (launch, runs, keys: trace.ts). */
  trace?: (mark: string) => void;
};

export type AttachOptions = {
  config: EffectiveConfig;
  /** The workspace (shown in approval prompts). */
  cwd: string;
  /** Builds the controller over the view's store. */
  createController(update: Update, read: () => TuiState): Controller;
  /** Replays a resumed session's timeline (before the first frame when not mounted yet). */
  resume: boolean;
  /** main() owns SIGINT/SIGTERM/SIGHUP; it calls the handler given here (io.onInterrupt). */
  onInterrupt?: (handler: () => void) => void;
  /** Lines the service wanted to print while the screen is ours: shown as timeline notices. */
  onLog?: (sink: (line: string) => void) => void;
};

export type TuiResult = { sessionId: string; started: boolean; signalled: boolean };

export type TuiScreen = {
  /** Draws the screen now, before the runtime is attached (typing works; Enter waits for it); resolves once the frame is out. */
  mount(): Promise<void>;
  /** Attaches the runtime and runs until the user leaves (or a signal); the terminal is restored. */
  attach(options: AttachOptions): Promise<TuiResult>;
  /** Restores the terminal at once (an error before `attach`, reported by the caller). */
  abort(): void;
};

/** How long `mount` waits for its first frame to be written. */
const FIRST_FRAME_BOUND_MS = 500;

/** Takes the terminal: the renderer, the theme, the exit paths. Nothing is drawn until `mount`. */
export async function openTui(options: ScreenOptions = {}): Promise<TuiScreen> {
  const trace = options.trace ?? (() => {});
  trace("tui-start");
  const tracer = options.trace ? createTuiTrace(options.trace) : undefined;
  const initial = initialState("");
  const [state, setState] = createStore<TuiState>(initial);
  // Until the view mounts nothing observes the store: changes go straight to the object under
  // it. Replaying a resumed session through the store's proxies cost seconds for a few thousand
  // entries; on the plain object it takes milliseconds.
  let mounted = false;
  const apply = (change: (draft: TuiState) => void) => (mounted ? setState(produce(change)) : change(initial));
  const update: Update = tracer
    ? (change) => {
        apply(change);
        tracer.running(state.running);
      }
    : apply;
  const [config, setConfig] = createSignal<EffectiveConfig>();
  const [cwd, setCwd] = createSignal("");
  let controller: Controller | undefined;
  // Until `attach`, Enter holds the message and the rest waits (late-actions.ts).
  const late = lateActions();
  const actions = late.actions;

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let renderer: CliRenderer | undefined;
  const leave = () => {
    if (renderer && !renderer.isDestroyed) renderer.destroy();
  };
  // A process.exit() anywhere must not leave the terminal in the alternate screen with mouse
  // tracking on: destroy() restores it synchronously.
  process.on("exit", leave);
  renderer = await createCliRenderer({
    exitOnCtrlC: false, // the App handles Ctrl-C (twice to quit); main() owns process.exit
    exitSignals: [], // no OpenTUI signal handlers: main() has its own
    useMouse: true,
    // An error anywhere must end the TUI (main() reports it), not open OpenTUI's debug console.
    openConsoleOnError: false,
    ...tracer?.rendererOptions,
    onDestroy: () => {
      process.off("exit", leave);
      resolveDone();
    },
  });
  trace("renderer-created");
  tracer?.attach(renderer);
  showLinkTargets(renderer);
  // Colours: NO_COLOR, else COLORFGBG; refined when the terminal answers OpenTUI's background
  // query (OSC 11), which usually arrives just after the first frame: the view follows.
  const envTheme = themeFromEnv(process.env);
  setTheme(themeForTerminal(envTheme, renderer.themeMode));
  renderer.on("theme_mode", (mode: "dark" | "light") => setTheme(themeForTerminal(envTheme, mode)));
  const firstFrame = new Promise<void>((resolve) =>
    renderer!.once("frame", () => {
      trace("first-frame");
      resolve();
    }),
  );
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

  const target = renderer;
  async function mount(): Promise<void> {
    if (mounted || target.isDestroyed) return;
    mounted = true;
    try {
      await render(() => <App state={state} update={update} actions={actions} config={config()} cwd={cwd()} onExit={leave} />, target);
    } catch (error) {
      // The terminal first, then the error can be read.
      onCrash(error);
    }
    trace("rendered");
    // Drawn, not only laid out: plain `zero` loads main.js next, which blocks the event loop, so
    // the frame must be out first (bounded, should the renderer not draw at all).
    let bound: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([firstFrame, new Promise<void>((resolve) => (bound = setTimeout(resolve, FIRST_FRAME_BOUND_MS)))]);
    clearTimeout(bound);
  }

  return {
    mount,
    abort: leave,
    async attach(attach: AttachOptions): Promise<TuiResult> {
      let signalled = false;
      attach.onInterrupt?.(() => {
        signalled = true;
        leave();
      });
      const stopCrashHandling = () => {
        for (const event of ["uncaughtException", "unhandledRejection"] as const) process.off(event, onCrash);
      };
      try {
        controller = attach.createController(update, () => state);
        update((draft) => void (draft.sessionId = controller!.session.id));
        if (attach.resume) controller.replay();
      } catch (error) {
        // A refused --resume, a store error: the terminal first, then the caller prints it.
        stopCrashHandling();
        leave();
        throw error;
      }
      setCwd(attach.cwd);
      setConfig(() => attach.config);
      late.attach(controller);
      trace("controller-ready");
      attach.onLog?.((line) => update((draft) => void draft.timeline.entries.push({ kind: "notice", id: `log-${++draft.timeline.serial}`, text: line.trimEnd() })));
      await mount();
      trace("interactive");
      await done;
      stopCrashHandling();
      tracer?.finish();
      controller.close();
      if (crash) throw crash.error;
      return { sessionId: state.sessionId, started: state.started, signalled };
    },
  };
}

/** Opens the screen and attaches at once (the path of every start but plain `zero`). */
export async function startTui(options: AttachOptions & ScreenOptions): Promise<TuiResult> {
  const screen = await openTui(options.trace ? { trace: options.trace } : {});
  return screen.attach(options);
}
