import { isAbsolute, resolve } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { isChildEvent, type EventOf, type Operation, type RuntimeEvent, type StopReason } from "../../protocol/events.ts";

/**
 * The ACP translator: one internal runtime event → the `session/update`s a client sees.
 * Pure: the server sends what this returns, in order. A delegated child run shows as one tool
 * call of its own (kind `think`, id `run:<child run id>`) from its start to its end, with its
 * run, parent, root and task ids in `_meta.zero`; its inner events are not forwarded.
 */
export function updatesFor(event: RuntimeEvent, cwd: string, requested?: (callId: string) => unknown): acp.SessionUpdate[] {
  if (event.type === "agent.spawned" || event.type === "agent.completed") return childRunUpdates(event);
  if (isChildEvent(event)) return [];
  switch (event.type) {
    case "message.delta":
      return event.text === "" ? [] : [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } }];
    case "reasoning.delta":
      return event.text === "" ? [] : [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } }];
    case "tool.requested":
      return [toolCall(event, cwd)];
    case "tool.started":
      return [{ sessionUpdate: "tool_call_update", toolCallId: event.callId, status: "in_progress" }];
    case "tool.progress":
      // The latest progress line stands as the call's content until its result replaces it.
      return [{ sessionUpdate: "tool_call_update", toolCallId: event.callId, status: "in_progress", content: [{ type: "content", content: { type: "text", text: event.message } }] }];
    case "tool.completed":
      return [toolCallDone(event, editDiff(event, requested?.(event.callId), cwd))];
    case "plan.updated":
      return [{ sessionUpdate: "plan", entries: event.items.map((item) => ({ content: item.content, status: item.status, priority: "medium" })) }];
    case "context.updated":
      return [{ sessionUpdate: "usage_update", used: event.tokens, size: event.window }];
    default:
      return [];
  }
}

/** A child run's start and end as a tool call of its own; its ids travel in `_meta.zero`. */
function childRunUpdates(event: EventOf<"agent.spawned"> | EventOf<"agent.completed">): acp.SessionUpdate[] {
  const rootRunId = (event as { rootRunId?: unknown }).rootRunId;
  const meta = {
    zero: {
      runId: event.childRunId,
      parentRunId: event.runId,
      rootRunId: typeof rootRunId === "string" ? rootRunId : event.runId,
      taskId: event.taskId,
      ...(event.type === "agent.spawned" ? { agent: event.agent, callId: event.callId } : { status: event.status }),
    },
  };
  const toolCallId = `run:${event.childRunId}`;
  if (event.type === "agent.completed") {
    const summary = event.result.summary;
    return [
      {
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: event.status === "completed" ? "completed" : "failed",
        ...(typeof summary === "string" && summary !== "" ? { content: [{ type: "content", content: { type: "text", text: summary } }] } : {}),
        _meta: meta,
      },
    ];
  }
  if (event.followUp) return [{ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", _meta: meta }];
  return [{ sessionUpdate: "tool_call", toolCallId, title: `${event.agent}: ${oneLine(event.taskName)}`, kind: "think", status: "in_progress", _meta: meta }];
}

const PATH_OPERATIONS: ReadonlySet<Operation> = new Set(["read", "read-secret", "write-edit", "write-delete", "write-move", "write-sensitive"]);
const SEARCH_TOOLS: ReadonlySet<string> = new Set(["find", "grep", "search", "web_search"]);

/** The ACP tool kind from what policy says the call does. */
export function toolKind(tool: string, operation: Operation | null): acp.ToolKind {
  if (SEARCH_TOOLS.has(tool)) return "search";
  switch (operation) {
    case "read":
    case "read-secret":
      return "read";
    case "write-edit":
    case "write-sensitive":
      return "edit";
    case "write-delete":
      return "delete";
    case "write-move":
      return "move";
    case "execute":
      return "execute";
    case "network":
      return "fetch";
    default:
      return "other";
  }
}

/** The absolute path a file operation's target names (relative ones are of the workspace); never a URL. */
export function pathTarget(operation: Operation | null, target: string | null | undefined, cwd: string): string | undefined {
  if (!target || operation === null || !PATH_OPERATIONS.has(operation) || target.includes("://")) return undefined;
  return isAbsolute(target) ? target : resolve(cwd, target);
}

function toolCall(event: EventOf<"tool.requested">, cwd: string): acp.SessionUpdate {
  const path = pathTarget(event.operation, event.target, cwd);
  const target = event.target ?? undefined;
  return {
    sessionUpdate: "tool_call",
    toolCallId: event.callId,
    title: target ? `${event.tool}: ${oneLine(target)}` : event.tool,
    kind: toolKind(event.tool, event.operation),
    status: "pending",
    rawInput: event.input as Record<string, unknown>,
    ...(path ? { locations: [{ path }] } : {}),
  };
}

/** A completed `write` edit as ACP diff content (the replaced text and its replacement), from the call's input. */
function editDiff(event: EventOf<"tool.completed">, input: unknown, cwd: string): acp.ToolCallContent | undefined {
  if (event.tool !== "write" || event.status !== "completed" || typeof input !== "object" || input === null) return undefined;
  const { operation, path, oldText, newText } = input as Record<string, unknown>;
  if (operation !== "edit" || typeof path !== "string" || typeof oldText !== "string" || typeof newText !== "string") return undefined;
  return { type: "diff", path: isAbsolute(path) ? path : resolve(cwd, path), oldText, newText };
}

function toolCallDone(event: EventOf<"tool.completed">, diff?: acp.ToolCallContent): acp.SessionUpdate {
  const content: acp.ToolCallContent[] = diff ? [diff] : [];
  if (event.output !== "") content.push({ type: "content", content: { type: "text", text: event.output } });
  // Our diff is unified text; ACP's diff content wants whole old/new texts, which we do not keep.
  if (event.diff) content.push({ type: "content", content: { type: "text", text: "```diff\n" + event.diff + (event.diff.endsWith("\n") ? "" : "\n") + "```" } });
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: event.callId,
    status: event.status === "completed" ? "completed" : "failed",
    content,
    rawOutput: { status: event.status, truncated: event.truncated },
  };
}

/** Text on one line, cut at 120 characters (titles). */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/** The ACP stop reason of a finished run; undefined when the run failed (answered as an error). */
export function stopReasonFor(status: "completed" | "failed" | "limit" | "cancelled", reason: StopReason | null): acp.StopReason | undefined {
  if (status === "cancelled" || reason === "cancelled") return "cancelled";
  if (reason === "refusal") return "refusal";
  if (status === "completed") return "end_turn";
  if (status === "limit") return reason === "max_steps" || reason === "max_tool_calls" ? "max_turn_requests" : "max_tokens";
  return undefined;
}

/** The permission options every approval offers, and the answer each one means. */
export const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow-always", name: "Allow always (this session)", kind: "allow_always" },
  { optionId: "reject-once", name: "Reject", kind: "reject_once" },
];

/** A client's permission outcome → the service's answer; anything but an allow option is a denial. */
export function answerFor(response: acp.RequestPermissionResponse | undefined): "once" | "always" | "deny" {
  const outcome = response?.outcome;
  if (outcome?.outcome !== "selected") return "deny";
  if (outcome.optionId === "allow-once") return "once";
  if (outcome.optionId === "allow-always") return "always";
  return "deny";
}

/** The permission request for an approval the session waits on (its callId is the tool call's id). */
export function permissionRequest(sessionId: string, event: { callId: string; tool: string; operation: Operation; target?: string; reason: string }, cwd: string): acp.RequestPermissionRequest {
  const target = event.target;
  const path = pathTarget(event.operation, target, cwd);
  return {
    sessionId,
    toolCall: {
      toolCallId: event.callId,
      title: target ? `${event.tool}: ${oneLine(target)}` : event.tool,
      kind: toolKind(event.tool, event.operation),
      status: "pending",
      content: [{ type: "content", content: { type: "text", text: event.reason } }],
      ...(path ? { locations: [{ path }] } : {}),
    },
    options: PERMISSION_OPTIONS,
  };
}
