import { afterEach, describe, expect, test } from "bun:test";
import { configSandbox, removeConfigSandboxes } from "./config-test-support.ts";
import type { Limits, MultiAgentSettings } from "./effective.ts";
import { loadConfig } from "./load.ts";
import { WORK_DEPTHS } from "./schema.ts";
import { campaignCeilings, childCeiling, runCeilings, WORK_DEPTH_PRESETS } from "./work-depth.ts";

afterEach(removeConfigSandboxes);

const MIN = 60_000;
const HOUR = 60 * MIN;

const multiAgent = (fields: Partial<MultiAgentSettings> = {}): MultiAgentSettings => ({
  maxDepth: 8,
  maxConcurrent: 8,
  maxChildrenPerAgent: 64,
  defaultContext: "summary",
  cancelChildrenWithParent: true,
  maxRetries: 1,
  ...fields,
});
const limits = (fields: Partial<Limits> = {}): Limits => ({
  runTimeoutMs: 8 * HOUR,
  toolTimeoutMs: 120_000,
  streamIdleTimeoutMs: 300_000,
  maxAttachmentBytes: 10_485_760,
  ...fields,
});

describe("WORK_DEPTH_PRESETS", () => {
  test("the table of the spec, row by row", () => {
    const row = (depth: keyof typeof WORK_DEPTH_PRESETS) => {
      const p = WORK_DEPTH_PRESETS[depth];
      return [p.steps, p.toolCalls, p.repairRounds, p.totalRuns, p.concurrentChildren, p.delegationDepth, p.campaignMs, p.gates];
    };
    expect(row("flash")).toEqual([8, 32, 1, 1, 1, 0, 2 * MIN, []]);
    expect(row("medium")).toEqual([24, 96, 2, 6, 3, 2, 30 * MIN, []]);
    expect(row("pro")).toEqual([64, 256, 6, 24, 6, 4, 2 * HOUR, ["verification", "review"]]);
    expect(row("ultra")).toEqual([100, 500, 12, 64, 8, 8, 8 * HOUR, ["verification", "review"]]);
  });

  test("there is a preset for every work depth the schema accepts", () => {
    expect(Object.keys(WORK_DEPTH_PRESETS).sort()).toEqual([...WORK_DEPTHS].sort());
  });

  test("the presets cannot be changed at runtime", () => {
    expect(Object.isFrozen(WORK_DEPTH_PRESETS)).toBe(true);
    expect(Object.isFrozen(WORK_DEPTH_PRESETS.pro)).toBe(true);
    expect(Object.isFrozen(WORK_DEPTH_PRESETS.pro.gates)).toBe(true);
    expect(() => {
      (WORK_DEPTH_PRESETS.flash as { steps: number }).steps = 1000;
    }).toThrow();
    expect(WORK_DEPTH_PRESETS.flash.steps).toBe(8);
  });
});

describe("runCeilings", () => {
  test("an agent without its own caps gets the preset", () => {
    expect(runCeilings({}, "flash")).toEqual({ maxSteps: 8, maxToolCalls: 32 });
    expect(runCeilings({}, "ultra")).toEqual({ maxSteps: 100, maxToolCalls: 500 });
  });

  test("a smaller agent cap wins over the preset (agent maxSteps 5 with ultra → 5)", () => {
    expect(runCeilings({ maxSteps: 5 }, "ultra")).toEqual({ maxSteps: 5, maxToolCalls: 500 });
    expect(runCeilings({ maxToolCalls: 10 }, "medium")).toEqual({ maxSteps: 24, maxToolCalls: 10 });
  });

  test("a larger agent cap never widens the preset", () => {
    expect(runCeilings({ maxSteps: 1000, maxToolCalls: 5000 }, "medium")).toEqual({ maxSteps: 24, maxToolCalls: 96 });
  });

  test("the built-in profiles' emergency ceilings leave the depth in control", () => {
    const { ws, env } = configSandbox();
    const { agents } = loadConfig({ workspace: ws, env }).config;
    for (const agent of Object.values(agents)) {
      expect(agent.maxToolCalls).toBe(500);
      for (const depth of WORK_DEPTHS) {
        expect(runCeilings(agent, depth)).toEqual({ maxSteps: WORK_DEPTH_PRESETS[depth].steps, maxToolCalls: WORK_DEPTH_PRESETS[depth].toolCalls });
      }
    }
  });
});

describe("campaignCeilings", () => {
  test("with the built-in multiAgent and limits, the preset binds", () => {
    const { ws, env } = configSandbox();
    const { config } = loadConfig({ workspace: ws, env });
    expect(campaignCeilings(config, "flash")).toEqual({ totalRuns: 1, concurrentChildren: 1, delegationDepth: 0, durationMs: 2 * MIN });
    expect(campaignCeilings(config, "medium")).toEqual({ totalRuns: 6, concurrentChildren: 3, delegationDepth: 2, durationMs: 30 * MIN });
    expect(campaignCeilings(config, "ultra")).toEqual({ totalRuns: 64, concurrentChildren: 8, delegationDepth: 8, durationMs: 8 * HOUR });
  });

  test("smaller global settings bind below the preset", () => {
    const config = { multiAgent: multiAgent({ maxConcurrent: 2, maxDepth: 1 }), limits: limits({ runTimeoutMs: 10 * MIN }) };
    expect(campaignCeilings(config, "ultra")).toEqual({ totalRuns: 64, concurrentChildren: 2, delegationDepth: 1, durationMs: 10 * MIN });
  });

  test("larger global settings never widen the preset", () => {
    const config = { multiAgent: multiAgent({ maxConcurrent: 100, maxDepth: 100 }), limits: limits({ runTimeoutMs: 100 * HOUR }) };
    expect(campaignCeilings(config, "pro")).toEqual({ totalRuns: 24, concurrentChildren: 6, delegationDepth: 4, durationMs: 2 * HOUR });
  });

  test("a configured maxDepth 0 forbids delegation at any depth", () => {
    expect(campaignCeilings({ multiAgent: multiAgent({ maxDepth: 0 }), limits: limits() }, "ultra").delegationDepth).toBe(0);
  });
});

describe("childCeiling", () => {
  test("an agent without maxChildren gets maxChildrenPerAgent", () => {
    expect(childCeiling({}, multiAgent({ maxChildrenPerAgent: 2 }))).toBe(2);
  });

  test("the smaller of maxChildren and maxChildrenPerAgent", () => {
    expect(childCeiling({ maxChildren: 64 }, multiAgent({ maxChildrenPerAgent: 2 }))).toBe(2);
    expect(childCeiling({ maxChildren: 3 }, multiAgent({ maxChildrenPerAgent: 64 }))).toBe(3);
    expect(childCeiling({ maxChildren: 0 }, multiAgent({ maxChildrenPerAgent: 64 }))).toBe(0);
  });
});
