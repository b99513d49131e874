/**
 * The fetch every OAuth and MCP request of one HTTP server goes through.
 *
 * Same origin as the configured MCP URL: passed on (the user chose that host). Any other origin
 * (the protected-resource metadata elsewhere, the authorization server, its token and registration
 * endpoints) only to https on publicly routable addresses: the name is resolved and checked
 * (security/net-target.ts), then the request goes to a checked address itself (the URL carries
 * the IP, `Host` and TLS SNI carry the name), so DNS cannot swap in a private address between
 * check and connect. `allowPrivateNetwork` lifts the address check; plain http then stays limited
 * to loopback hosts, so tokens never cross a network in clear.
 *
 * Redirects are never followed here (the SDK follows same-origin ones itself, calling this again
 * for every hop), and a cross-origin request carries only the headers OAuth needs, so headers
 * configured for the MCP server never reach another host.
 */
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { parseIPv4 } from "../../security/net-address.ts";
import { checkDestination, systemResolve, type Classify, type Resolve } from "../../security/net-target.ts";
import { McpAuthError } from "./errors.ts";

export type GuardedFetchOptions = {
  serverId: string;
  serverUrl: string;
  allowPrivateNetwork: boolean;
  /** The fetch that does the I/O; its init may carry Bun's `tls` and `proxy` options. */
  fetch: FetchLike;
  /** Defaults to the system resolver; tests pass their own. */
  resolve?: Resolve;
  /** Defaults to the real public-address rules; tests pass their own. */
  classify?: Classify;
  /** The `resource_metadata` URL of a 401/403 challenge from the MCP server (RFC 9728 §5.1). */
  onChallenge?(resourceMetadataUrl: URL): void;
};

/** Headers a cross-origin OAuth request may carry. Authorization only as client authentication (Basic). */
const CROSS_ORIGIN_HEADERS = new Set(["accept", "content-type", "mcp-protocol-version", "user-agent"]);

export function createGuardedFetch(options: GuardedFetchOptions): FetchLike {
  const serverOrigin = new URL(options.serverUrl).origin;
  const base = options.fetch;
  return async (input, init) => {
    const url = new URL(typeof input === "string" ? input : input.href);
    const requestInit: RequestInit = { ...init, redirect: init?.redirect === "error" ? "error" : "manual" };
    if (url.origin === serverOrigin) {
      const response = await base(url, requestInit);
      if ((response.status === 401 || response.status === 403) && options.onChallenge) {
        const { resourceMetadataUrl } = extractWWWAuthenticateParams(response);
        if (resourceMetadataUrl) options.onChallenge(resourceMetadataUrl);
      }
      return response;
    }
    const crossInit: RequestInit = { ...requestInit, headers: crossOriginHeaders(init?.headers) };
    if (url.username !== "" || url.password !== "") throw refusal(options, url, "URLs with credentials are refused");
    if (options.allowPrivateNetwork) {
      if (url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname))) return base(url, crossInit);
      throw refusal(options, url, "plain http is only allowed to a loopback host");
    }
    if (url.protocol !== "https:") throw refusal(options, url, "not https");
    const signal = init?.signal ?? undefined;
    const destination = await checkDestination(url.href, options.resolve ?? systemResolve, options.classify, signal);
    if (!destination.ok) throw refusal(options, url, destination.reason);
    return pinnedFetch(base, url, destination.hostname, destination.addresses, crossInit);
  };
}

function refusal(options: GuardedFetchOptions, url: URL, reason: string): McpAuthError {
  return new McpAuthError(
    `MCP server "${options.serverId}": refused OAuth request to ${url.origin}${url.pathname} (${reason}); ` +
      `a host other than the MCP server's must be publicly routable https; set oauth.allowPrivateNetwork only for a trusted private authorization server`,
  );
}

function crossOriginHeaders(headers: RequestInit["headers"]): Headers {
  const kept = new Headers();
  for (const [name, value] of new Headers(headers)) {
    if (CROSS_ORIGIN_HEADERS.has(name) || (name === "authorization" && /^basic /i.test(value))) kept.set(name, value);
  }
  return kept;
}

/** localhost, 127.0.0.0/8 and ::1: the only hosts plain http may reach across origins. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  const v4 = parseIPv4(host);
  return v4 !== undefined && v4 >>> 24 === 127;
}

/** The checked addresses in resolver order until one connects; never through a proxy. */
async function pinnedFetch(base: FetchLike, url: URL, hostname: string, addresses: string[], init: RequestInit): Promise<Response> {
  let failure: unknown = new McpAuthError(`${hostname} did not resolve`);
  for (const address of addresses) {
    const target = new URL(url.href);
    target.hostname = address.includes(":") ? `[${address}]` : address;
    const headers = new Headers(init.headers);
    headers.set("host", url.host);
    const pinned = { ...init, headers, proxy: false, tls: { serverName: hostname } } as RequestInit;
    try {
      return await base(target, pinned);
    } catch (error) {
      failure = error;
      if (init.signal?.aborted) break;
    }
  }
  throw failure;
}
