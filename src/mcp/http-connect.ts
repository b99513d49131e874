/**
 * Connecting to a Streamable HTTP server, with OAuth 2.1 when the server is configured for it:
 * a first attempt with stored tokens (refreshed by the SDK when expired); when the server wants
 * authorization, the URL goes to stderr, zero waits (bounded) for the loopback callback, finishes
 * the exchange and connects again.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpHttpServer } from "../config/schema.ts";
import type { Env } from "../util/env.ts";
import { withinBound } from "../util/timers.ts";
import { createOAuthSession } from "./oauth/session.ts";

export type HttpConnectOptions = {
  id: string;
  server: McpHttpServer;
  env: Env;
  log(line: string): void;
  interactive: boolean;
  timeoutMs: number;
  fetch: FetchLike;
  signal?: AbortSignal;
};

/**
 * The connected transport; `reauthorize` finishes a login a later request started (a step-up of
 * scopes); `dispose` stops whatever the OAuth session still holds (a callback listener).
 */
export type HttpConnection = { transport: Transport; reauthorize?(signal?: AbortSignal): Promise<void>; dispose(): void };

/** Standalone GET streams refused with 401 this often within the window: the server is treated as offering none. */
const GET_401_LIMIT = 3;
const GET_401_WINDOW_MS = 10_000;

/**
 * A server that answers the standalone event-stream GET with 401 even after a fresh token would
 * make the SDK refresh and retry without end; after a few such answers the GET is answered 405
 * here (no standalone stream), which the SDK accepts. Requests (POST) are untouched.
 */
function withGetGuard(fetch: FetchLike): FetchLike {
  const refused: number[] = [];
  return async (url, init) => {
    const isGet = (init?.method ?? "GET").toUpperCase() === "GET";
    const now = Date.now();
    while (refused.length > 0 && now - refused[0]! > GET_401_WINDOW_MS) refused.shift();
    if (isGet && refused.length >= GET_401_LIMIT) return new Response(null, { status: 405 });
    const response = await fetch(url, init);
    if (isGet && response.status === 401) refused.push(now);
    return response;
  };
}

export async function connectHttp(client: Client, options: HttpConnectOptions): Promise<HttpConnection> {
  const { id, server } = options;
  const url = new URL(server.url);
  const requestInit = { headers: { ...server.headers } };
  const oauth = server.oauth === false ? undefined : createOAuthSession({ serverId: id, serverUrl: server.url, settings: server.oauth, env: options.env, log: (line) => options.log(`${line}\n`), interactive: options.interactive, fetch: options.fetch });
  const fetch = withGetGuard(oauth ? oauth.fetch : options.fetch);
  const transport = () => new StreamableHTTPClientTransport(url, { requestInit, fetch, ...(oauth ? { authProvider: oauth.provider } : {}) });
  const exchangeTimeout = `MCP server "${id}": the authorization server did not answer the token request within ${options.timeoutMs} ms`;
  /** The code for tokens, bounded: an authorization server that never answers cannot hold zero. */
  const finish = async (current: StreamableHTTPClientTransport, signal?: AbortSignal) =>
    withinBound(current.finishAuth(await oauth!.waitForAuthorizationCode(signal)), options.timeoutMs, exchangeTimeout, signal);
  const dispose = () => oauth?.close();
  const timeout = `MCP server "${id}" did not answer initialize within ${options.timeoutMs} ms`;
  const connected = (current: StreamableHTTPClientTransport): HttpConnection =>
    oauth
      ? {
          transport: current,
          reauthorize: (signal) => finish(current, signal),
          dispose,
        }
      : { transport: current, dispose };
  /** Connects with stored tokens; when the server wants a login, waits for it (its own bound) and connects again. */
  const connectWithLogin = async (): Promise<HttpConnection> => {
    const first = transport();
    try {
      await withinBound(client.connect(first), options.timeoutMs, timeout, options.signal);
      return connected(first);
    } catch (error) {
      await first.close().catch(() => undefined);
      const refused = error instanceof UnauthorizedError || (error instanceof StreamableHTTPError && error.code === 401);
      if (refused && !oauth) throw new Error(`MCP server "${id}" requires authorization (HTTP 401); set "oauth": true (or an oauth object) in its configuration, or the headers it expects`);
      if (!(error instanceof UnauthorizedError) || !oauth) throw error;
      await finish(first, options.signal);
      const second = transport();
      try {
        await withinBound(client.connect(second), options.timeoutMs, timeout, options.signal);
      } catch (again) {
        await second.close().catch(() => undefined);
        throw again;
      }
      return connected(second);
    }
  };
  try {
    return await connectWithLogin();
  } catch (error) {
    // A login that did not finish leaves no listener on the callback port.
    oauth?.close();
    throw error;
  }
}
