// The strict mode's rules on hand-written request bodies: the cases the AI SDK adapters never
// produce themselves (they check call/result pairing before sending), and store: false.
// Whole-program use: test/e2e/provider-data.test.ts; with the real adapters: src/llm/messages.test.ts.
import { describe, expect, test } from "bun:test";
import { echoProblem, type LedgerEntry } from "./fake-provider-echo.ts";
import { encryptedContentOf, functionItemIdOf, reasoningItemIdOf, signatureOf, type Plan, type Protocol } from "./fake-provider-wire.ts";

function entry(protocol: Protocol, n: number, extra: Partial<Plan> = {}, store = true): LedgerEntry {
  const plan: Plan = {
    model: "fake-1",
    n,
    created: 0,
    reasoning: ["Let me ", "read it."],
    text: [],
    commentary: [],
    encryptedReasoning: true,
    calls: [{ id: "call_1", name: "read", args: '{"path":"a"}', pieces: ['{"path":"a"}'] }],
    usage: { input: 1, output: 1 },
    includeUsage: false,
    ...extra,
  };
  return { protocol, plan, store };
}

describe("OpenAI Responses", () => {
  const call = { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a"}' };
  const output = { type: "function_call_output", call_id: "call_1", output: "x" };
  const inline = (encrypted?: string) => ({ type: "reasoning", id: reasoningItemIdOf(7), summary: [], ...(encrypted !== undefined ? { encrypted_content: encrypted } : {}) });

  test("store: false needs the reasoning item inline with its exact encrypted_content", () => {
    const ledger = [entry("responses", 7, {}, false)];
    expect(echoProblem("responses", { store: false, input: [inline(encryptedContentOf(7)), call, output] }, ledger)).toBeNull();
    expect(echoProblem("responses", { store: false, input: [inline(), call, output] }, ledger)).toEqual({
      status: 404,
      message: "Item with id 'rs_7' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
      param: "input",
    });
    expect(echoProblem("responses", { store: false, input: [inline("gAAAAABforged"), call, output] }, ledger)).toEqual({
      status: 400,
      message: "The encrypted content for item rs_7 could not be verified.",
      param: "input",
      code: "invalid_encrypted_content",
    });
    // A reference to an item of a store: false response finds nothing.
    expect(echoProblem("responses", { input: [{ type: "item_reference", id: reasoningItemIdOf(7) }, call, output] }, ledger)?.status).toBe(404);
  });

  test("calls and outputs pair by call_id; a call's item id, when sent, is its own", () => {
    const ledger = [entry("responses", 7)];
    const ref = { type: "item_reference", id: reasoningItemIdOf(7) };
    expect(echoProblem("responses", { input: [ref, { ...call, id: functionItemIdOf(7, 0) }, output] }, ledger)).toBeNull();
    expect(echoProblem("responses", { input: [ref, call] }, ledger)?.message).toBe("No tool output found for function call call_1.");
    expect(echoProblem("responses", { input: [ref, output] }, ledger)?.message).toBe("No tool call found for function call output with call_id call_1.");
    expect(echoProblem("responses", { input: [ref, { ...call, id: "fc_other" }, output] }, ledger)?.status).toBe(404);
  });
});

describe("Chat Completions and Anthropic: the pairing rules in the real APIs' words", () => {
  const ledger = [entry("chat", 3, { reasoning: [] })];
  const assistant = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: "{}" } }] };

  test("chat: every call answered right after; a tool message answers a call of the assistant message before it", () => {
    expect(echoProblem("chat", { messages: [{ role: "user", content: "q" }, assistant, { role: "tool", tool_call_id: "call_1", content: "x" }] }, ledger)).toBeNull();
    expect(echoProblem("chat", { messages: [{ role: "user", content: "q" }, assistant, { role: "user", content: "?" }] }, ledger)).toMatchObject({
      status: 400,
      message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
      param: "messages.[1].role",
    });
    expect(echoProblem("chat", { messages: [{ role: "user", content: "q" }, { role: "tool", tool_call_id: "call_1", content: "x" }] }, ledger)).toMatchObject({
      message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
  });

  test("anthropic: a thinking block with a signature never issued, and a tool_result without its tool_use", () => {
    const anthropicLedger = [entry("anthropic", 5)];
    const use = { type: "tool_use", id: "call_1", name: "read", input: { path: "a" } };
    const thinking = { type: "thinking", thinking: "Let me read it.", signature: signatureOf(5) };
    const result = { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "x" }] };
    expect(echoProblem("anthropic", { messages: [{ role: "user", content: "q" }, { role: "assistant", content: [thinking, use] }, result] }, anthropicLedger)).toBeNull();
    expect(echoProblem("anthropic", { messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ ...thinking, signature: "forged" }, use] }, result] }, anthropicLedger)).toEqual({
      status: 400,
      message: "messages.1.content.0: Invalid `signature` in `thinking` block",
    });
    expect(echoProblem("anthropic", { messages: [{ role: "user", content: "q" }, result] }, anthropicLedger)?.message).toBe(
      "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: call_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    );
    expect(echoProblem("anthropic", { messages: [{ role: "user", content: "q" }, { role: "assistant", content: [thinking, use] }] }, anthropicLedger)?.message).toBe(
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    );
  });
});
