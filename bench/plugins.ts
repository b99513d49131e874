// Benchmark of lifecycle plugins: `node_modules/.bin/bun bench/plugins.ts` (after a build).
// Medians over BENCH_PLUGINS_RUNS runs (default 9), the sides alternating in the same process:
// 1. start-up: `zero run --json` from spawn to the fake's first model request, with no plugin and
//    with two (the example command guard, and one with every hook and a tool), both importing
//    the plugin API (and with it Zod) from source as a plugin outside the bundle does;
// 2. per step, in this process: a 40-message history through 20 loop steps of one tool call each,
//    without plugins and with the second plugin's no-op hooks attached (beforeModel copies and
//    freezes the request's messages each step: the dominant cost).
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, spawnZero } from "../test/support/cli.ts";
import { call, finalStep, removeWorkspaces, run, toolStep } from "../src/agent/loop-test-support.ts";
import { attachPlugins } from "../src/plugin/hooks.ts";
import type { LoadedPlugin } from "../src/plugin/load.ts";
import { userMessage, type Message } from "../src/protocol/messages.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_PLUGINS_RUNS ?? 9));
const STEPS = 20;
const DEFINE = resolve(import.meta.dir, "../src/plugin/define.ts");
const EXAMPLE = resolve(import.meta.dir, "../examples/plugins/command-guard.ts");

const EVERY_HOOK = `
import { definePlugin, definePluginTool, z } from ${JSON.stringify(DEFINE)};
let steps = 0;
export default definePlugin({
  hooks: {
    beforeRun() {}, beforeStep() { steps += 1; }, beforeModel() {}, afterModel() {}, beforeTool() {},
    afterTool() {}, onAgentSpawn() {}, shouldStop: () => false, afterRun() {}, onError() {},
  },
  tools: [definePluginTool({ name: "stamp", description: "Says how many steps this process saw.", inputSchema: z.object({ note: z.string().optional() }), risk: "read", kind: "other", execute: () => String(steps) })],
});
`;

async function startup() {
  const fake = await startFakeProvider({ fallback: () => ({ text: "done" }) });
  const none = makeSandbox();
  const two = makeSandbox();
  const hooked = join(two.root, "plugins", "every-hook.ts");
  mkdirSync(join(two.root, "plugins"));
  writeFileSync(hooked, EVERY_HOOK);
  none.writeUserConfig(fakeConfig(fake.url));
  two.writeUserConfig(fakeConfig(fake.url, "chat", { plugins: [EXAMPLE, hooked], agents: { build: { tools: ["read", "write", "run", "find", "search", "delegate", "count_words", "stamp"] } } }));
  const sides = { none, two } as const;
  const samples: Record<keyof typeof sides, number[]> = { none: [], two: [] };
  try {
    for (let i = 0; i <= RUNS; i++) {
      for (const [name, sandbox] of Object.entries(sides) as Array<[keyof typeof sides, typeof none]>) {
        fake.reset();
        const startedAt = performance.timeOrigin + performance.now();
        const result = await spawnZero(["run", "--json", "hi"], { sandbox, timeoutMs: 60_000 }).result;
        if (result.code !== 0 || fake.requests.length !== 1) throw new Error(`${name}: exit ${result.code}, ${fake.requests.length} requests: ${result.stderr.slice(0, 400)}`);
        const offered = (fake.requests[0]!.body.tools ?? []).map((t: any) => t.function.name);
        if (name === "two" && !offered.includes("stamp")) throw new Error("two: the plugin tool was not offered");
        if (i > 0) samples[name].push(fake.requests[0]!.receivedAt - startedAt); // run 0 warms caches
      }
    }
  } finally {
    none.cleanup();
    two.cleanup();
    await fake.close();
  }
  const base = median(samples.none);
  const plugged = median(samples.two);
  console.log(`start → first model request (median of ${RUNS}): no plugins ${base.toFixed(0)} ms, two plugins ${plugged.toFixed(0)} ms (+${(plugged - base).toFixed(0)} ms, ×${(plugged / base).toFixed(2)})`);
}

/** A history of `n` messages: user questions and assistant answers of some length. */
function history(n: number): Message[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0 ? userMessage(`question ${i}: ${"context ".repeat(60)}`) : { role: "assistant" as const, parts: [{ type: "text" as const, text: `answer ${i}: ${"details ".repeat(120)}` }] },
  );
}

async function perStep() {
  const noop = () => {};
  const plugin: LoadedPlugin = {
    file: "/bench/every-hook.ts",
    hooks: { beforeStep: noop, beforeModel: noop, afterModel: noop, beforeTool: noop, afterTool: noop, shouldStop: () => false },
    tools: [],
  };
  const info = { runId: "r", sessionId: "s", rootRunId: "r", parentRunId: null, depth: 0, agent: "tester", model: "fake", task: "t", workspace: "/", permissionMode: "ask" as const, workDepth: "flash" as const, surface: "cli" };
  const script = () => [...Array.from({ length: STEPS }, (_, i) => toolStep([call(`c${i}`, "probe", { a: i })])), finalStep()];
  const samples: Record<"none" | "hooked", number[]> = { none: [], hooked: [] };
  for (let i = 0; i <= RUNS; i++) {
    for (const side of ["none", "hooked"] as const) {
      const hooks = side === "hooked" ? attachPlugins([plugin], info, { emit: () => {}, signal: new AbortController().signal }).loop : undefined;
      const started = performance.now();
      const { result } = await run({ script: script(), history: history(40), limits: { maxSteps: STEPS + 1 }, ...(hooks ? { hooks } : {}) });
      if (result.status !== "completed") throw new Error(`${side}: ${result.status}`);
      if (i > 0) samples[side].push((performance.now() - started) / (STEPS + 1));
      removeWorkspaces();
    }
  }
  const base = median(samples.none);
  const hooked = median(samples.hooked);
  console.log(`loop step with a 40+ message history (median of ${RUNS}, ${STEPS + 1} steps): no plugins ${base.toFixed(2)} ms/step, every hook attached ${hooked.toFixed(2)} ms/step (+${(hooked - base).toFixed(2)} ms)`);
}

await startup();
await perStep();
