/**
 * `zero acp` prompts with media, extra roots, client MCP servers and delegated child runs
 * (ACP-07, 08, 09, 11): the real CLI over stdio, the SDK's client, the scripted fake provider and
 * real MCP servers; what the fake received, files on disk and the process list are checked.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, waitUntil, type Sandbox } from "../support/cli.ts";
import { choose, expectOnlyJsonRpc, initialize, lastRequestId, newAcpSession, prompt, responseIndex, startAcpAgent, updatesIn, updatesOfKind, type AcpAgent } from "../support/acp-client.ts";
import { envelope, parse, scriptBySender, spawn, task, toolNames, toolResults } from "../support/delegation.ts";
import { EVERYTHING, pidsMatching, uniqueTag } from "../fixtures/mcp/support.ts";
import { startHttpFixture } from "../fixtures/mcp/http-server.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("tiny png payload \u0000\u0001\u0002")]);
/** A minimal RIFF/WAVE header: audio, whatever the client calls it. */
const WAV = Buffer.concat([Buffer.from("RIFF"), Buffer.from([36, 0, 0, 0]), Buffer.from("WAVEfmt "), Buffer.alloc(24)]);

/** Every content part of a chat-completions request's user messages. */
const userParts = (body: any): any[] => body.messages.filter((m: any) => m.role === "user").flatMap((m: any) => (Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }]));
const errorText = (error: unknown): string => `${(error as Error)?.message ?? ""} ${JSON.stringify((error as { data?: unknown })?.data ?? "")}`;

async function started(answer = choose("allow-once")): Promise<AcpAgent> {
  const a = await startAcpAgent(sandbox, answer);
  await initialize(a);
  return a;
}

const imagePrompt = (a: AcpAgent, sessionId: string, data: string, mimeType = "image/png") =>
  a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "what is in the picture?" }, { type: "image", data, mimeType }] });

test("ACP-07: a PNG reaches an image-capable model as an image part; bad base64, oversize and mislabelled media are -32602; the server keeps serving", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] } },
      limits: { maxAttachmentBytes: 2_000 },
    }),
  );
  const a = await started();
  let sessionId_ = "";
  try {
    const sessionId = (await newAcpSession(a, sandbox.workspace)).sessionId;
    fake.script([{ text: "a tiny png" }]);
    expect(await imagePrompt(a, sessionId, PNG.toString("base64"))).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(1);
    const parts = userParts(fake.requests[0]!.body);
    const images = parts.filter((p) => p.type === "image_url");
    expect(images).toHaveLength(1);
    expect(images[0].image_url.url).toBe(`data:image/png;base64,${PNG.toString("base64")}`);
    expect(parts.filter((p) => p.type === "text").map((p) => p.text).join("\n")).toContain("what is in the picture?");

    const refusals: Array<[string, Promise<unknown>, string]> = [
      ["not base64", imagePrompt(a, sessionId, "iVBO!!!not*base64"), "base64"],
      ["oversize", imagePrompt(a, sessionId, Buffer.concat([PNG, Buffer.alloc(3_000, 7)]).toString("base64")), "maxAttachmentBytes"],
      ["a WAV labelled image/png", imagePrompt(a, sessionId, WAV.toString("base64")), "WAV"],
      ["a PNG labelled image/jpeg", imagePrompt(a, sessionId, PNG.toString("base64"), "image/jpeg"), "image/jpeg"],
      ["a PNG sent as audio", a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "listen" }, { type: "audio", data: PNG.toString("base64"), mimeType: "audio/wav" }] }), "audio"],
    ];
    for (const [what, request, says] of refusals) {
      const error = await request.then(
        (answer) => ({ answer }),
        (e) => e,
      );
      expect(error, what).toMatchObject({ code: -32602 });
      expect(errorText(error), what).toContain(says);
    }
    // None of them reached the model; the session still runs a turn.
    expect(fake.requests).toHaveLength(1);
    fake.script([{ text: "still here" }]);
    expect(await prompt(a, sessionId, "hello?")).toMatchObject({ stopReason: "end_turn" });
    expect(fake.requests).toHaveLength(2);
    // The second request still carries the first turn's image (it is part of the conversation).
    expect(userParts(fake.requests[1]!.body).filter((p) => p.type === "image_url")).toHaveLength(1);
    sessionId_ = sessionId;
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());

  // Loaded in a new process, the image is replayed as a named placeholder, not its bytes.
  const b = await started();
  try {
    await b.agent.request(acp.methods.agent.session.load, { sessionId: sessionId_, cwd: sandbox.workspace, mcpServers: [] });
    const loadAnswer = await responseIndex(b, lastRequestId(b, "session/load"));
    const replayed = updatesIn(b.received().slice(0, loadAnswer), sessionId_)
      .filter((u) => u.sessionUpdate === "user_message_chunk")
      .map((u) => (u as { content: { text?: string } }).content.text ?? "");
    expect(replayed.join("\n")).toContain("what is in the picture?");
    expect(replayed).toContain("[attachment: image-1 (image/png)]");
    expect(JSON.stringify(b.received())).not.toContain(PNG.toString("base64"));
  } finally {
    expect(await b.stop()).toBe(0);
  }
}, 30_000);

test("ACP-08: additionalDirectories are roots of the session: a read there succeeds, a read in another outside directory is refused", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const extra = join(sandbox.root, "extra");
  const other = join(sandbox.root, "other");
  mkdirSync(extra);
  mkdirSync(other);
  writeFileSync(join(extra, "notes.txt"), "EXTRA ROOT CONTENT 5150\n");
  writeFileSync(join(other, "notes.txt"), "OTHER DIR CONTENT 6160\n");
  // Every permission request would be rejected: what succeeds needed none.
  const a = await started(choose("reject-once"));
  try {
    await expect(newAcpSession(a, sandbox.workspace, { additionalDirectories: ["relative/dir"] })).rejects.toMatchObject({ code: -32602 });
    await expect(newAcpSession(a, sandbox.workspace, { additionalDirectories: [join(sandbox.root, "missing")] })).rejects.toMatchObject({ code: -32602 });
    const sessionId = (await newAcpSession(a, sandbox.workspace, { additionalDirectories: [extra] })).sessionId;
    fake.script([
      {
        toolCalls: [
          { name: "read", args: { path: join(extra, "notes.txt") }, id: "call_extra" },
          { name: "read", args: { path: join(other, "notes.txt") }, id: "call_other" },
        ],
      },
      { text: "read them" },
    ]);
    expect(await prompt(a, sessionId, "read both notes")).toMatchObject({ stopReason: "end_turn" });
    const results = toolResults(fake.requests[1]!);
    expect(results.call_extra).toContain("EXTRA ROOT CONTENT 5150");
    expect(results.call_other).not.toContain("OTHER DIR CONTENT 6160");
    // The extra root needed nobody's approval; the other directory is outside every root: refused outright.
    expect(results.call_other).toContain("outside the allowed roots");
    expect(results.call_other).toContain(`${extra} (extra)`);
    expect(a.permissions).toEqual([]);

    // A session without the extra directory cannot read it either.
    const plain = (await newAcpSession(a, sandbox.workspace)).sessionId;
    fake.script([{ toolCalls: [{ name: "read", args: { path: join(extra, "notes.txt") }, id: "call_plain" }] }, { text: "no" }]);
    expect(await prompt(a, plain, "read the extra note")).toMatchObject({ stopReason: "end_turn" });
    expect(toolResults(fake.requests[3]!).call_plain).not.toContain("EXTRA ROOT CONTENT 5150");
    expect(toolResults(fake.requests[3]!).call_plain).toContain("outside the allowed roots");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);

test("ACP-09: a client's stdio MCP server is that session's: its tool is offered and called there, not in another session; it exits on session/close; sse is -32602", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const tag = uniqueTag("acp-everything");
  const everything = { name: "everything", command: "node", args: [EVERYTHING, "stdio", tag], env: [] };
  const a = await started(choose("allow-once"));
  try {
    await expect(newAcpSession(a, sandbox.workspace, { mcpServers: [{ type: "sse", name: "old", url: "http://127.0.0.1:9/sse", headers: [] } as any] })).rejects.toMatchObject({ code: -32602 });
    await expect(newAcpSession(a, sandbox.workspace, { mcpServers: [{ type: "carrier-pigeon", name: "odd" } as any] })).rejects.toMatchObject({ code: -32602 });
    await expect(newAcpSession(a, sandbox.workspace, { mcpServers: [{ name: "rel", command: "./bin/server", args: [], env: [] }] })).rejects.toMatchObject({ code: -32602 });

    const withServer = (await newAcpSession(a, sandbox.workspace, { mcpServers: [everything] })).sessionId;
    const without = (await newAcpSession(a, sandbox.workspace)).sessionId;
    fake.script([{ toolCalls: [{ name: "mcp__everything__get_u2d_sum", args: { a: 2, b: 3 }, id: "call_sum" }] }, { text: "five" }]);
    expect(await prompt(a, withServer, "add 2 and 3")).toMatchObject({ stopReason: "end_turn" });
    expect(toolNames(fake.requests[0]!)).toContain("mcp__everything__get_u2d_sum");
    expect(toolResults(fake.requests[1]!).call_sum).toBe("The sum of 2 and 3 is 5.");
    expect(pidsMatching(tag).length).toBeGreaterThan(0);

    fake.script([{ text: "no tools from elsewhere" }]);
    expect(await prompt(a, without, "what tools do you have?")).toMatchObject({ stopReason: "end_turn" });
    expect(toolNames(fake.requests[2]!).filter((name) => name.startsWith("mcp__"))).toEqual([]);

    await a.agent.request(acp.methods.agent.session.close, { sessionId: withServer });
    await waitUntil("the client's MCP server to exit", () => pidsMatching(tag).length === 0, 10_000);
    // The other session still serves.
    fake.script([{ text: "still here" }]);
    expect(await prompt(a, without, "hi")).toMatchObject({ stopReason: "end_turn" });
  } finally {
    expect(await a.stop()).toBe(0);
    for (const pid of pidsMatching(tag)) process.kill(pid, "SIGKILL");
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);

test("ACP-09: a client's Streamable HTTP MCP server is offered to that session's root agent and called", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const web = startHttpFixture();
  const a = await started(choose("allow-once"));
  try {
    const sessionId = (await newAcpSession(a, sandbox.workspace, { mcpServers: [{ type: "http", name: "web", url: web.url, headers: [{ name: "X-Client", value: "acp-test" }] }] })).sessionId;
    fake.script([{ toolCalls: [{ name: "mcp__web__echo", args: { message: "over http" }, id: "call_echo" }] }, { text: "echoed" }]);
    expect(await prompt(a, sessionId, "echo something")).toMatchObject({ stopReason: "end_turn" });
    expect(toolNames(fake.requests[0]!)).toEqual(expect.arrayContaining(["mcp__web__echo", "mcp__web__whoami"]));
    expect(toolResults(fake.requests[1]!).call_echo).toBe("echo: over http");
    expect(web.initializations).toBe(1);
    await expect(newAcpSession(a, sandbox.workspace, { mcpServers: [{ type: "http", name: "bad", url: "ftp://127.0.0.1/mcp", headers: [] }] })).rejects.toMatchObject({ code: -32602 });
  } finally {
    expect(await a.stop()).toBe(0);
    await web.close();
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);

test("ACP-11: a delegated child run shows as tool call run:<childRunId> with its run tree in _meta.zero, then completes", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await started(choose("allow-once"));
  try {
    const sessionId = (await newAcpSession(a, sandbox.workspace)).sessionId;
    scriptBySender(fake, {
      root: [spawn("d1", task("find-main", { agent: "explore" })), { text: "main is in src/main.ts" }],
      "find-main": [envelope({ summary: "CHILD SUMMARY: src/main.ts exports main", findings: [] })],
    });
    expect(await prompt(a, sessionId, "where is main?")).toMatchObject({ stopReason: "end_turn" });
    const handed = parse(toolResults(fake.requests[2]!).d1);
    expect(handed.status).toBe("completed");
    const childRunId = handed.childRunId as string;
    expect(typeof childRunId).toBe("string");

    const toolCallId = `run:${childRunId}`;
    await waitUntil("the child run's completion", () => updatesOfKind(a.updates, "tool_call_update", sessionId).some((u) => u.toolCallId === toolCallId && u.status === "completed"));
    const started = updatesOfKind(a.updates, "tool_call", sessionId).filter((u) => u.toolCallId === toolCallId);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ kind: "think", status: "in_progress" });
    expect(started[0]!.title).toContain("find-main");
    const meta = (started[0]!._meta as any).zero;
    // callId is the model's delegate call that started the child: the client can tie them together.
    expect({ runId: meta.runId, agent: meta.agent, callId: meta.callId }).toEqual({ runId: childRunId, agent: "explore", callId: "d1" });
    expect(String(meta.taskId)).toStartWith("find-main");
    // The root's delegate call itself is a tool call of its own.
    expect(updatesOfKind(a.updates, "tool_call", sessionId).map((u) => u.toolCallId)).toContain("d1");
    expect(typeof meta.parentRunId).toBe("string");
    expect(meta.parentRunId).not.toBe(childRunId);
    expect(meta.rootRunId).toBe(meta.parentRunId); // a direct child of the root run
    const done = updatesOfKind(a.updates, "tool_call_update", sessionId).find((u) => u.toolCallId === toolCallId && u.status === "completed")!;
    expect((done._meta as any).zero).toMatchObject({ runId: childRunId, parentRunId: meta.parentRunId, rootRunId: meta.rootRunId, taskId: meta.taskId, status: "completed" });
    expect(JSON.stringify(done.content)).toContain("CHILD SUMMARY");
    // The child's own inner events are not forwarded as the session's: only the root's text is.
    const text = updatesOfKind(a.updates, "agent_message_chunk", sessionId).map((u) => (u.content as { text?: string }).text ?? "").join("");
    expect(text).toBe("main is in src/main.ts");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 30_000);
