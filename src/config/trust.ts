import { chmodSync, closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as z from "zod";
import type { Env } from "../util/env.ts";
import { canonicalPath } from "../util/paths.ts";
import { ConfigError } from "./errors.ts";
import { configDir } from "./paths.ts";

// Which workspaces may load their own project configuration. Trust is a user decision, so the record
// lives in the user's config directory, never in the workspace.

const trustRecordSchema = z.object({
  version: z.literal(1),
  workspaces: z.array(z.string().refine(isAbsolute, { error: "must be an absolute path" })),
});

export function trustFile(env: Env): string {
  return join(configDir(env), "trusted-workspaces.json");
}

/** The recorded canonical workspace paths; empty when nothing was trusted yet. */
export function readTrustedWorkspaces(env: Env): string[] {
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
  const result = trustRecordSchema.safeParse(value);
  if (!result.success) throw corrupt(file, `expected {"version": 1, "workspaces": [absolute paths]}`);
  return result.data.workspaces;
}

function corrupt(file: string, why: string): ConfigError {
  return new ConfigError(`corrupt trust file (${why}); fix or delete it, then run "zero trust" again`, { file });
}

/**
 * True when exactly this canonical directory was trusted. Trust does not flow
 * to subdirectories: trusting a shared parent (say /tmp) must never vouch for a
 * repository someone else cloned or planted below it.
 */
export function isWorkspaceTrusted(workspace: string, env: Env): boolean {
  const recorded = readTrustedWorkspaces(env);
  if (recorded.length === 0) return false;
  const canonical = canonicalPath(workspace);
  return recorded.includes(canonical);
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

/** Records the canonical workspace path (once) and returns it. */
export function trustWorkspace(workspace: string, env: Env): string {
  const canonical = canonicalPath(workspace);
  const recorded = readTrustedWorkspaces(env);
  if (recorded.includes(canonical)) return canonical;
  const record = { version: 1, workspaces: [...recorded, canonical] };
  writePrivateFileAtomically(trustFile(env), `${JSON.stringify(record, null, 2)}\n`, configDir(env));
  return canonical;
}

/**
 * Writes through an exclusive temp file in the same directory and renames it over the target, so a
 * reader sees the old or the new record, never half of one. Directory 0700, file 0600.
 */
function writePrivateFileAtomically(file: string, content: string, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  // Web Crypto is global; importing node:crypto would cost every load ~5 ms for a rare write.
  const temp = join(dir, `.trusted-workspaces.${process.pid}.${crypto.randomUUID()}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
