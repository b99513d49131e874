import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { WorkDepth } from "../../config/schema.ts";
import { canonicalPath } from "../../util/paths.ts";
import { errorMessage, UsageError } from "../../util/errors.ts";
import { applyChoice, availableCommands, configOptions, MODES, ROOT_MODE_ID } from "./config-options.ts";
import { replayUpdates } from "./replay.ts";
import type { Session } from "../../session/service.ts";
import { invalidParams, quoted } from "./errors.ts";
import type { AcpSessionHosts } from "./session-host.ts";
import { askPermission, runPrompt, updateSender, type AcpEntry } from "./turn.ts";

export type AcpServerOptions = {
  version: string;
  /** Where each session's configuration, service and store come from. */
  hosts: AcpSessionHosts;
  /** The server process's own workspace: what `session/list` without a cwd lists. */
  serverCwd: string;
  /** Diagnostics for people: stderr. Never the protocol stream. */
  log(line: string): void;
};

/** `session/list` pages. */
const LIST_PAGE = 50;
/**
 * At most this many sessions are live at once (each has its own services and MCP processes).
 * Beyond it the least recently used idle session is closed; it stays stored and is opened again,
 * transparently, by the next request that names it.
 */
export const MAX_LIVE_SESSIONS = 16;
const MAX_PARKED_SESSIONS = 1_000;

type SessionParams = { cwd?: unknown; additionalDirectories?: unknown; mcpServers?: unknown };

/**
 * The ACP agent: a small mapper over the session service. Every ACP session gets its own
 * service (configuration, tools, plugins, MCP servers and store of its canonical cwd);
 * `session/prompt` runs a turn through it and maps its events to `session/update`s; approvals
 * become `session/request_permission`. Methods not handled here get the SDK's "method not found".
 */
export function createAcpServer(options: AcpServerOptions) {
  const sessions = new Map<string, AcpEntry>();
  // Sessions being opened or restored, so one id is never opened twice at once.
  const opening = new Map<string, Promise<AcpEntry>>();
  // Sessions closed to stay within MAX_LIVE_SESSIONS: how to open them again, and the client's choices.
  const parked = new Map<string, { origin: AcpEntry["origin"]; choices: AcpEntry["choices"] }>();
  // The client side of the connection (one per process), for approvals asked outside a prompt.
  let client: acp.AgentContext | undefined;

  /** The live session a request names; a parked one is opened again first. */
  async function known(sessionId: unknown): Promise<AcpEntry> {
    const id = typeof sessionId === "string" ? sessionId : undefined;
    const entry = id !== undefined ? sessions.get(id) : undefined;
    if (entry) {
      entry.lastUsed = performance.now();
      return entry;
    }
    const again = id !== undefined ? parked.get(id) : undefined;
    if (id !== undefined && again) {
      const reopened = await once(id, () => openEntry("session", { cwd: again.origin.cwd, additionalDirectories: again.origin.additionalDirectories, mcpServers: again.origin.mcpServers }, id));
      parked.delete(id);
      reopened.choices = again.choices;
      return reopened;
    }
    throw invalidParams(`unknown session ${quoted(sessionId)}; create one with session/new (or restore it with session/load)`);
  }

  /** Opens a session id once, however many requests ask for it at the same time. */
  function once(sessionId: string, open: () => Promise<AcpEntry>): Promise<AcpEntry> {
    let pending = opening.get(sessionId);
    if (!pending) {
      pending = open();
      opening.set(sessionId, pending);
      void pending.finally(() => opening.delete(sessionId)).catch(() => undefined);
    }
    return pending;
  }

  /** Keeps the live sessions within bound: the least recently used idle, stored ones are parked. */
  async function park(keep: AcpEntry): Promise<void> {
    while (sessions.size > MAX_LIVE_SESSIONS) {
      // Never one with a turn or a child run still going (parking would cancel it), nor one whose conversation lives only in memory.
      const idle = [...sessions.values()].filter((entry) => entry !== keep && !entry.running && !entry.session.busy() && entry.config.storage.enabled);
      if (idle.length === 0) return;
      const oldest = idle.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
      parked.set(oldest.session.id, { origin: oldest.origin, choices: oldest.choices });
      // What is remembered about parked sessions is bounded too: the oldest are forgotten (session/load still restores them).
      if (parked.size > MAX_PARKED_SESSIONS) parked.delete(parked.keys().next().value!);
      options.log(`zero acp: session ${oldest.session.id} parked to stay within ${MAX_LIVE_SESSIONS} live sessions; it reopens when a request names it\n`);
      await closeEntry(oldest);
    }
  }

  /** An absolute path to an existing directory, canonical; invalid params otherwise. */
  function directory(value: unknown, what: string): string {
    if (typeof value !== "string" || !isAbsolute(value)) throw invalidParams(`${what} must be an absolute path`);
    if (value.includes("\0")) throw invalidParams(`${what} must not contain a NUL character`);
    const path = canonicalPath(value);
    let isDirectory = false;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) throw invalidParams(`${what} ${quoted(value)} is not an existing directory`);
    return path;
  }

  function directories(value: unknown): string[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw invalidParams("additionalDirectories must be an array of absolute paths");
    return [...new Set(value.map((dir, index) => directory(dir, `additionalDirectories[${index}]`)))];
  }

  /** Opens (or restores) a session with services of its own; the session is known once this settles. */
  async function openEntry(method: string, params: SessionParams, restore?: string): Promise<AcpEntry> {
    const workspace = directory(params.cwd, `${method}: cwd`);
    const additionalDirectories = directories(params.additionalDirectories);
    let host;
    try {
      host = await options.hosts.open({ workspace, extraDirs: additionalDirectories, mcpServers: params.mcpServers, ...(restore !== undefined ? { restore } : {}) });
    } catch (error) {
      if (error instanceof acp.RequestError) throw error;
      // A stored session that cannot be restored here is the request's problem; a config error is the workspace's.
      if (error instanceof UsageError) throw invalidParams(`${method}: ${error.message}`);
      throw new acp.RequestError(-32603, `${method}: ${errorMessage(error)}`);
    }
    let session: Session;
    try {
      session = restore !== undefined ? host.service.open({ kind: "named", sessionId: restore }) : host.service.open({ kind: "new", durable: true });
    } catch (error) {
      // The store could not be opened (state directory unusable, database locked): what started stops.
      await host.close().catch(() => undefined);
      throw new acp.RequestError(-32603, `${method}: ${errorMessage(error)}`);
    }
    const root = host.config.agents[host.config.defaultAgent];
    // A session restored after a workflow turn goes on with that workflow chosen; otherwise with its saved model and depth.
    const saved = host.restored?.mode === "agent" ? host.restored : undefined;
    const workflow = host.restored?.mode === "workflow" ? host.restored.agent.replace(/^workflow:/, "") : undefined;
    const entry: AcpEntry = {
      session,
      config: host.config,
      workspace,
      additionalDirectories,
      choices: workflow !== undefined ? { workflow } : {},
      defaults: { model: saved?.model.alias ?? root?.model ?? Object.keys(host.config.models)[0] ?? "", depth: (saved?.workDepth as WorkDepth | undefined) ?? host.config.workDepth },
      cancelled: false,
      asked: new Set(),
      origin: { cwd: workspace, additionalDirectories, mcpServers: params.mcpServers },
      lastUsed: performance.now(),
      history: () => host.messages(session.id),
      redact: (text) => host.service.redactor.redact(text).text,
      close: host.close,
    };
    // A background child may wait for an approval after its prompt answered: asked at once.
    session.onApprovalPending((pending) => {
      if (!entry.running && client) askPermission(entry, client, pending, Promise.resolve(), options.log);
    });
    sessions.set(session.id, entry);
    await park(entry);
    return entry;
  }

  function sessionState(entry: AcpEntry) {
    return { modes: MODES, configOptions: configOptions(entry.config, entry.choices, entry.defaults) };
  }

  /** The slash commands, sent once the response that names the session has gone out. */
  function advertiseCommands(entry: AcpEntry, client: acp.AgentContext) {
    setTimeout(() => updateSender(client, entry.session.id, options.log).send({ sessionUpdate: "available_commands_update", availableCommands: availableCommands(entry.config) }), 0);
  }

  /** `session/load` and `session/resume`: a live session is reused, a stored one restored once. */
  async function restore(method: string, params: acp.LoadSessionRequest | acp.ResumeSessionRequest): Promise<AcpEntry> {
    const sessionId = params?.sessionId;
    if (typeof sessionId !== "string" || sessionId === "") throw invalidParams(`${method}: sessionId is required`);
    const live = sessions.get(sessionId);
    if (live) {
      if (live.workspace !== directory(params.cwd, `${method}: cwd`)) throw invalidParams(`${method}: session ${sessionId} belongs to the workspace ${live.workspace}`);
      live.lastUsed = performance.now();
      return live;
    }
    // A parked session restored by the client gets what the client sends now, and its choices back.
    const choices = parked.get(sessionId)?.choices;
    const entry = await once(sessionId, () => openEntry(method, params, sessionId));
    if (parked.delete(sessionId) && choices) entry.choices = choices;
    return entry;
  }

  /** `session/cancel`: the running turn stops; its prompt answers `cancelled`. */
  function cancelTurn(entry: AcpEntry): void {
    if (!entry.running) return;
    entry.cancelled = true;
    entry.session.cancel();
  }

  async function closeEntry(entry: AcpEntry): Promise<void> {
    if (entry.running) entry.cancelled = true;
    entry.session.close();
    sessions.delete(entry.session.id);
    await entry.close().catch((error) => options.log(`zero acp: closing session ${entry.session.id}: ${errorMessage(error)}\n`));
  }

  const app = acp
    .agent({ name: "zero-cli" })
    .onRequest(acp.methods.agent.initialize, ({ client: connected }) => {
      client = connected;
      return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "zero-cli", title: "zero", version: options.version },
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: true, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {}, additionalDirectories: {} },
      },
      authMethods: [] as acp.AuthMethod[],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      const entry = await openEntry("session/new", params);
      advertiseCommands(entry, client);
      return { sessionId: entry.session.id, ...sessionState(entry) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const entry = await restore("session/load", params);
      // The history goes out before the answer, as the protocol wants.
      const updates = updateSender(client, entry.session.id, options.log);
      for (const update of replayUpdates(entry.history(), entry.redact)) updates.send(update);
      await updates.flushed;
      advertiseCommands(entry, client);
      return sessionState(entry);
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
      const entry = await restore("session/resume", params);
      advertiseCommands(entry, client);
      return sessionState(entry);
    })
    .onRequest(acp.methods.agent.session.list, ({ params }) => {
      const workspace = params?.cwd === undefined || params?.cwd === null ? options.serverCwd : directory(params.cwd, "session/list: cwd");
      const cursor = params?.cursor ?? "0";
      const offset = /^\d{1,9}$/.test(cursor) ? Number(cursor) : -1;
      if (offset < 0) throw invalidParams("session/list: cursor is not one this server gave");
      // One row more than a page says whether another page follows.
      const rows = options.hosts.list(workspace, { offset, limit: LIST_PAGE + 1 });
      return {
        sessions: rows.slice(0, LIST_PAGE).map((row) => ({ sessionId: row.id, cwd: row.workspace, ...(row.title ? { title: row.title } : {}), updatedAt: row.updatedAt })),
        ...(rows.length > LIST_PAGE ? { nextCursor: String(offset + LIST_PAGE) } : {}),
      };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => runPrompt(await known(params?.sessionId), params, client, signal, options.log))
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      await known(params?.sessionId);
      if (params.modeId !== ROOT_MODE_ID) throw invalidParams(`mode ${quoted(params.modeId)} does not exist: zero has one root mode (${ROOT_MODE_ID}); specialists run as its child runs, workflows are the workflow config option`);
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const entry = await known(params?.sessionId);
      entry.choices = applyChoice(entry.config, entry.choices, entry.defaults, params.configId, params.value);
      return { configOptions: configOptions(entry.config, entry.choices, entry.defaults) };
    })
    // Older clients (before config options) choose the model with session/set_model.
    .onRequest("session/set_model", parseSetModel, async ({ params }) => {
      const entry = await known(params.sessionId);
      entry.choices = applyChoice(entry.config, entry.choices, entry.defaults, "model", params.modelId);
      return {};
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const entry = typeof params?.sessionId === "string" ? sessions.get(params.sessionId) : undefined;
      if (!entry) {
        options.log(`zero acp: session/cancel for unknown session ${quoted(params?.sessionId)}\n`);
        return;
      }
      cancelTurn(entry);
    })
    .onRequest(acp.methods.agent.session.close, async ({ params }) => {
      // A session still being opened is closed once it is open.
      if (typeof params?.sessionId === "string") await opening.get(params.sessionId)?.catch(() => undefined);
      if (typeof params?.sessionId === "string" && parked.delete(params.sessionId)) return {};
      const entry = sessions.get(params?.sessionId);
      if (!entry) throw invalidParams(`unknown session ${quoted(params?.sessionId)}`);
      await closeEntry(entry);
      return {};
    });

  return {
    app,
    /** Cancels every running turn (stdin ended): their prompts answer `cancelled`. */
    cancelAll(): void {
      for (const entry of sessions.values()) cancelTurn(entry);
    },
    /** Cancels every running turn and closes every session's services (at the end of the stream). */
    async shutdown(): Promise<void> {
      await Promise.allSettled([...opening.values()]);
      await Promise.all([...sessions.values()].map((entry) => closeEntry(entry)));
    },
  };
}

function parseSetModel(params: unknown): { sessionId: string; modelId: string } {
  const record = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  if (typeof record.sessionId !== "string" || typeof record.modelId !== "string") {
    throw invalidParams("session/set_model needs sessionId and modelId (strings)");
  }
  return { sessionId: record.sessionId, modelId: record.modelId };
}
