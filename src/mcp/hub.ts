/**
 * The MCP servers of one zero process, offered to each agent as a tool source limited to its
 * `mcpServers` (and its `mcp:` entries in `tools`), and closed — process groups and all — when the
 * process is done. A run waits only for its own agent's servers (each within its bound; they
 * connect side by side); a server that is unavailable costs the run its tools and a notice, never
 * the run, and is tried again by a later run. Tool schemas are compiled only for agents that may
 * use them.
 */
import type { AgentProfile, EffectiveConfig } from "../config/schema.ts";
import { mcpToolServer } from "../config/enforcement.ts";
import type { ToolSource } from "../session/tool-sources.ts";
import type { McpContentAccess, Tool } from "../tool/define.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { ServerConnection, type McpToolInfo } from "./connection.ts";
import { ContentCatalogs } from "./content.ts";
import { assignToolNames } from "./names.ts";
import { adaptTool } from "./tool-adapter.ts";
import { hasStoredTokens } from "./oauth/store.ts";

/** Whether zero holds tokens for the server (an unreadable store counts as none: a login is due). */
function tokensStored(env: Env, id: string, url: string): boolean {
  try {
    return hasStoredTokens(env, id, url);
  } catch {
    return false;
  }
}

/** A server that failed is tried again by a run starting at least this long after the failure. */
export const RETRY_AFTER_MS = 30_000;

export type McpHubOptions = {
  config: EffectiveConfig;
  env: Env;
  /** Diagnostics for people (stderr): an OAuth URL to open. */
  log(line: string): void;
  /** Whether an OAuth login may wait for a person. */
  interactive: boolean;
  /** Which servers the hub knows; default: every enabled server some agent lists in `mcpServers`. */
  servers?: readonly string[];
};

export type ServerStatus = { id: string; transport: "stdio" | "http"; state: ServerConnection["state"]; problem?: string; tools: number };

/** Enabled servers that at least one agent may use: the only ones worth starting. */
export function serversInUse(config: EffectiveConfig): string[] {
  const used = new Set(Object.values(config.agents).flatMap((agent) => agent.mcpServers));
  return Object.keys(config.mcp).filter((id) => config.mcp[id]!.enabled && used.has(id));
}

/** Whether `agent` may have tool `tool` of `server`: the server in its `mcpServers`, and the tool named by its `mcp:` entries when it has any for that server. */
export function agentMayUse(agent: AgentProfile, server: string, tool: string): boolean {
  if (!agent.mcpServers.includes(server)) return false;
  const entries = agent.tools.filter((name) => mcpToolServer(name) === server);
  return entries.length === 0 || entries.includes(`mcp:${server}:*`) || entries.includes(`mcp:${server}:${tool}`);
}

/** Runs `work`s one at a time, in call order (a failure does not stop the queue). */
function serialQueue(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

type Exposed = { server: string; info: McpToolInfo; connection: ServerConnection };

export function createMcpHub(options: McpHubOptions) {
  const ids = options.servers ?? serversInUse(options.config);
  // OAuth logins share the loopback callback port: one at a time in this process.
  const oauthTurn = serialQueue();
  const connections = new Map<string, ServerConnection>();
  for (const id of ids) {
    const server = options.config.mcp[id];
    if (!server) continue;
    connections.set(
      id,
      new ServerConnection({
        id,
        server,
        env: options.env,
        log: options.log,
        interactive: options.interactive,
        // Only a server that will need a login (no stored tokens) waits its turn: the others connect side by side.
        ...(server.type === "http" && server.oauth !== false ? { serialize: <T>(work: () => Promise<T>) => (tokensStored(options.env, id, server.url) ? work() : oauthTurn(work)) } : {}),
        ...(server.startupTimeoutMs !== undefined ? { startupTimeoutMs: server.startupTimeoutMs } : {}),
      }),
    );
  }
  // Adapted tools per server, rebuilt when the server's tool list changed (a reconnect).
  const adapted = new Map<string, { from: McpToolInfo[]; tools: Map<string, Tool | string> }>();
  const catalogs = new Map<string, ContentCatalogs>();

  /** Connects the given servers side by side (default: all): those never tried, and failed ones due for another try. */
  function start(only?: readonly string[]): Promise<void> {
    const chosen = [...connections.values()].filter((connection) => only === undefined || only.includes(connection.id));
    const due = (connection: ServerConnection) =>
      connection.state === "idle" || connection.state === "connecting" || (connection.state === "failed" && Date.now() - connection.lastAttemptAt >= RETRY_AFTER_MS);
    return Promise.all(chosen.filter(due).map((connection) => connection.connect())).then(() => undefined);
  }

  /** Exposed name → server tool, over every connected server (names are unique across all of them). */
  function exposedTools(): Map<string, Exposed> {
    const live = [...connections.values()].filter((connection) => connection.state === "connected");
    const byKey = new Map<string, Exposed>();
    for (const connection of live) for (const info of connection.tools) byKey.set(`${connection.id}\u0000${info.name}`, { server: connection.id, info, connection });
    const names = assignToolNames([...byKey.values()].map((entry) => ({ server: entry.server, tool: entry.info.name })));
    const result = new Map<string, Exposed>();
    for (const [exposed, { server, tool }] of names) result.set(exposed, byKey.get(`${server}\u0000${tool}`)!);
    return result;
  }

  /** The tool under its exposed name, compiled once per tool list; a string says why it is left out. */
  function adapt(exposed: string, entry: Exposed): Tool | string {
    let cache = adapted.get(entry.server);
    if (!cache || cache.from !== entry.connection.tools) adapted.set(entry.server, (cache = { from: entry.connection.tools, tools: new Map() }));
    const key = `${exposed}\u0000${entry.info.name}`;
    let tool = cache.tools.get(key);
    if (tool === undefined) {
      try {
        tool = adaptTool(entry.connection, entry.info, exposed);
      } catch (error) {
        tool = `tool ${JSON.stringify(entry.info.name.slice(0, 100))} of MCP server "${entry.server}" is left out: ${errorMessage(error)}`;
      }
      cache.tools.set(key, tool);
    }
    return tool;
  }

  /** The agent's tools, each adapted (or why not). */
  function agentTools(agent: AgentProfile): Array<Tool | string> {
    const result: Array<Tool | string> = [];
    for (const [exposed, entry] of exposedTools()) if (agentMayUse(agent, entry.server, entry.info.name)) result.push(adapt(exposed, entry));
    return result;
  }

  function agentConnections(agent: AgentProfile): Map<string, ServerConnection> {
    const mine = new Map<string, ServerConnection>();
    for (const id of agent.mcpServers) {
      const connection = connections.get(id);
      if (connection) mine.set(id, connection);
    }
    return mine;
  }

  const source: ToolSource = {
    name: "mcp",
    ready: (agent) => start(agent.mcpServers),
    tools: (agent) => agentTools(agent).filter((tool): tool is Tool => typeof tool !== "string"),
    notices(agent) {
      const notices: string[] = [];
      for (const [id, connection] of agentConnections(agent)) {
        if (connection.state !== "connected") notices.push(`MCP server "${id}" is unavailable (${connection.problem ?? connection.state}); its tools are not offered`);
        else notices.push(...connection.notices.map((notice) => `MCP server "${id}": ${notice}`));
      }
      notices.push(...agentTools(agent).filter((tool): tool is string => typeof tool === "string"));
      return notices;
    },
    content(agent) {
      const mine = agentConnections(agent);
      if (mine.size === 0) return undefined;
      let catalog = catalogs.get(agent.name);
      if (!catalog) catalogs.set(agent.name, (catalog = new ContentCatalogs(mine)));
      const reader = catalog;
      const access: McpContentAccess = {
        risk: (server) => {
          const connection = mine.get(server);
          return connection === undefined ? undefined : connection.transportKind === "stdio" ? "execute" : "network";
        },
        read: (uri, ctx) => reader.read(uri, ctx),
      };
      return access;
    },
    instructions(agent) {
      const withContent = [...agentConnections(agent).values()].filter((connection) => connection.state === "connected" && connection.hasContent());
      if (withContent.length === 0) return undefined;
      return `MCP servers with resources or prompts: ${withContent.map((connection) => connection.id).join(", ")}. Read mcp://content/<server> for a catalog; its references open a resource or render a prompt.`;
    },
  };

  return {
    source,
    start,
    statuses(): ServerStatus[] {
      return [...connections.values()].map((connection) => ({
        id: connection.id,
        transport: connection.transportKind,
        state: connection.state,
        ...(connection.problem !== undefined ? { problem: connection.problem } : {}),
        tools: connection.tools.length,
      }));
    },
    connection: (id: string) => connections.get(id),
    async close(): Promise<void> {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
    /** The process is exiting: stdio servers' process groups are killed at once. */
    killNow(): void {
      for (const connection of connections.values()) connection.killNow();
    },
  };
}

export type McpHub = ReturnType<typeof createMcpHub>;
