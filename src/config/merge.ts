import type { ConfigLayer } from "./layer.ts";
import type { KeyPath } from "./location.ts";
import type { AgentFile, ConfigFile, McpServerFile, ModelFile, ProviderProfileFile, WorkflowFile } from "./schema.ts";

// Layer merging. Later layers win. Every value remembers which layer set it last (its origin), so
// a problem found after merging still points at the file and key that caused it.

type Group<K extends keyof ConfigFile> = NonNullable<ConfigFile[K]>;

export type MergedConfig = {
  defaultAgent: string;
  workDepth: NonNullable<ConfigFile["workDepth"]>;
  permissionMode: NonNullable<ConfigFile["permissionMode"]>;
  providers: Record<string, ProviderProfileFile>;
  models: Record<string, ModelFile>;
  agents: Record<string, AgentFile>;
  workflows: Record<string, WorkflowFile>;
  multiAgent: Group<"multiAgent">;
  limits: Group<"limits">;
  context: { fallbackWindowTokens?: number; compaction: NonNullable<Group<"context">["compaction"]> };
  storage: Group<"storage">;
  goals: Group<"goals">;
  skills: Record<string, { path?: string; enabled?: boolean }>;
  mcp: Record<string, McpServerFile>;
  plugins: string[];
  webSearch: Group<"webSearch">;
};

/** Origin of each merged value: key path → index of the layer that set it last. */
export class Origins {
  private readonly byPath = new Map<string, number>();

  set(path: KeyPath, layer: number): void {
    this.byPath.set(path.join("\u001f"), layer);
  }

  /** The layer behind `path`: the most specific recorded prefix of it. */
  find(path: KeyPath): number | undefined {
    for (let depth = path.length; depth > 0; depth--) {
      const layer = this.byPath.get(path.slice(0, depth).join("\u001f"));
      if (layer !== undefined) return layer;
    }
    return undefined;
  }

  /** True when a configuration file (not the built-in defaults, layer 0) set exactly `path`. */
  setByFile(path: KeyPath): boolean {
    return (this.byPath.get(path.join("\u001f")) ?? 0) > 0;
  }
}

export function mergeLayers(layers: readonly ConfigLayer[]): { merged: MergedConfig; origins: Origins } {
  const origins = new Origins();
  const merged: MergedConfig = {
    defaultAgent: "build",
    workDepth: "medium",
    permissionMode: "ask",
    providers: {},
    models: {},
    agents: {},
    workflows: {},
    multiAgent: {},
    limits: {},
    context: { compaction: {} },
    storage: {},
    goals: {},
    skills: {},
    mcp: {},
    plugins: [],
    webSearch: {},
  };
  layers.forEach((layer, index) => mergeLayer(merged, layer.data, index, origins));
  merged.plugins = [...new Set(merged.plugins)];
  return { merged, origins };
}

function mergeLayer(merged: MergedConfig, file: ConfigFile, index: number, origins: Origins): void {
  for (const key of ["defaultAgent", "workDepth", "permissionMode"] as const) {
    if (file[key] === undefined) continue;
    (merged as Record<typeof key, unknown>)[key] = file[key];
    origins.set([key], index);
  }
  mergeEntries(merged.providers, file.providers, "providers", index, origins);
  mergeEntries(merged.agents, file.agents, "agents", index, origins, clearOtherPromptSource);
  mergeEntries(merged.mcp, file.mcp, "mcp", index, origins, replaceOnTransportChange);
  const skills = file.skills === undefined ? undefined : mapSkillShorthand(file.skills);
  mergeEntries(merged.skills, skills, "skills", index, origins);
  // A model alias is one identity (provider, endpoint, model id): a higher layer's entry replaces
  // the lower one whole, since mixing fields of two providers makes no sense. Workflows likewise.
  replaceEntries(merged.models, file.models, "models", index, origins);
  replaceEntries(merged.workflows, file.workflows, "workflows", index, origins);
  mergeFields(merged.multiAgent, file.multiAgent, ["multiAgent"], index, origins);
  mergeFields(merged.limits, file.limits, ["limits"], index, origins);
  mergeFields(merged.storage, file.storage, ["storage"], index, origins);
  mergeFields(merged.goals, file.goals, ["goals"], index, origins);
  mergeFields(merged.webSearch, file.webSearch, ["webSearch"], index, origins);
  if (file.context !== undefined) {
    const { compaction, ...rest } = file.context;
    mergeFields(merged.context, rest, ["context"], index, origins);
    mergeFields(merged.context.compaction, compaction, ["context", "compaction"], index, origins);
  }
  if (file.plugins !== undefined) merged.plugins.push(...file.plugins);
}

function mergeFields<T extends object>(target: T, source: T | undefined, prefix: KeyPath, index: number, origins: Origins): void {
  if (source === undefined) return;
  for (const [field, value] of Object.entries(source)) {
    if (value === undefined) continue;
    (target as Record<string, unknown>)[field] = value;
    origins.set([...prefix, field], index);
  }
}

/** Same-name entries merge field by field; `adjust` sees the lower entry and the incoming one. */
function mergeEntries<T extends object>(
  target: Record<string, T>,
  source: Record<string, T> | undefined,
  section: string,
  index: number,
  origins: Origins,
  adjust?: (lower: T, incoming: T) => T,
): void {
  if (source === undefined) return;
  for (const [name, incoming] of Object.entries(source)) {
    const lower = Object.hasOwn(target, name) ? target[name] : undefined;
    const base = lower === undefined ? ({} as T) : adjust === undefined ? { ...lower } : adjust({ ...lower }, incoming);
    mergeFields(base, incoming, [section, name], index, origins);
    target[name] = base;
    origins.set([section, name], index);
  }
}

function replaceEntries<T>(target: Record<string, T>, source: Record<string, T> | undefined, section: string, index: number, origins: Origins): void {
  if (source === undefined) return;
  for (const [name, entry] of Object.entries(source)) {
    target[name] = entry;
    origins.set([section, name], index);
  }
}

/** `prompt` and `promptFile` are one setting in two forms: setting either drops the other. */
function clearOtherPromptSource(lower: AgentFile, incoming: AgentFile): AgentFile {
  if (incoming.prompt !== undefined) delete lower.promptFile;
  if (incoming.promptFile !== undefined) delete lower.prompt;
  return lower;
}

/**
 * A layer that changes what a server IS (its transport, command, arguments, working directory or
 * URL) starts from a clean entry:
 * nothing of the lower layer's entry carries over — not its headers, env, arguments or OAuth
 * client — so a project file that points your server somewhere else never inherits the credentials
 * you gave the original. A layer that only flips `enabled` or adds settings merges as usual.
 */
function replaceOnTransportChange(lower: McpServerFile, incoming: McpServerFile): McpServerFile {
  const before = lower as { command?: string; args?: string[]; cwd?: string; url?: string };
  const redirected =
    lower.type !== incoming.type ||
    (incoming.type === "stdio" &&
      ((incoming.command !== undefined && incoming.command !== before.command) ||
        (incoming.args !== undefined && JSON.stringify(incoming.args) !== JSON.stringify(before.args ?? [])) ||
        (incoming.cwd !== undefined && incoming.cwd !== before.cwd))) ||
    (incoming.type === "http" && incoming.url !== undefined && incoming.url !== before.url);
  return redirected ? ({ type: incoming.type } as McpServerFile) : lower;
}

/** A bare string is shorthand for an enabled skill at that path. */
function mapSkillShorthand(skills: NonNullable<ConfigFile["skills"]>): Record<string, { path?: string; enabled?: boolean }> {
  const out: Record<string, { path?: string; enabled?: boolean }> = {};
  for (const [id, skill] of Object.entries(skills)) out[id] = typeof skill === "string" ? { path: skill, enabled: true } : skill;
  return out;
}
