import * as acp from "@agentclientprotocol/sdk";
import { isChildEvent, type RuntimeEvent } from "../../protocol/events.ts";
import { RunCancelledBeforeStart, type PendingApproval, type RunHandle, type Session } from "../../session/service.ts";
import type { EffectiveConfig } from "../../config/schema.ts";
import type { Message } from "../../protocol/messages.ts";
import { errorMessage } from "../../util/errors.ts";
import { applyChoice, configOptions, overridesOf, slashCommand, type SessionChoices, type SessionDefaults } from "./config-options.ts";
import { promptInput } from "./prompt.ts";
import { answerFor, permissionRequest, stopReasonFor, updatesFor } from "./updates.ts";

/** One live ACP session: the service session it maps to and what the client chose for it. */
export type AcpEntry = {
  session: Session;
  config: EffectiveConfig;
  workspace: string;
  additionalDirectories: string[];
  choices: SessionChoices;
  defaults: SessionDefaults;
  /** What opened it (so a session closed to stay within the live bound can be opened again). */
  origin: { cwd: string; additionalDirectories: string[]; mcpServers: unknown };
  /** When a request last used it (ms): the least recently used idle session is closed first. */
  lastUsed: number;
  running?: RunHandle;
  cancelled: boolean;
  /** Approvals asked and not yet answered (each is asked once). */
  asked: Set<string>;
  /** The stored conversation (for `session/load`). */
  history(): Message[];
  /** Redaction of everything sent to the client outside a turn's events (a replay). */
  redact(text: string): string;
  /** Stops the session's own services (MCP servers, children). */
  close(): Promise<void>;
};

/**
 * Sends a session's updates; `flushed` settles once all went out. The SDK writes messages in the
 * order they are sent, so waiting for the last one is waiting for all of them.
 */
export function updateSender(client: acp.AgentContext, sessionId: string, log: (line: string) => void) {
  let last: Promise<unknown> = Promise.resolve();
  return {
    send(update: acp.SessionUpdate) {
      last = client.notify(acp.methods.client.session.update, { sessionId, update }).catch((error) => log(`zero acp: session/update failed: ${errorMessage(error)}\n`));
    },
    get flushed(): Promise<unknown> {
      return last;
    },
  };
}

/**
 * One `session/prompt`: a slash command of ours is answered at once (it changes the next turns);
 * anything else runs a turn of the session with the client's choices and streams its events as
 * `session/update`s. Approvals the turn waits for become `session/request_permission` requests.
 */
export async function runPrompt(entry: AcpEntry, params: acp.PromptRequest, client: acp.AgentContext, signal: AbortSignal, log: (line: string) => void): Promise<acp.PromptResponse> {
  const input = promptInput(params.prompt, entry.config.limits.maxAttachmentBytes);
  // Cancelled while the session was being reopened: nothing starts.
  if (signal.aborted) return { stopReason: "cancelled" };
  if (entry.running) throw acp.RequestError.invalidRequest(undefined, `session ${entry.session.id} is already running a prompt; cancel it or wait for its answer`);
  const sessionId = entry.session.id;
  const updates = updateSender(client, sessionId, log);
  const command = input.media.length === 0 ? slashCommand(input.text, entry.config) : undefined;
  if (command) {
    updates.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: applyCommand(entry, command, updates.send) } });
    await updates.flushed;
    return { stopReason: "end_turn" };
  }
  let failure: string | undefined;
  // Asked after the updates before it (the tool call it is about), never holding later ones back.
  const ask = (pending: PendingApproval) => askPermission(entry, client, pending, updates.flushed, log);
  // The root run's call inputs, for the diff content of a completed edit.
  const inputs = new Map<string, unknown>();
  const requested = (callId: string) => inputs.get(callId);
  const listener = (event: RuntimeEvent) => {
    if (event.type === "tool.requested" && !isChildEvent(event) && event.tool === "write") inputs.set(event.callId, event.input);
    for (const update of updatesFor(event, entry.workspace, requested)) updates.send(update);
    if (event.type === "run.failed" && !isChildEvent(event)) failure = event.error.message;
  };
  // The service says when an approval waits for an answer: then the client is asked.
  const stopAsking = entry.session.onApprovalPending(ask);
  // Approvals that waited since the last prompt (a background child's) are asked now.
  for (const pending of entry.session.pendingApprovals()) ask(pending);
  entry.cancelled = false;
  const handle = entry.session.send(input.text, {
    listeners: [listener],
    overrides: overridesOf(entry.choices),
    ...(entry.choices.workflow !== undefined ? { workflow: entry.choices.workflow } : {}),
    ...(input.media.length > 0 ? { media: input.media } : {}),
  });
  entry.running = handle;
  const onAbort = () => {
    entry.cancelled = true;
    handle.cancel();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const outcome = await handle.done;
    await updates.flushed;
    if (entry.cancelled) return { stopReason: "cancelled" };
    const stopReason = stopReasonFor(outcome.status, outcome.reason);
    if (stopReason) return { stopReason };
    throw new acp.RequestError(-32603, `the turn failed: ${failure ?? outcome.reason ?? "unknown error"}`);
  } catch (error) {
    await updates.flushed;
    if (error instanceof acp.RequestError) throw error;
    if (error instanceof RunCancelledBeforeStart || entry.cancelled) return { stopReason: "cancelled" };
    // Refused before it started (an unknown model, a key missing, media no model can read): the user's to fix.
    throw new acp.RequestError(-32603, errorMessage(error));
  } finally {
    stopAsking();
    signal.removeEventListener("abort", onAbort);
    if (entry.running === handle) entry.running = undefined;
  }
}

/**
 * Asks the client about one approval the session waits on, once per call, after `after`; its
 * answer (a failure or a cancelled request: a denial) goes to the session's approval broker.
 */
export function askPermission(entry: AcpEntry, client: acp.AgentContext, pending: PendingApproval, after: Promise<unknown>, log: (line: string) => void): void {
  if (entry.asked.has(pending.callId)) return;
  entry.asked.add(pending.callId);
  // The approval comes straight from the policy, not from the (redacted) event stream: scrub it here.
  const request = permissionRequest(entry.session.id, { ...pending, reason: entry.redact(pending.reason), ...(pending.target !== undefined ? { target: entry.redact(pending.target) } : {}) }, entry.workspace);
  void after
    .then(() => client.request(acp.methods.client.session.requestPermission, request))
    .then(
      (response) => answerFor(response),
      (error) => {
        log(`zero acp: session/request_permission failed (denied): ${errorMessage(error)}\n`);
        return "deny" as const;
      },
    )
    .then((answer) => {
      entry.asked.delete(pending.callId);
      entry.session.answerApproval(pending.callId, answer);
    });
}

const COMMAND_OPTION: Record<string, string> = { depth: "depth", model: "model", reasoning: "reasoning", workflow: "workflow" };

/** Applies `/compact`, `/depth x`, `/model x`, `/reasoning x`, `/workflow x`; returns what to tell the user. */
function applyCommand(entry: AcpEntry, command: { name: string; argument: string }, send: (update: acp.SessionUpdate) => void): string {
  if (command.name === "compact") {
    entry.session.compact();
    return "The conversation will be compacted before the next turn's first request.";
  }
  const configId = COMMAND_OPTION[command.name]!;
  const options = () => configOptions(entry.config, entry.choices, entry.defaults);
  if (command.argument === "") {
    const option = options().find((o) => o.id === configId);
    const values = option?.type === "select" ? (option.options as acp.SessionConfigSelectOption[]).map((o) => o.value).join(", ") : "";
    return `${configId}: ${String(option?.currentValue)} (choose one of ${values})`;
  }
  try {
    entry.choices = applyChoice(entry.config, entry.choices, entry.defaults, configId, command.argument);
  } catch (error) {
    return errorMessage(error).replace(/^Invalid params:?\s*/, "");
  }
  send({ sessionUpdate: "config_option_update", configOptions: options() });
  return `${configId} set to ${command.argument} for the next turns.`;
}
