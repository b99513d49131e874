import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as z from "zod";
import type { Env } from "../util/env.ts";
import { canonicalPath } from "../util/paths.ts";
import { PrivateFileError, withFileLock, writePrivateFileAtomically } from "../util/private-file.ts";
import { ConfigError } from "./errors.ts";
import { configDir, findProjectConfig, projectRootOf } from "./paths.ts";

// Which workspaces may load their own project configuration, and what exactly was reviewed there.
// Trust is a user decision, so the record lives in the user's config directory, never in the
// workspace. Like direnv's allow, it holds a content hash (sha256) of the project file each
// workspace was trusted with: a changed file is not loaded until it is trusted again.

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, { error: "must be a sha256 hex digest" });
const absolutePath = z.string().refine(isAbsolute, { error: "must be an absolute path" });

const trustRecordV1Schema = z.object({ version: z.literal(1), workspaces: z.array(absolutePath) });
const trustRecordV2Schema = z.object({
  version: z.literal(2),
  workspaces: z.array(z.strictObject({ path: absolutePath, files: z.record(absolutePath, sha256Hex).optional() })),
});

/**
 * One trusted workspace. `files` maps each project config file trusted there to the sha256 of its
 * content when it was trusted (empty: trusted while it had none). Absent for a record written
 * before hashes existed (version 1): that trust never saw the content, so its file loads only
 * after `zero trust` again.
 */
export type TrustEntry = { path: string; files?: Record<string, string> };

export function trustFile(env: Env): string {
  return join(configDir(env), "trusted-workspaces.json");
}

/** The sha256 (hex) of a file's bytes, as the trust record keeps it. */
export function contentHash(bytes: Uint8Array | string): string {
  // Bun's hasher is built in; importing node:crypto would cost every load ~5 ms.
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** Every recorded workspace; empty when nothing was trusted yet. Version 1 records read as entries without hashes. */
export function readTrustEntries(env: Env): TrustEntry[] {
  const file = trustFile(env);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new ConfigError(`cannot read the trust file: ${(error as Error).message}`, { file });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corrupt(file, "it is not valid JSON");
  }
  const current = trustRecordV2Schema.safeParse(value);
  if (current.success) return current.data.workspaces;
  const legacy = trustRecordV1Schema.safeParse(value);
  if (legacy.success) return legacy.data.workspaces.map((path) => ({ path }));
  throw corrupt(file, `expected {"version": 2, "workspaces": [{"path": absolute path, "files": {absolute path: sha256}}]}`);
}

/** The recorded canonical workspace paths; empty when nothing was trusted yet. */
export function readTrustedWorkspaces(env: Env): string[] {
  return readTrustEntries(env).map((entry) => entry.path);
}

function corrupt(file: string, why: string): ConfigError {
  return new ConfigError(`corrupt trust file (${why}); fix or delete it, then run "zero trust" again`, { file });
}

/**
 * The record of exactly this canonical directory, if it was trusted. Trust does not flow to
 * subdirectories: trusting a shared parent (say /tmp) must never vouch for a repository someone
 * else cloned or planted below it.
 */
export function trustEntryFor(workspace: string, env: Env): TrustEntry | undefined {
  const recorded = readTrustEntries(env);
  if (recorded.length === 0) return undefined;
  const canonical = canonicalPath(workspace);
  return recorded.find((entry) => entry.path === canonical);
}

/** True when exactly this canonical directory was trusted (whatever its files hold now). */
export function isWorkspaceTrusted(workspace: string, env: Env): boolean {
  return trustEntryFor(workspace, env) !== undefined;
}

/**
 * Why a project file of a trusted workspace must not be loaded: its content is not what was
 * trusted. Undefined when the recorded hash matches `digest`.
 */
export function untrustedContent(entry: TrustEntry, file: string, digest: string): "legacy" | "changed" | "new" | undefined {
  if (entry.files === undefined) return "legacy";
  const recorded = Object.hasOwn(entry.files, file) ? entry.files[file] : undefined;
  if (recorded === undefined) return "new";
  return recorded === digest ? undefined : "changed";
}

/**
 * The project config file `zero trust` would record for this directory, with the hash of its
 * bytes: the nearest project file, when it belongs to this very directory. Undefined when the
 * directory has none of its own.
 */
export function ownProjectFile(workspace: string): { file: string; bytes: Buffer; sha256: string } | undefined {
  const canonical = canonicalPath(workspace);
  const found = findProjectConfig(canonical);
  if (found === undefined || projectRootOf(found) !== canonical) return undefined;
  const bytes = readFileSync(found);
  return { file: found, bytes, sha256: contentHash(bytes) };
}

/**
 * Why a directory (or a config file in it) cannot be trusted whatever the
 * record says: anyone else could have written it. Undefined when it is safe:
 * owned by the user (or root) and not writable by others.
 */
export function unsafeOwnership(paths: string[]): string | undefined {
  const uid = process.getuid?.();
  for (const path of paths) {
    let info;
    try {
      info = statSync(path);
    } catch {
      continue;
    }
    if ((info.mode & 0o002) !== 0) return `${path} is writable by every user`;
    if (uid !== undefined && info.uid !== uid && info.uid !== 0) return `${path} belongs to another user (uid ${info.uid})`;
  }
  return undefined;
}

/**
 * Records the canonical workspace path with the hashes of the project files reviewed there (by
 * default: its own project file as it is now, see ownProjectFile) and returns the path. A
 * workspace trusted again has its hashes replaced. The read-modify-write runs under the trust
 * lock, so concurrent `zero trust`/`zero init` processes never drop each other's records.
 */
export function trustWorkspace(workspace: string, env: Env, files?: Record<string, string>): string {
  const canonical = canonicalPath(workspace);
  let reviewed = files;
  if (reviewed === undefined) {
    const own = ownProjectFile(canonical);
    reviewed = own === undefined ? {} : { [own.file]: own.sha256 };
  }
  const entry: TrustEntry = { path: canonical, files: reviewed };
  const current = (recorded: TrustEntry[]) => recorded.some((known) => known.path === canonical && sameFiles(known.files, reviewed));
  if (current(readTrustEntries(env))) return canonical;
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  try {
    withFileLock(
      `${trustFile(env)}.lock`,
      () => {
        const recorded = readTrustEntries(env);
        if (current(recorded)) return;
        const index = recorded.findIndex((known) => known.path === canonical);
        const workspaces = [...recorded];
        if (index === -1) workspaces.push(entry);
        else workspaces[index] = entry;
        writePrivateFileAtomically(trustFile(env), `${JSON.stringify({ version: 2, workspaces }, null, 2)}\n`, dir);
      },
      { label: "trust lock" },
    );
  } catch (error) {
    if (error instanceof PrivateFileError) throw new ConfigError(error.message, { file: error.file });
    throw error;
  }
  return canonical;
}

function sameFiles(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  if (a === undefined) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key]);
}
