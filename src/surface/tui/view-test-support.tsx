// The TUI view over a store, with a recording stand-in for the controller (its behaviour is tested
// in controller.test.ts): frames as text, keys through OpenTUI's mock input.
import { afterEach } from "bun:test";
import { testRender } from "@opentui/solid";
import { createStore, produce } from "solid-js/store";
import { configSandbox, removeConfigSandboxes } from "../../config/config-test-support.ts";
import { loadConfig } from "../../config/load.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { App, type TuiActions } from "./app.tsx";
import { initialState, type TuiState, type Update } from "./controller.ts";
import { editQueued, moveQueued, removeQueued } from "./queue.ts";
import { addUserTurn } from "./timeline.ts";


export let setup: Awaited<ReturnType<typeof testRender>> | undefined;
afterEach(() => {
  setup?.renderer.destroy();
  setup = undefined;
  removeConfigSandboxes();
});

export function config() {
  const box = configSandbox();
  box.userFile(JSON.stringify({ models: { fast: { provider: "openai", model: "gpt-x" } }, agents: { build: { model: "fast" } } }));
  return loadConfig({ workspace: box.ws, env: box.env }).config;
}

let sequence = 0;
export const event = (runId: string, body: Record<string, unknown>) =>
  ({ eventId: crypto.randomUUID(), sequence: ++sequence, timestamp: new Date().toISOString(), runId, ...body }) as unknown as RuntimeEvent;

/** A lone ESC is told from an escape sequence by a 20 ms pause of the input parser. */
export async function escape() {
  setup!.mockInput.pressEscape();
  await Bun.sleep(60);
}

export async function mount(prepare: (state: TuiState) => void = () => {}, width = 100, height = 30, files: string[] = []) {
  const [state, setState] = createStore<TuiState>(initialState("s-1"));
  const update: Update = (change) => setState(produce(change));
  update(prepare);
  const calls: string[] = [];
  let exits = 0;
  const actions: TuiActions = {
    submit: (text) => {
      calls.push(`submit:${text}`);
      const editing = state.editing;
      if (editing !== undefined) {
        update((s) => {
          editQueued(s.queue, editing, text);
          delete s.editing;
        });
        return "edited";
      }
      if (text.trim() === "") return "empty";
      update((s) => {
        addUserTurn(s.timeline, text);
        s.started = true;
      });
      return "sent";
    },
    cancel: () => (calls.push("cancel"), true),
    answer: (answer) => {
      calls.push(`answer:${answer}`);
      update((s) => void s.approvals.shift());
    },
    choose: (name, value) => void calls.push(`choose:${name}=${value}`),
    command: (name) => void calls.push(`command:${name}`),
    editQueued: (id) => {
      calls.push(`edit:${id}`);
      let text: string | undefined;
      update((s) => {
        text = s.queue.items.find((item) => item.id === id)?.text;
        if (text !== undefined) s.editing = id;
      });
      return text;
    },
    deleteQueued: (id) => update((s) => void removeQueued(s.queue, id)),
    moveQueued: (id, by) => update((s) => moveQueued(s.queue, id, by)),
    stopEditing: () => update((s) => void delete s.editing),
    listFiles: async () => files,
    listSkills: async () => [{ id: "release-notes", description: "write the release notes" }],
  };
  setup = await testRender(() => <App state={state} update={update} actions={actions} config={config()} cwd="/work/ws" onExit={() => exits++} tickMs={0} />, { width, height, exitOnCtrlC: false });
  await setup.waitForVisualIdle();
  return { state, update, calls, exits: () => exits };
}

