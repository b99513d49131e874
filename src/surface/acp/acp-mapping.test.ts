import { afterEach, describe, expect, test } from "bun:test";
import { configSandbox, removeConfigSandboxes } from "../../config/config-test-support.ts";
import { loadConfig } from "../../config/load.ts";
import type { EffectiveConfig } from "../../config/schema.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import type { Message } from "../../protocol/messages.ts";
import { knownSecretValues } from "../../session/run.ts";
import { applyChoice, configOptions, overridesOf, slashCommand } from "./config-options.ts";
import { clientMcpServers, withClientServers } from "./mcp-servers.ts";
import { MAX_PROMPT_MEDIA, promptInput } from "./prompt.ts";
import { MAX_REPLAY_MESSAGES, replayUpdates } from "./replay.ts";
import { updatesFor } from "./updates.ts";

afterEach(removeConfigSandboxes);

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3]).toString("base64");
const WAV = Buffer.from("RIFF\x24\x00\x00\x00WAVEfmt 0123456789", "latin1").toString("base64");

function config(text = "{}"): EffectiveConfig {
  const box = configSandbox();
  box.userFile(text);
  return loadConfig({ workspace: box.ws, env: box.env }).config;
}

function code(run: () => unknown): { code: number; message: string } {
  try {
    run();
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error("did not throw");
}

describe("prompt content → task text and media", () => {
  test("text, links, embedded text and an image", () => {
    const input = promptInput(
      [
        { type: "text", text: "look" },
        { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
        { type: "resource", resource: { uri: "file:///b.md", text: "BODY" } },
        { type: "image", data: PNG, mimeType: "image/png", uri: "file:///shots/screen.png" },
      ],
      1024,
    );
    expect(input.text).toContain("look");
    expect(input.text).toContain("[a.txt](file:///a.txt)");
    expect(input.text).toContain('<context uri="file:///b.md">\nBODY\n</context>');
    expect(input.media).toEqual([{ type: "file", mediaType: "image/png", data: PNG, filename: "screen.png" }]);
  });

  test("audio and a blob resource are typed by their bytes", () => {
    const input = promptInput([{ type: "text", text: "listen" }, { type: "audio", data: WAV, mimeType: "audio/wav" }, { type: "resource", resource: { uri: "file:///x/shot.png", blob: PNG } }], 1024);
    expect(input.media.map((m) => m.mediaType)).toEqual(["audio/wav", "image/png"]);
  });

  test("bad base64, oversize data, a lying mime type, unknown blocks: invalid params, before decoding what is too long", () => {
    const image = (data: string, mimeType = "image/png") => () => promptInput([{ type: "image", data, mimeType }], 64);
    expect(code(image("not base64!!"))).toMatchObject({ code: -32602 });
    expect(code(image("abc"))).toMatchObject({ code: -32602 }); // length not a multiple of 4
    expect(code(image("A".repeat(10_000_000)))).toMatchObject({ code: -32602, message: expect.stringContaining("maxAttachmentBytes") });
    expect(code(image(WAV))).toMatchObject({ code: -32602, message: expect.stringContaining("WAV audio") });
    expect(code(image(PNG, "image/jpeg"))).toMatchObject({ code: -32602, message: expect.stringContaining("does not match") });
    expect(code(image(Buffer.from("plain text here!").toString("base64")))).toMatchObject({ code: -32602 });
    expect(code(() => promptInput([{ type: "video" } as never], 64))).toMatchObject({ code: -32602, message: expect.stringContaining('"video"') });
    expect(code(() => promptInput([], 64))).toMatchObject({ code: -32602 });
    const many = Array.from({ length: MAX_PROMPT_MEDIA + 1 }, () => ({ type: "image" as const, data: PNG, mimeType: "image/png" }));
    expect(code(() => promptInput(many, 1024))).toMatchObject({ code: -32602 });
  });
});

const D = { model: "a", depth: "medium" as const };

describe("config options", () => {
  const text = JSON.stringify({
    models: { a: { provider: "openai", model: "model-a" }, b: { provider: "openai", model: "model-b", supportedReasoningEfforts: ["low", "high"] } },
    agents: { build: { model: "a" } },
    workflows: { feature: { steps: ["explore", "review"] } },
  });

  test("model (category model), reasoning, depth and workflow, with current values", () => {
    const c = config(text);
    const options = configOptions(c, {}, { model: "a", depth: "medium" });
    expect(options.map((o) => [o.id, o.category, o.currentValue])).toEqual([
      ["model", "model", "a"],
      ["reasoning", "thought_level", "default"],
      ["depth", "_depth", "medium"],
      ["workflow", "_workflow", "off"],
    ]);
    const chosen = applyChoice(c, applyChoice(c, {}, D, "model", "b"), D, "reasoning", "high");
    const reasoning = configOptions(c, chosen, { model: "a", depth: "medium" }).find((o) => o.id === "reasoning")!;
    expect((reasoning as { options: { value: string }[] }).options.map((o) => o.value)).toEqual(["default", "low", "high"]);
    expect(overridesOf(chosen)).toEqual({ model: "b", reasoningEffort: "high" });
    expect(applyChoice(c, chosen, D, "reasoning", "default")).toEqual({ model: "b" });
    expect(applyChoice(c, applyChoice(c, {}, D, "workflow", "feature"), D, "workflow", "off")).toEqual({});
    // Efforts are the chosen model's, by the runtime's rule: b takes low and high only, so "xhigh"
    // chosen on a (the standard efforts) is dropped when moving to b; "max" needs a declaration.
    expect(code(() => applyChoice(c, chosen, D, "reasoning", "max"))).toMatchObject({ code: -32602, message: expect.stringContaining("default, low, high") });
    expect(code(() => applyChoice(c, {}, D, "reasoning", "max"))).toMatchObject({ code: -32602, message: expect.stringContaining("default, low, medium, high, xhigh") });
    const onA = applyChoice(c, applyChoice(c, {}, D, "reasoning", "xhigh"), D, "model", "b");
    expect(onA).toEqual({ model: "b" });
  });

  test("unknown options and values name what is allowed", () => {
    const c = config(text);
    expect(code(() => applyChoice(c, {}, D, "model", "zzz"))).toMatchObject({ code: -32602, message: expect.stringContaining("a, b") });
    expect(code(() => applyChoice(c, {}, D, "depth", "deep"))).toMatchObject({ code: -32602, message: expect.stringContaining("flash, medium, pro, ultra") });
    expect(code(() => applyChoice(c, {}, D, "colour", "red"))).toMatchObject({ code: -32602, message: expect.stringContaining("model, reasoning, depth, workflow") });
  });

  test("slash commands are ours only when named", () => {
    const c = config(text);
    expect(slashCommand("/depth pro", c)).toEqual({ name: "depth", argument: "pro" });
    expect(slashCommand("  /compact ", c)).toEqual({ name: "compact", argument: "" });
    expect(slashCommand("/usr/bin/env is broken", c)).toBeUndefined();
    expect(slashCommand("please /compact", c)).toBeUndefined();
  });
});

describe("client MCP servers", () => {
  test("stdio and http become session entries given to the root agent; ids stay unique", () => {
    const c = config(JSON.stringify({ mcp: { docs: { type: "stdio", command: "/bin/true" } } }));
    const servers = clientMcpServers(
      [
        { name: "docs", command: "/usr/bin/docs-server", args: ["--x"], env: [{ name: "API_TOKEN", value: "tok-1234567890" }] },
        { type: "http", name: "my server", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer sekrit-abcdef123" }] },
      ],
      c,
      "/ws",
    );
    expect(Object.keys(servers)).toEqual(["docs-2", "my_server"]);
    expect(servers["docs-2"]).toMatchObject({ type: "stdio", command: "/usr/bin/docs-server", cwd: "/ws", env: { API_TOKEN: "tok-1234567890" } });
    const merged = withClientServers(c, servers);
    expect(merged.agents[merged.defaultAgent]!.mcpServers).toEqual(expect.arrayContaining(["docs-2", "my_server"]));
    expect(c.mcp["my_server"]).toBeUndefined(); // the loaded config is not changed
    // Their credentials are redacted like any other key.
    const secrets = knownSecretValues(merged, {});
    expect(secrets).toEqual(expect.arrayContaining(["tok-1234567890", "sekrit-abcdef123"]));
  });

  test("SSE, unknown transports, relative commands and bad headers are refused", () => {
    const c = config();
    expect(code(() => clientMcpServers([{ type: "sse", name: "old", url: "http://x", headers: [] }], c, "/ws"))).toMatchObject({ code: -32602, message: expect.stringContaining("Streamable HTTP") });
    expect(code(() => clientMcpServers([{ type: "acp", name: "x", id: "1" }], c, "/ws"))).toMatchObject({ code: -32602, message: expect.stringContaining('"acp"') });
    expect(code(() => clientMcpServers([{ name: "x", command: "./server", args: [], env: [] }], c, "/ws"))).toMatchObject({ code: -32602 });
    expect(code(() => clientMcpServers([{ type: "http", name: "x", url: "http://x/", headers: [{ name: "Bad Header", value: "v" }] }], c, "/ws"))).toMatchObject({ code: -32602 });
    expect(code(() => clientMcpServers([{ type: "http", name: "x", url: "file:///etc/passwd", headers: [] }], c, "/ws"))).toMatchObject({ code: -32602 });
  });
});

describe("replay of a stored conversation", () => {
  test("user, reasoning, answer, tool call and result; media as a named placeholder; redacted", () => {
    const messages: Message[] = [
      { role: "user", parts: [{ type: "text", text: "fix it SECRET" }, { type: "file", mediaType: "image/png", data: PNG, filename: "shot.png" }] },
      { role: "assistant", parts: [{ type: "reasoning", text: "thinking" }, { type: "tool-call", callId: "c1", tool: "read", input: { path: "a.ts" }, state: "completed" }] },
      { role: "tool", parts: [{ type: "tool-result", callId: "c1", tool: "read", output: { type: "text", value: "contents" } }] },
      { role: "assistant", parts: [{ type: "text", text: "done" }] },
    ];
    const updates = replayUpdates(messages, (text) => text.replaceAll("SECRET", "[REDACTED]"));
    expect(updates.map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "user_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]);
    expect(JSON.stringify(updates)).not.toContain("SECRET");
    expect(JSON.stringify(updates[1])).toContain("[attachment: shot.png (image/png)]");
    expect(updates[3]).toMatchObject({ toolCallId: "c1", title: "read: a.ts", kind: "read", status: "completed" });
  });

  test("bounded: only the latest messages, and a note about the rest", () => {
    const messages: Message[] = Array.from({ length: MAX_REPLAY_MESSAGES + 10 }, (_, i) => ({ role: "user", parts: [{ type: "text", text: `m${i}` }] }));
    const updates = replayUpdates(messages, (t) => t);
    expect(updates).toHaveLength(MAX_REPLAY_MESSAGES + 1);
    expect(JSON.stringify(updates[0])).toContain("10 earlier messages");
  });
});

describe("updates of delegated child runs", () => {
  const base = { eventId: crypto.randomUUID(), sequence: 1, timestamp: new Date().toISOString(), runId: "root-run" };
  test("a child run is a tool call of its own with its ids in _meta.zero", () => {
    const spawned = { ...base, type: "agent.spawned", callId: "call_d", childRunId: "child-1", taskId: "t1", taskName: "look around", agent: "explore", deliverable: "x", workspaceMode: "shared", permissionMode: "read-only", background: false, followUp: false } as RuntimeEvent;
    expect(updatesFor(spawned, "/ws")).toEqual([
      { sessionUpdate: "tool_call", toolCallId: "run:child-1", title: "explore: look around", kind: "think", status: "in_progress", _meta: { zero: { runId: "child-1", parentRunId: "root-run", rootRunId: "root-run", taskId: "t1", agent: "explore", callId: "call_d" } } },
    ]);
    const completed = { ...base, type: "agent.completed", childRunId: "child-1", taskId: "t1", status: "completed", result: { summary: "found it" } } as RuntimeEvent;
    expect(updatesFor(completed, "/ws")[0]).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: "run:child-1", status: "completed", content: [{ type: "content", content: { type: "text", text: "found it" } }], _meta: { zero: { status: "completed", parentRunId: "root-run" } } });
    // A grandchild: started by a child, its root is the child's root.
    const nested = { ...spawned, runId: "child-1", parentRunId: "root-run", rootRunId: "root-run", childRunId: "grand-1" } as unknown as RuntimeEvent;
    expect(updatesFor(nested, "/ws")[0]).toMatchObject({ _meta: { zero: { runId: "grand-1", parentRunId: "child-1", rootRunId: "root-run" } } });
    // Other events of a child are not forwarded.
    expect(updatesFor({ ...base, parentRunId: "root-run", type: "message.delta", step: 1, text: "x" } as unknown as RuntimeEvent, "/ws")).toEqual([]);
  });

  test("tool progress → an in-progress update carrying the latest line", () => {
    expect(updatesFor({ ...base, type: "tool.progress", callId: "c9", tool: "mcp__x__y", message: "50%" } as RuntimeEvent, "/ws")).toEqual([
      { sessionUpdate: "tool_call_update", toolCallId: "c9", status: "in_progress", content: [{ type: "content", content: { type: "text", text: "50%" } }] },
    ]);
  });

  test("context gauge → usage_update", () => {
    expect(updatesFor({ ...base, type: "context.updated", tokens: 1200, window: 200000, percent: 0.6, compacted: false } as RuntimeEvent, "/ws")).toEqual([{ sessionUpdate: "usage_update", used: 1200, size: 200000 }]);
  });
});
