import type { LoadedConfig } from "../../config/load.ts";
import { coreToolSource, type ToolSource } from "../../session/tool-sources.ts";
import type { CliIo } from "./io.ts";
import { cliMcpAccess } from "./mcp-access.ts";
import { cliPluginAccess } from "./plugin-access.ts";
import type { RunHooks } from "../../agent/run-hooks.ts";
import type { SkillCatalog } from "../../skill/discover.ts";
import { cliSkillAccess } from "./skills-command.ts";

/** One way a run's tools or instructions are extended (MCP servers, skills, plugins), with its lifetime. */
export type CliExtension = {
  sources: ToolSource[];
  close(): Promise<void>;
  killNow(): void;
  /** Lifecycle hooks of every run (plugins). */
  hooks?: RunHooks;
  /** The skill packages found at start-up (the TUI's `$` menu and `/skills` show them). */
  skills?: SkillCatalog;
};

/**
 * Everything that extends the runs of a CLI process beside the core tools: each part decides
 * for itself whether it has anything to load (nothing is imported otherwise).
 */
export function cliExtensions(io: Pick<CliIo, "stderr" | "env">, loaded: LoadedConfig, options: { interactive: boolean; workspace: string }): CliExtension {
  const parts: CliExtension[] = [cliSkillAccess(io, loaded, options), cliMcpAccess(io, loaded, options), cliPluginAccess(loaded)];
  return {
    sources: [coreToolSource(), ...parts.flatMap((part) => part.sources)],
    hooks: parts.find((part) => part.hooks)?.hooks,
    skills: parts.find((part) => part.skills)?.skills,
    close: async () => {
      await Promise.all(parts.map((part) => part.close()));
    },
    killNow: () => {
      for (const part of parts) part.killNow();
    },
  };
}
