import type { AgentProfile } from "../config/schema.ts";
import type { McpContentAccess, Tool } from "../tool/define.ts";
import { CORE_TOOL_NAMES, createToolRegistry } from "../tool/registry.ts";
import { UsageError } from "../util/errors.ts";

/**
 * Where a run's tools come from: the core tools, and sources above the session (MCP servers,
 * plugins) that decide per agent what it may have. A run's tool set is built from all.
 */
export type ToolSource = {
  name: string;
  /** Settles when the source knows this agent's tools (its servers connected, or given up on). */
  ready?(agent: AgentProfile): Promise<void>;
  /** The tools this agent may have from this source (the core source offers all; the agent's list picks). */
  tools(agent: AgentProfile): Iterable<Tool>;
  /** What the run should tell about this agent's part of the source (a server that is unavailable). */
  notices?(agent: AgentProfile): string[];
  /** `read mcp://content/…` for this agent, when it may use servers with resources or prompts. */
  content?(agent: AgentProfile): McpContentAccess | undefined;
  /** A line for the system prompt, when the agent should know something about this source. */
  instructions?(agent: AgentProfile): string | undefined;
  /** Directories this agent may read but never write (skill packages), absolute. */
  readRoots?(agent: AgentProfile): string[];
};

export function coreToolSource(): ToolSource {
  return { name: "core", tools: () => createToolRegistry().values() };
}

/** Core tools that are named in profiles but not built yet: offered by no source, shown as such. */
export function unavailableCoreTools(): string[] {
  const built = new Set(createToolRegistry().keys());
  return CORE_TOOL_NAMES.filter((name) => !built.has(name));
}

/**
 * The agent's tools: the core tools its allowlist names, then whatever the other sources give
 * this agent (they apply its `mcpServers`, `mcp:` entries and plugin tool names themselves). A
 * name no source provides is refused (the config check refused most already, with file:line;
 * plugin tool names are only known once the plugins are loaded).
 */
export function buildToolSet(agent: AgentProfile, sources: readonly ToolSource[]): Map<string, Tool> {
  const core = sources.find((source) => source.name === "core") ?? coreToolSource();
  const available = new Map<string, Tool>();
  for (const tool of core.tools(agent)) available.set(tool.name, tool);
  const offered = new Map<string, Tool>();
  for (const source of sources) {
    if (source === core) continue;
    for (const tool of source.tools(agent)) if (!offered.has(tool.name)) offered.set(tool.name, tool);
  }
  const tools = new Map<string, Tool>();
  for (const name of agent.tools) {
    const tool = available.get(name);
    if (tool) tools.set(name, tool);
    // `mcp:` entries narrow what the MCP source offers; they are not tools themselves.
    else if (!(CORE_TOOL_NAMES as readonly string[]).includes(name) && !name.startsWith("mcp:") && !offered.has(name)) {
      throw new UsageError(`agents.${agent.name}.tools: no tool source provides '${name}' (known tools: ${[...available.keys(), ...unavailableCoreTools(), ...offered.keys()].join(", ")})`);
    }
  }
  for (const [name, tool] of offered) if (!tools.has(name)) tools.set(name, tool);
  return tools;
}

/** What the sources give one agent's run: its tools, notices for the run, content access and prompt lines. */
export type AgentTools = { tools: Map<string, Tool>; notices: Array<{ source: string; message: string }>; content?: McpContentAccess; instructions: string[]; readRoots: string[] };

/** Waits for every source to be ready, then collects what it gives this agent. */
export async function toolsForAgent(agent: AgentProfile, sources: readonly ToolSource[]): Promise<AgentTools> {
  await Promise.all(sources.map((source) => source.ready?.(agent)));
  const tools = buildToolSet(agent, sources);
  const notices = sources.flatMap((source) => (source.notices?.(agent) ?? []).map((message) => ({ source: source.name, message })));
  const instructions = sources.map((source) => source.instructions?.(agent)).filter((line): line is string => line !== undefined);
  const content = sources.map((source) => source.content?.(agent)).find((access) => access !== undefined);
  const readRoots = [...new Set(sources.flatMap((source) => source.readRoots?.(agent) ?? []))];
  return { tools, notices, instructions, readRoots, ...(content ? { content } : {}) };
}
