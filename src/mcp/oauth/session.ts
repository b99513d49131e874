/**
 * OAuth 2.1 for one remote MCP server: the contract the connection code uses.
 *
 * ```ts
 * const oauth = createOAuthSession(...);
 * const transport = new StreamableHTTPClientTransport(url, { authProvider: oauth.provider, fetch: oauth.fetch });
 * try { await client.connect(transport) } catch (e) {
 *   if (!(e instanceof UnauthorizedError)) throw e;
 *   await transport.finishAuth(await oauth.waitForAuthorizationCode(signal));
 *   // connect again with a new transport
 * }
 * ```
 * Do not set the transport's `redirectPolicy: 'follow'`: the guarded fetch never follows
 * redirects itself, and relies on the SDK's same-origin following calling it for every hop.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpOAuthSettings } from "../../config/schema.ts";
import type { Classify, Resolve } from "../../security/net-target.ts";
import { zeroEnv, type Env } from "../../util/env.ts";
import { CALLBACK_PATH, listenForCallback, type CallbackListener } from "./callback.ts";
import { McpAuthError } from "./errors.ts";
import { createGuardedFetch } from "./guarded-fetch.ts";
import { createProvider } from "./provider.ts";
import { hasStoredTokens, normalizeServerUrl, removeServerEntry } from "./store.ts";

export type OAuthSessionOptions = {
  serverId: string;
  /** The MCP endpoint (config mcp.<id>.url). */
  serverUrl: string;
  settings: true | McpOAuthSettings;
  /** For ZERO_CLI_MCP_OAUTH_CALLBACK_PORT, ZERO_CLI_MCP_OAUTH_TIMEOUT_MS, clientSecretEnv and the config dir. */
  env: Env;
  /** One stderr line per call, without the newline: the authorization URL is printed here. */
  log(line: string): void;
  /** Whether zero may wait for a browser at all (false → fail with "run zero mcp login <id>"). */
  interactive: boolean;
  /** The fetch everything goes through; default globalThis.fetch. */
  fetch?: FetchLike;
  /** Tests only: name resolution and address rules for the cross-origin checks. */
  network?: { resolve?: Resolve; classify?: Classify };
};

export type OAuthSession = {
  /** For `new StreamableHTTPClientTransport(url, { authProvider })`. */
  provider: OAuthClientProvider;
  /** Guarded fetch (cross-origin rules) to pass as the transport's `fetch` too. */
  fetch: FetchLike;
  /** `http://127.0.0.1:<port>/oauth/callback`. */
  redirectUrl: string;
  /**
   * After the transport threw UnauthorizedError (the provider's redirectToAuthorization ran):
   * waits for the loopback callback carrying this login's exact state and returns its code. A
   * callback with another state is answered 400 and ignored. Rejects on the time bound (120 s,
   * ZERO_CLI_MCP_OAUTH_TIMEOUT_MS), on an `error=` callback, on `signal`, and at once when not
   * interactive or when no authorization was started.
   */
  waitForAuthorizationCode(signal?: AbortSignal): Promise<string>;
  /** Whether tokens are stored for this server at this URL (for `zero mcp list`). */
  hasTokens(): boolean;
  /** Stops a callback listener still waiting (shutdown). */
  close(): void;
};

export const DEFAULT_CALLBACK_PORT = 53682;
export const DEFAULT_AUTHORIZATION_TIMEOUT_MS = 120_000;

/** `oauth.callbackPort` ?? ZERO_CLI_MCP_OAUTH_CALLBACK_PORT ?? 53682. */
export function callbackPort(settings: McpOAuthSettings, env: Env): number {
  if (settings.callbackPort !== undefined) return settings.callbackPort;
  const raw = zeroEnv(env, "MCP_OAUTH_CALLBACK_PORT");
  if (raw === undefined) return DEFAULT_CALLBACK_PORT;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) {
    throw new McpAuthError(`ZERO_CLI_MCP_OAUTH_CALLBACK_PORT must be a port number from 1 to 65535, got "${raw.slice(0, 40)}"`);
  }
  return port;
}

/** How long a login waits for the browser: ZERO_CLI_MCP_OAUTH_TIMEOUT_MS ?? 120 s. */
export function authorizationTimeoutMs(env: Env): number {
  const raw = zeroEnv(env, "MCP_OAUTH_TIMEOUT_MS");
  if (raw === undefined) return DEFAULT_AUTHORIZATION_TIMEOUT_MS;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || ms < 1) throw new McpAuthError(`ZERO_CLI_MCP_OAUTH_TIMEOUT_MS must be a positive number of milliseconds, got "${raw.slice(0, 40)}"`);
  return ms;
}

/** Throws McpAuthError when an environment override is malformed. */
export function createOAuthSession(options: OAuthSessionOptions): OAuthSession {
  const { serverId, env } = options;
  const settings: McpOAuthSettings = options.settings === true ? {} : options.settings;
  const serverUrl = normalizeServerUrl(options.serverUrl);
  const port = callbackPort(settings, env);
  const timeoutMs = authorizationTimeoutMs(env);
  const redirectUrl = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
  const allowPrivateNetwork = settings.allowPrivateNetwork === true;
  let challengeUrl: URL | undefined;
  let listener: CallbackListener | undefined;

  const fetch = createGuardedFetch({
    serverId,
    serverUrl,
    allowPrivateNetwork,
    fetch: options.fetch ?? globalThis.fetch,
    ...options.network,
    onChallenge: (url) => {
      challengeUrl = url;
    },
  });

  const provider = createProvider({
    serverId,
    serverUrl,
    settings,
    env,
    redirectUrl,
    interactive: options.interactive,
    discovery: { serverId, serverUrl, fetch, allowLegacyDiscovery: settings.allowLegacyDiscovery === true, allowPrivateNetwork },
    challengeUrl: () => challengeUrl,
    onAuthorizationUrl(url) {
      listener?.close();
      listener = undefined;
      if (!options.interactive) return; // waitForAuthorizationCode says "run zero mcp login"
      const state = url.searchParams.get("state");
      if (state === null || state !== provider.pendingState()) throw new McpAuthError(`MCP server "${serverId}": the authorization request lost its state`);
      // Listening first: a user who clicks at once must find the callback there.
      listener = listenForCallback({ serverId, port, state, timeoutMs });
      options.log(`zero: MCP server "${serverId}" needs authorization; open this URL in a browser:`);
      options.log(url.href);
    },
  });

  return {
    provider,
    fetch,
    redirectUrl,
    async waitForAuthorizationCode(signal) {
      if (!options.interactive) throw new McpAuthError(`MCP server "${serverId}" needs authorization: run 'zero mcp login ${serverId}'`);
      const current = listener;
      if (current === undefined) throw new McpAuthError(`MCP server "${serverId}": no authorization was started, so there is no callback to wait for`);
      const abort = () => current.close(signal?.reason instanceof Error ? signal.reason : new McpAuthError(`authorization for MCP server "${serverId}" was cancelled`));
      if (signal?.aborted) abort();
      signal?.addEventListener("abort", abort, { once: true });
      try {
        return await current.code;
      } catch (error) {
        provider.abandonLogin();
        throw error;
      } finally {
        signal?.removeEventListener("abort", abort);
        if (listener === current) listener = undefined;
      }
    },
    hasTokens: () => hasStoredTokens(env, serverId, serverUrl),
    close() {
      listener?.close();
      listener = undefined;
    },
  };
}

/**
 * `zero mcp logout <id>`: removes tokens, discovery state and registration of that server, for
 * every URL it was used with, including entries the store cannot read. True when something was stored.
 */
export function forgetServer(env: Env, serverId: string): boolean {
  return removeServerEntry(env, serverId);
}
