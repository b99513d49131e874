/**
 * zero's MCP client under the official conformance suite (`@modelcontextprotocol/conformance`):
 * the runner starts a scenario server, appends its URL to this command and names the scenario in
 * MCP_CONFORMANCE_SCENARIO. This entry point connects through zero's own connection code (the
 * same ServerConnection and OAuth session a run uses) and does what the scenario asks. For the
 * auth scenarios it plays the browser: it follows the printed authorization URL to zero's
 * loopback callback, as a person clicking "allow" would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpHttpServer, McpOAuthSettings } from "../src/config/schema.ts";
import { ServerConnection } from "../src/mcp/connection.ts";

const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as { client_id?: string; client_secret?: string };
const home = mkdtempSync(join(tmpdir(), "zero-mcp-conformance-"));

async function freePort(): Promise<number> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = server.port!;
  await server.stop(true);
  return port;
}

/** What a person would do with the printed URL: open it; the authorization server redirects to zero's callback. */
async function actAsBrowser(line: string): Promise<void> {
  const match = /^(https?:\/\/\S+)$/.exec(line.trim());
  if (!match) return;
  let next: string | null = match[1]!;
  for (let hops = 0; next !== null && hops < 5; hops++) {
    const response: Response = await fetch(next, { redirect: "manual" });
    next = response.headers.get("location");
    if (next !== null) next = new URL(next, response.url || match[1]).href;
  }
}

async function main(): Promise<number> {
  const auth = scenario.startsWith("auth/");
  const settings: McpOAuthSettings = {
    // The scenario servers live on localhost ports: private, and cross-origin to one another.
    allowPrivateNetwork: true,
    ...(scenario.includes("2025-03-26") ? { allowLegacyDiscovery: true } : {}),
    ...(context.client_id !== undefined ? { clientId: context.client_id } : {}),
    ...(context.client_secret !== undefined ? { clientSecretEnv: "CONFORMANCE_CLIENT_SECRET" } : {}),
  };
  const server: McpHttpServer = { type: "http", url, headers: {}, enabled: true, oauth: auth ? settings : false };
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    ZERO_CLI_MCP_OAUTH_CALLBACK_PORT: String(await freePort()),
    ZERO_CLI_MCP_OAUTH_TIMEOUT_MS: "20000",
    ...(context.client_secret !== undefined ? { CONFORMANCE_CLIENT_SECRET: context.client_secret } : {}),
  };
  const browsing: Promise<void>[] = [];
  const connection = new ServerConnection({
    id: "conformance",
    server,
    env,
    log: (line) => {
      process.stderr.write(line);
      browsing.push(actAsBrowser(line).catch((error) => void process.stderr.write(`browser: ${error}\n`)));
    },
    interactive: true,
    startupTimeoutMs: 20_000,
  });
  try {
    await connection.connect();
    if (connection.state !== "connected") {
      process.stderr.write(`not connected: ${connection.problem}\n`);
      return 1;
    }
    const signal = new AbortController().signal;
    for (const tool of connection.tools) {
      const args = tool.name === "add_numbers" ? { a: 2, b: 3 } : {};
      const result = await connection.callTool(tool.name, args, { signal, timeoutMs: 20_000 });
      process.stdout.write(`${tool.name}: ${JSON.stringify(result.content)}\n`);
    }
    return 0;
  } finally {
    await connection.close();
    await Promise.all(browsing);
    rmSync(home, { recursive: true, force: true });
  }
}

process.exit(await main());
