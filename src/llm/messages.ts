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

// Messages are never mutated (a changed message is a new object), so each is converted once
// (per form: with tool media moved to a user message, a tool message becomes two).
const converted = new WeakMap<Message, SdkMessage>();
const convertedMovingMedia = new WeakMap<Message, SdkMessage[]>();

export type ConversionOptions = {
  /**
   * Chat Completions endpoints (openai-compatible, Kimi, Nebius) take text only in a tool
   * message: the SDK would send an image result as a JSON string. Set, media of tool results go
   * to a user message right after the tool message, as real image/file parts.
   */
  toolMediaAsUser?: boolean;
};

/** zero's history → the SDK's messages for one request. */
export function toSdkMessages(messages: readonly Message[], options: ConversionOptions = {}): SdkMessage[] {
  if (options.toolMediaAsUser) {
    return messages.flatMap((message) => {
      let sdk = convertedMovingMedia.get(message);
      if (!sdk) {
        sdk = message.role === "tool" ? toolWithMediaAsUser(message) : [toSdkMessage(message)];
        convertedMovingMedia.set(message, sdk);
      }
      return sdk;
    });
  }
  return messages.map((message) => {
    let sdk = converted.get(message);
    if (!sdk) {
      sdk = toSdkMessage(message);
      converted.set(message, sdk);
    }
    return sdk;
  });
}

/** A tool message whose results carry media → the tool message with text only, then a user message with the media. */
function toolWithMediaAsUser(message: Extract<Message, { role: "tool" }>): SdkMessage[] {
  const media: Array<{ type: "text"; text: string } | { type: "file"; mediaType: string; data: string; filename?: string }> = [];
  const parts = message.parts.map((part) => {
    if (part.output.type !== "content" || !part.output.value.some((item) => item.type === "file")) return part;
    const files = part.output.value.filter((item) => item.type === "file");
    media.push({ type: "text", text: `The ${files.length === 1 ? "file" : `${files.length} files`} returned by the ${part.tool} call ${part.callId}:` });
    for (const file of files) media.push({ type: "file", mediaType: file.mediaType, data: file.data, ...(file.filename ? { filename: file.filename } : {}) });
    const text = part.output.value.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
    return { ...part, output: { type: "text" as const, value: `${text}\n[${files.length === 1 ? "the file follows" : "the files follow"} in the next message]` } };
  });
  if (media.length === 0) return [toSdkMessage(message)];
  return [toSdkMessage({ role: "tool", parts }), { role: "user", content: media } as SdkMessage];
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
