/**
 * The private MCP OAuth store, `<config dir>/mcp-oauth.json` (0600 in a 0700 directory, written
 * atomically under a lock, never through a symlink, only when owned by this user). One entry per
 * server id, bound to the server URL it was obtained for: an entry recorded for another URL reads
 * as empty and is replaced by the next write, so a server moved in config never receives tokens
 * issued for its old address.
 *
 * Everything read back is validated; a corrupt file is an error naming it and is never rewritten
 * silently (updates read it first, under the lock, and stop there).
 */
import { join } from "node:path";
import * as z from "zod";
import { configDir } from "../../config/paths.ts";
import type { Env } from "../../util/env.ts";
import { checkPrivateDir, ensurePrivateDir, PrivateFileError, readPrivateFile, withFileLock, writePrivateFileAtomically } from "../../util/private-file.ts";
import { McpAuthError } from "./errors.ts";

// Remote documents (tokens, registrations, metadata) keep unknown fields: they are the server's, and
// the SDK reads them back. Only what this module relies on is required.
const tokensSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().optional(),
  /** Ours: when the access token expires (ms since the epoch), from `expires_in` at save time. */
  expires_at: z.number().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
  id_token: z.string().optional(),
  issuer: z.string().optional(),
});

const clientSchema = z.strictObject({
  information: z.looseObject({ client_id: z.string().min(1), client_secret: z.string().optional(), issuer: z.string().optional() }),
  /** The redirect URI registered with it: a registration for another callback port is not reused. */
  redirectUrl: z.string(),
});

const discoverySchema = z.looseObject({
  authorizationServerUrl: z.string().min(1),
  resourceMetadataUrl: z.string().optional(),
  resourceMetadata: z.looseObject({}).optional(),
  authorizationServerMetadata: z.looseObject({}).optional(),
});

const entrySchema = z.strictObject({
  url: z.string(),
  tokens: tokensSchema.optional(),
  /** PKCE verifier of a login in progress; removed once tokens are saved. */
  codeVerifier: z.string().optional(),
  discovery: discoverySchema.optional(),
  client: clientSchema.optional(),
});

const storeSchema = z.strictObject({ version: z.literal(1), servers: z.record(z.string(), entrySchema) });

export type StoredTokens = z.infer<typeof tokensSchema>;
export type StoredClient = z.infer<typeof clientSchema>;
export type StoredDiscovery = z.infer<typeof discoverySchema>;
/** What is kept for one server; `url` is the server URL it is bound to. */
export type ServerEntry = z.infer<typeof entrySchema>;
type StoreFile = z.infer<typeof storeSchema>;

export function oauthStoreFile(env: Env): string {
  return join(configDir(env), "mcp-oauth.json");
}

/** The same URL spelled the same way (`new URL().href`), so trivial spelling changes keep the binding. */
export function normalizeServerUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

function readStore(env: Env): StoreFile {
  const file = oauthStoreFile(env);
  let text: string | undefined;
  try {
    text = checkPrivateDir(configDir(env)) ? readPrivateFile(file) : undefined;
  } catch (error) {
    throw asAuthError(error, file);
  }
  if (text === undefined) return { version: 1, servers: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corrupt(file, "it is not valid JSON");
  }
  const parsed = storeSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    throw corrupt(file, `unexpected content${where}`);
  }
  return parsed.data;
}

function corrupt(file: string, why: string): McpAuthError {
  return new McpAuthError(`${file}: corrupt MCP OAuth store (${why}); fix or delete it, then run "zero mcp login <server>" again`, { file });
}

function asAuthError(error: unknown, file: string): unknown {
  if (error instanceof PrivateFileError) return new McpAuthError(`MCP OAuth store: ${error.message}`, { file: error.file });
  if (error instanceof McpAuthError) return error;
  return new McpAuthError(`MCP OAuth store ${file}: ${(error as Error).message}`, { file });
}

/** The entry of `serverId`, when there is one bound to `serverUrl`. */
export function readServerEntry(env: Env, serverId: string, serverUrl: string): ServerEntry | undefined {
  const entry = entryOf(readStore(env), serverId);
  return entry !== undefined && entry.url === normalizeServerUrl(serverUrl) ? entry : undefined;
}

function entryOf(store: StoreFile, serverId: string): ServerEntry | undefined {
  return Object.hasOwn(store.servers, serverId) ? store.servers[serverId] : undefined;
}

/**
 * Read-modify-write of one server's entry under the store lock. `change` receives the current
 * entry bound to `serverUrl` (a fresh one when absent or bound elsewhere) and returns the new one.
 */
export function updateServerEntry(env: Env, serverId: string, serverUrl: string, change: (entry: ServerEntry) => ServerEntry): void {
  const url = normalizeServerUrl(serverUrl);
  mutateStore(env, (store) => {
    const current = entryOf(store, serverId);
    const next = change(current !== undefined && current.url === url ? current : { url });
    store.servers[serverId] = { ...next, url };
    return true;
  });
}

/** Removes everything stored for `serverId` (whatever URL it is bound to); true when there was something. */
export function removeServerEntry(env: Env, serverId: string): boolean {
  // Nothing to lock or write when there is nothing to remove (also avoids creating the directory).
  if (entryOf(readStore(env), serverId) === undefined) return false;
  let removed = false;
  mutateStore(env, (store) => {
    if (!Object.hasOwn(store.servers, serverId)) return false;
    delete store.servers[serverId];
    removed = true;
    return true;
  });
  return removed;
}

function mutateStore(env: Env, mutate: (store: StoreFile) => boolean): void {
  const file = oauthStoreFile(env);
  const dir = configDir(env);
  try {
    ensurePrivateDir(dir);
    withFileLock(
      `${file}.lock`,
      () => {
        const store = readStore(env);
        if (!mutate(store)) return;
        writePrivateFileAtomically(file, `${JSON.stringify(store, null, 2)}\n`, dir);
      },
      { label: "MCP OAuth store lock" },
    );
  } catch (error) {
    throw asAuthError(error, file);
  }
}
