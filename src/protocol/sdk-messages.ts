import type { AssistantPart, Message, ProviderData, ToolResultOutput } from "./messages.ts";

/**
 * The AI SDK's message shape, as plain data, read into zero's messages. Used
 * for each step's response and for histories saved before zero had its own
 * model (schema 2 checkpoints). Nothing here imports the SDK.
 */

type SdkPart = Record<string, unknown> & { type: string; providerOptions?: unknown };
type SdkLikeMessage = { role: string; content: unknown };

/** Plain JSON (no undefined, no class instances): what our schemas and the store accept. */
export function plainJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function providerOf(part: { providerOptions?: unknown }): { provider?: ProviderData } {
  const options = part.providerOptions;
  if (options === undefined || options === null || typeof options !== "object") return {};
  const copied = plainJson(options) as ProviderData;
  return Object.keys(copied).length > 0 ? { provider: copied } : {};
}

function base64Of(data: unknown): string | undefined {
  if (typeof data === "string") return data;
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
  if (data && typeof data === "object" && (data as { type?: unknown }).type === "data") return base64Of((data as { data: unknown }).data);
  return undefined;
}

function partsOf(content: unknown): SdkPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as SdkPart[]) : [];
}

function filePart(part: SdkPart): { type: "file"; mediaType: string; data: string; filename?: string } | undefined {
  const data = base64Of(part.type === "image" ? part.image : part.data);
  const mediaType = typeof part.mediaType === "string" ? part.mediaType : part.type === "image" ? "image/png" : undefined;
  if (data === undefined || mediaType === undefined) return undefined;
  return { type: "file", mediaType, data, ...(typeof part.filename === "string" ? { filename: part.filename } : {}) };
}

function assistantPart(part: SdkPart): AssistantPart {
  const provider = providerOf(part);
  switch (part.type) {
    case "text":
    case "reasoning":
      return { type: part.type, text: String(part.text ?? ""), ...provider };
    case "tool-call":
      // Provider-executed calls are the provider's business: kept verbatim, never run by zero.
      if (part.providerExecuted === true) break;
      return { type: "tool-call", callId: String(part.toolCallId), tool: String(part.toolName), input: plainJson(part.input) ?? null, state: "pending", ...provider };
    case "file": {
      const file = filePart(part);
      if (file) return { ...file, ...provider };
      break;
    }
  }
  return { type: "provider-part", value: plainJson(part) as Extract<AssistantPart, { type: "provider-part" }>["value"] };
}

function toolOutput(output: unknown): ToolResultOutput {
  const value = (output ?? {}) as { type?: unknown; value?: unknown; reason?: unknown };
  if ((value.type === "text" || value.type === "error-text") && typeof value.value === "string") return { type: value.type, value: value.value };
  if (value.type === "execution-denied") return { type: "execution-denied", reason: typeof value.reason === "string" ? value.reason : "denied" };
  if (value.type === "content" && Array.isArray(value.value)) {
    const items = (value.value as SdkPart[]).map((item) => (item.type === "text" ? { type: "text" as const, text: String(item.text ?? "") } : filePart(item)));
    return { type: "content", value: items.filter((item) => item !== undefined) };
  }
  return { type: "text", value: JSON.stringify(value.value ?? null) };
}

/** SDK-shaped messages → zero's. System messages are not history (instructions are rebuilt per run). */
export function fromSdkShape(messages: readonly SdkLikeMessage[]): Message[] {
  const out: Message[] = [];
  for (const message of messages) {
    const parts = partsOf(message.content);
    if (message.role === "user") {
      const userParts = parts.map((part) => (part.type === "text" ? { type: "text" as const, text: String(part.text ?? ""), ...providerOf(part) } : filePart(part)));
      out.push({ role: "user", parts: userParts.filter((part) => part !== undefined) });
    } else if (message.role === "assistant") {
      out.push({ role: "assistant", parts: parts.map(assistantPart) });
    } else if (message.role === "tool") {
      const results = parts.filter((part) => part.type === "tool-result");
      out.push({
        role: "tool",
        parts: results.map((part) => ({ type: "tool-result", callId: String(part.toolCallId), tool: String(part.toolName), output: toolOutput(part.output), ...providerOf(part) })),
      });
    }
  }
  return out;
}
