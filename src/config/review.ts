import { canonicalPath, isWithin } from "../util/paths.ts";
import type { Env } from "../util/env.ts";
import { finalizeConfig } from "./finalize.ts";
import { parseConfigLayer } from "./layer.ts";
import { formatKeyPath } from "./location.ts";
import { userLayers } from "./load.ts";
import { mergeLayers } from "./merge.ts";
import { projectRootOf } from "./paths.ts";
import { limitProjectPermissions, type IgnoredPermission } from "./permission.ts";
import type { McpServer, PermissionMode, ProviderType, ResolvedModel } from "./schema.ts";

// What trusting a project file hands over, for `zero trust` to show before it records the file:
// which endpoints get the user's keys, what commands and plugins would run, which prompt files the
// agents read, and which permission modes it sets (and which of those are ignored).

/** The variable each provider type reads its key from when a model names none (as src/llm resolves it). */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<ProviderType, string | undefined>> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  "openai-compatible": undefined,
  kimi: "KIMI_API_KEY",
  nebius: "NEBIUS_API_KEY",
  gateway: "AI_GATEWAY_API_KEY",
  "openai-codex": undefined,
};

export type ProjectReview = {
  file: string;
  root: string;
  /** Models whose endpoint, key or provider the file sets (their own entry, or the profile they use). */
  endpoints: Array<{ model: ResolvedModel; keyVariable?: string; setBy: string }>;
  /** MCP servers the file declares or changes, as they would run. */
  mcp: Array<{ id: string; server: McpServer }>;
  plugins: string[];
  /** Prompt files the file's agents read, absolute; `outside` when not inside the project directory. */
  promptFiles: Array<{ agent: string; path: string; outside: boolean }>;
  /** Every permission mode the file sets, applied or not. */
  permissions: Array<{ keyPath: string; mode: PermissionMode }>;
  /** Those (and a defaultAgent) that would widen the user's mode: ignored. */
  ignoredPermissions: IgnoredPermission[];
  /** The root agent, when the file changes it (and it applies). */
  defaultAgent?: string;
  /** The variable web search would send to Brave Search, when the file sets it. */
  webSearchKey?: string;
};

/**
 * Reviews the project file `file` whose content is `text`, as it would apply over the user's own
 * layers. Throws the ConfigError a load would throw when the file (or the result) is invalid.
 */
export function reviewProjectConfig(file: string, text: string, env: Env): ProjectReview {
  const root = projectRootOf(file);
  const lower = userLayers(env);
  const parsed = parseConfigLayer(file, text, "project");
  const limited = limitProjectPermissions(parsed, lower);
  const layers = [...lower, limited.layer];
  const { merged, origins } = mergeLayers(layers);
  const config = finalizeConfig(merged, origins, layers);
  const project = layers.length - 1;
  const data = limited.layer.data;
  const fromProject = (...path: string[]) => origins.find(path) === project;

  const endpoints: ProjectReview["endpoints"] = [];
  for (const [alias, model] of Object.entries(config.models)) {
    const setBy = fromProject("models", alias) ? `models.${alias}` : model.profile !== undefined && fromProject("providers", model.profile) ? `providers.${model.profile}` : undefined;
    if (setBy === undefined) continue;
    const keyVariable = model.apiKeyEnv ?? PROVIDER_KEY_VARIABLES[model.type];
    endpoints.push({ model, setBy, ...(keyVariable === undefined ? {} : { keyVariable }) });
  }
  const mcp = Object.entries(config.mcp)
    .filter(([id]) => fromProject("mcp", id))
    .map(([id, server]) => ({ id, server }));
  const promptFiles = Object.entries(data.agents ?? {}).flatMap(([agent, profile]) =>
    profile.promptFile === undefined ? [] : [{ agent, path: profile.promptFile, outside: !isWithin(root, canonicalPath(profile.promptFile)) }],
  );
  const permissions: ProjectReview["permissions"] = [];
  if (parsed.data.permissionMode !== undefined) permissions.push({ keyPath: "permissionMode", mode: parsed.data.permissionMode });
  for (const [agent, profile] of Object.entries(parsed.data.agents ?? {})) {
    if (profile.permissionMode !== undefined) permissions.push({ keyPath: formatKeyPath(["agents", agent, "permissionMode"]), mode: profile.permissionMode });
  }
  const lowerRoot = lower.reduce<string>((name, layer) => layer.data.defaultAgent ?? name, "build");
  return {
    file,
    root,
    endpoints,
    mcp,
    plugins: data.plugins ?? [],
    promptFiles,
    permissions,
    ignoredPermissions: limited.ignored,
    ...(data.defaultAgent !== undefined && data.defaultAgent !== lowerRoot ? { defaultAgent: data.defaultAgent } : {}),
    ...(data.webSearch?.apiKeyEnv !== undefined ? { webSearchKey: data.webSearch.apiKeyEnv } : {}),
  };
}
