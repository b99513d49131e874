import type { LoadedConfig } from "../../config/load.ts";
import type { McpHub } from "../../mcp/hub.ts";
import type { ToolSource } from "../../session/tool-sources.ts";
import type { CliExtension } from "./extensions.ts";
import type { CliIo } from "./io.ts";

/**
 * The process's MCP servers as a tool source. They start connecting at once, side by side with
 * everything else start-up does; a run waits for them (each within its own bound) before its
 * first request. Without servers any agent uses, nothing of the MCP client is even loaded.
 */
export function cliMcpAccess(io: Pick<CliIo, "stderr" | "env">, loaded: LoadedConfig, options: { interactive: boolean }): CliExtension {
  const config = loaded.config;
  const used = Object.values(config.agents).some((agent) => agent.mcpServers.some((id) => config.mcp[id]?.enabled));
  if (!used) return { sources: [], close: async () => {}, killNow: () => {} };
  let hub: McpHub | undefined;
  let closed = false;
  const loading = import("../../mcp/hub.ts").then((module) => {
    hub = module.createMcpHub({ config, env: io.env, log: (line) => io.stderr(line), interactive: options.interactive });
    // The root agent's servers start at once, beside the rest of start-up; other agents' servers
    // (delegated children) connect when a run of theirs prepares.
    if (!closed) void hub.start(config.agents[config.defaultAgent]?.mcpServers ?? []);
    return hub;
  });
  const source: ToolSource = {
    name: "mcp",
    async ready(agent) {
      await (await loading).source.ready!(agent);
    },
    tools: (agent) => hub?.source.tools(agent) ?? [],
    notices: (agent) => hub?.source.notices?.(agent) ?? [],
    content: (agent) => hub?.source.content?.(agent),
    instructions: (agent) => hub?.source.instructions?.(agent),
  };
  return {
    sources: [source],
    async close() {
      closed = true;
      await (await loading).close();
    },
    killNow: () => hub?.killNow(),
  };
}
