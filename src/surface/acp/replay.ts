import type * as acp from "@agentclientprotocol/sdk";
import type { Message, ToolCallState, ToolResultOutput } from "../../protocol/messages.ts";
import { oneLine, toolKind } from "./updates.ts";

/** `session/load` replays at most the last this-many messages of a session's history. */
export const MAX_REPLAY_MESSAGES = 400;
/** …each text cut at this many characters, */
export const MAX_REPLAY_TEXT = 20_000;
/** …and each tool result at this many. */
export const MAX_REPLAY_TOOL_OUTPUT = 4_000;

// A stored call has no policy classification: its kind comes from the tool (search tools as live).
const KIND_BY_TOOL: Record<string, acp.ToolKind> = { read: "read", write: "edit", run: "execute", delegate: "think", todo: "think" };

/**
 * A stored conversation → the `session/update`s that show it again to a client loading the
 * session: user turns, answers, reasoning, and tool calls with their results. Bounded (the
 * latest messages, long texts cut); media are named placeholders; every text passes `redact`.
 */
export function replayUpdates(messages: readonly Message[], redact: (text: string) => string): acp.SessionUpdate[] {
  const updates: acp.SessionUpdate[] = [];
  const skipped = Math.max(0, messages.length - MAX_REPLAY_MESSAGES);
  const text = (kind: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk", value: string) => {
    if (value !== "") updates.push({ sessionUpdate: kind, content: { type: "text", text: cut(redact(value), MAX_REPLAY_TEXT) } });
  };
  if (skipped > 0) text("agent_message_chunk", `(${skipped} earlier messages of this session are not shown)\n\n`);
  for (const message of messages.slice(skipped)) {
    if (message.role === "user") {
      for (const part of message.parts) {
        if (part.type === "text") text("user_message_chunk", part.text);
        else if (part.type === "file") text("user_message_chunk", `[attachment: ${part.filename ?? "unnamed"} (${part.mediaType})]`);
        else text("agent_message_chunk", `(a summary of ${part.replacedMessages} earlier messages)\n${part.text}`);
      }
    } else if (message.role === "assistant") {
      for (const part of message.parts) {
        if (part.type === "text") text("agent_message_chunk", part.text);
        else if (part.type === "reasoning") text("agent_thought_chunk", part.text);
        else if (part.type === "tool-call") {
          updates.push({
            sessionUpdate: "tool_call",
            toolCallId: part.callId,
            title: titleOf(part.tool, part.input, redact),
            kind: KIND_BY_TOOL[part.tool] ?? toolKind(part.tool, null),
            status: statusOf(part.state),
            rawInput: redactDeep(part.input, redact) as Record<string, unknown>,
          });
        } else if (part.type === "file") text("agent_message_chunk", `[file: ${part.filename ?? "unnamed"} (${part.mediaType})]`);
      }
    } else {
      for (const part of message.parts) {
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: part.callId,
          status: part.output.type === "text" || part.output.type === "content" ? "completed" : "failed",
          content: [{ type: "content", content: { type: "text", text: cut(redact(outputText(part.output)), MAX_REPLAY_TOOL_OUTPUT) } }],
        });
      }
    }
  }
  return updates;
}

function statusOf(state: ToolCallState): acp.ToolCallStatus {
  return state === "completed" ? "completed" : state === "pending" ? "pending" : state === "running" ? "in_progress" : "failed";
}

function outputText(output: ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "execution-denied":
      return `denied: ${output.reason}`;
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : `[${part.mediaType}${part.filename ? ` ${part.filename}` : ""}]`)).join("\n");
  }
}

/** A call's title: the tool and its main argument (a path, a command, a pattern), on one line, redacted before it is cut. */
function titleOf(tool: string, input: unknown, redact: (text: string) => string): string {
  const args = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const main = ["path", "command", "pattern", "query", "url", "task"].map((key) => args[key]).find((value) => typeof value === "string") as string | undefined;
  return main === undefined ? tool : `${tool}: ${oneLine(redact(main))}`;
}

function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return cut(redact(value), MAX_REPLAY_TEXT);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, redact)]));
  return value;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters not shown)` : text;
}
