import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { isChildEvent, type RuntimeEvent } from "../../protocol/events.ts";
import { RunCancelledBeforeStart, type PendingApproval, type Session, type SessionService } from "../../session/service.ts";
import { canonicalPath } from "../../util/paths.ts";
import { errorMessage } from "../../util/errors.ts";
import { promptText } from "./prompt.ts";
import { answerFor, permissionRequest, stopReasonFor, updatesFor } from "./updates.ts";

/** One workspace's session service, made on the first `session/new` for that directory. */
export type AcpWorkspace = { service: SessionService; close(): Promise<void> };

export type AcpServerOptions = {
  version: string;
  /** Loads the workspace's config (trust respected) and builds its interactive session service. */
  openWorkspace(workspace: string): AcpWorkspace | Promise<AcpWorkspace>;
  /** Diagnostics for people: stderr. Never the protocol stream. */
  log(line: string): void;
};

type Entry = {
  session: Session;
  workspace: string;
  running?: { cancel(): void };
  cancelled: boolean;
};

/**
 * The ACP agent: a small mapper over the session service. `session/new` opens a session of the
 * service for its canonical cwd (one service per workspace), `session/prompt` runs a turn through
 * `session.send` and maps its events to `session/update`, approvals become
 * `session/request_permission`. Methods not handled here get the SDK's "method not found".
 */
export function createAcpServer(options: AcpServerOptions) {
  const workspaces = new Map<string, Promise<AcpWorkspace>>();
  const sessions = new Map<string, Entry>();

  function workspaceFor(cwd: unknown): { path: string; service: Promise<AcpWorkspace> } {
    if (typeof cwd !== "string" || !isAbsolute(cwd)) throw acp.RequestError.invalidParams(undefined, "session/new: cwd must be an absolute path");
    const path = canonicalPath(cwd);
    let isDirectory = false;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) throw acp.RequestError.invalidParams(undefined, `session/new: cwd ${cwd} is not an existing directory`);
    let service = workspaces.get(path);
    if (!service) {
      service = Promise.resolve().then(() => options.openWorkspace(path));
      workspaces.set(path, service);
      // A workspace that failed to open (a config error) is tried again by the next session/new.
      service.catch(() => workspaces.delete(path));
    }
    return { path, service };
  }

  function known(sessionId: unknown): Entry {
    const entry = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!entry) throw acp.RequestError.invalidParams(undefined, `unknown session ${JSON.stringify(sessionId)}; create one with session/new`);
    return entry;
  }

  async function prompt(params: acp.PromptRequest, client: acp.AgentContext, signal: AbortSignal): Promise<acp.PromptResponse> {
    const entry = known(params?.sessionId);
    const task = promptText(params.prompt);
    if (entry.running) throw acp.RequestError.invalidRequest(undefined, `session ${entry.session.id} is already running a prompt; cancel it or wait for its answer`);
    const sessionId = entry.session.id;
    // Updates go out one after another, in event order; the response waits for all of them.
    let outgoing: Promise<unknown> = Promise.resolve();
    const update = (u: acp.SessionUpdate) => {
      outgoing = outgoing.then(() => client.notify(acp.methods.client.session.update, { sessionId, update: u })).catch((error) => options.log(`zero acp: session/update failed: ${errorMessage(error)}\n`));
    };
    let failure: string | undefined;
    const asked = new Set<string>();
    const ask = (pending: PendingApproval) => {
      if (asked.has(pending.callId)) return;
      asked.add(pending.callId);
      const request = permissionRequest(sessionId, pending, entry.workspace);
      // After the updates before it (the tool call it is about), never holding later ones back.
      void outgoing
        .then(() => client.request(acp.methods.client.session.requestPermission, request))
        .then(
          (response) => answerFor(response),
          (error) => {
            options.log(`zero acp: session/request_permission failed (denied): ${errorMessage(error)}\n`);
            return "deny" as const;
          },
        )
        .then((answer) => entry.session.answerApproval(pending.callId, answer));
    };
    const listener = (event: RuntimeEvent) => {
      for (const u of updatesFor(event, entry.workspace)) update(u);
      if (event.type === "run.failed" && !isChildEvent(event)) failure = event.error.message;
    };
    // The service says when an approval waits for an answer: then the client is asked.
    const stopAsking = entry.session.onApprovalPending(ask);
    entry.cancelled = false;
    const handle = entry.session.send(task, { listeners: [listener] });
    entry.running = handle;
    const onAbort = () => {
      entry.cancelled = true;
      handle.cancel();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const outcome = await handle.done;
      await outgoing;
      if (entry.cancelled) return { stopReason: "cancelled" };
      const stopReason = stopReasonFor(outcome.status, outcome.reason);
      if (stopReason) return { stopReason };
      throw new acp.RequestError(-32603, `the turn failed: ${failure ?? outcome.reason ?? "unknown error"}`);
    } catch (error) {
      await outgoing;
      if (error instanceof acp.RequestError) throw error;
      if (error instanceof RunCancelledBeforeStart || entry.cancelled) return { stopReason: "cancelled" };
      throw new acp.RequestError(-32603, errorMessage(error));
    } finally {
      stopAsking();
      signal.removeEventListener("abort", onAbort);
      if (entry.running === handle) entry.running = undefined;
    }
  }

  const app = acp
    .agent({ name: "zero-cli" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "zero-cli", title: "zero", version: options.version },
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { close: {} },
      },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const { path, service } = workspaceFor(params?.cwd);
      if (Array.isArray(params.mcpServers) && params.mcpServers.length > 0) {
        options.log(`zero acp: ignoring ${params.mcpServers.length} client MCP server(s): not supported yet (configure them in zero-cli.jsonc)\n`);
      }
      let workspace: AcpWorkspace;
      try {
        workspace = await service;
      } catch (error) {
        throw new acp.RequestError(-32603, `session/new: ${errorMessage(error)}`);
      }
      const session = workspace.service.open({ kind: "new" });
      sessions.set(session.id, { session, workspace: path, cancelled: false });
      return { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.prompt, ({ params, client, signal }) => prompt(params, client, signal))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const entry = typeof params?.sessionId === "string" ? sessions.get(params.sessionId) : undefined;
      if (!entry) {
        options.log(`zero acp: session/cancel for unknown session ${JSON.stringify(params?.sessionId)}\n`);
        return;
      }
      if (!entry.running) return;
      entry.cancelled = true;
      entry.session.cancel();
    })
    .onRequest(acp.methods.agent.session.close, ({ params }) => {
      const entry = known(params?.sessionId);
      if (entry.running) entry.cancelled = true;
      entry.session.close();
      sessions.delete(entry.session.id);
      return {};
    });

  return {
    app,
    /** Cancels every running turn and closes every workspace's service (at the end of the stream). */
    async shutdown(): Promise<void> {
      for (const entry of sessions.values()) {
        entry.cancelled = true;
        entry.session.close();
      }
      sessions.clear();
      const opened = await Promise.allSettled([...workspaces.values()]);
      workspaces.clear();
      await Promise.all(opened.map((result) => (result.status === "fulfilled" ? result.value.close() : undefined)));
    },
  };
}
