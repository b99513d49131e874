import { lstatSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { zeroEnv, type Env } from "../util/env.ts";
import { ConfigError } from "./errors.ts";
import { canonicalPath } from "../util/paths.ts";

const APP_DIR = "zero-cli";

/**
 * Project configuration file names, most preferred first. The `devout` names are deprecated
 * locations kept so older checkouts keep working.
 */
export const PROJECT_CONFIG_CANDIDATES = [
  "zero-cli.jsonc",
  ".zero-cli/zero-cli.jsonc",
  ".zero-cli/config.jsonc",
  "devout.jsonc",
  ".devout/devout.jsonc",
  ".devout/config.jsonc",
] as const;

function homeDir(env: Env): string {
  const home = env.HOME;
  return home !== undefined && isAbsolute(home) ? home : homedir();
}

/** XDG base directories count only when absolute, as the XDG spec requires. */
function xdgBase(env: Env, variable: string, fallback: string[]): string {
  const value = env[variable];
  return value !== undefined && isAbsolute(value) ? value : join(homeDir(env), ...fallback);
}

/** `$XDG_CONFIG_HOME/zero-cli`, else `~/.config/zero-cli`. */
export function configDir(env: Env): string {
  return join(xdgBase(env, "XDG_CONFIG_HOME", [".config"]), APP_DIR);
}

/**
 * The base of zero's private state: `ZERO_CLI_STATE_DIR` when set (it must be absolute),
 * else `$XDG_STATE_HOME/zero-cli`, else `~/.local/state/zero-cli`. Per-workspace state lives
 * in a hashed subdirectory (see store/state.ts).
 */
export function stateDir(env: Env): string {
  const explicit = zeroEnv(env, "STATE_DIR");
  if (explicit !== undefined) {
    if (!isAbsolute(explicit)) throw new ConfigError(`ZERO_CLI_STATE_DIR must be an absolute path, got "${explicit}"`);
    // zero's private state must not live where someone else controls the directory.
    const info = lstatSync(explicit, { throwIfNoEntry: false });
    const uid = process.getuid?.();
    if (info !== undefined && (info.isSymbolicLink() || !info.isDirectory())) {
      throw new ConfigError(`ZERO_CLI_STATE_DIR (${explicit}) must be a directory, not a symlink or a file`);
    }
    if (info !== undefined && uid !== undefined && info.uid !== uid) {
      throw new ConfigError(`ZERO_CLI_STATE_DIR (${explicit}) belongs to another user (uid ${info.uid}); use a directory you own`);
    }
    return explicit;
  }
  return join(xdgBase(env, "XDG_STATE_HOME", [".local", "state"]), APP_DIR);
}

export function userConfigFile(env: Env): string {
  return join(configDir(env), "config.jsonc");
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false; // ENOTDIR (a file named like a candidate's directory), EACCES: not a config here
  }
}

/** The candidate files present directly in `dir`, in precedence order (for `init`'s refusal). */
export function existingProjectConfigs(dir: string): string[] {
  return PROJECT_CONFIG_CANDIDATES.map((name) => join(dir, name)).filter(isRegularFile);
}

/**
 * The nearest project configuration: walking from the canonical workspace up to `/`, the first
 * directory holding any candidate decides, and within it the most preferred candidate wins.
 */
/** The directory a project config file belongs to (the one holding `zero-cli.jsonc` or `.zero-cli/`). */
export function projectRootOf(file: string): string {
  const dir = dirname(file);
  const base = dir.split("/").at(-1);
  return base === ".zero-cli" || base === ".devout" ? dirname(dir) : dir;
}

export function findProjectConfig(workspace: string): string | undefined {
  let dir = canonicalPath(workspace);
  for (;;) {
    for (const name of PROJECT_CONFIG_CANDIDATES) {
      const candidate = join(dir, name);
      if (isRegularFile(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
