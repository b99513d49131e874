import type { RunHooks } from "../agent/run-hooks.ts";
import type { AgentProfile } from "../config/schema.ts";
import type { ToolSource } from "../session/tool-sources.ts";
import type { Tool } from "../tool/define.ts";
import { pluginRunHooks } from "./hooks.ts";
import { loadPlugins } from "./load.ts";

/** A process's plugins: their tools as a tool source, their hooks as every run's lifecycle hooks. */
export type PluginHost = { source: ToolSource; hooks: RunHooks };

/**
 * Starts loading `files` at once (in order, each once); both halves wait for that load, and both
 * fail with its error (a UsageError naming the file) when it failed.
 */
export function createPluginHost(files: readonly string[], agents: Readonly<Record<string, AgentProfile>>): PluginHost {
  const loading = loadPlugins(files, agents);
  loading.catch(() => undefined); // observed by ready(); never an unhandled rejection meanwhile
  let tools = new Map<string, Tool>();
  const source: ToolSource = {
    name: "plugins",
    async ready() {
      tools = new Map((await loading).flatMap((plugin) => plugin.tools.map((tool) => [tool.name, tool] as const)));
    },
    // Offered only when the agent lists the tool by name.
    tools: (agent) => agent.tools.flatMap((name) => tools.get(name) ?? []),
  };
  return { source, hooks: pluginRunHooks(loading) };
}
