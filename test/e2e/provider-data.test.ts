import { beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { workspaceStateDir } from "../../src/store/state.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import type { FakeProvider, FakeReply, RecordedRequest } from "../support/fake-provider.ts";
import { encryptedContentOf, functionItemIdOf, messageItemIdOf, reasoningItemIdOf, signatureOf } from "../support/fake-provider-wire.ts";

/**
 * The provider data a real provider needs back on the request after a tool call (thinking
 * signatures, redacted thinking, reasoning items, call ids, thought signatures) travels back
 * exactly: in the same run, after `--resume` (history read back from the store) and through
 * `zero host`. The fake runs in strict mode, so a lost or altered item is also an HTTP 400 and a
 * failed run, as with the real APIs.
 */

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
beforeEach(() => {
  fake.strict = true;
});

/** The read tool's output for README.md (its exact format is the read tool's business). */
const README = expect.stringContaining("The answer is 42.") as unknown as string;
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";
const GEMINI_SIGNATURE = "CiQBjz1rX+3kqdYsk9f/gemini==";

type Case = {
  name: string;
  config(): Record<string, unknown>;
  env: Record<string, string>;
  /** Reply 1: reasoning (and what else the protocol hands out) + a tool call. */
  first: FakeReply;
  /** The conversation a request carried, without the instructions. */
  history(request: RecordedRequest): unknown[];
  /** Run 1's two turns (the tool-call turn and its result), as the request after it must carry them. */
  toolTurn(n: number): unknown[];
  /** Run 1's answer turn (reply n), as the next run's first request must carry it. */
  answerTurn(n: number): unknown[];
};

const gatewayModel = (model: string) => () =>
  fakeConfig(fake.url, "chat", { models: { fake: { provider: "gateway", model, baseURL: fake.url, capabilities: ["text", "tools"] } } });
const gatewayResult = (id: string) => ({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: README } }] });

const CASES: Case[] = [
  {
    name: "Anthropic Messages",
    config: () => fakeConfig(fake.url, "anthropic"),
    env: { FAKE_KEY: "k" },
    first: { reasoning: "I should read the README.", redactedThinking: REDACTED, toolCalls: [{ name: "read", args: { path: "README.md" }, id: "toolu_01A" }] },
    history: (request) => request.body.messages,
    toolTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should read the README.", signature: signatureOf(n) },
          { type: "redacted_thinking", data: REDACTED },
          { type: "tool_use", id: "toolu_01A", name: "read", input: { path: "README.md" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: README }] },
    ],
    answerTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "It says 42.", signature: signatureOf(n) },
          { type: "text", text: "The answer is 42." },
        ],
      },
    ],
  },
  {
    name: "OpenAI Responses",
    config: () => fakeConfig(fake.url, "responses"),
    env: { FAKE_KEY: "k" },
    // The real API sends encrypted_content only when asked (include); zero keeps it either way.
    first: { reasoning: "I should read the README.", encryptedReasoning: true, toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_r1" }] },
    history: (request) => request.body.input.filter((item: any) => item.role !== "system" && item.role !== "developer"),
    // store is left at its default (true): stored items go back by reference, by their exact ids.
    toolTurn: (n) => [
      { type: "item_reference", id: reasoningItemIdOf(n) },
      { type: "function_call", call_id: "call_r1", name: "read", arguments: '{"path":"README.md"}' },
      { type: "function_call_output", call_id: "call_r1", output: README },
    ],
    answerTurn: (n) => [
      { type: "item_reference", id: reasoningItemIdOf(n) },
      { type: "item_reference", id: messageItemIdOf(n) },
    ],
  },
  {
    name: "Chat Completions (openai-compatible)",
    config: () => fakeConfig(fake.url, "chat"),
    env: {},
    first: { reasoning: "I should read the README.", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_c1", thoughtSignature: GEMINI_SIGNATURE }] },
    history: (request) => request.body.messages.filter((m: any) => m.role !== "system"),
    toolTurn: () => [
      {
        role: "assistant",
        content: null,
        reasoning_content: "I should read the README.",
        tool_calls: [
          {
            id: "call_c1",
            type: "function",
            function: { name: "read", arguments: '{"path":"README.md"}' },
            extra_content: { google: { thought_signature: GEMINI_SIGNATURE } },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_c1", content: README },
    ],
    answerTurn: () => [{ role: "assistant", content: "The answer is 42.", reasoning_content: "It says 42." }],
  },
  {
    name: "AI Gateway, an Anthropic model",
    config: gatewayModel("anthropic/claude-x"),
    env: { AI_GATEWAY_API_KEY: "gw" },
    first: { reasoning: "I should read the README.", redactedThinking: REDACTED, toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_ga1" }] },
    history: (request) => request.body.prompt.filter((m: any) => m.role !== "system"),
    toolTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "I should read the README.", providerOptions: { anthropic: { signature: signatureOf(n) } } },
          { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: REDACTED } } },
          { type: "tool-call", toolCallId: "call_ga1", toolName: "read", input: { path: "README.md" } },
        ],
      },
      gatewayResult("call_ga1"),
    ],
    answerTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "It says 42.", providerOptions: { anthropic: { signature: signatureOf(n) } } },
          { type: "text", text: "The answer is 42." },
        ],
      },
    ],
  },
  {
    name: "AI Gateway, an OpenAI model",
    config: gatewayModel("openai/gpt-x"),
    env: { AI_GATEWAY_API_KEY: "gw" },
    first: { reasoning: "I should read the README.", toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_go1" }] },
    history: (request) => request.body.prompt.filter((m: any) => m.role !== "system"),
    toolTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "I should read the README.", providerOptions: { openai: { itemId: reasoningItemIdOf(n), reasoningEncryptedContent: encryptedContentOf(n) } } },
          { type: "tool-call", toolCallId: "call_go1", toolName: "read", input: { path: "README.md" }, providerOptions: { openai: { itemId: functionItemIdOf(n, 0) } } },
        ],
      },
      gatewayResult("call_go1"),
    ],
    answerTurn: (n) => [
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "It says 42.", providerOptions: { openai: { itemId: reasoningItemIdOf(n), reasoningEncryptedContent: encryptedContentOf(n) } } },
          { type: "text", text: "The answer is 42." },
        ],
      },
    ],
  },
];

const ANSWER: FakeReply = { reasoning: "It says 42.", text: "The answer is 42." };

/** A model request's rejection in strict mode, for readable failures. */
function rejections(): string[] {
  return fake.requests.filter((request) => request.rejected).map((request) => `${request.path}: ${request.rejected}`);
}

describe.each(CASES)("$name", (c) => {
  test("the request after a tool call carries the turn's provider data exactly; after --resume the next run's first request still does", async () => {
    sandbox.writeUserConfig(c.config());
    fake.script([c.first, ANSWER]);
    const run1 = await runZero(["run", "what does the README say?"], { sandbox, env: c.env });
    expect(rejections()).toEqual([]);
    expect(run1.code).toBe(0);
    expect(run1.stdout).toBe("The answer is 42.\n");
    const [toolStep, answerStep] = fake.requests;
    const tool = toolStep!.replyNumber!;
    const answer = answerStep!.replyNumber!;
    // The request after the tool call: the question, then the tool-call turn with its data.
    expect(c.history(answerStep!).slice(1)).toEqual(c.toolTurn(tool));

    fake.script([{ text: "Still 42." }]);
    const run2 = await runZero(["run", "--resume", "latest", "and now?"], { sandbox, env: c.env });
    expect(rejections()).toEqual([]);
    expect(run2.code).toBe(0);
    expect(run2.stdout).toBe("Still 42.\n");
    // Run 2's first request: run 1's turns, read back from the store, exactly as they first went out.
    const resumed = c.history(fake.requests[2]!);
    expect(resumed.slice(1, -1)).toEqual([...c.toolTurn(tool), ...c.answerTurn(answer)]);
    expect(JSON.stringify(resumed.at(-1))).toContain("and now?");
  });
});

/** The state database of the sandbox's workspace. */
const dbFile = () => join(workspaceStateDir(sandbox.env, sandbox.workspace), "zero-cli.db");

/** Rewrites run 1's messages in the store (history rows: user, assistant tool-call turn, tool results, answer). */
function tamper(edit: (messages: any[]) => void): void {
  const db = new Database(dbFile());
  try {
    const rows = db.query("SELECT session_id AS sessionId, position, body FROM messages ORDER BY position").all() as Array<{ sessionId: string; position: number; body: string }>;
    const messages = rows.map((row) => JSON.parse(row.body));
    edit(messages);
    rows.forEach((row, i) => db.run("UPDATE messages SET body = ? WHERE session_id = ? AND position = ?", [JSON.stringify(messages[i]), row.sessionId, row.position]));
  } finally {
    db.close();
  }
}

const part = (message: any, type: string, nth = 0) => message.parts.filter((p: any) => p.type === type)[nth];

/** `edit` changes run 1's tool-call turn (the first assistant message); `all` sees every message. */
type Tamper = { name: string; protocol: number; edit?(message: any): void; all?(messages: any[]): void; status: number | null; says: string };

/** Renames a call everywhere (the call and its result): still well-formed, but not what the provider issued. */
const renameCall = (to: string) => (messages: any[]) => {
  for (const message of messages) for (const p of message.parts) if (p.type === "tool-call" || p.type === "tool-result") p.callId = to;
};

// Each loss zero could commit, made by hand in the store between two runs: the resumed run's
// first request is refused the way the real API refuses it, and the run fails (exit 3).
const TAMPERS: Tamper[] = [
  {
    name: "Anthropic: an altered thinking signature",
    protocol: 0,
    edit: (m) => (part(m, "reasoning").provider.anthropic.signature += "x"),
    status: 400,
    says: "messages.1.content.0: Invalid `signature` in `thinking` block",
  },
  {
    name: "Anthropic: altered thinking text (the signature covers it)",
    protocol: 0,
    edit: (m) => (part(m, "reasoning").text += " (edited)"),
    status: 400,
    says: "Invalid `signature` in `thinking` block",
  },
  {
    name: "Anthropic: thinking and redacted thinking lost",
    protocol: 0,
    edit: (m) => (m.parts = m.parts.filter((p: any) => p.type !== "reasoning")),
    status: 400,
    says: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.",
  },
  {
    name: "Anthropic: the redacted_thinking data altered",
    protocol: 0,
    edit: (m) => (part(m, "reasoning", 1).provider.anthropic.redactedData = "AAAA"),
    status: 400,
    says: "Invalid `data` in `redacted_thinking` block",
  },
  {
    name: "Anthropic: a tool_use id altered (with its tool_result)",
    protocol: 0,
    all: renameCall("toolu_other"),
    status: 400,
    says: "`tool_use` id toolu_other was never issued",
  },
  {
    name: "a call whose result no longer answers it is refused by the SDK itself (for every protocol), before any request",
    protocol: 0,
    edit: (m) => (part(m, "tool-call").callId = "toolu_other"),
    status: null,
    says: "Tool result is missing for tool call toolu_other.",
  },
  {
    name: "OpenAI Responses: the reasoning item's id lost",
    protocol: 1,
    edit: (m) => delete part(m, "reasoning").provider,
    status: 400,
    says: "of type 'function_call' was provided without its required 'reasoning' item: 'rs_",
  },
  {
    name: "OpenAI Responses: the reasoning item's id altered",
    protocol: 1,
    edit: (m) => (part(m, "reasoning").provider.openai.itemId = "rs_forged"),
    status: 404,
    says: "Item with id 'rs_forged' not found.",
  },
  {
    name: "OpenAI Responses: the call_id altered (with its output)",
    protocol: 1,
    all: renameCall("call_other"),
    status: 400,
    says: "function_call call_id call_other was never issued",
  },
  {
    name: "Chat Completions: the tool call id altered (with its tool message)",
    protocol: 2,
    all: renameCall("call_other"),
    status: 400,
    says: "tool call id call_other was never issued",
  },
  {
    name: "Chat Completions: the reasoning lost (thinking-mode providers need reasoning_content back)",
    protocol: 2,
    edit: (m) => (m.parts = m.parts.filter((p: any) => p.type !== "reasoning")),
    status: 400,
    says: "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2",
  },
  {
    name: "Chat Completions: a Gemini thought signature lost",
    protocol: 2,
    edit: (m) => delete part(m, "tool-call").provider,
    status: 400,
    says: "Function call is missing a thought_signature in functionCall parts.",
  },
  {
    name: "AI Gateway (OpenAI model): the reasoning's encrypted content altered",
    protocol: 4,
    edit: (m) => (part(m, "reasoning").provider.openai.reasoningEncryptedContent = "gAAAAABforged"),
    status: 400,
    says: "the reasoning of this tool-call turn lost or changed its provider metadata",
  },
];

describe("strict mode: a lost or altered item fails the run, as with the real API", () => {
  test.each(TAMPERS)("$name", async (t) => {
    const c = CASES[t.protocol]!;
    sandbox.writeUserConfig(c.config());
    fake.script([c.first, ANSWER]);
    expect((await runZero(["run", "what does the README say?"], { sandbox, env: c.env })).code).toBe(0);
    tamper((messages) => {
      t.edit?.(messages.find((m) => m.role === "assistant"));
      t.all?.(messages);
    });
    fake.script([{ text: "never sent" }]);
    const resumed = await runZero(["run", "--resume", "latest", "and now?"], { sandbox, env: c.env });
    expect(resumed.code).toBe(3);
    expect(resumed.stderr).toContain(t.says);
    if (t.status === null) {
      expect(fake.requests).toHaveLength(2); // refused in-process
      return;
    }
    expect(fake.requests[2]!.rejected).toContain(t.says);
    expect(resumed.stderr).toContain(String(t.status));
    expect(fake.requests).toHaveLength(3); // a 400/404 is not retried
  });
});

describe("the store keeps the data the wire does not need", () => {
  test("OpenAI Responses: with store left on, encrypted_content is not sent back, but zero keeps it with the reasoning item (for store: false)", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
    fake.script([{ reasoning: "Reading.", encryptedReasoning: true, toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_k1" }] }, { text: "42." }]);
    const run = await runZero(["run", "--json", "x"], { sandbox, env: { FAKE_KEY: "k" } });
    expect(run.code).toBe(0);
    const sessionId = jsonLines(run.stdout)[0]!.sessionId as string;
    const n = fake.requests[0]!.replyNumber!;
    // On the wire: the reasoning item by reference only.
    expect(fake.requests[1]!.body.input).toContainEqual({ type: "item_reference", id: reasoningItemIdOf(n) });
    expect(JSON.stringify(fake.requests[1]!.body)).not.toContain("encrypted_content");
    const db = new Database(dbFile(), { readonly: true });
    try {
      const rows = db.query("SELECT body FROM messages WHERE session_id = ? AND role = 'assistant' ORDER BY position").all(sessionId) as Array<{ body: string }>;
      expect(JSON.parse(rows[0]!.body)).toEqual({
        role: "assistant",
        parts: [
          { type: "reasoning", text: "Reading.", provider: { openai: { itemId: reasoningItemIdOf(n), reasoningEncryptedContent: encryptedContentOf(n) } } },
          { type: "tool-call", callId: "call_k1", tool: "read", input: { path: "README.md" }, state: "completed", provider: { openai: { itemId: functionItemIdOf(n, 0) } } },
        ],
      });
    } finally {
      db.close();
    }
  });
});

/** A host run request line. */
const runLine = (request_id: string, session_id: string, prompt: string) =>
  JSON.stringify({ protocol_version: 1, type: "run", request_id, session_id, prompt, idempotency_key: `idem-${request_id}`, stream: false });

async function host(lines: string[], args: string[] = []) {
  const result = await runZero(["host", ...args], { sandbox, env: { FAKE_KEY: "k" }, stdin: lines.map((line) => `${line}\n`).join("") });
  return { ...result, lines: jsonLines(result.stdout) };
}

describe("zero host (Anthropic)", () => {
  const anthropic = CASES[0]!;

  test("two runs on one session_id in one host: the second run's first request carries the first run's thinking and redacted blocks exactly", async () => {
    sandbox.writeUserConfig(anthropic.config());
    fake.script([anthropic.first, ANSWER, { text: "Still 42." }]);
    const result = await host([runLine("h1", "conv", "what does the README say?"), runLine("h2", "conv", "and now?")]);
    expect(rejections()).toEqual([]);
    expect(result.code).toBe(0);
    const finals = result.lines.filter((line) => line.type === "final");
    expect(finals.map((line) => [line.request_id, line.status, line.text])).toEqual([
      ["h1", "OK", "The answer is 42."],
      ["h2", "OK", "Still 42."],
    ]);
    const [toolStep, answerStep, second] = fake.requests;
    expect(anthropic.history(answerStep!).slice(1)).toEqual(anthropic.toolTurn(toolStep!.replyNumber!));
    expect(anthropic.history(second!).slice(1, -1)).toEqual([...anthropic.toolTurn(toolStep!.replyNumber!), ...anthropic.answerTurn(answerStep!.replyNumber!)]);
  });

  test("one process per request (the history comes from the store): the same, across the restart", async () => {
    sandbox.writeUserConfig(anthropic.config());
    fake.script([anthropic.first, ANSWER]);
    const first = await host([runLine("d1", "durable", "what does the README say?")], ["--bridge-compat", "--single-request"]);
    expect(first.code).toBe(0);
    fake.script([{ text: "Still 42." }]);
    const second = await host([runLine("d2", "durable", "and now?")], ["--bridge-compat", "--single-request"]);
    expect(rejections()).toEqual([]);
    expect(second.code).toBe(0);
    expect(second.lines.at(-1)).toMatchObject({ type: "final", status: "OK", text: "Still 42." });
    const [toolStep, answerStep, resumed] = fake.requests;
    expect(anthropic.history(resumed!).slice(1, -1)).toEqual([...anthropic.toolTurn(toolStep!.replyNumber!), ...anthropic.answerTurn(answerStep!.replyNumber!)]);
  });
});
