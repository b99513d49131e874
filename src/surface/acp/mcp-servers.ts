import { isAbsolute } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import type { EffectiveConfig, McpServer } from "../../config/schema.ts";
import { invalidParams as invalid, quoted } from "./errors.ts";

/** At most this many client MCP servers per session. */
export const MAX_CLIENT_MCP_SERVERS = 32;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The MCP servers an ACP client hands a session, as entries of that session's configuration:
 * stdio (command, args, env; started in the session's workspace) and Streamable HTTP (url,
 * headers). Legacy SSE and any other transport (MCP-over-ACP) are refused. Each gets the
 * client's name as its id when that is a valid id not taken by the configuration, else a
 * derived one; the root agent of the session may use them. Throws invalid params.
 */
export function clientMcpServers(servers: unknown, config: EffectiveConfig, workspace: string): Record<string, McpServer> {
  if (servers === undefined || servers === null) return {};
  if (!Array.isArray(servers)) throw invalid("mcpServers must be an array");
  if (servers.length > MAX_CLIENT_MCP_SERVERS) throw invalid(`mcpServers: at most ${MAX_CLIENT_MCP_SERVERS} servers per session`);
  const entries: Record<string, McpServer> = {};
  for (const [index, server] of (servers as acp.McpServer[]).entries()) {
    const where = `mcpServers[${index}]`;
    if (typeof server !== "object" || server === null) throw invalid(`${where} must be an object`);
    const type = "type" in server ? server.type : "stdio";
    if (typeof server.name !== "string" || server.name.trim() === "") throw invalid(`${where}.name must be a non-empty string`);
    let entry: McpServer;
    if (type === "sse") {
      throw invalid(`${where} (${server.name}): the legacy SSE transport is not supported; zero speaks Streamable HTTP (type "http")`);
    } else if (type === "http") {
      const http = server as acp.McpServerHttp;
      let url: URL;
      try {
        url = new URL(http.url);
      } catch {
        throw invalid(`${where}.url must be an http(s) URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(`${where}.url must be an http(s) URL`);
      entry = { type: "http", url: url.href, headers: pairs(http.headers ?? [], HEADER_NAME, `${where}.headers`), enabled: true, oauth: false };
    } else if (type === "stdio") {
      const stdio = server as acp.McpServerStdio;
      if (typeof stdio.command !== "string" || stdio.command === "" || /[\0\n]/.test(stdio.command)) throw invalid(`${where}.command must be a non-empty string`);
      if (!isAbsolute(stdio.command) && /[/\\]/.test(stdio.command)) throw invalid(`${where}.command must be absolute or a bare name on PATH, not relative`);
      const args = stdio.args ?? [];
      if (!Array.isArray(args) || args.some((arg) => typeof arg !== "string")) throw invalid(`${where}.args must be an array of strings`);
      entry = { type: "stdio", command: stdio.command, args, cwd: workspace, env: pairs(stdio.env ?? [], ENV_NAME, `${where}.env`), enabled: true };
    } else {
      throw invalid(`${where} (${server.name}): transport ${quoted(type)} is not supported (stdio and http are)`);
    }
    entries[idFor(server.name, config, entries)] = entry;
  }
  return entries;
}

/** The session's configuration with the client's servers added and given to its root agent. */
export function withClientServers(config: EffectiveConfig, servers: Record<string, McpServer>): EffectiveConfig {
  const ids = Object.keys(servers);
  if (ids.length === 0) return config;
  const root = config.agents[config.defaultAgent];
  if (!root) return config;
  return {
    ...config,
    mcp: { ...config.mcp, ...servers },
    agents: { ...config.agents, [root.name]: { ...root, mcpServers: [...root.mcpServers, ...ids] } },
  };
}

function pairs(list: unknown, pattern: RegExp, where: string): Record<string, string> {
  if (!Array.isArray(list)) throw invalid(`${where} must be an array of {name, value}`);
  const record: Record<string, string> = {};
  for (const item of list as { name?: unknown; value?: unknown }[]) {
    if (typeof item?.name !== "string" || !pattern.test(item.name) || typeof item.value !== "string" || /[\0\r\n]/.test(item.value)) {
      throw invalid(`${where}: each entry needs a valid name and a single-line string value`);
    }
    record[item.name] = item.value;
  }
  return record;
}

/** The client's name when it is a free, valid server id; otherwise a cleaned form with a numbered suffix. */
function idFor(name: string, config: EffectiveConfig, taken: Record<string, McpServer>): string {
  const free = (id: string) => !Object.hasOwn(config.mcp, id) && !Object.hasOwn(taken, id);
  let base = name.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^[^A-Za-z0-9]+/, "").slice(0, 40);
  if (base === "") base = "client";
  if (free(base)) return base;
  for (let n = 2; ; n++) if (free(`${base}-${n}`)) return `${base}-${n}`;
}
