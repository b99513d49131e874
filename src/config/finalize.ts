import { dirname } from "node:path";
import { DEFAULT_MODEL_ALIAS } from "./defaults.ts";
import { ConfigError } from "./errors.ts";
import { configErrorAt, formatKeyPath, type KeyPath } from "./location.ts";
import { mcpToolServer, PLUGIN_TOOL_NAME, PROFILE_CORE_TOOLS } from "./enforcement.ts";
import { VERSION_1_TOOL_NAMES, type ConfigLayer } from "./layer.ts";
import type { MergedConfig, Origins } from "./merge.ts";
import {
  PROVIDER_TYPES,
  type AgentProfile,
  type DefaultContext,
  type EffectiveConfig,
  type McpServer,
  type ProviderProfile,
  type ProviderType,
  type ResolvedModel,
  type Workflow,
} from "./schema.ts";
import { normalizeWorkflowSteps } from "./workflows.ts";

/** "recent" without a count means the last six turns. */
const DEFAULT_RECENT_TURNS = 6;

/** Turns the merged layers into the effective configuration, checking every cross-reference. */
export function finalizeConfig(merged: MergedConfig, origins: Origins, layers: readonly ConfigLayer[]): EffectiveConfig {
  const fail = (path: KeyPath, problem: string, pointAt: "value" | "key" = "value"): never => {
    throw errorAt(layers, origins, path, problem, pointAt);
  };
  const providers = finalizeProviders(merged, fail);
  const models = materializeModels(merged, providers, fail);
  const agents = finalizeAgents(merged, models, fail);
  const workflows = finalizeWorkflows(merged, layers, origins, agents, fail);
  if (!Object.hasOwn(agents, merged.defaultAgent)) {
    fail(["defaultAgent"], `unknown agent "${merged.defaultAgent}" (agents: ${Object.keys(agents).join(", ")})`);
  }
  const compaction = required(merged.context.compaction);
  if (compaction.targetRatio >= compaction.triggerRatio) {
    fail(["context", "compaction", "targetRatio"], `must be below triggerRatio (${compaction.triggerRatio})`);
  }
  // A window that the reservations already fill leaves no room for any conversation.
  const reserved = compaction.reservedOutputTokens + compaction.safetyBufferTokens;
  const fallbackWindow = required(merged.context).fallbackWindowTokens;
  if (fallbackWindow <= reserved) {
    fail(["context", "fallbackWindowTokens"], `${fallbackWindow} tokens leave no room after the reserved output and safety buffer (${reserved} tokens)`);
  }
  for (const [alias, model] of Object.entries(models)) {
    if (model.contextWindow !== undefined && model.contextWindow <= reserved) {
      fail(["models", alias, "contextWindow"], `${model.contextWindow} tokens leave no room after context.compaction's reserved output and safety buffer (${reserved} tokens)`);
    }
  }
  const { maxDepth: legacyDepth, maxChildrenPerRun: legacyChildren, ...limits } = merged.limits;
  if (limits.maxCostUsd !== undefined) {
    // No built-in price table: a cost cap is only meaningful when every model an agent can run is priced.
    const unpriced = [...new Set(Object.values(agents).map((agent) => agent.model))].filter((alias) => models[alias]?.pricing === undefined).sort();
    if (unpriced.length > 0) {
      fail(["limits", "maxCostUsd"], `a cost cap needs pricing on every model an agent uses; unpriced: ${unpriced.map((alias) => `models.${alias}`).join(", ")} (add "pricing": {"inputPerMillionUsd", "outputPerMillionUsd"})`);
    }
  }
  const multiAgent = required(merged.multiAgent);
  return {
    version: 2,
    defaultAgent: merged.defaultAgent,
    workDepth: merged.workDepth,
    permissionMode: merged.permissionMode,
    providers,
    models,
    agents,
    workflows,
    multiAgent: {
      // Legacy limits aliases apply only where no file set the multiAgent field itself.
      maxDepth: !origins.setByFile(["multiAgent", "maxDepth"]) && legacyDepth !== undefined ? legacyDepth : multiAgent.maxDepth,
      maxConcurrent: multiAgent.maxConcurrent,
      maxChildrenPerAgent:
        !origins.setByFile(["multiAgent", "maxChildrenPerAgent"]) && legacyChildren !== undefined
          ? legacyChildren
          : multiAgent.maxChildrenPerAgent,
      defaultContext: normalizeDefaultContext(multiAgent.defaultContext),
      cancelChildrenWithParent: multiAgent.cancelChildrenWithParent,
      maxRetries: multiAgent.maxRetries,
    },
    limits: required(limits),
    context: { fallbackWindowTokens: required(merged.context).fallbackWindowTokens, compaction },
    storage: { enabled: required(merged.storage).enabled, path: storageFileName(merged.storage.path, fail) },
    goals: required(merged.goals),
    skills: finalizeSkills(merged, fail),
    mcp: finalizeMcp(merged, layers, origins, fail),
    plugins: merged.plugins,
    webSearch: required(merged.webSearch),
  };
}

type Fail = (path: KeyPath, problem: string, pointAt?: "value" | "key") => never;

/** A ConfigError at `path` in the file that last set it (or its nearest recorded parent). */
export function errorAt(layers: readonly ConfigLayer[], origins: Origins, path: KeyPath, problem: string, pointAt: "value" | "key" = "value"): ConfigError {
  const layer = layers[origins.find(path) ?? 0];
  if (layer?.file === undefined || layer.locate === undefined) {
    return new ConfigError(`${problem} (in the built-in defaults)`, { keyPath: formatKeyPath(path) });
  }
  return configErrorAt(layer.file, layer.locate, path, problem, pointAt);
}

/** The built-in layer sets every group field, so after merging these are complete. */
function required<T extends object>(group: T): { [K in keyof T]-?: Exclude<T[K], undefined> } {
  return group as { [K in keyof T]-?: Exclude<T[K], undefined> };
}

/** Copies an object without its undefined fields, so optional keys are absent rather than undefined. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

function finalizeProviders(merged: MergedConfig, fail: Fail): Record<string, ProviderProfile> {
  const providers: Record<string, ProviderProfile> = {};
  for (const [name, profile] of Object.entries(merged.providers)) {
    if (profile.type === undefined) fail(["providers", name, "type"], "is required (openai, anthropic, kimi, nebius or openai-compatible)");
    const { apiKey: _ignored, ...fields } = profile;
    providers[name] = defined({ ...fields, type: profile.type!, headers: profile.headers ?? {} });
  }
  return providers;
}

function isProviderType(value: string): value is ProviderType {
  return (PROVIDER_TYPES as readonly string[]).includes(value);
}

/**
 * A model names a built-in provider type or a profile (a profile of the same name as a built-in
 * type wins, so a profile called `openai` can add headers to every such model). The profile's
 * type, baseURL and apiKeyEnv fill what the model leaves out; headers combine, the model's winning.
 */
function materializeModels(merged: MergedConfig, providers: Record<string, ProviderProfile>, fail: Fail): Record<string, ResolvedModel> {
  const models: Record<string, ResolvedModel> = {};
  for (const [alias, model] of Object.entries(merged.models)) {
    const profile = Object.hasOwn(providers, model.provider) ? providers[model.provider] : undefined;
    if (profile === undefined && !isProviderType(model.provider)) {
      const names = Object.keys(providers);
      const known = `built-in: ${PROVIDER_TYPES.join(", ")}${names.length > 0 ? `; profiles: ${names.join(", ")}` : ""}`;
      fail(["models", alias, "provider"], `unknown provider "${model.provider}" (${known})`);
    }
    const { provider, ...fields } = model;
    const resolved: ResolvedModel = defined({
      ...fields,
      alias,
      type: profile?.type ?? (provider as ProviderType),
      profile: profile === undefined ? undefined : provider,
      baseURL: model.baseURL ?? profile?.baseURL,
      apiKeyEnv: model.apiKeyEnv ?? profile?.apiKeyEnv,
      headers: { ...profile?.headers, ...model.headers },
      settings: model.settings ?? {},
      capabilities: model.capabilities ?? ["text", "tools"],
    });
    if (resolved.type === "openai-compatible" && resolved.baseURL === undefined) {
      fail(["models", alias], "an openai-compatible model needs a baseURL, on the model or its provider profile");
    }
    models[alias] = resolved;
  }
  return models;
}

function finalizeAgents(merged: MergedConfig, models: Record<string, ResolvedModel>, fail: Fail): Record<string, AgentProfile> {
  const agents: Record<string, AgentProfile> = {};
  const names = Object.keys(merged.agents);
  const mcpServers = Object.keys(merged.mcp);
  for (const [name, agent] of Object.entries(merged.agents)) {
    const model = agent.model ?? DEFAULT_MODEL_ALIAS;
    if (!Object.hasOwn(models, model)) {
      fail(["agents", name, "model"], `unknown model alias "${model}" (aliases: ${Object.keys(models).join(", ")})`);
    }
    (agent.canDelegateTo ?? []).forEach((target, position) => {
      if (!names.includes(target)) fail(["agents", name, "canDelegateTo", position], `unknown agent "${target}" (agents: ${names.join(", ")})`);
    });
    (agent.mcpServers ?? []).forEach((server, position) => {
      if (!mcpServers.includes(server)) {
        fail(["agents", name, "mcpServers", position], `unknown MCP server "${server}" (${mcpServers.length > 0 ? `MCP servers: ${mcpServers.join(", ")}` : 'no MCP server is configured under "mcp"'})`);
      }
    });
    (agent.tools ?? []).forEach((tool, position) => {
      const problem = toolNameProblem(tool, mcpServers, { plugins: merged.plugins.length > 0 });
      if (problem !== undefined) fail(["agents", name, "tools", position], problem);
      // `mcp:` entries narrow a server the agent may use; they never grant one.
      const server = mcpToolServer(tool);
      if (problem === undefined && server !== undefined && !(agent.mcpServers ?? []).includes(server)) {
        fail(["agents", name, "tools", position], `"${tool}" names MCP server "${server}", which is not in agents.${name}.mcpServers (add it there to let the agent use the server)`);
      }
    });
    agents[name] = defined({
      ...agent,
      name,
      model,
      // A version 1 list may name one tool twice after renaming (`search` and `find`).
      tools: [...new Set(agent.tools ?? [])],
      skills: agent.skills ?? [],
      mcpServers: agent.mcpServers ?? [],
      canDelegateTo: agent.canDelegateTo ?? [],
      accepts: agent.accepts ?? [],
      workspaceMode: agent.workspaceMode ?? "shared-write",
    });
  }
  return agents;
}

/**
 * Why a profile's tool name is not one any tool source can provide: the six core capability tools,
 * or `mcp:<server>:<tool>` / `mcp:<server>:*` for a server configured under `mcp`. With plugins
 * configured, any other name a plugin tool could have is left to start-up, when the plugins are
 * loaded (a name none of them provides is refused then, naming the agent and the tool).
 */
export function toolNameProblem(tool: string, mcpServers: readonly string[], options: { plugins?: boolean } = {}): string | undefined {
  if ((PROFILE_CORE_TOOLS as readonly string[]).includes(tool)) return undefined;
  if (options.plugins && PLUGIN_TOOL_NAME.test(tool)) return undefined;
  const servers = mcpServers.length > 0 ? `MCP servers: ${mcpServers.join(", ")}` : `no MCP server is configured under "mcp"`;
  const server = mcpToolServer(tool);
  if (server !== undefined) return mcpServers.includes(server) ? undefined : `unknown MCP server "${server}" in "${tool}" (${servers})`;
  const renamed = Object.hasOwn(VERSION_1_TOOL_NAMES, tool) ? `; "${tool}" is the version 1 name of "${VERSION_1_TOOL_NAMES[tool]}"` : "";
  return `unknown tool "${tool}" (allowed: ${[...PROFILE_CORE_TOOLS, "mcp:<server>:<tool>", "mcp:<server>:*"].join(", ")}; ${servers})${renamed}`;
}

function finalizeWorkflows(
  merged: MergedConfig,
  layers: readonly ConfigLayer[],
  origins: Origins,
  agents: Record<string, AgentProfile>,
  fail: Fail,
): Record<string, Workflow> {
  const workflows: Record<string, Workflow> = {};
  for (const [name, workflow] of Object.entries(merged.workflows)) {
    const steps = normalizeWorkflowSteps(workflow.steps);
    steps.forEach((step, index) => {
      if (Object.hasOwn(agents, step.agent)) return;
      const written = layers[origins.find(["workflows", name]) ?? 0]?.data.workflows?.[name]?.steps[index];
      const path = typeof written === "string" ? ["workflows", name, "steps", index] : ["workflows", name, "steps", index, "agent"];
      fail(path, `unknown agent "${step.agent}" (agents: ${Object.keys(agents).join(", ")})`);
    });
    workflows[name] = defined({ description: workflow.description, steps });
  }
  return workflows;
}

function normalizeDefaultContext(value: NonNullable<MergedConfig["multiAgent"]["defaultContext"]>): DefaultContext {
  return value === "recent" ? { type: "recent", turns: DEFAULT_RECENT_TURNS } : value;
}

/** Only a bare file name is kept: configuration must not steer internal writes outside the state dir. */
function storageFileName(path: string | undefined, fail: Fail): string {
  const name = (path ?? "").split(/[\\/]/).filter((part) => part !== "").at(-1);
  if (name === undefined || name === "." || name === "..") return fail(["storage", "path"], "must name a database file, such as zero-cli.db");
  return name;
}

function finalizeSkills(merged: MergedConfig, fail: Fail): EffectiveConfig["skills"] {
  const skills: EffectiveConfig["skills"] = {};
  for (const [id, skill] of Object.entries(merged.skills)) {
    // `{ "enabled": false }` alone turns off a discovered package of that id: no path needed.
    if (skill.path === undefined && skill.enabled !== false) fail(["skills", id], "needs a path to its SKILL.md (no configuration layer gives one)");
    skills[id] = { path: skill.path ?? "", enabled: skill.enabled ?? true };
  }
  return skills;
}

function finalizeMcp(merged: MergedConfig, layers: readonly ConfigLayer[], origins: Origins, fail: Fail): Record<string, McpServer> {
  const servers: Record<string, McpServer> = {};
  for (const [id, server] of Object.entries(merged.mcp)) {
    if (server.type === "stdio") {
      if (server.command === undefined) fail(["mcp", id], "a stdio server needs a command");
      // The default working directory is that of the file that declared the command.
      const declaring = layers[origins.find(["mcp", id, "command"]) ?? 0]?.file;
      servers[id] = {
        type: "stdio",
        command: server.command!,
        args: server.args ?? [],
        cwd: server.cwd ?? (declaring === undefined ? "/" : dirname(declaring)),
        env: server.env ?? {},
        enabled: server.enabled ?? true,
        ...(server.startupTimeoutMs !== undefined ? { startupTimeoutMs: server.startupTimeoutMs } : {}),
      };
    } else {
      if (server.url === undefined) fail(["mcp", id], "an http server needs a url");
      servers[id] = {
        type: "http",
        url: server.url!,
        headers: server.headers ?? {},
        enabled: server.enabled ?? true,
        oauth: server.oauth ?? false,
        ...(server.startupTimeoutMs !== undefined ? { startupTimeoutMs: server.startupTimeoutMs } : {}),
      };
    }
  }
  return servers;
}
