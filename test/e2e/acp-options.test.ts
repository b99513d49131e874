/**
 * `zero acp` session options as an editor sees them (ACP-04, 05, 18, slash commands, usage):
 * modes, config options (model, reasoning, depth, workflow) applied to the next prompt,
 * workflows run as phases, commands answered without a model call, usage updates.
 * Listing, loading and resuming stored sessions are in acp-sessions.test.ts.
 * The real CLI over stdio, the SDK's client, the scripted fake provider; no mocks.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { FakeProvider, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { waitUntil, type Sandbox } from "../support/cli.ts";
import {
  aliasConfig,
  errorText,
  expectOnlyJsonRpc,
  lastRequestId,
  MODEL_CAPABILITIES,
  newAcpSession,
  prompt,
  responseIndex,
  startInitialized,
  textOf,
  updatesIn,
  updatesOfKind,
  type AcpAgent,
} from "../support/acp-client.ts";
import { scriptBySender, senderOf, toolNames } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const config = (extra: Record<string, unknown> = {}) => aliasConfig(fake.url, extra);
const started = () => startInitialized(sandbox);
const create = async (a: AcpAgent, extra: Partial<acp.NewSessionRequest> = {}) => newAcpSession(a, sandbox.workspace, extra);

/** The one workspace store under the sandbox's XDG_STATE_HOME, read-only. */
function storeOf(): Database {
  const base = join(sandbox.stateHome, "zero-cli");
  const [hash] = readdirSync(base);
  const dir = join(base, hash!);
  const file = readdirSync(dir).find((name) => name.endsWith(".db") || name.endsWith(".sqlite"));
  return new Database(join(dir, file!), { readonly: true });
}

test("ACP-04/05/18: one mode; model, reasoning and depth options apply to the next prompt; bad values are -32602 naming the allowed ones; set_model works", async () => {
  sandbox.writeUserConfig(config());
  const a = await started();
  try {
    const created = await create(a);
    const sessionId = created.sessionId;
    expect(created.modes).toMatchObject({ currentModeId: "zero" });
    expect(created.modes!.availableModes.map((m) => m.id)).toEqual(["zero"]);
    const options = created.configOptions!;
    expect(options.map((o) => o.id)).toEqual(["model", "reasoning", "depth", "workflow"]); // the built-in workflow "feature"
    expect(options[0]).toMatchObject({ id: "model", category: "model", type: "select", currentValue: "fake" });
    expect(((options[0] as any).options as acp.SessionConfigSelectOption[]).map((o) => o.value)).toEqual(expect.arrayContaining(["fake", "other", "picky", "reviewer", "scout"]));
    expect(options[1]).toMatchObject({ id: "reasoning", category: "thought_level", currentValue: "default" });
    expect(options[2]).toMatchObject({ id: "depth", category: "_depth", currentValue: "medium" });

    // Modes: only "zero".
    await expect(a.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "explore" })).rejects.toMatchObject({ code: -32602 });
    expect(await a.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "zero" })).toEqual({});

    // model=other: the next request asks the fake for other-1.
    const set = (configId: string, value: string) => a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
    const afterModel = await set("model", "other");
    expect(afterModel.configOptions.find((o) => o.id === "model")?.currentValue).toBe("other");
    fake.script([{ text: "one" }]);
    await prompt(a, sessionId, "first");
    expect(fake.requests.at(-1)!.body.model).toBe("other-1");

    // Reasoning and depth: valid values are taken, others refused naming what is allowed.
    expect((await set("reasoning", "high")).configOptions.find((o) => o.id === "reasoning")?.currentValue).toBe("high");
    expect((await set("depth", "flash")).configOptions.find((o) => o.id === "depth")?.currentValue).toBe("flash");
    const badDepth = await set("depth", "deep").catch((e) => e);
    expect(badDepth).toMatchObject({ code: -32602 });
    expect(errorText(badDepth)).toContain("flash, medium, pro, ultra");
    const badEffort = await set("reasoning", "extreme").catch((e) => e);
    expect(badEffort).toMatchObject({ code: -32602 });
    expect(errorText(badEffort)).toContain("low, medium, high");
    const badModel = await set("model", "gpt-nope").catch((e) => e);
    expect(badModel).toMatchObject({ code: -32602 });
    expect(errorText(badModel)).toContain("other");
    await expect(set("speed", "fast")).rejects.toMatchObject({ code: -32602 });
    // A refused value changes nothing: the next prompt runs other-1, effort high, depth flash (no todo ledger).
    fake.script([{ text: "two" }]);
    await prompt(a, sessionId, "second");
    const second = fake.requests.at(-1)!;
    expect(second.body.model).toBe("other-1");
    expect(second.body.reasoning_effort).toBe("high");
    expect(toolNames(second)).not.toContain("todo");
    expect(toolNames(second)).not.toContain("delegate");

    // Depth back to medium: the todo ledger is offered again.
    await set("depth", "medium");
    await set("reasoning", "default");
    // The legacy session/set_model.
    expect(await a.agent.request("session/set_model", { sessionId, modelId: "fake" })).toEqual({});
    await expect(a.agent.request("session/set_model", { sessionId, modelId: "gpt-nope" })).rejects.toMatchObject({ code: -32602 });
    fake.script([{ text: "three" }]);
    await prompt(a, sessionId, "third");
    const third = fake.requests.at(-1)!;
    expect(third.body.model).toBe("fake-1");
    expect(third.body.reasoning_effort).toBeUndefined();
    expect(toolNames(third)).toContain("todo");

    // Choices are the session's: a second session starts from the configuration's.
    const other = (await create(a)).sessionId;
    fake.script([{ text: "four" }]);
    await prompt(a, other, "fourth");
    expect(fake.requests.at(-1)!.body.model).toBe("fake-1");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);

test("ACP-18: a reasoning effort the chosen model does not support is refused with -32602 at set_config_option", async () => {
  sandbox.writeUserConfig(config());
  const a = await started();
  try {
    const sessionId = (await create(a)).sessionId;
    const set = (configId: string, value: string) => a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
    const picked = await set("model", "picky");
    const offered = ((picked.configOptions.find((o) => o.id === "reasoning") as any).options as acp.SessionConfigSelectOption[]).map((o) => o.value);
    expect(offered).toEqual(["default", "low", "high"]);
    // "max" is not among the options the server itself offers for picky.
    const refused = await set("reasoning", "max").catch((e) => e);
    if (refused?.code !== -32602) {
      // Accepted: then the next prompt fails instead of the choice being refused.
      const outcome = await prompt(a, sessionId, "hi").catch((e) => e);
      throw new Error(`set_config_option reasoning=max for picky answered ${JSON.stringify(refused).slice(0, 200)}...; the next prompt then answered ${errorText(outcome)}`);
    }
    expect(errorText(refused)).toContain("low, high");
  } finally {
    expect(await a.stop()).toBe(0);
  }
}, 30_000);

test("ACP-18: a configured workflow chosen as the workflow option runs its phases and streams them", async () => {
  sandbox.writeUserConfig(config({ agents: { explore: { model: "scout" }, review: { model: "reviewer" } }, workflows: { pair: { steps: ["explore", "review"], description: "look, then review" } } }));
  const a = await started();
  try {
    const created = await create(a);
    const sessionId = created.sessionId;
    const workflow = created.configOptions!.find((o) => o.id === "workflow") as any;
    expect(workflow).toMatchObject({ category: "_workflow", currentValue: "off" });
    expect(workflow.options.map((o: any) => o.value)).toEqual(["off", "feature", "pair"]); // feature is built in
    expect(workflow.options.find((o: any) => o.value === "pair").description).toBe("look, then review");
    await expect(a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "workflow", value: "nope" })).rejects.toMatchObject({ code: -32602 });
    const chosen = await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "workflow", value: "pair" });
    expect(chosen.configOptions.find((o) => o.id === "workflow")?.currentValue).toBe("pair");

    scriptBySender(fake, { explore: [{ text: "EXPLORED: the answer is in README.md" }], review: [{ text: '{"summary": "REVIEWED fine", "verdict": "approve", "issues": []}' }] });
    expect(await prompt(a, sessionId, "check the readme")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests.map(senderOf)).toEqual(["explore", "review"]);
    expect(fake.requests.map((r: RecordedRequest) => r.body.model)).toEqual(["scout-1", "reviewer-1"]);
    // Each phase is a child run: a tool call run:<id> that completes.
    await waitUntil("both phases' completions", () => updatesOfKind(a.updates, "tool_call_update", sessionId).filter((u) => u.toolCallId.startsWith("run:") && u.status === "completed").length === 2);
    const phases = updatesOfKind(a.updates, "tool_call", sessionId).filter((u) => u.toolCallId.startsWith("run:"));
    expect(phases.map((p) => p.kind)).toEqual(["think", "think"]);
    expect(phases.map((p) => (p._meta as any)?.zero?.agent)).toEqual(["explore", "review"]);

  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);

test("ACP-18: a session goes on after a workflow turn: the workflow again, a plain turn (workflow=off), and session/load in a new process", async () => {
  sandbox.writeUserConfig(config({ workflows: { pair: { steps: ["explore", "review"] } } }));
  const phases = () => scriptBySender(fake, { explore: [{ text: "EXPLORED" }], review: [{ text: '{"summary": "REVIEWED", "verdict": "approve", "issues": []}' }] });
  const a = await started();
  let sessionId: string;
  try {
    sessionId = (await create(a)).sessionId;
    await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "workflow", value: "pair" });
    phases();
    expect(await prompt(a, sessionId, "check the readme")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests.map(senderOf)).toEqual(["explore", "review"]);

    // The same workflow again.
    phases();
    const again = await prompt(a, sessionId, "check it again").catch((e) => e);
    expect(errorText(again)).not.toContain("no longer configured");
    expect(again).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests.map(senderOf)).toEqual(["explore", "review", "explore", "review"]);

    // workflow=off: a plain turn of the root agent.
    await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "workflow", value: "off" });
    fake.script([{ text: "plain" }]);
    const plain = await prompt(a, sessionId, "just answer").catch((e) => e);
    expect(errorText(plain)).not.toContain("no longer configured");
    expect(plain).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(5);
    expect(fake.requests[4]!.body.model).toBe("fake-1");
    expect(senderOf(fake.requests[4]!)).toBe("root");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  const b = await started();
  try {
    const loaded = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: sandbox.workspace, mcpServers: [] }).catch((e) => e);
    expect(errorText(loaded)).not.toContain("no longer configured");
    expect(loaded.modes?.currentModeId).toBe("zero");
  } finally {
    expect(await b.stop()).toBe(0);
  }
}, 30_000);

test("slash commands: advertised after session/new; /depth answers without a model call and the next turn runs at that depth; usage_update during a turn", async () => {
  sandbox.writeUserConfig(config({ models: { fake: { provider: "fake", model: "fake-1", capabilities: MODEL_CAPABILITIES, contextWindow: 64_000 } } }));
  const a = await started();
  try {
    const sessionId = (await create(a)).sessionId;
    await waitUntil("available_commands_update", () => updatesOfKind(a.updates, "available_commands_update", sessionId).length > 0, 5_000);
    const commands = updatesOfKind(a.updates, "available_commands_update", sessionId)[0]!.availableCommands.map((c) => c.name);
    expect(commands).toEqual(["compact", "depth", "model", "reasoning", "workflow"]); // the built-in workflow "feature"
    // It comes after the session/new answer on the wire.
    const newAnswer = await responseIndex(a, lastRequestId(a, "session/new"));
    expect(updatesIn(a.received().slice(0, newAnswer), sessionId)).toEqual([]);

    // /depth pro: answered by the server, no model request, a config_option_update.
    expect(await prompt(a, sessionId, "/depth pro")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(0);
    const depthAnswer = await responseIndex(a, lastRequestId(a, "session/prompt"));
    const commandUpdates = updatesIn(a.received().slice(newAnswer + 1, depthAnswer), sessionId);
    const optionUpdate = commandUpdates.find((u) => u.sessionUpdate === "config_option_update") as any;
    expect(optionUpdate.configOptions.find((o: any) => o.id === "depth").currentValue).toBe("pro");
    expect(commandUpdates.filter((u) => u.sessionUpdate === "agent_message_chunk")).toHaveLength(1);

    // A bad value: answered with the allowed ones, still no model request and no option change.
    expect(await prompt(a, sessionId, "/depth bottomless")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(0);
    const badAnswer = await responseIndex(a, lastRequestId(a, "session/prompt"));
    const badUpdates = updatesIn(a.received().slice(depthAnswer + 1, badAnswer), sessionId);
    expect(badUpdates.map((u) => u.sessionUpdate)).toEqual(["agent_message_chunk"]);
    expect(JSON.stringify(badUpdates[0])).toContain("flash, medium, pro, ultra");

    // /model other is a command too.
    expect(await prompt(a, sessionId, "/model other")).toMatchObject({ stopReason: "end_turn" });
    expect(await prompt(a, sessionId, "/model fake")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(0);

    // The next prompt runs at depth pro (the stored run says so) and streams usage_update.
    const before = a.updates.length;
    fake.script([{ text: "deep answer" }]);
    expect(await prompt(a, sessionId, "think hard")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body.model).toBe("fake-1");
    const turnAnswer = await responseIndex(a, lastRequestId(a, "session/prompt"));
    const usage = updatesIn(a.received().slice(badAnswer + 1, turnAnswer), sessionId).filter((u) => u.sessionUpdate === "usage_update") as any[];
    expect(usage.length).toBeGreaterThan(0);
    expect(usage[0].size).toBe(64_000);
    expect(usage[0].used).toBeGreaterThan(0);
    expect(usage[0].used).toBeLessThan(64_000);
    await waitUntil("the turn's text", () => textOf(a.updates.slice(before), "agent_message_chunk") === "deep answer");
    const db = storeOf();
    try {
      const runs = db.query("SELECT work_depth, model_alias FROM runs WHERE session_id = ? AND parent_id IS NULL").all(sessionId) as Array<{ work_depth: string; model_alias: string }>;
      expect(runs).toEqual([{ work_depth: "pro", model_alias: "fake" }]);
    } finally {
      db.close();
    }

    // /compact: answered at once, no model request.
    expect(await prompt(a, sessionId, "/compact")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(1);
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);
