/**
 * Test peers for the OAuth client, speaking real HTTP on 127.0.0.1: a small OAuth 2.1
 * authorization server (metadata, DCR, authorize with PKCE, token with code/refresh grants) and a
 * protected MCP endpoint (the SDK's own server behind a bearer check that answers 401 with an RFC
 * 9728 challenge). They record what they received so tests can assert on the wire.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { OAuthSession } from "./session.ts";

export type AuthorizationServerOptions = {
  /** Advertise S256 (default true); false advertises only "plain". */
  s256?: boolean;
  /** Offer dynamic client registration (default true). */
  registration?: boolean;
  tokenAuthMethods?: string[];
  /** Pre-registered clients: id → secret (undefined: a public client). */
  clients?: Record<string, string | undefined>;
  accessTokenSeconds?: number;
  /** Claim another issuer in the metadata. */
  issuer?: string;
};

export type RecordedRequest = { method: string; path: string; query: URLSearchParams; headers: Headers; body: string };

type Grant = { clientId: string; resource: string | null; scope: string | null };

export type FakeAuthorization = {
  requests: RecordedRequest[];
  /** The form bodies posted to the token endpoint, with their headers. */
  tokenRequests: { form: URLSearchParams; headers: Headers }[];
  registrations: Record<string, unknown>[];
  /** Whether the access token is live and was issued for `resource` (any resource when null). */
  accepts(token: string, resource: string | null): boolean;
  /** Every access token issued so far stops being valid (refresh tokens stay). */
  expireAccessTokens(): void;
  handle(request: Request, origin: string): Promise<Response | undefined>;
};

export function createFakeAuthorization(options: AuthorizationServerOptions = {}): FakeAuthorization {
  const clients = new Map<string, { secret: string | undefined; redirectUris?: string[] }>(Object.entries(options.clients ?? {}).map(([id, secret]) => [id, { secret }]));
  const codes = new Map<string, Grant & { redirectUri: string; challenge: string }>();
  const accessTokens = new Map<string, Grant & { expiresAt: number }>();
  const refreshTokens = new Map<string, Grant>();
  const fake: FakeAuthorization = {
    requests: [],
    tokenRequests: [],
    registrations: [],
    accepts(token, resource) {
      const grant = accessTokens.get(token);
      return grant !== undefined && grant.expiresAt > Date.now() && (resource === null || grant.resource === resource);
    },
    expireAccessTokens() {
      for (const grant of accessTokens.values()) grant.expiresAt = 0;
    },
    async handle(request, origin) {
      const url = new URL(request.url);
      const body = request.method === "POST" ? await request.text() : "";
      fake.requests.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers, body });
      if (url.pathname === "/.well-known/oauth-authorization-server") {
        return Response.json({
          issuer: options.issuer ?? origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          ...(options.registration === false ? {} : { registration_endpoint: `${origin}/register` }),
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: options.s256 === false ? ["plain"] : ["S256"],
          token_endpoint_auth_methods_supported: options.tokenAuthMethods ?? ["none", "client_secret_post", "client_secret_basic"],
        });
      }
      if (url.pathname === "/register" && request.method === "POST" && options.registration !== false) {
        const metadata = JSON.parse(body) as Record<string, unknown>;
        fake.registrations.push(metadata);
        const clientId = `registered-${clients.size + 1}`;
        clients.set(clientId, { secret: undefined, redirectUris: metadata.redirect_uris as string[] });
        return Response.json({ ...metadata, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000) }, { status: 201 });
      }
      if (url.pathname === "/authorize") return authorize(url.searchParams);
      if (url.pathname === "/token" && request.method === "POST") return token(new URLSearchParams(body), request.headers);
      return undefined;
    },
  };

  function authorize(query: URLSearchParams): Response {
    const client = clients.get(query.get("client_id") ?? "");
    const redirectUri = query.get("redirect_uri") ?? "";
    if (client === undefined) return new Response("unknown client", { status: 400 });
    if (client.redirectUris !== undefined && !client.redirectUris.includes(redirectUri)) return new Response("redirect_uri not registered", { status: 400 });
    if (query.get("response_type") !== "code" || query.get("code_challenge_method") !== "S256" || !query.get("code_challenge")) {
      return new Response("bad authorization request", { status: 400 });
    }
    const code = crypto.randomUUID();
    codes.set(code, { clientId: query.get("client_id")!, redirectUri, challenge: query.get("code_challenge")!, resource: query.get("resource"), scope: query.get("scope") });
    const target = new URL(redirectUri);
    target.searchParams.set("code", code);
    const state = query.get("state");
    if (state !== null) target.searchParams.set("state", state);
    return new Response(null, { status: 302, headers: { location: target.href } });
  }

  function token(form: URLSearchParams, headers: Headers): Response {
    fake.tokenRequests.push({ form, headers });
    let clientId = form.get("client_id");
    let secret = form.get("client_secret");
    const basic = headers.get("authorization");
    if (basic?.startsWith("Basic ")) [clientId, secret] = atob(basic.slice(6)).split(":") as [string, string];
    const client = clients.get(clientId ?? "");
    if (client === undefined || (client.secret !== undefined && client.secret !== secret)) return oauthError(401, "invalid_client");
    let grant: Grant;
    if (form.get("grant_type") === "authorization_code") {
      const issued = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      const challenge = new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");
      if (issued === undefined || issued.clientId !== clientId || issued.redirectUri !== form.get("redirect_uri") || issued.challenge !== challenge) {
        return oauthError(400, "invalid_grant");
      }
      grant = issued;
    } else if (form.get("grant_type") === "refresh_token") {
      const known = refreshTokens.get(form.get("refresh_token") ?? "");
      if (known === undefined || known.clientId !== clientId) return oauthError(400, "invalid_grant");
      grant = known;
    } else {
      return oauthError(400, "unsupported_grant_type");
    }
    const seconds = options.accessTokenSeconds ?? 3600;
    const accessToken = `at-${crypto.randomUUID()}`;
    const refreshToken = `rt-${crypto.randomUUID()}`;
    accessTokens.set(accessToken, { ...grant, expiresAt: Date.now() + seconds * 1000 });
    refreshTokens.set(refreshToken, grant);
    return Response.json({ access_token: accessToken, token_type: "Bearer", expires_in: seconds, refresh_token: refreshToken, ...(grant.scope ? { scope: grant.scope } : {}) });
  }

  return fake;
}

function oauthError(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

export type Served = { origin: string; close(): void };

export function serve(handle: (request: Request, origin: string) => Promise<Response | undefined>): Served {
  let origin = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => (await handle(request, origin)) ?? new Response("not found", { status: 404 }),
  });
  origin = `http://127.0.0.1:${server.port}`;
  return { origin, close: () => void server.stop(true) };
}

export type ResourceServerOptions = {
  authorization: FakeAuthorization;
  /** The authorization server named in the metadata; absent: the server is its own (legacy). */
  authorizationServer?: string;
  /** Publish RFC 9728 metadata (default true). */
  metadata?: boolean;
  /** Name the metadata URL in the 401 challenge (default true). */
  challengeMetadata?: boolean;
  /** Where the metadata lives (default the RFC 9728 well-known path for /mcp). */
  metadataPath?: string;
  /** `scopes_supported` in the metadata (the SDK's default scope when none is configured). */
  scopesSupported?: string[];
};

export type ResourceServer = Served & { mcpUrl: string; requests: RecordedRequest[] };

/** A protected MCP endpoint at /mcp with one tool, `whoami`; also the legacy AS when none is named. */
export function serveResourceServer(options: ResourceServerOptions): ResourceServer {
  const requests: RecordedRequest[] = [];
  const served = serve(async (request, origin) => {
    const url = new URL(request.url);
    const mcpUrl = `${origin}/mcp`;
    const metadataPath = options.metadataPath ?? "/.well-known/oauth-protected-resource/mcp";
    const metadataUrl = `${origin}${metadataPath}`;
    if (url.pathname === metadataPath && options.metadata !== false) {
      requests.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers, body: "" });
      return Response.json({
        resource: mcpUrl,
        ...(options.authorizationServer ? { authorization_servers: [options.authorizationServer] } : {}),
        ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
      });
    }
    if (url.pathname === "/mcp") {
      requests.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers, body: "" });
      const bearer = request.headers.get("authorization")?.match(/^Bearer (.+)$/)?.[1];
      const resource = options.metadata === false ? null : mcpUrl;
      if (bearer === undefined || !options.authorization.accepts(bearer, resource)) {
        const challenge = options.metadata !== false && options.challengeMetadata !== false ? `Bearer resource_metadata="${metadataUrl}"` : `Bearer realm="mcp"`;
        return new Response("unauthorized", { status: 401, headers: { "www-authenticate": challenge } });
      }
      return answerMcp(request);
    }
    if (options.authorizationServer === undefined) return options.authorization.handle(request, origin);
    return undefined;
  });
  return { ...served, mcpUrl: `${served.origin}/mcp`, requests };
}

async function answerMcp(request: Request): Promise<Response> {
  const server = new McpServer({ name: "fake-protected", version: "1.0.0" });
  server.registerTool("whoami", { description: "says who is calling" }, async () => ({ content: [{ type: "text", text: "an authorized client" }] }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(request);
}

/** A port nothing listens on right now. */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port!;
  void probe.stop(true);
  return port;
}

/** A private HOME/XDG for one test; `cleanup` removes it. */
export function isolatedEnv(extra: Record<string, string> = {}): { env: Record<string, string>; home: string; cleanup(): void } {
  const home = mkdtempSync(join(tmpdir(), "zero-mcp-oauth-"));
  return { env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), ...extra }, home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** The user's browser: opens the authorization URL, follows the AS's redirect to the callback. */
export async function browse(authorizationUrl: string): Promise<Response> {
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (answer.status !== 302 || location === null) throw new Error(`the authorization server answered ${answer.status}: ${await answer.text()}`);
  return fetch(location);
}

/** The authorization URL printed last on the log, if any. */
export function printedUrl(lines: string[]): string | undefined {
  const index = lines.findLastIndex((line) => line.includes("needs authorization; open this URL in a browser:"));
  return index === -1 ? undefined : lines[index + 1];
}

/**
 * What the connection code does: connect; on UnauthorizedError let `user` act on the printed URL
 * while waiting for the code, finish the exchange, connect again with a new transport.
 */
export async function connectWithLogin(
  session: OAuthSession,
  url: string,
  lines: string[],
  user: (authorizationUrl: string) => Promise<unknown> = browse,
  signal?: AbortSignal,
): Promise<Client> {
  const transport = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: session.provider, fetch: session.fetch });
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  const first = transport();
  const printedBefore = lines.length;
  try {
    await client.connect(first);
    return client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  const waiting = session.waitForAuthorizationCode(signal);
  waiting.catch(() => {}); // awaited below, after the user acted
  const printed = printedUrl(lines.slice(printedBefore));
  if (printed !== undefined) await user(printed);
  const code = await waiting;
  await first.finishAuth(code);
  const again = new Client({ name: "oauth-test", version: "1.0.0" });
  await again.connect(transport());
  return again;
}
