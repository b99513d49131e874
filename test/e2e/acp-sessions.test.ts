/**
 * `zero acp` sessions as an editor sees them (ACP-02, 06, 14, 15, 16): stored sessions listed,
 * loaded with their history replayed, resumed, refused when their model changed.
 * Modes, config options, workflows and slash commands are in acp-options.test.ts.
 * The real CLI over stdio, the SDK's client, the scripted fake provider; no mocks.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { FakeProvider } from "../support/fake-provider.ts";
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
  updatesIn,
  type AcpAgent,
} from "../support/acp-client.ts";
import { conversationOf, toolNames } from "../support/delegation.ts";
import { EVERYTHING, fixtureServer, pidsMatching, uniqueTag } from "../fixtures/mcp/support.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const config = (extra: Record<string, unknown> = {}) => aliasConfig(fake.url, extra);
const started = () => startInitialized(sandbox);
const create = async (a: AcpAgent, extra: Partial<acp.NewSessionRequest> = {}) => newAcpSession(a, sandbox.workspace, extra);

/** What `session/list` answers, as session ids. */
async function listed(a: AcpAgent, params: acp.ListSessionsRequest = {}): Promise<string[]> {
  const answer = await a.agent.request(acp.methods.agent.session.list, params);
  return answer.sessions.map((s) => s.sessionId);
}

/** A compact view of updates: kind plus its text or tool call id. */
const brief = (u: acp.SessionUpdate): string => {
  const any = u as any;
  if (any.content?.type === "text") return `${u.sessionUpdate}: ${any.content.text}`;
  if (any.toolCallId) return `${u.sessionUpdate}: ${any.toolCallId}${any.status ? ` ${any.status}` : ""}`;
  return u.sessionUpdate;
};

/** Whether `wanted` appears in `seen` in this order (others may sit between). */
function inOrder(seen: string[], wanted: string[]): boolean {
  let at = 0;
  for (const item of seen) if (at < wanted.length && item === wanted[at]) at++;
  return at === wanted.length;
}

test("ACP-02/06/15/16: sessions are listed at once, continue their history, and are listed, loaded (history replayed first) and resumed by a new process", async () => {
  sandbox.writeUserConfig(config());
  const elsewhere = join(sandbox.root, "elsewhere");
  mkdirSync(elsewhere);
  const a = await started();
  let sessionId: string;
  try {
    sessionId = (await create(a)).sessionId;
    // Listed before any prompt (ACP-15): the session is stored when it is made.
    expect(await listed(a, { cwd: sandbox.workspace })).toEqual([sessionId]);
    const row = (await a.agent.request(acp.methods.agent.session.list, { cwd: sandbox.workspace })).sessions[0]!;
    expect(row.cwd).toBe(sandbox.workspace);
    expect(Number.isNaN(Date.parse(String(row.updatedAt)))).toBe(false);
    expect(await listed(a, { cwd: elsewhere })).toEqual([]);

    fake.script([
      { reasoning: "I should read the readme", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read1" }] },
      { text: "The answer is 42." },
      { text: "Doubled: 84." },
    ]);
    expect(await prompt(a, sessionId, "what is the answer?")).toMatchObject({ stopReason: "end_turn" });
    expect(await prompt(a, sessionId, "and doubled?")).toMatchObject({ stopReason: "end_turn" });
    // ACP-06: the second turn's request carries the first turn whole.
    expect(fake.requests).toHaveLength(3);
    const second = conversationOf(fake.requests[2]!);
    expect(second[0]).toContain("what is the answer?");
    expect(second.some((m) => m.startsWith("tool: ") && m.includes("The answer is 42."))).toBe(true); // README's text, read by the tool
    expect(second).toContain("assistant: The answer is 42.");
    expect(second.at(-1)).toContain("and doubled?");
    await a.agent.request(acp.methods.agent.session.close, { sessionId });
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());

  // A new process: the session is listed from the server's own cwd, not for another workspace.
  const b = await started();
  try {
    expect(await listed(b)).toEqual([sessionId]);
    expect(await listed(b, { cwd: elsewhere })).toEqual([]);

    // Not from another workspace's cwd.
    await expect(b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: elsewhere, mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    // session/load: the history goes out as updates before the answer (wire order).
    const loaded = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: sandbox.workspace, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("zero");
    expect(loaded.configOptions?.find((o) => o.id === "model")?.currentValue).toBe("fake");
    const loadAnswer = await responseIndex(b, lastRequestId(b, "session/load"));
    const replay = updatesIn(b.received().slice(0, loadAnswer), sessionId).map(brief);
    expect(replay.length).toBeGreaterThan(0);
    expect(
      inOrder(replay, [
        "user_message_chunk: what is the answer?",
        "agent_thought_chunk: I should read the readme",
        "tool_call: call_read1 completed",
        "tool_call_update: call_read1 completed",
        "agent_message_chunk: The answer is 42.",
        "user_message_chunk: and doubled?",
        "agent_message_chunk: Doubled: 84.",
      ]),
      `replayed before the answer:\n${replay.join("\n")}`,
    ).toBe(true);
    const replayedCall = updatesIn(b.received().slice(0, loadAnswer), sessionId).find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
    expect(replayedCall).toMatchObject({ kind: "read", rawInput: { path: "README.md" } });
    const replayedResult = updatesIn(b.received().slice(0, loadAnswer), sessionId).find((u) => u.sessionUpdate === "tool_call_update");
    expect(JSON.stringify(replayedResult)).toContain("The answer is 42.");
    expect(fake.requests).toHaveLength(3); // nothing asked of the model to load

    // Closed, then resumed: restored without any replay.
    await b.agent.request(acp.methods.agent.session.close, { sessionId });
    // Resumed with a client MCP server: the restored session gets it.
    const tag = uniqueTag("acp-resume-everything");
    const everything = { name: "everything", command: "node", args: [EVERYTHING, "stdio", tag], env: [] };
    const resumed = (await b.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: sandbox.workspace, mcpServers: [everything] })) as acp.ResumeSessionResponse;
    expect(resumed.modes?.currentModeId).toBe("zero");
    const resumeAnswer = await responseIndex(b, lastRequestId(b, "session/resume"));
    await Bun.sleep(200); // anything the resume would send goes out now
    const afterLoad = updatesIn(b.received().slice(loadAnswer + 1), sessionId).map((u) => u.sessionUpdate);
    expect(afterLoad.filter((kind) => kind !== "available_commands_update")).toEqual([]);
    expect(resumeAnswer).toBeGreaterThan(loadAnswer);

    // A prompt after resume continues the stored conversation.
    fake.script([{ text: "Still 42." }]);
    expect(await prompt(b, sessionId, "remind me")).toMatchObject({ stopReason: "end_turn" });
    const continued = conversationOf(fake.requests[3]!);
    expect(continued[0]).toContain("what is the answer?");
    expect(continued).toContain("assistant: The answer is 42.");
    expect(continued).toContain("assistant: Doubled: 84.");
    expect(continued.at(-1)).toContain("remind me");
    expect(toolNames(fake.requests[3]!)).toContain("mcp__everything__echo");
    expect(pidsMatching(tag).length).toBeGreaterThan(0);
    // Still one session in the store.
    expect(await listed(b)).toEqual([sessionId]);
  } finally {
    expect(await b.stop()).toBe(0);
  }
  expectOnlyJsonRpc(b.raw());
  // The process ended: so did the session's MCP server.
  await waitUntil("the resumed session's MCP server to exit", () => pidsMatching("acp-resume-everything").length === 0, 10_000);
}, 30_000);

test("ACP-14: a session whose model alias now names another model is refused with -32602 before any MCP server starts", async () => {
  sandbox.writeUserConfig(config());
  const a = await started();
  let sessionId: string;
  try {
    sessionId = (await create(a)).sessionId;
    fake.script([{ text: "hello" }]);
    expect(await prompt(a, sessionId, "hi")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests[0]!.body.model).toBe("fake-1");
  } finally {
    expect(await a.stop()).toBe(0);
  }

  // Now alias "fake" means fake-9, and the workspace has a stdio MCP server for the root agent.
  const configured = join(sandbox.root, "configured-server-started");
  const fromClient = join(sandbox.root, "client-server-started");
  sandbox.writeUserConfig(
    config({
      models: { fake: { provider: "fake", model: "fake-9", capabilities: MODEL_CAPABILITIES } },
      mcp: { marker: fixtureServer({ FIXTURE_MARKER: configured }) },
      agents: { build: { mcpServers: ["marker"] } },
    }),
  );
  const clientServer = { name: "client-marker", command: "node", args: [(fixtureServer().args as string[])[0]!], env: [{ name: "FIXTURE_MARKER", value: fromClient }] };
  const b = await started();
  try {
    for (const method of [acp.methods.agent.session.load, acp.methods.agent.session.resume] as const) {
      const refused = b.agent.request(method, { sessionId, cwd: sandbox.workspace, mcpServers: [clientServer] });
      await expect(refused).rejects.toMatchObject({ code: -32602 });
      const message = errorText(await refused.catch((e) => e));
      expect(message).toContain("'fake' was openai-compatible fake-1 and is now openai-compatible fake-9");
    }
    await Bun.sleep(500);
    expect(existsSync(configured)).toBe(false);
    expect(existsSync(fromClient)).toBe(false);
    expect(fake.requests).toHaveLength(1);
    // Refused sessions are not open: a prompt to it is an unknown session.
    await expect(prompt(b, sessionId, "hi")).rejects.toMatchObject({ code: -32602 });

    // The control: a new session in the same process does start the configured server when it runs.
    const fresh = (await create(b, { mcpServers: [clientServer] })).sessionId;
    fake.script([{ text: "fresh" }]);
    expect(await prompt(b, fresh, "hi")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests[1]!.body.model).toBe("fake-9");
    await waitUntil("the configured server to start", () => existsSync(configured) && existsSync(fromClient), 10_000);
    expect(readFileSync(configured, "utf8")).toMatch(/^started \d+\n$/);
  } finally {
    expect(await b.stop()).toBe(0);
  }
  expectOnlyJsonRpc(b.raw());
}, 30_000);
