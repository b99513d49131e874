/**
 * The SDK's OAuthClientProvider for one MCP server, backed by the private store.
 *
 * What the SDK's `auth()` does with it (client/auth.js, authInternal, SDK 1.32.2):
 * - `discoveryState()` always returns a fully checked state (discovery.ts), so the SDK skips its
 *   own discovery and its legacy fallback.
 * - `clientInformation()` is the configured client (secret from the named env var, never stored)
 *   or the one dynamic registration stored; undefined makes the SDK register (RFC 7591).
 * - `tokens()` reports the remaining lifetime from the stored `expires_at`; with a refresh token
 *   the SDK refreshes on the next 401 instead of starting a new login. `saveTokens()` bounds
 *   `expires_in` to one year (a negative or non-numeric one counts as unknown) and refuses an empty
 *   access token; `saveClientInformation()` refuses an empty client_id. Whatever else the store
 *   could not read back is refused by the store itself (store.ts), so a hostile server cannot
 *   leave an entry behind that breaks reading.
 * - `state()` is random per login and checked exactly by the callback listener.
 * - `redirectToAuthorization()` prints the URL and starts that listener before returning, so it
 *   listens before the user can click (session.ts owns the listener).
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpOAuthSettings } from "../../config/schema.ts";
import type { Env } from "../../util/env.ts";
import { checkDiscoveryState, discoverStrictly, type DiscoveryOptions } from "./discovery.ts";
import { McpAuthError } from "./errors.ts";
import { readServerEntry, updateServerEntry, type ServerEntry } from "./store.ts";

export type ProviderContext = {
  serverId: string;
  /** Normalized (store.ts normalizeServerUrl). */
  serverUrl: string;
  settings: McpOAuthSettings;
  env: Env;
  redirectUrl: string;
  /** Whether a code verifier may be written to the store (an interactive login). */
  interactive: boolean;
  discovery: Omit<DiscoveryOptions, "resourceMetadataUrl">;
  /** The `resource_metadata` URL of the server's latest challenge. */
  challengeUrl(): URL | undefined;
  /** Called with the final authorization URL (state and scope settled). */
  onAuthorizationUrl(url: URL): void;
};

export type StoreBackedProvider = OAuthClientProvider & {
  /** The state of the login in progress, if one was started. */
  pendingState(): string | undefined;
  /** Forgets the verifier of a login that ended without tokens. */
  abandonLogin(): void;
};

export function createProvider(context: ProviderContext): StoreBackedProvider {
  const { serverId, serverUrl, settings, env } = context;
  const scope = settings.scopes !== undefined && settings.scopes.length > 0 ? settings.scopes.join(" ") : undefined;
  let discovery: Promise<OAuthDiscoveryState> | undefined;
  let state: string | undefined;
  let verifier: string | undefined;

  const read = () => readServerEntry(env, serverId, serverUrl);
  const update = (change: (entry: ServerEntry) => ServerEntry) => updateServerEntry(env, serverId, serverUrl, change);
  const checks = { ...context.discovery };

  async function loadDiscovery(): Promise<OAuthDiscoveryState> {
    const stored = read()?.discovery;
    if (stored !== undefined) {
      try {
        return checkDiscoveryState(stored as unknown as OAuthDiscoveryState, checks);
      } catch {
        // Stale or recorded under looser settings: discover again (which says clearly what fails).
      }
    }
    const fresh = await discoverStrictly({ ...checks, resourceMetadataUrl: context.challengeUrl() });
    update((entry) => ({ ...entry, discovery: asJson(fresh) }));
    return fresh;
  }

  function configuredClient(): OAuthClientInformationMixed | undefined {
    if (settings.clientId === undefined) {
      if (settings.clientSecretEnv !== undefined) {
        throw new McpAuthError(`MCP server "${serverId}": oauth.clientSecretEnv needs oauth.clientId (the client the secret belongs to)`);
      }
      return undefined;
    }
    if (settings.clientSecretEnv === undefined) return { client_id: settings.clientId };
    const secret = env[settings.clientSecretEnv];
    if (secret === undefined || secret === "") {
      throw new McpAuthError(`MCP server "${serverId}": oauth.clientSecretEnv names ${settings.clientSecretEnv}, which is not set`);
    }
    return { client_id: settings.clientId, client_secret: secret };
  }

  return {
    get redirectUrl() {
      return context.redirectUrl;
    },

    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "Zero CLI",
        redirect_uris: [context.redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        ...(scope !== undefined ? { scope } : {}),
      };
    },

    state() {
      state = randomToken();
      return state;
    },

    pendingState: () => state,

    async discoveryState() {
      discovery ??= loadDiscovery().catch((error: unknown) => {
        discovery = undefined; // a later attempt discovers again
        throw error;
      });
      return discovery;
    },

    saveDiscoveryState(next) {
      const checked = checkDiscoveryState(next, checks);
      discovery = Promise.resolve(checked);
      update((entry) => ({ ...entry, discovery: asJson(checked) }));
    },

    async clientInformation() {
      const configured = configuredClient();
      if (configured !== undefined) return configured;
      const client = read()?.client;
      // A registration for another callback port would be refused at the token endpoint; an expired
      // secret too (RFC 7591 client_secret_expires_at, seconds, 0 = never). Either way: register again.
      const expires = client?.information.client_secret_expires_at;
      const expired = typeof expires === "number" && expires > 0 && expires * 1000 <= Date.now();
      if (client !== undefined && client.redirectUrl === context.redirectUrl && !expired) return client.information as OAuthClientInformationMixed;
      const metadata = discovery === undefined ? undefined : (await discovery).authorizationServerMetadata;
      if (metadata !== undefined && metadata.registration_endpoint === undefined) {
        throw new McpAuthError(
          `MCP server "${serverId}": its authorization server offers no dynamic client registration; ` +
            `register a client with redirect URI ${context.redirectUrl} and set oauth.clientId`,
        );
      }
      return undefined;
    },

    saveClientInformation(information) {
      // A configured client is synthesized from config on every call; only registrations are kept.
      if (settings.clientId !== undefined) return;
      if (typeof information.client_id !== "string" || information.client_id === "") {
        throw new McpAuthError(`MCP server "${serverId}": its authorization server registered a client without a client_id; nothing was saved`);
      }
      update((entry) => ({ ...entry, client: { information: asJson(information), redirectUrl: context.redirectUrl } }));
    },

    tokens() {
      const stored = read()?.tokens;
      if (stored === undefined) return undefined;
      const { expires_at: expiresAt, ...tokens } = stored;
      if (expiresAt !== undefined) tokens.expires_in = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
      return tokens as OAuthTokens;
    },

    saveTokens(tokens) {
      // The SDK checks the types only: an empty token would be sent as "Bearer " and could not be stored.
      if (typeof tokens.access_token !== "string" || tokens.access_token === "") {
        throw new McpAuthError(`MCP server "${serverId}": its authorization server issued an empty access token; nothing was saved`);
      }
      // A token that cannot be a header value would break every request without a 401 to recover from.
      if (/[\u0000-\u001f\u007f]/.test(tokens.access_token) || (typeof tokens.refresh_token === "string" && /[\u0000-\u001f\u007f]/.test(tokens.refresh_token))) {
        throw new McpAuthError(`MCP server "${serverId}": its authorization server issued a token with control characters; nothing was saved`);
      }
      const lifetime = tokenLifetimeSeconds(tokens.expires_in);
      const { expires_in: _raw, ...rest } = asJson(tokens);
      const stored = { ...rest, ...(lifetime !== undefined ? { expires_in: lifetime, expires_at: Date.now() + lifetime * 1000 } : {}) };
      verifier = undefined;
      state = undefined;
      update(({ codeVerifier: _done, ...entry }) => ({ ...entry, tokens: stored }));
    },

    redirectToAuthorization(url) {
      if (scope !== undefined) {
        // The configured scopes win over the challenge's and the metadata's (the SDK's order).
        url.searchParams.set("scope", scope);
        if (scope.split(" ").includes("offline_access") && !url.searchParams.has("prompt")) url.searchParams.append("prompt", "consent");
      }
      context.onAuthorizationUrl(url);
    },

    saveCodeVerifier(codeVerifier) {
      verifier = codeVerifier;
      // Only an interactive login may finish in this process; a background connection keeps it in memory.
      if (context.interactive) update((entry) => ({ ...entry, codeVerifier }));
    },

    codeVerifier() {
      const known = verifier ?? read()?.codeVerifier;
      if (known === undefined) throw new McpAuthError(`MCP server "${serverId}": no authorization is in progress`);
      return known;
    },

    abandonLogin() {
      const mine = verifier;
      verifier = undefined;
      state = undefined;
      if (mine !== undefined && context.interactive) {
        update(({ codeVerifier, ...entry }) => (codeVerifier === mine ? entry : { ...entry, codeVerifier }));
      }
    },

    invalidateCredentials(what) {
      if (what === "all" || what === "discovery") discovery = undefined;
      if (what === "all" || what === "verifier") verifier = undefined;
      update((entry) => {
        switch (what) {
          case "all":
            return { url: entry.url };
          case "client": {
            const { client: _client, ...rest } = entry;
            return rest;
          }
          case "tokens": {
            const { tokens: _tokens, ...rest } = entry;
            return rest;
          }
          case "verifier": {
            const { codeVerifier: _verifier, ...rest } = entry;
            return rest;
          }
          case "discovery": {
            const { discovery: _discovery, ...rest } = entry;
            return rest;
          }
        }
      });
    },
  };
}

/** The longest access-token lifetime believed: a server's "forever" must not overflow the stored expiry. */
export const MAX_TOKEN_LIFETIME_SECONDS = 365 * 24 * 60 * 60;

/** `expires_in` bounded to [0, one year]; undefined (unknown) when it is not a non-negative number. */
function tokenLifetimeSeconds(expiresIn: unknown): number | undefined {
  if (typeof expiresIn !== "number" || Number.isNaN(expiresIn) || expiresIn < 0) return undefined;
  return Math.min(expiresIn, MAX_TOKEN_LIFETIME_SECONDS);
}

/** 256 random bits, base64url: the login's `state`. */
function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** A plain JSON copy of what the SDK hands over (parsed objects, maybe with URL instances). */
function asJson<T>(value: T): T & Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as T & Record<string, unknown>;
}
