import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { jsonSchema, streamText, tool, type LanguageModel, type ModelMessage } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGateway } from "@ai-sdk/gateway";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { startFakeProvider, type FakeProvider, type FakeReply } from "../../test/support/fake-provider.ts";
import { encryptedContentOf, functionItemIdOf, reasoningItemIdOf, signatureOf } from "../../test/support/fake-provider-wire.ts";
import { toolCallsOf, type AssistantMessage, type Message } from "../protocol/messages.ts";
import { tempDirs, runRow, sessionRow } from "../store/store-test-support.ts";
import { openStore } from "../store/store.ts";
import { fromSdkResponse, toSdkMessages } from "./messages.ts";

// The provider data real providers need back on the next request (thinking signatures,
// redacted thinking, reasoning item ids and encrypted content, call ids, thought signatures)
// survives SDK → zero → the store (SQLite, validated on load) → SDK unchanged.

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** Through the real store: written as message rows, read back validated (what --resume does). */
function throughStore(messages: Message[]): Message[] {
  const { store } = openStore({ dir: dirs.make() });
  try {
    store.createSession(sessionRow({ id: "s" }));
    store.createRun(runRow({ id: "r", sessionId: "s" }));
    store.writeMessages("s", "r", messages.map((message, position) => ({ position, message })));
    return store.loadMessages("s");
  } finally {
    store.close();
  }
}

const roundTrip = (sdk: ModelMessage[]) => toSdkMessages(throughStore(fromSdkResponse(sdk, new Set())));

describe("every part kind the SDK puts in a step's response keeps its providerOptions", () => {
  // What ai's toResponseMessages can produce: providerOptions is the part's providerMetadata.
  const assistant: ModelMessage = {
    role: "assistant",
    content: [
      { type: "custom", kind: "anthropic.message_start", providerOptions: { anthropic: { id: "msg_1", usage: { input_tokens: 3 } } } },
      { type: "reasoning", text: "Thinking it over.", providerOptions: { anthropic: { signature: "EqQBCkgIARABGAIiQL+sig==" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" } } },
      { type: "reasoning", text: "Summary.", providerOptions: { openai: { itemId: "rs_abc", reasoningEncryptedContent: "gAAAAABopaque==" } } },
      { type: "reasoning", text: "", providerOptions: { openai: { itemId: "rs_empty", reasoningEncryptedContent: null } } },
      { type: "text", text: "Let me look.", providerOptions: { openai: { itemId: "msg_abc", phase: "commentary" } } },
      { type: "text", text: "", providerOptions: { anthropic: { type: "compaction", signature: "compaction-sig" } } },
      { type: "file", mediaType: "image/png", data: "iVBORw0KGgo=", providerOptions: { google: { thoughtSignature: "file-sig" } } },
      { type: "reasoning-file", mediaType: "image/png", data: "iVBORw0KGgo=", providerOptions: { openai: { itemId: "rf_1" } } },
      { type: "tool-call", toolCallId: "call_1", toolName: "read", input: { path: "README.md" }, providerOptions: { openai: { itemId: "fc_abc" } } },
      { type: "tool-call", toolCallId: "call_2", toolName: "read", input: {}, providerOptions: { "openai-compatible": { thoughtSignature: "gemini-sig" } } },
      { type: "tool-call", toolCallId: "ws_1", toolName: "web_search", input: { query: "x" }, providerExecuted: true, providerOptions: { openai: { itemId: "ws_1" } } },
      { type: "tool-result", toolCallId: "ws_1", toolName: "web_search", output: { type: "json", value: { sources: [] } }, providerOptions: { openai: { itemId: "ws_1" } } },
      { type: "custom", kind: "openai.compaction", providerOptions: { openai: { itemId: "cmp_1", encryptedContent: "gAAAAABcompacted==" } } },
      { type: "custom", kind: "anthropic.fallback", providerOptions: { anthropic: { from: { model: "a" }, to: { model: "b" } } } },
      { type: "tool-approval-request", approvalId: "ap_1", toolCallId: "mcp_1", isAutomatic: false },
    ],
  } as ModelMessage;
  const tool: ModelMessage = {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "call_1", toolName: "read", output: { type: "text", value: "# Sample" }, providerOptions: { openai: { itemId: "fco_1" } } }],
  };
  const user: ModelMessage = {
    role: "user",
    content: [{ type: "text", text: "cached prefix", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }],
  };

  test("SDK → zero → store → SDK gives back exactly what the SDK produced", () => {
    const back = roundTrip([user, assistant, tool]);
    expect(back).toEqual([user, assistant, tool]);
    // Byte-level: the provider data serializes identically (what goes on the wire).
    const parts = (message: ModelMessage) => (message.content as Array<{ providerOptions?: unknown }>).map((part) => JSON.stringify(part.providerOptions));
    expect(parts(back[1]!)).toEqual(parts(assistant));
  });

  test("zero's own model: typed parts carry `provider`; what zero does not model is a provider-part kept verbatim", () => {
    const [, ours] = fromSdkResponse([user, assistant], new Set());
    expect(ours!.role).toBe("assistant");
    const kinds = ours!.parts.map((part) => (part.type === "provider-part" ? `provider-part:${String(part.value.type)}` : part.type));
    expect(kinds).toEqual([
      "provider-part:custom",
      "reasoning",
      "reasoning",
      "reasoning",
      "reasoning",
      "text",
      "text",
      "file",
      "provider-part:reasoning-file",
      "tool-call",
      "tool-call",
      "provider-part:tool-call", // provider-executed: never run by zero
      "provider-part:tool-result",
      "provider-part:custom",
      "provider-part:custom",
      "provider-part:tool-approval-request",
    ]);
    expect(ours!.parts[1]).toEqual({ type: "reasoning", text: "Thinking it over.", provider: { anthropic: { signature: "EqQBCkgIARABGAIiQL+sig==" } } });
    expect(ours!.parts[13]).toEqual({
      type: "provider-part",
      value: { type: "custom", kind: "openai.compaction", providerOptions: { openai: { itemId: "cmp_1", encryptedContent: "gAAAAABcompacted==" } } },
    });
    expect(toolCallsOf(ours!).map((call) => [call.callId, call.provider])).toEqual([
      ["call_1", { openai: { itemId: "fc_abc" } }],
      ["call_2", { "openai-compatible": { thoughtSignature: "gemini-sig" } }],
    ]);
  });

  test("a tool-call state change (what the loop records) keeps the call's provider data", () => {
    const [message] = fromSdkResponse([assistant], new Set()) as [AssistantMessage];
    const settled: AssistantMessage = {
      role: "assistant",
      parts: message.parts.map((part) => (part.type === "tool-call" ? { ...part, state: "completed" as const } : part)),
    };
    expect(toSdkMessages(throughStore([settled]))).toEqual([assistant]);
  });

  test("the SDK's own answers to calls it could not parse are dropped, the rest of the tool message kept", () => {
    const answered: ModelMessage = {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "bad", toolName: "read", output: { type: "error-text", value: "invalid input" } },
        ...(tool.content as object[]),
      ],
    } as ModelMessage;
    expect(toSdkMessages(fromSdkResponse([answered], new Set(["bad"])))).toEqual([tool]);
  });
});

// ---- The real SDK adapters against the fake provider in strict mode ----

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider({ strict: true });
});
afterAll(async () => {
  await fake.close();
});

const tools = { read: tool({ description: "Read a file", inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } } }) }) };

/** One streamText step; returns the response messages, or throws the provider's error. */
async function step(model: LanguageModel, messages: ModelMessage[], providerOptions?: Record<string, Record<string, string | boolean>>) {
  let failure: unknown;
  const result = streamText({ model, tools, messages, maxRetries: 0, onError: ({ error }) => void (failure ??= error), ...(providerOptions ? { providerOptions } : {}) });
  for await (const part of result.stream) if (part.type === "error") failure ??= part.error;
  if (failure) throw failure;
  return result.responseMessages;
}

/**
 * A tool-call step, then the follow-up built from zero's history after a store round trip:
 * returns the follow-up's recorded request (the strict fake accepted it) and the history.
 */
async function toolCallThenFollowUp(model: LanguageModel, first: FakeReply, providerOptions?: Record<string, Record<string, string | boolean>>) {
  fake.reset();
  fake.script([first, { text: "done" }]);
  const question: ModelMessage[] = [{ role: "user", content: "what does README.md say?" }];
  const response = await step(model, question, providerOptions);
  const history = throughStore([{ role: "user", parts: [{ type: "text", text: "what does README.md say?" }] }, ...fromSdkResponse(response, new Set())]);
  const calls = toolCallsOf(history[1]!);
  expect(calls.length).toBeGreaterThan(0);
  history.push({ role: "tool", parts: calls.map((call) => ({ type: "tool-result", callId: call.callId, tool: call.tool, output: { type: "text", value: "# Sample project" } })) });
  // zero → SDK gives back the SDK's own response messages, unchanged.
  expect(toSdkMessages(history).slice(1, 2)).toEqual(response);
  await step(model, toSdkMessages(history), providerOptions);
  const [, followUp] = fake.requests;
  expect(followUp!.rejected).toBeUndefined();
  return { request: followUp!, sdkFollowUp: toSdkMessages(history) };
}

test("Anthropic: the thinking block (exact text and signature) and the redacted_thinking block (exact data) precede the tool_use; ids pair", async () => {
  const model = createAnthropic({ baseURL: fake.url, apiKey: "k" })("claude-fake");
  const { request } = await toolCallThenFollowUp(model, { reasoning: "I should read it.", redactedThinking: "RkFLRS1SRURBQ1RFRA==", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "toolu_01" }] });
  const n = fake.requests[0]!.replyNumber!;
  expect(request.body.messages.slice(1)).toEqual([
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should read it.", signature: signatureOf(n) },
        { type: "redacted_thinking", data: "RkFLRS1SRURBQ1RFRA==" },
        { type: "tool_use", id: "toolu_01", name: "read", input: { path: "README.md" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "# Sample project" }] },
  ]);
});

test("OpenAI Responses (store default): the reasoning item goes back by reference (its exact id), the call by its call_id", async () => {
  const model = createOpenAI({ baseURL: fake.url, apiKey: "k" })("fake-1");
  const { request } = await toolCallThenFollowUp(model, { reasoning: "Read it.", encryptedReasoning: true, toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_r1" }] });
  const n = fake.requests[0]!.replyNumber!;
  expect(request.body.input.slice(1)).toEqual([
    { type: "item_reference", id: reasoningItemIdOf(n) },
    { type: "function_call", call_id: "call_r1", name: "read", arguments: '{"path":"README.md"}' },
    { type: "function_call_output", call_id: "call_r1", output: "# Sample project" },
  ]);
});

test("OpenAI Responses with store: false: the reasoning item goes back inline with its exact id and encrypted_content", async () => {
  const model = createOpenAI({ baseURL: fake.url, apiKey: "k" })("fake-1");
  // forceReasoning: the SDK then asks for include: ["reasoning.encrypted_content"] itself.
  const { request, sdkFollowUp } = await toolCallThenFollowUp(
    model,
    { reasoning: "Read it.", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_s1" }] },
    { openai: { store: false, forceReasoning: true } },
  );
  expect(fake.requests[0]!.body.include).toEqual(["reasoning.encrypted_content"]);
  const reasoning = request.body.input.find((item: any) => item.type === "reasoning");
  const n = fake.requests[0]!.replyNumber!;
  expect(reasoning).toEqual({ type: "reasoning", id: reasoningItemIdOf(n), encrypted_content: encryptedContentOf(n), summary: [{ type: "summary_text", text: "Read it." }] });
  expect(request.body.input.findIndex((item: any) => item.type === "reasoning")).toBeLessThan(request.body.input.findIndex((item: any) => item.type === "function_call"));
  expect(request.body.input.filter((item: any) => item.call_id).map((item: any) => [item.type, item.call_id])).toEqual([
    ["function_call", "call_s1"],
    ["function_call_output", "call_s1"],
  ]);
  // The call's item id rode along in zero's history too (the SDK leaves it out of function_call items).
  expect((sdkFollowUp[1]!.content as any[]).find((part) => part.type === "tool-call").providerOptions).toEqual({ openai: { itemId: functionItemIdOf(n, 0) } });
});

test("Chat Completions: tool_call_id answers tool_calls[].id; reasoning_content and a Gemini thought signature come back exactly", async () => {
  const model = createOpenAICompatible({ name: "openai-compatible", baseURL: fake.url, apiKey: "k", includeUsage: true })("fake-chat");
  const { request } = await toolCallThenFollowUp(model, {
    reasoning: "Need the file.",
    toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_c1", thoughtSignature: "CiQBjz1rX+gemini/sig==" }],
  });
  expect(request.body.messages.slice(1)).toEqual([
    {
      role: "assistant",
      content: null,
      reasoning_content: "Need the file.",
      tool_calls: [
        { id: "call_c1", type: "function", function: { name: "read", arguments: '{"path":"README.md"}' }, extra_content: { google: { thought_signature: "CiQBjz1rX+gemini/sig==" } } },
      ],
    },
    { role: "tool", tool_call_id: "call_c1", content: "# Sample project" },
  ]);
});

test("AI Gateway: each part's provider metadata comes back as its providerOptions, exactly (Anthropic and OpenAI models)", async () => {
  const gateway = createGateway({ baseURL: fake.url, apiKey: "k" });
  const claude = await toolCallThenFollowUp(gateway("anthropic/claude-x"), { reasoning: "Hm.", redactedThinking: "UkVEQUNURUQ=", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_g1" }] });
  let n = fake.requests[0]!.replyNumber!;
  expect(claude.request.body.prompt.slice(1)).toEqual([
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Hm.", providerOptions: { anthropic: { signature: signatureOf(n) } } },
        { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "UkVEQUNURUQ=" } } },
        { type: "tool-call", toolCallId: "call_g1", toolName: "read", input: { path: "README.md" } },
      ],
    },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "call_g1", toolName: "read", output: { type: "text", value: "# Sample project" } }] },
  ]);
  const gpt = await toolCallThenFollowUp(gateway("openai/gpt-x"), { reasoning: "Hm.", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_g2" }] });
  n = fake.requests[0]!.replyNumber!;
  expect(gpt.request.body.prompt[1].content).toEqual([
    { type: "reasoning", text: "Hm.", providerOptions: { openai: { itemId: reasoningItemIdOf(n), reasoningEncryptedContent: encryptedContentOf(n) } } },
    { type: "tool-call", toolCallId: "call_g2", toolName: "read", input: { path: "README.md" }, providerOptions: { openai: { itemId: functionItemIdOf(n, 0) } } },
  ]);
});
