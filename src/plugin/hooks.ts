import type { CallAnswer, LoopHooks, ProposedCall, StepResultView, StepState } from "../agent/loop-input.ts";
import type { AttachedRunHooks, RunEnd, RunFailure, RunHookIo, RunHooks, RunInfo } from "../agent/run-hooks.ts";
import { messageSchema, type Message } from "../protocol/messages.ts";
import { withinBound } from "../util/timers.ts";
import { callView, frozenCopy, runContext, runResult, stepContext } from "./contexts.ts";
import type { PluginHooks, ToolCall } from "./define.ts";
import type { LoadedPlugin } from "./load.ts";

type HookName = keyof PluginHooks;

/** The most of a thrown message a notice or a block reason quotes. */
const MAX_QUOTED_CHARS = 500;
const STOPPED: unique symbol = Symbol("stopped");

/**
 * What `onError` receives when a hook failed: which plugin, which hook, and what it threw
 * (`cause`). Recognize it by `name === "PluginHookError"`.
 */
export class PluginHookError extends Error {
  override readonly name = "PluginHookError";
  constructor(
    readonly plugin: string,
    readonly hook: HookName,
    cause: unknown,
  ) {
    super(`plugin ${plugin}: ${hook} failed: ${quote(cause)}`, { cause });
  }
}

/** Text of anything thrown, bounded; never throws itself (a thrown value's toString may). */
function quote(value: unknown): string {
  let text: string;
  try {
    text = value instanceof Error ? value.message : typeof value === "string" ? value : String(value);
  } catch {
    text = "an unprintable value";
  }
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}

function described(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

/** The process's plugins as the session's run hooks: loaded once (`ready`), attached to every run. */
export function pluginRunHooks(loading: Promise<readonly LoadedPlugin[]>): RunHooks {
  let plugins: readonly LoadedPlugin[] = [];
  return {
    async ready() {
      plugins = await loading;
    },
    attach: (run, io) => attachPlugins(plugins, run, io),
  };
}

type Invoked = { ok: true; value: unknown } | { ok: false; threw: boolean; error?: unknown };

/**
 * One run's hooks, composed over the plugins in configured order. A hook that throws, rejects or
 * returns something it may not is reported (a `notice` event with source `plugin`, and every
 * plugin's `onError`) and counts as having returned nothing — except `beforeTool`, where the call
 * is blocked instead (fail-safe). While the run is cancelled or past its deadline nobody waits
 * for a hook of the loop; `afterRun` and `onError` of a failed run are always awaited.
 */
export function attachPlugins(plugins: readonly LoadedPlugin[], info: RunInfo, io: RunHookIo): AttachedRunHooks {
  const run = runContext(info);
  const having = (hook: HookName) => plugins.filter((plugin) => plugin.hooks[hook] !== undefined);
  const stopped = new Promise<typeof STOPPED>((resolve) => {
    if (io.signal.aborted) resolve(STOPPED);
    else io.signal.addEventListener("abort", () => resolve(STOPPED), { once: true });
  });

  async function invoke(plugin: LoadedPlugin, hook: HookName, args: unknown[], bounded = true): Promise<Invoked> {
    if (bounded && io.signal.aborted) return { ok: false, threw: false };
    try {
      const call = (plugin.hooks[hook] as (...values: unknown[]) => unknown)(...args);
      // After the run (afterRun, onError at the end) there is no run signal: a time bound instead,
      // so a hook that never settles cannot keep the process (or its exit code) hostage.
      const value = bounded ? await Promise.race([Promise.resolve(call), stopped]) : await endBound(call, hook);
      return value === STOPPED ? { ok: false, threw: false } : { ok: true, value };
    } catch (error) {
      await report(plugin, hook, error, bounded);
      return { ok: false, threw: true, error };
    }
  }

  async function report(plugin: LoadedPlugin, hook: HookName, error: unknown, bounded = true): Promise<void> {
    io.emit({ type: "notice", source: "plugin", message: `plugin ${plugin.file}: ${hook} failed: ${quote(error)}` });
    await tellError(new PluginHookError(plugin.file, hook, error), bounded);
  }

  /** Every plugin's onError; one that fails itself is only noticed (never reported again). */
  async function tellError(error: unknown, bounded: boolean): Promise<void> {
    for (const plugin of having("onError")) {
      try {
        const call = plugin.hooks.onError!(error, run);
        await (bounded ? Promise.race([Promise.resolve(call), stopped]) : endBound(call, "onError"));
      } catch (failure) {
        io.emit({ type: "notice", source: "plugin", message: `plugin ${plugin.file}: onError failed: ${quote(failure)}` });
      }
    }
  }

  const loop: LoopHooks = {};
  const each = async (hook: HookName, args: unknown[]) => {
    for (const plugin of having(hook)) await invoke(plugin, hook, args);
  };
  if (having("beforeStep").length > 0) loop.beforeStep = (state: StepState) => each("beforeStep", [stepContext(run, state)]);
  if (having("beforeModel").length > 0) loop.beforeModel = (request) => beforeModel(request);
  if (having("afterModel").length > 0) {
    loop.afterModel = (result: StepResultView, state: StepState) => {
      const view = Object.freeze({ ...result, toolCalls: Object.freeze(result.toolCalls.map(callView)), usage: Object.freeze({ ...result.usage }) });
      return each("afterModel", [view, stepContext(run, state)]);
    };
  }
  if (having("beforeTool").length > 0) loop.rewriteCall = (call, state) => beforeTool(call, state);
  if (having("afterTool").length > 0) {
    loop.afterCall = (call: ProposedCall, answer: CallAnswer, state: StepState) => {
      const result = Object.freeze({ callId: call.callId, tool: call.tool, status: answer.status, output: answer.output, truncated: answer.truncated });
      return each("afterTool", [result, Object.freeze({ ...stepContext(run, state), call: callView(call) })]);
    };
  }
  if (having("shouldStop").length > 0) loop.shouldStop = (state) => shouldStop(state);

  // Frozen copies of messages, made once per message: zero never mutates a message (a changed
  // one is a new object), so a copy stays true; a copy handed back untouched maps to the original.
  const copies = new WeakMap<Message, Message>();
  const originals = new WeakMap<object, Message>();
  const copyOf = (message: Message): Message => {
    let copy = copies.get(message);
    if (copy === undefined) {
      copy = frozenCopy(message);
      copies.set(message, copy);
      originals.set(copy, message);
    }
    return copy;
  };

  async function beforeModel(request: { step: number; instructions: string; messages: readonly Message[] }) {
    let system = request.instructions;
    let messages = request.messages;
    for (const plugin of having("beforeModel")) {
      const view = Object.freeze(messages.map(copyOf));
      const shown = Object.freeze({ step: request.step, agent: run.agent, model: run.model, system, messages: view });
      const invoked = await invoke(plugin, "beforeModel", [shown]);
      if (!invoked.ok || invoked.value === undefined || invoked.value === shown) continue;
      const next = returnedRequest(invoked.value, view, originals);
      if (typeof next === "string") {
        await report(plugin, "beforeModel", new Error(next));
        continue;
      }
      system = next.system ?? system;
      messages = next.messages ?? messages;
    }
    return system === request.instructions && messages === request.messages ? undefined : { instructions: system, messages: [...messages] };
  }

  async function beforeTool(call: ProposedCall, state: StepState): Promise<{ tool: string; input: unknown } | { block: string } | undefined> {
    const step = stepContext(run, state);
    let current: ToolCall = callView(call);
    let changed = false;
    for (const plugin of having("beforeTool")) {
      const invoked = await invoke(plugin, "beforeTool", [Object.freeze({ ...step, call: current })]);
      if (!invoked.ok) {
        // Stopped: the call is answered "cancelled" anyway. Failed: it never runs unseen.
        if (!invoked.threw) return undefined;
        return { block: `plugin ${plugin.file} failed in beforeTool (${quote(invoked.error)}); the call was not run` };
      }
      if (invoked.value === undefined || invoked.value === current) continue;
      const next = returnedCall(invoked.value);
      if ("problem" in next) {
        await report(plugin, "beforeTool", new Error(next.problem));
        return { block: `plugin ${plugin.file}: beforeTool ${next.problem}; the call was not run` };
      }
      if ("block" in next) return { block: `${next.block} (plugin ${plugin.file})` };
      current = Object.freeze({ callId: call.callId, tool: next.tool, input: next.input });
      changed = true;
    }
    // The loop gets its own (unfrozen) copy: validation may fill defaults in.
    return changed ? { tool: current.tool, input: structuredClone(current.input) } : undefined;
  }

  async function shouldStop(state: StepState): Promise<string | undefined> {
    const context = stepContext(run, state);
    for (const plugin of having("shouldStop")) {
      const invoked = await invoke(plugin, "shouldStop", [context]);
      if (!invoked.ok || invoked.value === false || invoked.value === undefined) continue;
      if (invoked.value === true) return `plugin ${plugin.file} ended the run after step ${state.step} (shouldStop)`;
      await report(plugin, "shouldStop", new Error(`returned ${described(invoked.value)}, not a boolean`));
    }
    return undefined;
  }

  return {
    loop,
    async start() {
      if (io.parent) {
        const parent = runContext(io.parent);
        for (const plugin of having("onAgentSpawn")) await invoke(plugin, "onAgentSpawn", [parent, run]);
      }
      for (const plugin of having("beforeRun")) await invoke(plugin, "beforeRun", [run]);
    },
    async failed(failure: RunFailure) {
      const error =
        failure.kind === "provider"
          ? Object.assign(new Error(failure.message), { name: "ProviderError", category: failure.category, statusCode: failure.statusCode })
          : failure.error;
      await tellError(error, false);
    },
    async end(result: RunEnd) {
      const view = runResult(run, result);
      for (const plugin of having("afterRun")) await invoke(plugin, "afterRun", [view], false);
    },
  };
}

/** How long a hook that runs after its run (afterRun, a final onError) may take. */
export const END_HOOK_MS = 5_000;

function endBound(call: unknown, hook: string): Promise<unknown> {
  return withinBound(Promise.resolve(call), END_HOOK_MS, `${hook} did not finish within ${END_HOOK_MS} ms`);
}

/** A request `beforeModel` returned: its system text and messages, checked; or what is wrong with it. */
function returnedRequest(value: unknown, view: readonly Message[], originals: WeakMap<object, Message>): { system?: string; messages?: readonly Message[] } | string {
  // A returned object is plugin code too (a getter may throw): reading it never fails the run.
  try {
    return readRequest(value, view, originals);
  } catch (error) {
    return `returned a request that could not be read (${quote(error)})`;
  }
}

function readRequest(value: unknown, view: readonly Message[], originals: WeakMap<object, Message>): { system?: string; messages?: readonly Message[] } | string {
  if (typeof value !== "object" || value === null) return `returned ${described(value)}, not a request`;
  const { system, messages } = value as { system?: unknown; messages?: unknown };
  if (system !== undefined && typeof system !== "string") return `returned a request whose system is ${described(system)}, not a string`;
  if (messages === undefined || messages === view) return system === undefined ? {} : { system };
  if (!Array.isArray(messages)) return `returned a request whose messages are ${described(messages)}, not an array`;
  const checked: Message[] = [];
  for (const [index, message] of messages.entries()) {
    const original = typeof message === "object" && message !== null ? originals.get(message) : undefined;
    if (original) {
      checked.push(original);
      continue;
    }
    const parsed = messageSchema.safeParse(message);
    if (!parsed.success) return `returned an invalid message at messages[${index}]: ${parsed.error.issues[0]?.message ?? "not a message"}`;
    checked.push(parsed.data);
  }
  return { ...(system === undefined ? {} : { system }), messages: checked };
}

/** A call `beforeTool` returned: a new call (frozen copy), a block, or what is wrong with it. */
function returnedCall(value: unknown): { tool: string; input: unknown } | { block: string } | { problem: string } {
  try {
    return readCall(value);
  } catch (error) {
    return { problem: `returned a call that could not be read (${quote(error)})` };
  }
}

function readCall(value: unknown): { tool: string; input: unknown } | { block: string } | { problem: string } {
  if (typeof value !== "object" || value === null) return { problem: `returned ${described(value)}, not a tool call, { block } or nothing` };
  const { tool, input, block } = value as { tool?: unknown; input?: unknown; block?: unknown };
  if (block !== undefined) {
    return typeof block === "string" && block.trim() !== "" ? { block: quote(block) } : { problem: "returned a block without a reason (block must be a non-empty string)" };
  }
  if (typeof tool !== "string" || tool === "" || tool.length > 128) return { problem: "returned a call without a tool name" };
  try {
    return { tool, input: frozenCopy(input) };
  } catch {
    return { problem: `returned a call to ${tool} whose input is not plain data` };
  }
}
