// Strict mode of the fake model provider (see fake-provider.ts): like a real provider, it
// rejects a follow-up request whose history lost or altered the provider data an earlier
// reply handed out. The fake remembers every reply it sent (the ledger); `echoProblem`
// checks a request's history against it and returns the HTTP error a real provider would
// answer with (message texts modeled on the real APIs'), or null.
//
// Rules (each protocol's history format as the AI SDK adapters write it):
// - Anthropic Messages: an assistant turn that made tool calls must carry the turn's thinking
//   block (exact text and signature) and its redacted_thinking block (exact data) before its
//   first tool_use; any thinking block must carry a signature this fake issued, for exactly
//   that text; every tool_use id must be one the fake issued and be answered by a tool_result
//   in the next message; every tool_result must answer a tool_use of the previous message.
// - OpenAI Responses: item_reference ids must name items the fake produced (not in a store:false
//   response); inline reasoning items must carry their exact encrypted_content when the request
//   has store: false (and it must match whenever present); a function_call of a reply that
//   reasoned must come after that reply's reasoning item (by reference or inline); call_ids
//   must be issued ones, a function_call's item id (if sent) its own, and calls and outputs pair
//   up by call_id.
// - Chat Completions: tool_calls ids must be issued ones and be answered by tool messages right
//   after; a tool message must answer a call of the assistant message before it; an assistant
//   tool-call turn of a reply that reasoned must carry its reasoning_content exactly (the
//   DeepSeek/Kimi thinking-mode rule); a call that came with a Gemini thought signature must
//   carry it back exactly (extra_content.google.thought_signature).
// - AI Gateway (the SDK's own prompt format): tool-call / tool-result pairing by toolCallId, and
//   the provider metadata the reply attached (reasoning signature or item id + encrypted
//   content, redacted data, a call's item id) back as providerOptions, exactly, on a tool-call
//   turn.
import { encryptedContentOf, functionItemIdOf, gatewayMetadata, messageItemIdOf, reasoningItemIdOf, signatureOf, type Plan, type Protocol } from "./fake-provider-wire.ts";

/** One reply the fake sent: its plan (ids derive from plan.n) and what the request asked for. */
export type LedgerEntry = { protocol: Protocol; plan: Plan; store: boolean };

/** The error a strict fake answers with: HTTP status and the error JSON's fields. */
export type EchoProblem = { status: number; message: string; type?: string; code?: string | null; param?: string | null };

const ANTHROPIC_THINKING_REQUIRED =
  "Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block " +
  "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, " +
  "disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

type Call = { entry: LedgerEntry; index: number; call: Plan["calls"][number] };

function index(ledger: readonly LedgerEntry[]) {
  const calls = new Map<string, Call>();
  const signatures = new Map<string, LedgerEntry>();
  const items = new Map<string, { entry: LedgerEntry; kind: "reasoning" | "message" | "function_call" }>();
  for (const entry of ledger) {
    const { plan } = entry;
    plan.calls.forEach((call, i) => calls.set(call.id, { entry, index: i, call }));
    if (plan.reasoning.length > 0) signatures.set(signatureOf(plan.n), entry);
    if (entry.protocol === "responses") {
      if (plan.reasoning.length > 0) items.set(reasoningItemIdOf(plan.n), { entry, kind: "reasoning" });
      if (plan.commentary.length > 0) items.set(messageItemIdOf(plan.n, true), { entry, kind: "message" });
      if (plan.text.length > 0) items.set(messageItemIdOf(plan.n), { entry, kind: "message" });
      plan.calls.forEach((_, i) => items.set(functionItemIdOf(plan.n, i), { entry, kind: "function_call" }));
    }
  }
  return { calls, signatures, items };
}

type Index = ReturnType<typeof index>;
const reasoningText = (plan: Plan) => plan.reasoning.join("");
const blocks = (content: unknown): any[] => (Array.isArray(content) ? content : typeof content === "string" ? [{ type: "text", text: content }] : []);
const json = (value: unknown) => JSON.stringify(value);
/** Equal as JSON data, key order aside. */
function same(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === "object"
        ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** What is wrong with a request's history, as the provider would say it; null when it is fine. */
export function echoProblem(protocol: Protocol, body: any, ledger: readonly LedgerEntry[]): EchoProblem | null {
  const known = index(ledger);
  if (protocol === "anthropic") return anthropic(body, known);
  if (protocol === "responses") return responses(body, known);
  if (protocol === "chat") return chat(body, known);
  if (protocol === "gateway") return gateway(body, known);
  return null;
}

function anthropic(body: any, known: Index): EchoProblem | null {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const bad = (message: string): EchoProblem => ({ status: 400, message });
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const content = blocks(message.content);
    if (message.role === "assistant") {
      // Every thinking block: a signature this fake issued, for exactly the text it signed.
      for (let j = 0; j < content.length; j++) {
        const block = content[j];
        if (block.type !== "thinking") continue;
        const signer = known.signatures.get(block.signature);
        if (!signer || reasoningText(signer.plan) !== block.thinking) return bad(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
      const uses = content.map((block, j) => ({ block, j })).filter(({ block }) => block.type === "tool_use");
      if (uses.length === 0) continue;
      for (const { block, j } of uses) {
        if (!known.calls.has(block.id)) return bad(`messages.${i}.content.${j}: \`tool_use\` id ${block.id} was never issued by this (fake) provider`);
      }
      const firstUse = uses[0]!.j;
      const before = content.slice(0, firstUse);
      const { plan } = known.calls.get(uses[0]!.block.id)!.entry;
      const thinks = before.some((block) => block.type === "thinking" || block.type === "redacted_thinking");
      if ((plan.reasoning.length > 0 || plan.redactedThinking !== undefined) && !thinks) {
        return bad(`messages.${i}.content.0.type: ${ANTHROPIC_THINKING_REQUIRED}`);
      }
      if (plan.reasoning.length > 0 && !before.some((block) => block.type === "thinking" && block.signature === signatureOf(plan.n))) {
        return bad(`messages.${i}.content: the \`thinking\` block of this turn (signature ${signatureOf(plan.n)}) is missing before its \`tool_use\` blocks`);
      }
      if (plan.redactedThinking !== undefined) {
        const redacted = before.findIndex((block) => block.type === "redacted_thinking");
        if (redacted === -1) return bad(`messages.${i}.content: the \`redacted_thinking\` block of this turn is missing before its \`tool_use\` blocks`);
        if (before[redacted].data !== plan.redactedThinking) return bad(`messages.${i}.content.${redacted}: Invalid \`data\` in \`redacted_thinking\` block`);
      }
      // The next message answers every call.
      const next = messages[i + 1];
      const answered = new Set(next?.role === "user" ? blocks(next.content).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) : []);
      const missing = uses.map(({ block }) => block.id).filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return bad(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. ` +
            "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        );
      }
    } else if (message.role === "user") {
      const previous = messages[i - 1];
      const calls = new Set(previous?.role === "assistant" ? blocks(previous.content).filter((b) => b.type === "tool_use").map((b) => b.id) : []);
      for (let j = 0; j < content.length; j++) {
        const block = content[j];
        if (block.type === "tool_result" && !calls.has(block.tool_use_id)) {
          return bad(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. ` +
              "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
          );
        }
      }
    }
  }
  return null;
}

function responses(body: any, known: Index): EchoProblem | null {
  const input: any[] = Array.isArray(body?.input) ? body.input : [];
  const store = body?.store !== false;
  const notFound = (id: string, unstored: boolean): EchoProblem => ({
    status: 404,
    message: unstored
      ? `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`
      : `Item with id '${id}' not found.`,
    param: "input",
  });
  const invalid = (message: string, code: string | null = null): EchoProblem => ({ status: 400, message, param: "input", code });
  const seenReasoning = new Set<string>();
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const item of input) {
    if (item?.type === "item_reference") {
      const found = known.items.get(item.id);
      if (!found || !found.entry.store) return notFound(item.id, found !== undefined);
      if (found.kind === "reasoning") seenReasoning.add(item.id);
    } else if (item?.type === "reasoning") {
      const found = typeof item.id === "string" ? known.items.get(item.id) : undefined;
      if (typeof item.id === "string" && !found) return notFound(item.id, !store);
      if (!found) continue;
      const expected = encryptedContentOf(found.entry.plan.n);
      if (item.encrypted_content == null) {
        if (!store || !found.entry.store) return notFound(item.id, true);
      } else if (item.encrypted_content !== expected) {
        return invalid(`The encrypted content for item ${item.id} could not be verified.`, "invalid_encrypted_content");
      }
      seenReasoning.add(item.id);
    } else if (item?.type === "function_call") {
      const issued = known.calls.get(item.call_id);
      if (!issued) return invalid(`function_call call_id ${item.call_id} was never issued by this (fake) provider`);
      const itemId = functionItemIdOf(issued.entry.plan.n, issued.index);
      if (item.id !== undefined && item.id !== itemId) return notFound(item.id, !store);
      const plan = issued.entry.plan;
      if (plan.reasoning.length > 0 && !seenReasoning.has(reasoningItemIdOf(plan.n))) {
        return invalid(`Item '${itemId}' of type 'function_call' was provided without its required 'reasoning' item: '${reasoningItemIdOf(plan.n)}'.`);
      }
      calls.add(item.call_id);
    } else if (item?.type === "function_call_output") {
      if (!calls.has(item.call_id)) return invalid(`No tool call found for function call output with call_id ${item.call_id}.`);
      outputs.add(item.call_id);
    }
  }
  for (const call of calls) if (!outputs.has(call)) return invalid(`No tool output found for function call ${call}.`);
  return null;
}

function chat(body: any, known: Index): EchoProblem | null {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const invalid = (message: string, param: string | null): EchoProblem => ({ status: 400, message, param });
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === "assistant" && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      const ids: string[] = message.tool_calls.map((call: any) => call.id);
      for (const call of message.tool_calls) {
        const issued = known.calls.get(call.id);
        if (!issued) return invalid(`tool call id ${call.id} was never issued by this (fake) provider`, `messages.[${i}].tool_calls`);
        const signature = issued.call.thoughtSignature;
        if (signature !== undefined && call.extra_content?.google?.thought_signature !== signature) {
          return invalid(
            `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${call.function?.name}\` , position ${i + 1}.`,
            null,
          );
        }
      }
      const { plan } = known.calls.get(ids[0]!)!.entry;
      if (plan.reasoning.length > 0 && message.reasoning_content !== reasoningText(plan)) {
        return invalid(`thinking is enabled but reasoning_content is missing in assistant tool call message at index ${i}`, null);
      }
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k].role === "tool"; k++) answered.add(messages[k].tool_call_id);
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return invalid(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
          `messages.[${i}].role`,
        );
      }
    } else if (message.role === "tool") {
      let k = i - 1;
      while (k >= 0 && messages[k].role === "tool") k--;
      const owner = messages[k];
      const ids = new Set(owner?.role === "assistant" ? (owner.tool_calls ?? []).map((call: any) => call.id) : []);
      if (!ids.has(message.tool_call_id)) {
        return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      }
    }
  }
  return null;
}

function gateway(body: any, known: Index): EchoProblem | null {
  const prompt: any[] = Array.isArray(body?.prompt) ? body.prompt : [];
  const invalid = (message: string): EchoProblem => ({ status: 400, message });
  for (let i = 0; i < prompt.length; i++) {
    const message = prompt[i];
    const content = blocks(message.content);
    if (message.role === "assistant") {
      const calls = content.filter((part) => part.type === "tool-call");
      if (calls.length === 0) continue;
      for (const part of calls) if (!known.calls.has(part.toolCallId)) return invalid(`prompt[${i}]: tool call id ${part.toolCallId} was never issued by this (fake) gateway`);
      const issued = known.calls.get(calls[0].toolCallId)!;
      const { plan } = issued.entry;
      const meta = gatewayMetadata(plan);
      const reasoning = content.filter((part) => part.type === "reasoning");
      if (plan.reasoning.length > 0 && meta.reasoning) {
        const kept = reasoning.find((part) => part.text === reasoningText(plan));
        if (!kept || !same(kept.providerOptions, meta.reasoning)) {
          return invalid(`prompt[${i}]: the reasoning of this tool-call turn lost or changed its provider metadata (expected providerOptions ${json(meta.reasoning)}, got ${json(kept?.providerOptions)})`);
        }
      }
      if (plan.redactedThinking !== undefined) {
        const expected = meta.redacted(plan.redactedThinking);
        if (!reasoning.some((part) => same(part.providerOptions, expected))) return invalid(`prompt[${i}]: the redacted reasoning of this tool-call turn is missing (expected providerOptions ${json(expected)})`);
      }
      for (const part of calls) {
        const { index: n } = known.calls.get(part.toolCallId)!;
        const expected = meta.call(n);
        if (expected && !same(part.providerOptions, expected)) {
          return invalid(`prompt[${i}]: tool call ${part.toolCallId} lost or changed its provider metadata (expected providerOptions ${json(expected)}, got ${json(part.providerOptions)})`);
        }
      }
      const next = prompt[i + 1];
      const answered = new Set(next?.role === "tool" ? blocks(next.content).filter((p) => p.type === "tool-result").map((p) => p.toolCallId) : []);
      const missing = calls.map((part) => part.toolCallId).filter((id) => !answered.has(id));
      if (missing.length > 0) return invalid(`prompt[${i}]: tool calls without a result in the next message: ${missing.join(", ")}`);
    } else if (message.role === "tool") {
      const previous = prompt[i - 1];
      const ids = new Set(previous?.role === "assistant" ? blocks(previous.content).filter((p) => p.type === "tool-call").map((p) => p.toolCallId) : []);
      for (const part of content) {
        if (part.type === "tool-result" && !ids.has(part.toolCallId)) return invalid(`prompt[${i}]: tool result for ${part.toolCallId} answers no tool call of the previous message`);
      }
    }
  }
  return null;
}
