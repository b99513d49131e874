import type { ModelMessage as SdkMessage } from "ai";
import type { Message, ProviderData, ToolResultOutput } from "../protocol/messages.ts";
import { fromSdkShape } from "../protocol/sdk-messages.ts";

/**
 * The one place where zero's messages meet the AI SDK's. Provider data rides
 * along verbatim both ways: a follow-up request after a tool call is rejected
 * by real providers when a thinking signature or a reasoning item id is lost.
 */

function withProvider<T extends object>(part: T, provider: ProviderData | undefined): T {
  return provider ? { ...part, providerOptions: provider } : part;
}

function toolOutputToSdk(output: ToolResultOutput): unknown {
  if (output.type !== "content") return output;
  return {
    type: "content",
    value: output.value.map((item) =>
      item.type === "text"
        ? item
        : { type: "file", mediaType: item.mediaType, data: { type: "data", data: item.data }, ...(item.filename ? { filename: item.filename } : {}) },
    ),
  };
}

// Messages are never mutated (a changed message is a new object), so each is converted once.
const converted = new WeakMap<Message, SdkMessage>();

/** zero's history → the SDK's messages for one request. */
export function toSdkMessages(messages: readonly Message[]): SdkMessage[] {
  return messages.map((message) => {
    let sdk = converted.get(message);
    if (!sdk) {
      sdk = toSdkMessage(message);
      converted.set(message, sdk);
    }
    return sdk;
  });
}

function toSdkMessage(message: Message): SdkMessage {
    if (message.role === "user") {
      const only = message.parts[0];
      // A plain one-text turn goes out as a string, exactly as requests always looked.
      if (message.parts.length === 1 && only?.type === "text" && !only.provider) {
        return { role: "user", content: only.text };
      }
      const content = message.parts.map((part) => {
        if (part.type === "text") return withProvider({ type: "text" as const, text: part.text }, part.provider);
        if (part.type === "summary") return { type: "text" as const, text: part.text };
        return withProvider(
          { type: "file" as const, mediaType: part.mediaType, data: part.data, ...(part.filename ? { filename: part.filename } : {}) },
          part.provider,
        );
      });
      return { role: "user", content } as SdkMessage;
    } else if (message.role === "assistant") {
      const content = message.parts.map((part) => {
        switch (part.type) {
          case "text":
          case "reasoning":
            return withProvider({ type: part.type, text: part.text }, part.provider);
          case "file":
            return withProvider({ type: "file", mediaType: part.mediaType, data: part.data, ...(part.filename ? { filename: part.filename } : {}) }, part.provider);
          case "tool-call":
            return withProvider({ type: "tool-call", toolCallId: part.callId, toolName: part.tool, input: part.input }, part.provider);
          case "provider-part":
            return part.value;
        }
      });
      return { role: "assistant", content } as SdkMessage;
    } else {
      const content = message.parts.map((part) =>
        withProvider({ type: "tool-result", toolCallId: part.callId, toolName: part.tool, output: toolOutputToSdk(part.output) }, part.provider),
      );
      return { role: "tool", content } as SdkMessage;
    }
}

/**
 * The SDK's response messages of one step → zero's messages. The answers the
 * SDK itself wrote for calls it could not parse (`answeredBySdk`) are dropped:
 * the loop answers every call itself, once. Anything else is kept.
 */
export function fromSdkResponse(messages: readonly SdkMessage[], answeredBySdk: ReadonlySet<string>): Message[] {
  const kept: Message[] = [];
  for (const message of fromSdkShape(messages)) {
    if (message.role !== "tool") {
      kept.push(message);
      continue;
    }
    const parts = message.parts.filter((part) => !answeredBySdk.has(part.callId));
    if (parts.length > 0) kept.push({ role: "tool", parts });
  }
  return kept;
}
