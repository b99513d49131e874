import type { AgentProfile } from "../config/schema.ts";
import type { Tool } from "../tool/define.ts";
import { CORE_TOOL_NAMES, createToolRegistry } from "../tool/registry.ts";
import { UsageError } from "../util/errors.ts";

/**
 * Where a run's tools come from. Core tools today; MCP servers and plugins
 * add sources of their own, and a run's tool set is built from all of them.
 */
export type ToolSource = { name: string; tools(): Iterable<Tool> };

export function coreToolSource(): ToolSource {
  return { name: "core", tools: () => createToolRegistry().values() };
}

/** Core tools that are named in profiles but not built yet: offered by no source, shown as such. */
export function unavailableCoreTools(): string[] {
  const built = new Set(createToolRegistry().keys());
  return CORE_TOOL_NAMES.filter((name) => !built.has(name));
}

/**
 * The tools the agent's allowlist names, from the given sources. A name no
 * source can provide was already refused by the config check (file:line); MCP tools are not
 * offered until their source exists.
 */
export function buildToolSet(agent: AgentProfile, sources: readonly ToolSource[]): Map<string, Tool> {
  const available = new Map<string, Tool>();
  for (const source of sources) for (const tool of source.tools()) if (!available.has(tool.name)) available.set(tool.name, tool);
  const tools = new Map<string, Tool>();
  for (const name of agent.tools) {
    const tool = available.get(name);
    if (tool) tools.set(name, tool);
    // MCP names were checked against the configured servers when the config loaded; until the
    // MCP source exists they are not offered (and `zero agents` says so).
    else if (!(CORE_TOOL_NAMES as readonly string[]).includes(name) && !name.startsWith("mcp:")) {
      throw new UsageError(`agents.${agent.name}.tools: no tool source provides '${name}' (known tools: ${[...available.keys(), ...unavailableCoreTools()].join(", ")})`);
    }
  }
  return tools;
}
