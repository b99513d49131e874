import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../config/paths.ts";
import type { Env } from "../util/env.ts";

/** Per-workspace state lives under a hash of the canonical workspace path. */
export function workspaceHash(workspace: string): string {
  return createHash("sha256").update(workspace).digest("hex").slice(0, 16);
}

/** `<state base>/<workspace hash>`: holds zero-cli.db and artifacts/. */
export function workspaceStateDir(env: Env, workspace: string): string {
  return join(stateDir(env), workspaceHash(workspace));
}

/**
 * Creates (or checks) a private directory: mode 0700, a real directory (not a
 * symlink) owned by the current user. Anything else is refused: zero's state
 * must not be redirected or readable by others.
 */
export function ensurePrivateDir(path: string): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const info = lstatSync(path);
  if (info.isSymbolicLink() || !info.isDirectory()) throw new Error(`${path} is not a directory (refusing a symlink or file as private state)`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new Error(`${path} is owned by another user; refusing to keep private state there`);
  if ((info.mode & 0o077) !== 0) chmodSync(path, 0o700);
  return path;
}
