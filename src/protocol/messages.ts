/**
 * Model history in the AI SDK's message shape, kept as plain data so the loop,
 * the store and checkpoints can hold it without importing the SDK. Only `llm/`
 * hands it to the SDK.
 */
export type ModelMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | unknown[] }
  | { role: "assistant"; content: string | unknown[] }
  | { role: "tool"; content: ToolResultPart[] };

export type ToolResultOutput =
  | { type: "text"; value: string }
  | { type: "error-text"; value: string }
  | { type: "execution-denied"; reason: string }
  | { type: "content"; value: unknown[] };

export type ToolResultPart = {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  output: ToolResultOutput;
};

export function userMessage(text: string): ModelMessage {
  return { role: "user", content: text };
}

export function toolResultMessage(parts: ToolResultPart[]): ModelMessage {
  return { role: "tool", content: parts };
}
