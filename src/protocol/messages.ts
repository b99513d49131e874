import { z } from "zod";

/**
 * zero's own conversation model: messages made of typed parts. The loop, the
 * store, resume, compaction and every surface work with these; only `llm/`
 * converts them to the AI SDK's shape. Anything read back from disk is
 * validated against these schemas.
 *
 * `provider` holds the provider data that must travel back unchanged on the
 * next request (Anthropic thinking signatures, OpenAI Responses item ids and
 * encrypted reasoning, …): it is the SDK's providerOptions, kept verbatim.
 */

const jsonValue = z.json();
export const providerDataSchema = z.record(z.string(), z.record(z.string(), jsonValue));
export type ProviderData = z.infer<typeof providerDataSchema>;
const provider = providerDataSchema.optional();

export const textPartSchema = z.object({ type: z.literal("text"), text: z.string(), provider });
/** Media (an image, a PDF, audio) as base64 data. */
export const filePartSchema = z.object({
  type: z.literal("file"),
  mediaType: z.string(),
  data: z.string(),
  filename: z.string().optional(),
  provider,
});
export const reasoningPartSchema = z.object({ type: z.literal("reasoning"), text: z.string(), provider });

/** A tool call's lifecycle as the history records it. */
export const toolCallStateSchema = z.enum(["pending", "running", "completed", "failed", "denied", "cancelled"]);
export type ToolCallState = z.infer<typeof toolCallStateSchema>;

export const toolCallPartSchema = z.object({
  type: z.literal("tool-call"),
  callId: z.string(),
  tool: z.string(),
  input: z.unknown(),
  state: toolCallStateSchema,
  provider,
});

export const toolResultOutputSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), value: z.string() }),
  z.object({ type: z.literal("error-text"), value: z.string() }),
  z.object({ type: z.literal("execution-denied"), reason: z.string() }),
  z.object({
    type: z.literal("content"),
    value: z.array(
      z.union([
        z.object({ type: z.literal("text"), text: z.string() }),
        z.object({ type: z.literal("file"), mediaType: z.string(), data: z.string(), filename: z.string().optional() }),
      ]),
    ),
  }),
]);
export type ToolResultOutput = z.infer<typeof toolResultOutputSchema>;

export const toolResultPartSchema = z.object({
  type: z.literal("tool-result"),
  callId: z.string(),
  tool: z.string(),
  output: toolResultOutputSchema,
  provider,
});
export type ToolResultPart = z.infer<typeof toolResultPartSchema>;

/** Where compaction replaced earlier messages with a summary (the compaction issue fills it). */
export const summaryPartSchema = z.object({ type: z.literal("summary"), text: z.string(), replacedMessages: z.number().int().nonnegative() });

/**
 * A part the SDK produced that zero does not model (an Anthropic message_start
 * marker, a provider-executed tool result, reasoning files). Kept verbatim and
 * sent back as it came, so nothing the provider expects to see again is lost.
 */
export const providerPartSchema = z.object({ type: z.literal("provider-part"), value: z.record(z.string(), jsonValue) });

export const userPartSchema = z.discriminatedUnion("type", [textPartSchema, filePartSchema, summaryPartSchema]);
export const assistantPartSchema = z.discriminatedUnion("type", [
  textPartSchema,
  filePartSchema,
  reasoningPartSchema,
  toolCallPartSchema,
  providerPartSchema,
]);

export const messageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("user"), parts: z.array(userPartSchema) }),
  z.object({ role: z.literal("assistant"), parts: z.array(assistantPartSchema) }),
  z.object({ role: z.literal("tool"), parts: z.array(toolResultPartSchema) }),
]);
export type Message = z.infer<typeof messageSchema>;
export type UserMessage = Extract<Message, { role: "user" }>;
export type AssistantMessage = Extract<Message, { role: "assistant" }>;
export type ToolMessage = Extract<Message, { role: "tool" }>;
export type AssistantPart = AssistantMessage["parts"][number];
export type ToolCallPart = z.infer<typeof toolCallPartSchema>;

export function userMessage(text: string): UserMessage {
  return { role: "user", parts: [{ type: "text", text }] };
}

export function toolResultMessage(parts: ToolResultPart[]): ToolMessage {
  return { role: "tool", parts };
}

/** The tool calls of an assistant message, in order. */
export function toolCallsOf(message: Message): ToolCallPart[] {
  if (message.role !== "assistant") return [];
  return message.parts.filter((part): part is ToolCallPart => part.type === "tool-call");
}

/** Validates a stored message; the error names what is wrong. */
export function parseMessage(value: unknown): { ok: true; message: Message } | { ok: false; error: string } {
  const parsed = messageSchema.safeParse(value);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, error: `${issue?.path.join(".") || "message"}: ${issue?.message ?? "invalid"}` };
}
