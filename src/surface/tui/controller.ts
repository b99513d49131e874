/**
 * The TUI's behaviour without its looks: what sending, queueing, cancelling, approving and each
 * slash command do, over one session of the session service. The view owns a store of
 * `TuiState` and hands `update` (Solid's `setStore(produce(…))`); tests hand a function that
 * changes a plain object. Choices (model, depth, reasoning, speed, workflow) apply to the next
 * run, never to one in flight.
 */
import { REASONING_EFFORTS, SPEEDS, WORK_DEPTHS, type EffectiveConfig, type ReasoningEffort, type ResolvedModel, type Speed, type WorkDepth } from "../../config/schema.ts";
import { supportedEfforts, supportedSpeeds } from "../../llm/providers.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import type { PendingApproval, RunHandle, Session, SessionService } from "../../session/service.ts";
import { errorMessage } from "../../util/errors.ts";
import { helpLines, parseCommandLine } from "./commands.ts";
import type { SkillChoice } from "./composer-menu.ts";
import { insideWorkspace, listWorkspaceFiles } from "./file-menu.ts";
import { remember, type ComposerHistory } from "./history.ts";
import { editQueued, enqueue, moveQueued, removeQueued, type MessageQueue } from "./queue.ts";
import { initialState } from "./state.ts";
import { addDecision, addError, addNotice, addUserTurn, applyEvent, clearTimeline, type TimelineState } from "./timeline.ts";

export type Choices = { model?: string; reasoning?: ReasoningEffort; speed?: Speed; depth?: WorkDepth; workflow?: string };

export type Popup =
  | { kind: "help"; lines: string[] }
  | { kind: "text"; title: string; lines: string[] }
  | { kind: "queue" }
  | { kind: "picker"; command: string; options: string[]; current: string };

export type TuiState = {
  sessionId: string;
  timeline: TimelineState;
  queue: MessageQueue;
  history: ComposerHistory;
  choices: Choices;
  /** The approval waiting for Y/A/N, oldest first. */
  approvals: PendingApproval[];
  popup?: Popup;
  /** Whether the start screen shows (nothing sent yet in this session). */
  started: boolean;
  running: boolean;
  /** Set when the user asked to leave (`/quit`, two Ctrl-C). */
  quitting: boolean;
  /** The queued message the composer is editing (E in `/queue`); Enter puts it back in its place. */
  editing?: number;
};

export type Update = (change: (state: TuiState) => void) => void;

export type ControllerOptions = {
  service: SessionService;
  config: EffectiveConfig;
  update: Update;
  /** The state as it is now (read-only for the controller's decisions). */
  read(): TuiState;
  /** The workspace (the `@` menu lists its files). */
  workspace: string;
  /** The root agent's skills for the `$` menu and `/skills` (loaded on first use). */
  skills?: () => SkillChoice[];
  /** A skill's SKILL.md, for `/skills <name>` (bounded; undefined when it cannot be read). */
  skillText?: (file: string) => string | undefined;
  /** `--resume`: the session to continue (its stored events are replayed into the timeline). */
  resume?: string;
};

/** How much of a SKILL.md `/skills <name>` shows. */
const SKILL_LINES = 40;

/** How long streamed text may wait before it is drawn (one frame at 60 fps). */
export const FRAME_MS = 16;

export { initialState };

export function createController(options: ControllerOptions) {
  const { service, config, update, read } = options;
  let session: Session = service.open(options.resume ? { kind: "resume", ref: options.resume } : { kind: "new" });
  let running: RunHandle | undefined;
  // Once closed (quit, a signal), nothing starts again: not even a queued message.
  let closed = false;
  let stopApprovals = watchApprovals(session);
  let files: Promise<string[]> | undefined;
  // Whether this session's model history has a turn; whether the next run must start a new one.
  let conversationStarted = options.resume !== undefined;
  let freshConversation = false;

  function watchApprovals(target: Session): () => void {
    return target.onApprovalPending((pending) => update((state) => void state.approvals.push(pending)));
  }

  // Text deltas arrive by the hundred per second; the screen needs them once a frame. They wait
  // here (at most FRAME_MS) and go into the store together; any other event flushes them first,
  // so the timeline's order never changes.
  let pendingEvents: RuntimeEvent[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  function flushEvents(): void {
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = undefined;
    if (pendingEvents.length === 0) return;
    const batch = pendingEvents;
    pendingEvents = [];
    update((state) => {
      for (const event of batch) applyEvent(state.timeline, event);
    });
  }
  // Bumped when the session is replaced (/new, a fresh conversation): what a run of the old
  // one still sends (a cancelled run's last events) is not drawn in the new timeline.
  let generation = 0;
  const listenerFor = (born: number) => (event: RuntimeEvent) => {
    if (born === generation) onEvent(event);
  };
  const onEvent = (event: RuntimeEvent) => {
    pendingEvents.push(event);
    if (event.type === "message.delta" || event.type === "reasoning.delta") flushTimer ??= setTimeout(flushEvents, FRAME_MS);
    else flushEvents();
  };

  /** Starts a run of `text` now (the caller made sure none is running). */
  function start(text: string, attachments: string[]): void {
    if (freshConversation) switchSession();
    freshConversation = false;
    conversationStarted = true;
    const { choices } = read();
    update((state) => {
      addUserTurn(state.timeline, text, attachments);
      state.started = true;
      state.running = true;
    });
    const handle = session.send(text, {
      listeners: [listenerFor(generation)],
      overrides: {
        ...(choices.model !== undefined ? { model: choices.model } : {}),
        ...(choices.reasoning !== undefined ? { reasoningEffort: choices.reasoning } : {}),
        ...(choices.speed !== undefined ? { speed: choices.speed } : {}),
        ...(choices.depth !== undefined ? { depth: choices.depth } : {}),
      },
      ...(choices.workflow !== undefined ? { workflow: choices.workflow } : {}),
    });
    running = handle;
    void handle.done
      .catch((error) => update((state) => addError(state.timeline, errorMessage(error))))
      .finally(() => {
        flushEvents();
        // Only the current run's end changes what the screen says is running.
        if (running !== handle) return;
        running = undefined;
        update((state) => {
          state.running = false;
          state.approvals = [];
        });
        runNextQueued();
      });
  }

  /** Leaves editing a queued message without changing it. */
  function stopEditing(): void {
    update((state) => void delete state.editing);
    runNextQueued();
  }

  /** The queue runs on in the same conversation; a message being edited waits for its edit. */
  function runNextQueued(): void {
    if (running || closed || read().quitting) return;
    const editing = read().editing;
    const next = read().queue.items.find((item) => item.id !== editing);
    if (!next) return;
    update((state) => void removeQueued(state.queue, next.id));
    start(next.text, next.attachments);
  }

  /** The composer's Enter: a command, a message for now, or one for the queue. */
  function submit(text: string): "sent" | "queued" | "full" | "command" | "empty" | "edited" {
    const trimmed = text.trim();
    const editing = read().editing;
    // A command while editing a queued message runs, and the message stays as it was.
    if (editing !== undefined && parseCommandLine(trimmed)) stopEditing();
    else if (editing !== undefined) {
      update((state) => void delete state.editing);
      // Still waiting: the edit goes back in its place (an empty edit removes it).
      if (read().queue.items.some((item) => item.id === editing)) {
        update((state) => (trimmed === "" ? void removeQueued(state.queue, editing) : editQueued(state.queue, editing, text)));
        // The run it waited behind may have ended meanwhile.
        runNextQueued();
        return "edited";
      }
    }
    if (trimmed === "") return "empty";
    update((state) => remember(state.history, text));
    const command = parseCommandLine(trimmed);
    if (command) {
      runCommand(command.name, command.argument, command.known);
      return "command";
    }
    if (running) {
      let added = false;
      update((state) => void (added = enqueue(state.queue, text)));
      return added ? "queued" : "full";
    }
    start(text, []);
    return "sent";
  }

  function note(text: string): void {
    update((state) => addNotice(state.timeline, text));
  }

  /** A choice from a command or a picker; the allowed values are named when one is wrong. */
  function choose(name: "model" | "reasoning" | "speed" | "depth" | "workflow", value: string): void {
    const allowed = choicesFor(name);
    if (value === "auto" && name === "model") {
      update((state) => void delete state.choices.model);
      // Back to the configured model before the fresh conversation began: nothing to clear.
      freshConversation = false;
      return note("model: each agent's configured model for the next runs");
    }
    if ((name === "workflow" && value === "off") || (name !== "model" && name !== "workflow" && value === "default")) {
      update((state) => void delete state.choices[name]);
      if (name === "workflow") return freshNextRun("workflow: off — back to direct agent mode");
      return note(`${name}: the configured default for the next runs`);
    }
    if (!allowed.includes(value)) return note(`${name}: '${value}' is not one of ${allowed.join(", ")}`);
    update((state) => void ((state.choices as Record<string, string>)[name] = value));
    // A new model may not take the effort or speed chosen for the old one: those go back to default.
    if (name === "model") {
      const { reasoning, speed } = read().choices;
      if (reasoning !== undefined && !choicesFor("reasoning").includes(reasoning)) update((state) => void delete state.choices.reasoning);
      if (speed !== undefined && !choicesFor("speed").includes(speed)) update((state) => void delete state.choices.speed);
    }
    if (name === "model") return freshNextRun(`model: ${value}`);
    note(`${name}: ${value} for the next runs${running ? " (the run in flight keeps its own)" : ""}`);
  }

  /**
   * `/model <alias>` and `/workflow off` clear the model's history: the next run starts a new
   * conversation (a new session; the old one stays stored and resumable). The timeline stays on
   * screen; a run in flight finishes in its own conversation first.
   */
  function freshNextRun(what: string): void {
    freshConversation = conversationStarted;
    note(`${what} for the next runs${freshConversation ? "; the next run starts a fresh conversation (model history cleared)" : ""}${running ? " (the run in flight keeps its own)" : ""}`);
  }

  /** The model the next run uses: the chosen one, else the root agent's. */
  function nextModel(): ResolvedModel | undefined {
    return config.models[read().choices.model ?? config.agents[config.defaultAgent]?.model ?? ""];
  }

  function choicesFor(name: string): string[] {
    switch (name) {
      case "model":
        return Object.keys(config.models);
      // What the next run's model takes, by the runtime's own rule (an effort it refuses would fail the run).
      case "reasoning":
        return ["default", ...(nextModel() ? supportedEfforts(nextModel()!) : REASONING_EFFORTS).filter((effort) => effort !== "default")];
      case "speed":
        return ["default", ...(nextModel() ? supportedSpeeds(nextModel()!) : SPEEDS)];
      case "depth":
        return [...WORK_DEPTHS];
      case "workflow":
        return ["off", ...Object.keys(config.workflows)];
      default:
        return [];
    }
  }

  function runCommand(name: string, argument: string, known: boolean): void {
    if (!known) return note(`/${name} is not a command; /help lists them`);
    switch (name) {
      case "model":
      case "reasoning":
      case "speed":
      case "depth":
      case "workflow": {
        if (argument !== "") return choose(name, argument);
        const current = (read().choices as Record<string, string | undefined>)[name] ?? (name === "workflow" ? "off" : name === "model" ? "auto" : "default");
        const options = name === "model" ? ["auto", ...choicesFor(name)] : choicesFor(name);
        return update((state) => void (state.popup = { kind: "picker", command: name, options, current }));
      }
      case "skills":
        return showSkills(argument);
      case "compact":
        session.compact();
        return note("the conversation will be compacted before the next request");
      case "queue":
        return update((state) => void (state.popup = { kind: "queue" }));
      case "help":
        return update((state) => void (state.popup = { kind: "help", lines: helpLines() }));
      case "clear":
        return update((state) => clearTimeline(state.timeline));
      case "new":
        return newSession();
      case "settings":
        return note("the settings workspace arrives with the next TUI release; until then edit ~/.config/zero-cli/config.jsonc");
      case "quit":
        return update((state) => void (state.quitting = true));
    }
  }

  /** `/skills`: the root agent's skills; `/skills <name>`: one skill's origin and instructions. */
  function showSkills(name: string): void {
    let skills: SkillChoice[] = [];
    try {
      skills = options.skills?.() ?? [];
    } catch (error) {
      return note(`skills: ${errorMessage(error)}`);
    }
    if (name === "") {
      const lines = skills.length === 0 ? ["The root agent has no skills (see 'zero skills')."] : skills.map((skill) => `$${skill.id}  ${skill.description}${skill.provenance ? `  (${skill.provenance})` : ""}`);
      return update((state) => void (state.popup = { kind: "text", title: `/skills (${skills.length})`, lines: [...lines, "", "Write $name in a message to have the model load a skill; /skills <name> shows one."] }));
    }
    const skill = skills.find((candidate) => candidate.id === name.replace(/^\$/, ""));
    if (!skill) return note(`skills: no skill '${name}' for the root agent${skills.length ? `; it has ${skills.map((s) => s.id).join(", ")}` : ""}`);
    const text = skill.file ? options.skillText?.(skill.file) : undefined;
    const body = (text ?? "(its SKILL.md could not be read)").split("\n");
    const shown = body.slice(0, SKILL_LINES);
    const lines = [`${skill.file ?? ""}${skill.provenance ? `  (${skill.provenance})` : ""}`, "", ...shown, ...(body.length > shown.length ? [`… ${body.length - shown.length} more lines`] : [])];
    update((state) => void (state.popup = { kind: "text", title: `$${skill.id}`, lines }));
  }

  function newSession(): void {
    running?.cancel();
    session.cancel();
    switchSession();
    update((state) => {
      const fresh = initialState(session.id, state.history.sent);
      Object.assign(state, { ...fresh, choices: state.choices });
    });
  }

  /** A new session (an empty model history) in place of the current one, which stays stored. */
  function switchSession(): void {
    generation += 1;
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = undefined;
    pendingEvents = [];
    stopApprovals();
    const previous = session;
    session = service.open({ kind: "new" });
    stopApprovals = watchApprovals(session);
    // A turn still finishing (cancelled by /new) is left to the service's shutdown, which waits for it.
    if (!previous.busy()) previous.close();
    conversationStarted = false;
    freshConversation = false;
    update((state) => void (state.sessionId = session.id));
  }

  return {
    get session(): Session {
      return session;
    },
    submit,
    choose,
    /** Esc: the active run stops; the next queued message (if any) then starts. */
    cancel(): boolean {
      if (!running) return false;
      running.cancel();
      return true;
    },
    /** A command from a key or a click (Ctrl-L, the start screen's controls): not kept in the history. */
    command(name: string): void {
      runCommand(name, "", true);
    },
    /** The `/queue` editor: E takes a message into the composer; Enter (submit) puts it back. */
    editQueued(id: number): string | undefined {
      const item = read().queue.items.find((candidate) => candidate.id === id);
      if (!item) return undefined;
      update((state) => void (state.editing = id));
      return item.text;
    },
    deleteQueued(id: number): void {
      update((state) => void removeQueued(state.queue, id));
    },
    moveQueued(id: number, by: -1 | 1): void {
      update((state) => moveQueued(state.queue, id, by));
    },
    stopEditing,
    /** The workspace's files for the `@` menu (listed once, on first use; bounded). */
    listFiles(): Promise<string[]> {
      files ??= listWorkspaceFiles(options.workspace)
        .then((listed) => insideWorkspace(options.workspace, listed))
        .catch(() => []);
      return files;
    },
    /** The root agent's skills for the `$` menu. */
    async listSkills(): Promise<SkillChoice[]> {
      try {
        return options.skills?.() ?? [];
      } catch {
        return [];
      }
    },
    /** Y / A / N on the oldest waiting approval. */
    answer(answer: "once" | "always" | "deny"): void {
      const pending = read().approvals[0];
      if (!pending) return;
      session.answerApproval(pending.callId, answer);
      update((state) => {
        state.approvals.shift();
        addDecision(state.timeline, pending.tool, answer);
      });
    },
    /** Replays a resumed session's stored events so its timeline shows again. */
    replay(): void {
      const events: RuntimeEvent[] = [];
      session.subscribe((event) => void events.push(event), { after: 0 })();
      update((state) => {
        state.sessionId = session.id;
        for (const event of events) {
          // The user's turns are not events of their own: each root run's task stands for one.
          if (event.type === "run.started" && event.parentRunId === null) addUserTurn(state.timeline, event.task);
          applyEvent(state.timeline, event);
        }
        state.started = events.length > 0;
      });
    },
    close(): void {
      closed = true;
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      running?.cancel();
      stopApprovals();
      session.close();
    },
  };
}

export type Controller = ReturnType<typeof createController>;
