import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Env } from "../util/env.ts";
import { builtInDefaults } from "./defaults.ts";
import { ConfigError } from "./errors.ts";
import { createLocator, withoutBom, type Locator } from "./location.ts";
import type { AgentFile, ConfigFile, McpServerFile, SkillFile } from "./schema.ts";
import { parseJsonc, validateConfigFile } from "./validate.ts";

export type LayerSource = "defaults" | "user" | "project" | "explicit";

/** One validated configuration layer: migrated to version 2, relative paths already absolute. */
export type ConfigLayer = {
  source: LayerSource;
  /** Absent for the built-in defaults. */
  file?: string;
  locate?: Locator;
  data: ConfigFile;
};

export function defaultsLayer(env: Env): ConfigLayer {
  return { source: "defaults", data: builtInDefaults(env) };
}

/** Reads one file; `undefined` when `optional` and the file does not exist. */
export function readConfigLayer(file: string, source: Exclude<LayerSource, "defaults">, optional = false): ConfigLayer | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (optional && code === "ENOENT") return undefined;
    const why = code === "ENOENT" ? "file not found" : code === "EISDIR" ? "is a directory, not a file" : (error as Error).message;
    throw new ConfigError(`cannot read configuration: ${why}`, { file });
  }
  return parseConfigLayer(file, text, source);
}

/** Validates text already read from `file` (a project file is read once: the bytes hashed are the bytes parsed). */
export function parseConfigLayer(file: string, text: string, source: Exclude<LayerSource, "defaults">): ConfigLayer {
  const validated = validateConfigFile(file, text, parseJsonc(file, text));
  const data = resolveRelativePaths(migrateToVersion2(validated), dirname(file));
  return { source, file, locate: createLocator(withoutBom(text)), data };
}

/** Version 1 used other names for three of the core tools. */
export const VERSION_1_TOOL_NAMES: Readonly<Record<string, string>> = { search: "find", apply_patch: "write", exec: "run" };

/**
 * Renames version 1 tool names in place: a tool list keeps the positions it has in the file, so a
 * problem found after merging still points at the right element. Duplicates go in finalize.
 */
export function migrateToVersion2(file: ConfigFile): ConfigFile {
  if (file.version !== 1 || file.agents === undefined) return { ...file, version: 2 };
  const agents: Record<string, AgentFile> = {};
  for (const [name, agent] of Object.entries(file.agents)) {
    const tools = agent.tools?.map((tool) => (Object.hasOwn(VERSION_1_TOOL_NAMES, tool) ? VERSION_1_TOOL_NAMES[tool]! : tool));
    agents[name] = tools === undefined ? agent : { ...agent, tools };
  }
  return { ...file, version: 2, agents };
}

/**
 * Paths in a file mean paths next to that file, whichever directory zero runs from: prompt files,
 * skills, plugins, MCP stdio working directories and `./`/`../` stdio commands.
 */
export function resolveRelativePaths(file: ConfigFile, dir: string): ConfigFile {
  const out: ConfigFile = { ...file };
  if (file.agents !== undefined) {
    out.agents = mapValues(file.agents, (agent) =>
      agent.promptFile === undefined ? agent : { ...agent, promptFile: resolve(dir, agent.promptFile) },
    );
  }
  if (file.skills !== undefined) out.skills = mapValues(file.skills, (skill) => resolveSkill(skill, dir));
  if (file.plugins !== undefined) out.plugins = file.plugins.map((plugin) => resolve(dir, plugin));
  if (file.mcp !== undefined) out.mcp = mapValues(file.mcp, (server) => resolveMcpServer(server, dir));
  return out;
}

function resolveSkill(skill: SkillFile, dir: string): SkillFile {
  if (typeof skill === "string") return resolve(dir, skill);
  return skill.path === undefined ? skill : { ...skill, path: resolve(dir, skill.path) };
}

function resolveMcpServer(server: McpServerFile, dir: string): McpServerFile {
  if (server.type !== "stdio") return server;
  const resolved = { ...server };
  if (server.cwd !== undefined) resolved.cwd = resolve(dir, server.cwd);
  // Bare names stay bare: they are looked up on the safe PATH at launch.
  if (server.command !== undefined && /^\.\.?\//.test(server.command)) resolved.command = resolve(dir, server.command);
  return resolved;
}

function mapValues<T, U>(record: Record<string, T>, map: (value: T) => U): Record<string, U> {
  const out: Record<string, U> = {};
  for (const [key, value] of Object.entries(record)) out[key] = map(value);
  return out;
}
