/**
 * The private MCP OAuth store, `<config dir>/mcp-oauth.json` (0600 in a 0700 directory, written
 * atomically under a lock, never through a symlink, only when owned by this user).
 *
 * Entries are keyed by (server id, normalized server URL):
 * `{ "version": 2, "servers": { "<id>": { "<url>": { tokens, client, discovery, codeVerifier } } } }`.
 * The same id configured with two URLs (by two projects, or a server moved in config) keeps two
 * entries: neither reads nor overwrites the other's tokens. Logout removes every URL of an id.
 * Version 1 files (one entry per id, carrying its `url`) are read as such and written as version 2
 * by the next update.
 *
 * Validation is per entry. An entry that does not match the schema (hand-edited, or written by an
 * older zero from a hostile server's answer) reads as absent, is kept as it is by updates of other
 * entries, is replaced by the next write of its own (id, URL) and removed by logout: one bad entry
 * never blocks the others. Nothing invalid is written: an update whose result does not survive the
 * JSON round trip and the schema is refused with an error naming the server, and the file is left
 * as it was. A file that is not JSON, or whose top level is not this shape, is an error naming it
 * and is never rewritten (updates read it first, under the lock, and stop there).
 */
import { join } from "node:path";
import * as z from "zod";
import { configDir } from "../../config/paths.ts";
import type { Env } from "../../util/env.ts";
import { checkPrivateDir, ensurePrivateDir, PrivateFileError, readPrivateFile, withFileLock, writePrivateFileAtomically } from "../../util/private-file.ts";
import { McpAuthError, sanitizeRemoteText } from "./errors.ts";

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

/** One entry as kept in the file, under its id and URL. */
const bodySchema = z.strictObject({
  tokens: tokensSchema.optional(),
  /** PKCE verifier of a login in progress; removed once tokens are saved. */
  codeVerifier: z.string().optional(),
  discovery: discoverySchema.optional(),
  client: clientSchema.optional(),
});

export type StoredTokens = z.infer<typeof tokensSchema>;
export type StoredClient = z.infer<typeof clientSchema>;
export type StoredDiscovery = z.infer<typeof discoverySchema>;
/** What is kept for one server at one URL; `url` is the normalized server URL it is bound to. */
export type ServerEntry = { url: string } & z.infer<typeof bodySchema>;

/**
 * The file as read: per server id, its raw value in the version 2 layout (normally an object of
 * URL → entry). Raw, so that entries this module cannot use are written back unchanged.
 */
type StoreFile = { servers: Map<string, unknown> };

const STORE_VERSION = 2;

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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readStore(env: Env): StoreFile {
  const file = oauthStoreFile(env);
  let text: string | undefined;
  try {
    text = checkPrivateDir(configDir(env)) ? readPrivateFile(file) : undefined;
  } catch (error) {
    throw asAuthError(error, file);
  }
  if (text === undefined) return { servers: new Map() };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corrupt(file, "it is not valid JSON");
  }
  // Only the top level is checked here (by hand: a zod record would assign "__proto__" keys).
  if (!isRecord(value)) throw corrupt(file, "unexpected content");
  const extra = Object.keys(value).find((key) => key !== "version" && key !== "servers");
  if (extra !== undefined) throw corrupt(file, `unexpected content at ${sanitizeRemoteText(extra, 60)}`);
  if (value.version !== 1 && value.version !== STORE_VERSION) throw corrupt(file, "unexpected content at version");
  if (!isRecord(value.servers)) throw corrupt(file, "unexpected content at servers");
  const servers = new Map(Object.entries(value.servers));
  if (value.version === 1) {
    // Version 1: one entry per id, `{ url, ...entry }`. One without a usable URL could never be read; it is dropped.
    for (const [id, legacy] of servers) {
      if (isRecord(legacy) && typeof legacy.url === "string") {
        const { url, ...body } = legacy;
        servers.set(id, Object.fromEntries([[normalizeServerUrl(url), body]]));
      } else {
        servers.delete(id);
      }
    }
  }
  return { servers };
}

function corrupt(file: string, why: string): McpAuthError {
  return new McpAuthError(`${file}: corrupt MCP OAuth store (${why}); fix or delete it, then run "zero mcp login <server>" again`, { file });
}

function asAuthError(error: unknown, file: string): unknown {
  if (error instanceof PrivateFileError) return new McpAuthError(`MCP OAuth store: ${error.message}`, { file: error.file });
  if (error instanceof McpAuthError) return error;
  return new McpAuthError(`MCP OAuth store ${file}: ${(error as Error).message}`, { file });
}

/** The raw entries of one id, URL → entry (a copy; empty when the id has none or its value is unusable). */
function entriesOf(store: StoreFile, serverId: string): Map<string, unknown> {
  const raw = store.servers.get(serverId);
  return new Map(isRecord(raw) ? Object.entries(raw) : []);
}

/** Whether tokens are stored for `serverId` at `serverUrl` (throws McpAuthError when the store cannot be read). */
export function hasStoredTokens(env: Env, serverId: string, serverUrl: string): boolean {
  return readServerEntry(env, serverId, serverUrl)?.tokens !== undefined;
}

/** The entry of `serverId` bound to `serverUrl`; undefined when there is none or it is not valid. */
export function readServerEntry(env: Env, serverId: string, serverUrl: string): ServerEntry | undefined {
  const url = normalizeServerUrl(serverUrl);
  const parsed = bodySchema.safeParse(entriesOf(readStore(env), serverId).get(url));
  return parsed.success ? { ...parsed.data, url } : undefined;
}

/**
 * Read-modify-write of one server's entry under the store lock. `change` receives the current
 * entry bound to `serverUrl` (a fresh one when absent or not valid) and returns the new one. The
 * result is checked as it will be read back (after the JSON round trip); when it does not pass,
 * an McpAuthError naming the server is thrown and nothing is written. An entry left empty is removed.
 */
export function updateServerEntry(env: Env, serverId: string, serverUrl: string, change: (entry: ServerEntry) => ServerEntry): void {
  const url = normalizeServerUrl(serverUrl);
  mutateStore(env, (store) => {
    const entries = entriesOf(store, serverId);
    const current = bodySchema.safeParse(entries.get(url));
    const { url: _url, ...next } = change(current.success ? { ...current.data, url } : { url });
    const body = checkedBody(serverId, next);
    if (Object.keys(body).length > 0) entries.set(url, body);
    else entries.delete(url);
    if (entries.size > 0) store.servers.set(serverId, Object.fromEntries(entries));
    else store.servers.delete(serverId);
    return true;
  });
}

/** `body` as JSON will keep it, when that is a valid entry; otherwise an error naming the server. */
function checkedBody(serverId: string, body: unknown): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(JSON.stringify(body));
  } catch (error) {
    throw invalid(serverId, sanitizeRemoteText((error as Error).message));
  }
  const parsed = bodySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "the entry";
    throw invalid(serverId, `unexpected content at ${sanitizeRemoteText(where, 80)}`);
  }
  return json as Record<string, unknown>;
}

function invalid(serverId: string, why: string): McpAuthError {
  return new McpAuthError(`MCP server "${serverId}": refusing to store invalid OAuth data (${why}); nothing was saved`);
}

/** Removes everything stored for `serverId` (every URL, valid or not); true when there was something. */
export function removeServerEntry(env: Env, serverId: string): boolean {
  // Nothing to lock or write when there is nothing to remove (also avoids creating the directory).
  if (!readStore(env).servers.has(serverId)) return false;
  let removed = false;
  mutateStore(env, (store) => {
    removed = store.servers.delete(serverId);
    return removed;
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
        const content = { version: STORE_VERSION, servers: Object.fromEntries(store.servers) };
        writePrivateFileAtomically(file, `${JSON.stringify(content, null, 2)}\n`, dir);
      },
      { label: "MCP OAuth store lock" },
    );
  } catch (error) {
    throw asAuthError(error, file);
  }
}
