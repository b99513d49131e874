/**
 * The MCP servers of one zero process: started together at start-up (none waits for another),
 * offered to each agent as a tool source limited to its `mcpServers` (and its `mcp:` entries in
 * `tools`), and closed — process groups and all — when the process is done. A server that is
 * unavailable costs a run its tools and a notice, never the run.
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

export type McpHubOptions = {
  config: EffectiveConfig;
  env: Env;
  /** Diagnostics for people (stderr): an OAuth URL to open. */
  log(line: string): void;
  /** Whether an OAuth login may wait for a person. */
  interactive: boolean;
  /** Which servers to connect; default: every enabled server some agent lists in `mcpServers`. */
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

export function createMcpHub(options: McpHubOptions) {
  const ids = options.servers ?? serversInUse(options.config);
  const connections = new Map<string, ServerConnection>();
  for (const id of ids) {
    const server = options.config.mcp[id];
    if (!server) continue;
    connections.set(id, new ServerConnection({ id, server, env: options.env, log: options.log, interactive: options.interactive, ...(server.startupTimeoutMs !== undefined ? { startupTimeoutMs: server.startupTimeoutMs } : {}) }));
  }
  let started: Promise<void> | undefined;
  // Adapted tools per server, rebuilt when the server's tool list changed (a reconnect).
  const adapted = new Map<string, { from: McpToolInfo[]; tools: Map<string, Tool | string> }>();
  const catalogs = new Map<string, ContentCatalogs>();

  function start(): Promise<void> {
    started ??= Promise.all([...connections.values()].map((connection) => connection.connect())).then(() => undefined);
    return started;
  }

  /** Exposed name → tool (or why it was left out), for every connected server. */
  function allTools(): Map<string, { server: string; name: string; tool: Tool | string }> {
    const live = [...connections.values()].filter((connection) => connection.state === "connected");
    const names = assignToolNames(live.flatMap((connection) => connection.tools.map((tool) => ({ server: connection.id, tool: tool.name }))));
    const byServer = new Map<string, Map<string, string>>();
    for (const [exposed, entry] of names) {
      const map = byServer.get(entry.server) ?? new Map<string, string>();
      map.set(entry.tool, exposed);
      byServer.set(entry.server, map);
    }
    const result = new Map<string, { server: string; name: string; tool: Tool | string }>();
    for (const connection of live) {
      let cache = adapted.get(connection.id);
      if (!cache || cache.from !== connection.tools) adapted.set(connection.id, (cache = { from: connection.tools, tools: new Map() }));
      for (const info of connection.tools) {
        const exposed = byServer.get(connection.id)?.get(info.name);
        if (exposed === undefined) continue;
        const key = `${exposed}\u0000${info.name}`;
        let tool = cache.tools.get(key);
        if (tool === undefined) {
          try {
            tool = adaptTool(connection, info, exposed);
          } catch (error) {
            tool = `tool "${info.name}" of MCP server "${connection.id}" is left out: ${errorMessage(error)}`;
          }
          cache.tools.set(key, tool);
        }
        result.set(exposed, { server: connection.id, name: info.name, tool });
      }
    }
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
    ready: start,
    tools(agent) {
      const tools: Tool[] = [];
      for (const [, entry] of allTools()) {
        if (typeof entry.tool !== "string" && agentMayUse(agent, entry.server, entry.name)) tools.push(entry.tool);
      }
      return tools;
    },
    notices(agent) {
      const notices: string[] = [];
      for (const [id, connection] of agentConnections(agent)) {
        if (connection.state !== "connected") notices.push(`MCP server "${id}" is unavailable (${connection.problem ?? connection.state}); its tools are not offered`);
        else notices.push(...connection.notices.map((notice) => `MCP server "${id}": ${notice}`));
      }
      for (const [, entry] of allTools()) if (typeof entry.tool === "string" && agent.mcpServers.includes(entry.server)) notices.push(entry.tool);
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

