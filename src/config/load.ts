import { statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { zeroEnv, type Env } from "../util/env.ts";
import { ConfigError } from "./errors.ts";
import { finalizeConfig } from "./finalize.ts";
import { defaultsLayer, readConfigLayer, type ConfigLayer } from "./layer.ts";
import { mergeLayers } from "./merge.ts";
import { findProjectConfig, projectRootOf, userConfigFile } from "./paths.ts";
import type { EffectiveConfig } from "./schema.ts";
import { isWorkspaceTrusted, unsafeOwnership } from "./trust.ts";

export type ConfigSource = { file: string; layer: "user" | "project" | "explicit" };

export type LoadedConfig = {
  config: EffectiveConfig;
  /** The files that were applied, lowest precedence first (the built-in defaults are not listed). */
  sources: ConfigSource[];
  /** A project file that exists but was not read: its directory is not trusted, or others can write it. */
  ignoredProjectFile?: string;
  /** Why it was not read, when ownership (not the trust record) stopped it. */
  ignoredBecause?: string;
  /** Whether the workspace's own configuration may be used (trust record or the ephemeral override). */
  trusted: boolean;
};

export type LoadConfigOptions = {
  /** Canonical workspace directory. */
  workspace: string;
  env: Env;
};

/**
 * Built-in defaults < user file < project layer. The project layer is the file named by
 * ZERO_CLI_CONFIG (trusted by being named) or else the nearest project file, read only when the
 * workspace is trusted; an untrusted project file is not even parsed. CLI flags apply later.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const { workspace, env } = options;
  const layers: ConfigLayer[] = [defaultsLayer(env)];
  const user = readConfigLayer(userConfigFile(env), "user", true);
  if (user !== undefined) layers.push(user);

  // The override is read from the environment on every load and never written anywhere.
  const override = zeroEnv(env, "TRUST_PROJECT_CONFIG") === "1";
  const trusted = override || isWorkspaceTrusted(workspace, env);
  let ignoredProjectFile: string | undefined;
  let ignoredBecause: string | undefined;
  const explicit = explicitConfigFile(env);
  if (explicit !== undefined) {
    layers.push(readConfigLayer(explicit, "explicit")!);
  } else {
    const found = findProjectConfig(workspace);
    // Trust attaches to where the file lives: trusting /a/sub never vouches for
    // a /a/zero-cli.jsonc (or a planted /tmp/zero-cli.jsonc) above it.
    if (found !== undefined && (override || isWorkspaceTrusted(projectRootOf(found), env))) {
      const root = projectRootOf(found);
      ignoredBecause = override ? undefined : unsafeOwnership([root, dirname(found), found]);
      if (ignoredBecause === undefined) layers.push(readConfigLayer(found, "project")!);
      else ignoredProjectFile = found;
    } else ignoredProjectFile = found;
  }

  const { merged, origins } = mergeLayers(layers);
  const config = finalizeConfig(merged, origins, layers);
  const sources = layers.flatMap((layer): ConfigSource[] =>
    layer.file === undefined || layer.source === "defaults" ? [] : [{ file: layer.file, layer: layer.source }],
  );
  if (ignoredProjectFile === undefined) return { config, sources, trusted };
  return { config, sources, ignoredProjectFile, ...(ignoredBecause ? { ignoredBecause } : {}), trusted };
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
