/**
 * Strict OAuth discovery for one MCP server: RFC 9728 protected-resource metadata names the
 * authorization server, RFC 8414 (or OpenID) metadata describes it, and PKCE S256 must be
 * advertised.
 *
 * The provider returns this from `discoveryState()`, so the SDK's `auth()` always takes its
 * "cached state" branch and never runs `discoverOAuthServerInfo`, whose silent fallback treats the
 * MCP origin as the authorization server. That fallback happens here only with
 * `allowLegacyDiscovery`, and only when the server publishes no metadata at all.
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema, OpenIdProviderDiscoveryMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkResourceAllowed, resourceUrlFromServerUrl } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { McpAuthError } from "./errors.ts";
import { isLoopbackHost } from "./guarded-fetch.ts";

export type DiscoveryOptions = {
  serverId: string;
  serverUrl: string;
  /** The guarded fetch: cross-origin rules apply to every discovery request. */
  fetch: FetchLike;
  allowLegacyDiscovery: boolean;
  allowPrivateNetwork: boolean;
  /** From the server's 401 challenge, when it named one. */
  resourceMetadataUrl?: URL | undefined;
};

/** Discovers and checks; rejects with an McpAuthError that says what the server lacks. */
export async function discoverStrictly(options: DiscoveryOptions): Promise<OAuthDiscoveryState> {
  const { serverId, serverUrl } = options;
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(serverUrl, { resourceMetadataUrl: options.resourceMetadataUrl }, options.fetch);
  } catch (error) {
    if (error instanceof McpAuthError) throw error;
    // The SDK's wording for "no metadata document" (404 at every well-known location).
    if (!(error instanceof Error && error.message.startsWith("Resource server does not implement"))) {
      throw new McpAuthError(`MCP server "${serverId}": cannot read its OAuth protected-resource metadata: ${describe(error)}`, { cause: error });
    }
  }
  // Before any authorization server is contacted: metadata for another resource names nobody we may trust.
  if (resourceMetadata !== undefined) checkResource(resourceMetadata, serverId, serverUrl);
  let authorizationServerUrl = resourceMetadata?.authorization_servers?.[0];
  if (authorizationServerUrl === undefined) {
    if (!options.allowLegacyDiscovery) {
      const lacks = resourceMetadata === undefined ? "publishes no OAuth protected-resource metadata (RFC 9728)" : "names no authorization server in its protected-resource metadata";
      throw new McpAuthError(
        `MCP server "${serverId}" ${lacks}; refusing to guess its authorization server. ` +
          `Set oauth.allowLegacyDiscovery only for a trusted older server that is its own authorization server`,
      );
    }
    authorizationServerUrl = new URL("/", serverUrl).href;
  }
  let authorizationServerMetadata: AuthorizationServerMetadata | undefined;
  try {
    authorizationServerMetadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, { fetchFn: options.fetch });
  } catch (error) {
    if (error instanceof McpAuthError) throw error;
    throw new McpAuthError(`MCP server "${serverId}": cannot read the metadata of authorization server ${authorizationServerUrl}: ${describe(error)}`, { cause: error });
  }
  if (authorizationServerMetadata === undefined) {
    throw new McpAuthError(`MCP server "${serverId}": authorization server ${authorizationServerUrl} publishes no OAuth metadata (RFC 8414), so PKCE S256 support cannot be confirmed`);
  }
  return checkDiscoveryState(
    { authorizationServerUrl, resourceMetadataUrl: options.resourceMetadataUrl?.href, resourceMetadata, authorizationServerMetadata },
    options,
  );
}

/**
 * The checks every discovery state must pass, fresh or read back from the store: the metadata is
 * well-formed, describes the resource we talk to, comes from the authorization server it claims
 * (issuer), supports the code flow with S256, and sends the browser to an acceptable endpoint.
 */
export function checkDiscoveryState(state: OAuthDiscoveryState, options: Omit<DiscoveryOptions, "fetch" | "resourceMetadataUrl">): OAuthDiscoveryState {
  const { serverId, serverUrl } = options;
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  if (state.resourceMetadata !== undefined) {
    const parsed = OAuthProtectedResourceMetadataSchema.safeParse(state.resourceMetadata);
    if (!parsed.success) throw new McpAuthError(`MCP server "${serverId}": invalid protected-resource metadata`);
    resourceMetadata = parsed.data;
    checkResource(resourceMetadata, serverId, serverUrl);
  } else if (!options.allowLegacyDiscovery) {
    throw new McpAuthError(`MCP server "${serverId}": no protected-resource metadata (set oauth.allowLegacyDiscovery only for a trusted older server)`);
  }
  const oauth = OAuthMetadataSchema.safeParse(state.authorizationServerMetadata);
  const metadata = oauth.success ? oauth.data : OpenIdProviderDiscoveryMetadataSchema.safeParse(state.authorizationServerMetadata).data;
  if (metadata === undefined) {
    throw new McpAuthError(`MCP server "${serverId}": authorization server ${state.authorizationServerUrl} has invalid or missing metadata`);
  }
  if (!sameIssuer(metadata.issuer, state.authorizationServerUrl)) {
    throw new McpAuthError(`MCP server "${serverId}": the metadata of authorization server ${state.authorizationServerUrl} names a different issuer (${metadata.issuer})`);
  }
  if (!metadata.response_types_supported.includes("code")) {
    throw new McpAuthError(`MCP server "${serverId}": authorization server ${state.authorizationServerUrl} does not support the authorization code flow`);
  }
  if (!(metadata.code_challenge_methods_supported ?? []).includes("S256")) {
    throw new McpAuthError(`MCP server "${serverId}": authorization server ${state.authorizationServerUrl} does not advertise PKCE S256 (code_challenge_methods_supported); refusing to authorize without it`);
  }
  const endpoint = new URL(metadata.authorization_endpoint);
  const sameOrigin = endpoint.origin === new URL(serverUrl).origin;
  if (endpoint.protocol !== "https:" && !sameOrigin && !(options.allowPrivateNetwork && isLoopbackHost(endpoint.hostname))) {
    throw new McpAuthError(`MCP server "${serverId}": the authorization endpoint ${endpoint.origin}${endpoint.pathname} is not https`);
  }
  return { ...state, resourceMetadata, authorizationServerMetadata: metadata };
}

/** RFC 9728 §3.3: the metadata must describe the resource we talk to (same origin, a path prefix of it). */
function checkResource(metadata: OAuthProtectedResourceMetadata, serverId: string, serverUrl: string): void {
  const expected = resourceUrlFromServerUrl(serverUrl);
  if (!checkResourceAllowed({ requestedResource: expected, configuredResource: metadata.resource })) {
    throw new McpAuthError(`MCP server "${serverId}": its protected-resource metadata is for ${metadata.resource}, not ${expected.href}`);
  }
}

/** RFC 8414 §3.3: the issuer must be the URL the metadata was discovered from (one trailing slash tolerated). */
function sameIssuer(issuer: string, url: string): boolean {
  const strip = (text: string) => {
    try {
      return new URL(text).href.replace(/\/$/, "");
    } catch {
      return text.replace(/\/$/, "");
    }
  };
  return strip(issuer) === strip(url);
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === "ZodError") return "the document does not have the expected fields";
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0]!.slice(0, 300);
}
