import type { LoadedConfig } from "../../config/load.ts";
import { coreToolSource, type ToolSource } from "../../session/tool-sources.ts";
import type { CliIo } from "./io.ts";
import { cliMcpAccess } from "./mcp-access.ts";

/** One way a run's tools or instructions are extended (MCP servers, skills, plugins), with its lifetime. */
export type CliExtension = { sources: ToolSource[]; close(): Promise<void>; killNow(): void };

/**
 * Everything that extends the runs of a CLI process beside the core tools: each part decides
 * for itself whether it has anything to load (nothing is imported otherwise).
 */
export function cliExtensions(io: Pick<CliIo, "stderr" | "env">, loaded: LoadedConfig, options: { interactive: boolean; workspace: string }): CliExtension {
  const parts: CliExtension[] = [cliMcpAccess(io, loaded, options)];
  return {
    sources: [coreToolSource(), ...parts.flatMap((part) => part.sources)],
    close: async () => {
      await Promise.all(parts.map((part) => part.close()));
    },
    killNow: () => {
      for (const part of parts) part.killNow();
    },
  };
}
