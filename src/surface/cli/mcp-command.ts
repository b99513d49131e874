import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import type { McpServer } from "../../config/schema.ts";
import { EXIT } from "../../protocol/events.ts";
import { createRedactor } from "../../security/redact.ts";
import { withVisibleRedaction } from "../../security/visible-redaction.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { knownSecretValues } from "../../session/run-inputs.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { MCP_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { workspaceFrom } from "./workspace.ts";

const OPTIONS = { cwd: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

/** `zero mcp list|login|logout`: the configured servers for scripts and CI, and OAuth ahead of a run. */
export async function mcpCommand(io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs("mcp", io.argv, OPTIONS, true);
  const [action, ...rest] = positionals;
  if (values.help || action === undefined) {
    io.stdout(MCP_HELP);
    return values.help ? 0 : EXIT.usage;
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  const json = values.json === true;
  switch (action) {
    case "list":
      if (rest.length > 0) throw new UsageError(`list takes no arguments (got ${rest.join(" ")})`, { command: "mcp" });
      return listServers(io, loaded, json);
    case "login":
      return login(io, loaded, serverArgument(loaded, rest, "login"), json);
    case "logout":
      return logout(io, serverArgument(loaded, rest, "logout"), json);
    default:
      throw new UsageError(`unknown action '${action}' (allowed: list, login, logout)`, { command: "mcp" });
  }
}

function serverArgument(loaded: LoadedConfig, rest: string[], action: string): string {
  const known = Object.keys(loaded.config.mcp);
  const list = known.length > 0 ? `configured: ${known.join(", ")}` : 'no MCP server is configured under "mcp"';
  if (rest.length !== 1) throw new UsageError(`${action} takes one server id (${list})`, { command: "mcp" });
  const id = rest[0]!;
  if (!Object.hasOwn(loaded.config.mcp, id)) throw new UsageError(`unknown MCP server '${id}' (${list})`, { command: "mcp" });
  return id;
}

function where(server: McpServer): string {
  return server.type === "stdio" ? [server.command, ...server.args].join(" ") : server.url;
}

async function listServers(io: CliIo, loaded: LoadedConfig, json: boolean): Promise<number> {
  const { config } = loaded;
  const ids = Object.keys(config.mcp);
  const { createMcpHub } = await import("../../mcp/hub.ts");
  const { hasStoredTokens } = await import("../../mcp/oauth/store.ts");
  // Every enabled server is tried, side by side; nobody is asked to log in from a listing.
  const hub = createMcpHub({ config, env: io.env, log: () => {}, interactive: false, servers: ids.filter((id) => config.mcp[id]!.enabled) });
  // Servers' words (their errors, stderr tails, tool names) are redacted, and sanitized for a terminal.
  const redactor = withVisibleRedaction(createRedactor({ knownSecrets: knownSecretValues(config, io.env) }));
  const clean = (text: string) => redactor.redact(text).text;
  const shown = (text: string) => redactor.redact(sanitizeForTerminal(text)).text;
  // Ctrl-C exits at once: the servers' process groups go with zero.
  const onExit = () => hub.killNow();
  process.on("exit", onExit);
  // An unreadable token store (a symlink, another owner, corrupt) is a problem to show, not a crash.
  const signedIn = (id: string, url: string): boolean | string => {
    try {
      return hasStoredTokens(io.env, id, url);
    } catch (error) {
      return `unknown: ${errorMessage(error)}`;
    }
  };
  try {
    await hub.start();
    const statuses = new Map(hub.statuses().map((status) => [status.id, status]));
    const rows = ids.map((id) => {
      const server = config.mcp[id]!;
      const status = statuses.get(id);
      const oauth = server.type === "http" && server.oauth !== false ? { oauth: true, signedIn: signedIn(id, server.url) } : {};
      return {
        id,
        transport: server.type,
        target: where(server),
        enabled: server.enabled,
        status: !server.enabled ? "disabled" : status?.state === "connected" ? "connected" : "unavailable",
        tools: hub.connection(id)?.tools.map((tool) => clean(tool.name)) ?? [],
        leftOut: (hub.connection(id)?.leftOut ?? []).map((tool) => ({ name: clean(tool.name.slice(0, 200)), reason: tool.reason })),
        agents: Object.values(config.agents).filter((agent) => agent.mcpServers.includes(id)).map((agent) => agent.name),
        ...oauth,
        ...(status?.problem !== undefined ? { problem: clean(status.problem) } : {}),
      };
    });
    if (json) {
      io.stdout(`${JSON.stringify({ servers: rows })}\n`);
      return EXIT.ok;
    }
    if (rows.length === 0) io.stdout('No MCP servers are configured (see "mcp" in the configuration).\n');
    for (const row of rows) {
      const auth = "oauth" in row ? (row.signedIn === true ? ", signed in" : row.signedIn === false ? ", not signed in" : `, sign-in state ${row.signedIn}`) : "";
      io.stdout(`${row.id}  ${row.transport}  ${row.status}${row.status === "connected" ? `, ${row.tools.length} tools` : ""}${auth}\n`);
      io.stdout(`  ${row.target}\n`);
      io.stdout(`  agents: ${row.agents.length > 0 ? row.agents.join(", ") : "none (list it in an agent's mcpServers)"}\n`);
      if (row.problem !== undefined) io.stdout(`  problem: ${shown(row.problem)}\n`);
      for (const tool of row.leftOut) io.stdout(`  left out: ${shown(tool.name)} (${tool.reason})\n`);
    }
    return EXIT.ok;
  } finally {
    await hub.close();
    process.off("exit", onExit);
  }
}

async function login(io: CliIo, loaded: LoadedConfig, id: string, json: boolean): Promise<number> {
  const server = loaded.config.mcp[id]!;
  if (server.type !== "http" || server.oauth === false) {
    throw new UsageError(`MCP server '${id}' does not use OAuth (only an http server with "oauth" set signs in)`, { command: "mcp" });
  }
  const { createMcpHub } = await import("../../mcp/hub.ts");
  // A login is the one place zero waits for a person: the URL goes to stderr, the callback to 127.0.0.1.
  const hub = createMcpHub({ config: loaded.config, env: io.env, log: (line) => io.stderr(line), interactive: true, servers: [id] });
  const onExit = () => hub.killNow();
  process.on("exit", onExit);
  try {
    await hub.start();
    const status = hub.statuses()[0]!;
    if (status.state !== "connected") {
      io.stderr(`zero mcp: could not sign in to '${id}': ${status.problem ?? "not connected"}\n`);
      return EXIT.provider;
    }
    if (json) io.stdout(`${JSON.stringify({ server: id, signedIn: true, tools: status.tools })}\n`);
    else io.stdout(`Signed in to ${id} (${status.tools} tools).\n`);
    return EXIT.ok;
  } finally {
    await hub.close();
    process.off("exit", onExit);
  }
}

async function logout(io: CliIo, id: string, json: boolean): Promise<number> {
  const { forgetServer } = await import("../../mcp/oauth/session.ts");
  const removed = forgetServer(io.env, id);
  if (json) io.stdout(`${JSON.stringify({ server: id, removed })}\n`);
  else io.stdout(removed ? `Signed out of ${id}: its tokens and registration were removed.\n` : `No stored credentials for ${id}.\n`);
  return EXIT.ok;
}
