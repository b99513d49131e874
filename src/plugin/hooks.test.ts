import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunInfo } from "../agent/run-hooks.ts";
import { call, finalStep, lastToolParts, ofType, removeWorkspaces, run, toolStep, usageOf } from "../agent/loop-test-support.ts";
import type { EventBody } from "../protocol/events.ts";
import { userMessage, type Message } from "../protocol/messages.ts";
import type { PluginHooks, RunHookContext, ToolHookContext } from "./define.ts";
import { attachPlugins } from "./hooks.ts";
import type { LoadedPlugin } from "./load.ts";

afterEach(removeWorkspaces);

const INFO: RunInfo = {
  runId: "run-1",
  sessionId: "ses-1",
  rootRunId: "run-1",
  parentRunId: null,
  depth: 0,
  agent: "tester",
  model: "fake",
  task: "please do the thing",
  workspace: "/ws",
  permissionMode: "ask",
  workDepth: "flash",
  surface: "cli",
};

const plugin = (file: string, hooks: PluginHooks): LoadedPlugin => ({ file, hooks, tools: [] });

/** The plugins' hooks of one run, with the notices they report. */
function attach(plugins: LoadedPlugin[], options: { signal?: AbortSignal; parent?: RunInfo } = {}) {
  const notices: EventBody[] = [];
  const attached = attachPlugins(plugins, INFO, {
    emit: (event) => notices.push(event),
    signal: options.signal ?? new AbortController().signal,
    ...(options.parent ? { parent: options.parent } : {}),
  });
  return { attached, notices };
}

describe("the order hooks fire in", () => {
  test("a one-tool run: run, step, model, tool, stop check, next step, end", async () => {
    const log: string[] = [];
    const named = (name: string) => () => void log.push(name);
    const { attached } = attach([
      plugin("/p/log.ts", {
        beforeRun: named("beforeRun"),
        beforeStep: (c) => void log.push(`beforeStep ${c.step}`),
        beforeModel: named("beforeModel"),
        afterModel: (r) => void log.push(`afterModel ${r.toolCalls.map((t) => t.tool).join(",")}`),
        beforeTool: (c) => void log.push(`beforeTool ${c.call.tool}`),
        afterTool: (r) => void log.push(`afterTool ${r.tool} ${r.status}`),
        shouldStop: (c) => (log.push(`shouldStop ${c.step}`), false),
        afterRun: (r) => void log.push(`afterRun ${r.status}`),
      }),
    ]);
    await attached.start();
    const { result } = await run({ script: [toolStep([call("c1", "probe", { a: 1 })]), finalStep()], hooks: attached.loop });
    await attached.end({ status: result.status, reason: result.reason, exitCode: 0, text: result.text, usage: result.usage, steps: result.steps, toolCalls: result.toolCalls });
    expect(log).toEqual([
      "beforeRun",
      "beforeStep 1",
      "beforeModel",
      "afterModel probe",
      "beforeTool probe",
      "afterTool probe completed",
      "shouldStop 1",
      "beforeStep 2",
      "beforeModel",
      "afterModel ",
      "afterRun completed",
    ]);
  });

  test("a child's run: onAgentSpawn(parent, child) before its beforeRun", async () => {
    const log: string[] = [];
    const parent: RunInfo = { ...INFO, runId: "run-0", agent: "build" };
    const { attached } = attach(
      [plugin("/p/a.ts", { onAgentSpawn: (p, c) => void log.push(`spawn ${p.agent}→${c.agent}`), beforeRun: (c) => void log.push(`beforeRun ${c.agent}`) })],
      { parent },
    );
    await attached.start();
    expect(log).toEqual(["spawn build→tester", "beforeRun tester"]);
  });
});

describe("beforeTool", () => {
  test("plugins rewrite in configured order; the rewritten call is validated and run, the history keeps the model's call", async () => {
    const seen: unknown[] = [];
    const { attached } = attach([
      plugin("/p/a.ts", { beforeTool: ({ call: c }) => (seen.push(c.input), { ...c, input: { a: 2 } }) }),
      plugin("/p/b.ts", { beforeTool: ({ call: c }) => (seen.push(c.input), { ...c, input: { a: (c.input as { a: number }).a + 1 } }) }),
    ]);
    const { result, counters, events } = await run({ script: [toolStep([call("c1", "probe", { a: 1 })]), finalStep()], hooks: attached.loop });
    expect(seen).toEqual([{ a: 1 }, { a: 2 }]);
    expect(counters.probe).toBe(1);
    expect(lastToolParts(result.history.slice(0, -1))[0]).toMatchObject({ callId: "c1", tool: "probe", output: { type: "text", value: 'probe {"a":3}' } });
    expect(ofType(events, "tool.requested")[0]).toMatchObject({ tool: "probe", input: { a: 3 } });
    const made = result.history.find((m) => m.role === "assistant")!;
    expect(made.parts[0]).toMatchObject({ type: "tool-call", tool: "probe", input: { a: 1 } });
  });

  test("a rewrite is judged by policy: read turned into a write is denied in read-only mode", async () => {
    const { attached } = attach([plugin("/p/a.ts", { beforeTool: ({ call: c }) => ({ callId: c.callId, tool: "edit", input: { path: "b.txt", content: "x" } }) })]);
    const { counters, events, ws } = await run({ mode: "read-only", script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(counters.edit).toBe(0);
    expect(existsSync(join(ws, "b.txt"))).toBe(false);
    expect(ofType(events, "permission.decided")[0]).toMatchObject({ tool: "edit", decision: "deny", source: "mode" });
    expect(ofType(events, "tool.completed")[0]).toMatchObject({ tool: "edit", status: "denied" });
  });

  test("a rewrite to a tool the agent does not have is refused like the model's own call", async () => {
    const { attached } = attach([plugin("/p/a.ts", { beforeTool: ({ call: c }) => ({ ...c, tool: "run" }) })]);
    const { events } = await run({ mode: "full-access", script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(ofType(events, "tool.completed")[0]).toMatchObject({ tool: "run", status: "failed", output: "tool 'run' is not allowed for agent tester" });
  });

  test("{ block } refuses the call: nothing runs, the model is told why", async () => {
    const { attached, notices } = attach([plugin("/p/a.ts", { beforeTool: () => ({ block: "not today" }) })]);
    const { counters, result } = await run({ script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(counters.probe).toBe(0);
    expect(lastToolParts(result.history.slice(0, -1))[0]!.output).toEqual({ type: "error-text", value: "blocked: not today (plugin /p/a.ts)" });
    expect(notices).toEqual([]);
  });

  test("a throwing beforeTool blocks the call (fail-safe), is reported, and later plugins are not asked", async () => {
    const errors: unknown[] = [];
    let laterAsked = false;
    const { attached, notices } = attach([
      plugin("/p/a.ts", { beforeTool: () => Promise.reject(new Error("bad rule")), onError: (error) => void errors.push(error) }),
      plugin("/p/b.ts", { beforeTool: () => void (laterAsked = true), onError: (error) => void errors.push(error) }),
    ]);
    const { counters, result } = await run({ script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(counters.probe).toBe(0);
    expect(laterAsked).toBe(false);
    expect(result.status).toBe("completed");
    expect(lastToolParts(result.history.slice(0, -1))[0]!.output).toEqual({ type: "error-text", value: "blocked: plugin /p/a.ts failed in beforeTool (bad rule); the call was not run" });
    expect(notices).toEqual([{ type: "notice", source: "plugin", message: "plugin /p/a.ts: beforeTool failed: bad rule" }]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ name: "PluginHookError", plugin: "/p/a.ts", hook: "beforeTool" });
    expect((errors[0] as Error).cause).toBeInstanceOf(Error);
  });

  test("a return that is neither a call nor a block blocks the call and is reported", async () => {
    const { attached, notices } = attach([plugin("/p/a.ts", { beforeTool: () => 42 as never })]);
    const { counters } = await run({ script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(counters.probe).toBe(0);
    expect(notices[0]).toMatchObject({ source: "plugin", message: "plugin /p/a.ts: beforeTool failed: returned number, not a tool call, { block } or nothing" });
  });

  test("what a hook is given is frozen: changing it changes nothing", async () => {
    let threw = false;
    const { attached } = attach([
      plugin("/p/a.ts", {
        beforeTool(context: ToolHookContext) {
          try {
            (context.call.input as { a: number }).a = 99;
          } catch {
            threw = true;
          }
        },
      }),
    ]);
    const { events } = await run({ script: [toolStep([call("c1", "probe", { a: 1 })]), finalStep()], hooks: attached.loop });
    expect(threw).toBe(true);
    expect(ofType(events, "tool.completed")[0]!.output).toBe('probe {"a":1}');
  });

  test("afterTool sees every call, denied ones included, with the call that was judged", async () => {
    const results: string[] = [];
    const { attached } = attach([plugin("/p/a.ts", { afterTool: (r, c) => void results.push(`${r.callId} ${c.call.tool} ${r.status}`) })]);
    await run({ script: [toolStep([call("c1", "probe", {}), call("c2", "edit", { path: "x", content: "y" })]), finalStep()], hooks: attached.loop });
    expect(results.sort()).toEqual(["c1 probe completed", "c2 edit denied"]);
  });
});

describe("beforeModel", () => {
  test("may change the system text and the messages of one request; the history stays as it was", async () => {
    const { attached } = attach([
      plugin("/p/a.ts", {
        beforeModel: (request) => ({ ...request, system: `${request.system}\nAlways answer in French.`, messages: [...request.messages, userMessage("(reminder: be brief)")] }),
      }),
    ]);
    const seen: string[] = [];
    const { result, requests } = await run({
      script: [(request) => (seen.push(request.instructions), finalStep())],
      hooks: attached.loop,
    });
    expect(seen).toEqual(["you are a test\nAlways answer in French."]);
    expect(requests[0]!.at(-1)).toEqual(userMessage("(reminder: be brief)"));
    expect(result.history.some((m: Message) => JSON.stringify(m).includes("reminder"))).toBe(false);
  });

  test("an invalid message is reported and the request is sent unchanged", async () => {
    const { attached, notices } = attach([plugin("/p/a.ts", { beforeModel: (request) => ({ ...request, messages: [{ role: "robot" }] as never }) })]);
    const { requests } = await run({ script: [finalStep()], hooks: attached.loop });
    expect(requests[0]).toEqual([userMessage("please do the thing")]);
    expect(notices[0]).toMatchObject({ source: "plugin" });
    expect((notices[0] as { message: string }).message).toStartWith("plugin /p/a.ts: beforeModel failed: returned an invalid message at messages[0]");
  });
});

describe("shouldStop", () => {
  test("true after step 2 ends the run there: exactly two model calls, status limit, reason plugin", async () => {
    const { attached } = attach([plugin("/p/a.ts", { shouldStop: ({ step }) => step > 1 })]);
    const { result, requests, events } = await run({
      script: [toolStep([call("c1", "probe", {})]), toolStep([call("c2", "probe", { a: 2 })]), finalStep()],
      hooks: attached.loop,
    });
    expect(requests).toHaveLength(2);
    expect(result).toMatchObject({ status: "limit", reason: "plugin", steps: 2 });
    expect(ofType(events, "guard.triggered")).toEqual([{ type: "guard.triggered", guard: "plugin", message: "plugin /p/a.ts ended the run after step 2 (shouldStop)" }]);
  });

  test("a throwing shouldStop is reported and the run goes on", async () => {
    const { attached, notices } = attach([plugin("/p/a.ts", { shouldStop: () => { throw new Error("oops"); } })]);
    const { result } = await run({ script: [toolStep([call("c1", "probe", {})]), finalStep()], hooks: attached.loop });
    expect(result.status).toBe("completed");
    expect(notices).toEqual([{ type: "notice", source: "plugin", message: "plugin /p/a.ts: shouldStop failed: oops" }]);
  });
});

describe("failures and cancellation", () => {
  test("a hook that never settles does not keep a cancelled run waiting", async () => {
    const controller = new AbortController();
    const { attached } = attach([plugin("/p/a.ts", { beforeStep: () => new Promise<void>(() => {}) })], { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const { result } = await run({ script: [finalStep()], hooks: attached.loop, controller });
    expect(result.status).toBe("cancelled");
  });

  test("a failed run: onError gets the provider's failure, afterRun the result; neither can be changed", async () => {
    const got: unknown[] = [];
    const { attached } = attach([plugin("/p/a.ts", { onError: (error, context) => void got.push(error, context), afterRun: (result) => void got.push(result) })]);
    await attached.failed({ kind: "provider", category: "unavailable", message: "upstream exploded", statusCode: 500 });
    await attached.end({ status: "failed", reason: "provider_error", exitCode: 3, text: "", usage: usageOf(1, 1), steps: 1, toolCalls: 0 });
    expect(got[0]).toMatchObject({ name: "ProviderError", message: "upstream exploded", category: "unavailable", statusCode: 500 });
    expect(got[1]).toMatchObject({ runId: "run-1", agent: "tester" });
    expect(got[2]).toMatchObject({ runId: "run-1", status: "failed", reason: "provider_error", exitCode: 3 });
    expect(Object.isFrozen(got[1])).toBe(true);
    expect(Object.isFrozen((got[2] as { usage: object }).usage)).toBe(true);
  });

  test("a throwing onError is only noticed, never reported again", async () => {
    const { attached, notices } = attach([plugin("/p/a.ts", { beforeRun: () => { throw new Error("first"); }, onError: () => { throw new Error("second"); } })]);
    await attached.start();
    expect(notices.map((n) => (n as { message: string }).message)).toEqual(["plugin /p/a.ts: beforeRun failed: first", "plugin /p/a.ts: onError failed: second"]);
  });

  test("the run context is a frozen copy of the run's data, nothing more", async () => {
    let context: RunHookContext | undefined;
    const { attached } = attach([plugin("/p/a.ts", { beforeRun: (c) => void (context = c) })]);
    await attached.start();
    expect(context).toEqual(INFO);
    expect(Object.isFrozen(context)).toBe(true);
  });
});
