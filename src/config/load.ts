import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { zeroEnv, type Env } from "../util/env.ts";
import { canonicalPath } from "../util/paths.ts";
import { ConfigError } from "./errors.ts";
import { finalizeConfig } from "./finalize.ts";
import { defaultsLayer, parseConfigLayer, readConfigLayer, type ConfigLayer } from "./layer.ts";
import { mergeLayers } from "./merge.ts";
import { findProjectConfig, projectRootOf, userConfigFile } from "./paths.ts";
import { limitProjectPermissions, type IgnoredPermission } from "./permission.ts";
import type { EffectiveConfig } from "./schema.ts";
import { contentHash, isWorkspaceTrusted, trustEntryFor, unsafeOwnership, untrustedContent } from "./trust.ts";

export type ConfigSource = { file: string; layer: "user" | "project" | "explicit" };

export type LoadedConfig = {
  config: EffectiveConfig;
  /** The files that were applied, lowest precedence first (the built-in defaults are not listed). */
  sources: ConfigSource[];
  /**
   * A project file that exists but was not read: its directory is not trusted, others can write
   * it, or its content is not what was trusted.
   */
  ignoredProjectFile?: string;
  /** Why it was not read, when its directory is trusted but ownership or a changed content stopped it. */
  ignoredBecause?: string;
  /** Whether the workspace's own configuration may be used (trust record or the ephemeral override). */
  trusted: boolean;
  /** Permission settings of the project file that were not applied: they would widen the user's mode. */
  ignoredPermissions: IgnoredPermission[];
};

export type LoadConfigOptions = {
  /** Canonical workspace directory. */
  workspace: string;
  env: Env;
};

/** The layers that are the user's own: the built-in defaults and the user file. */
export function userLayers(env: Env): ConfigLayer[] {
  const layers: ConfigLayer[] = [defaultsLayer(env)];
  const user = readConfigLayer(userConfigFile(env), "user", true);
  if (user !== undefined) layers.push(user);
  return layers;
}

/**
 * Built-in defaults < user file < project layer. The project layer is the file named by
 * ZERO_CLI_CONFIG (trusted by being named) or else the nearest project file, read only when the
 * workspace is trusted and the file's content hash is the one recorded when it was trusted; an
 * untrusted project file is not even parsed. A project file's permission settings may narrow the
 * user's mode, never widen it (see limitProjectPermissions). CLI flags apply later.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const { workspace, env } = options;
  const layers = userLayers(env);

  // The override is read from the environment on every load and never written anywhere.
  const override = zeroEnv(env, "TRUST_PROJECT_CONFIG") === "1";
  const trusted = override || isWorkspaceTrusted(workspace, env);
  let ignoredProjectFile: string | undefined;
  let ignoredBecause: string | undefined;
  let ignoredPermissions: IgnoredPermission[] = [];
  const explicit = explicitConfigFile(env);
  if (explicit !== undefined) {
    layers.push(readConfigLayer(explicit, "explicit")!);
  } else {
    const found = findProjectConfig(workspace);
    // Trust attaches to where the file lives: trusting /a/sub never vouches for
    // a /a/zero-cli.jsonc (or a planted /tmp/zero-cli.jsonc) above it.
    const root = found === undefined ? undefined : projectRootOf(found);
    const entry = root === undefined || override ? undefined : trustEntryFor(root, env);
    if (found !== undefined && root !== undefined && (override || entry !== undefined)) {
      ignoredBecause = override ? undefined : unsafeOwnership([root, dirname(found), found]);
      if (ignoredBecause === undefined) {
        // Read once: the bytes compared with the recorded hash are the bytes parsed.
        const bytes = readProjectFile(found);
        const mismatch = entry === undefined ? undefined : untrustedContent(entry, found, contentHash(bytes));
        if (mismatch !== undefined) {
          ignoredBecause = mismatchNotice(mismatch, root, workspace);
        } else {
          const limited = limitProjectPermissions(parseConfigLayer(found, bytes.toString("utf8"), "project"), layers);
          layers.push(limited.layer);
          ignoredPermissions = limited.ignored;
        }
      }
      if (ignoredBecause !== undefined) ignoredProjectFile = found;
    } else ignoredProjectFile = found;
  }

  const { merged, origins } = mergeLayers(layers);
  const config = finalizeConfig(merged, origins, layers);
  const sources = layers.flatMap((layer): ConfigSource[] =>
    layer.file === undefined || layer.source === "defaults" ? [] : [{ file: layer.file, layer: layer.source }],
  );
  if (ignoredProjectFile === undefined) return { config, sources, trusted, ignoredPermissions };
  return { config, sources, ignoredProjectFile, ...(ignoredBecause ? { ignoredBecause } : {}), trusted, ignoredPermissions };
}

function readProjectFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "file not found" : code === "EISDIR" ? "is a directory, not a file" : (error as Error).message;
    throw new ConfigError(`cannot read configuration: ${why}`, { file });
  }
}

/** Why a trusted directory's file is not loaded, and what to do: one line, after the file name. */
function mismatchNotice(mismatch: "legacy" | "changed" | "new", root: string, workspace: string): string {
  const command = canonicalPath(workspace) === root ? "zero trust" : `zero trust --cwd ${root}`;
  const what =
    mismatch === "changed"
      ? "it changed since it was trusted"
      : mismatch === "new"
        ? `it was not reviewed when ${root} was trusted`
        : `${root} was trusted before zero recorded what was reviewed`;
  return `${what}; review it, then run '${command}' again`;
}

/** ZERO_CLI_CONFIG (or the deprecated DEVOUT_CONFIG): an absolute path to an existing regular file. */
function explicitConfigFile(env: Env): string | undefined {
  const value = zeroEnv(env, "CONFIG");
  if (value === undefined) return undefined;
  const variable = env.ZERO_CLI_CONFIG === value ? "ZERO_CLI_CONFIG" : "DEVOUT_CONFIG";
  if (!isAbsolute(value)) {
    throw new ConfigError(`${variable} must be an absolute path to a configuration file, got "${value}"`);
  }
  const file = resolve(value);
  let isFile = false;
  try {
    isFile = statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    isFile = false;
  }
  if (!isFile) throw new ConfigError(`${variable} names no regular file`, { file });
  return file;
}
