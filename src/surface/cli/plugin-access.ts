import type { AttachedRunHooks, RunHooks } from "../../agent/run-hooks.ts";
import type { LoadedConfig } from "../../config/load.ts";
import type { PluginHost } from "../../plugin/host.ts";
import type { ToolSource } from "../../session/tool-sources.ts";
import type { CliExtension } from "./extensions.ts";

const NOTHING: AttachedRunHooks = { loop: {}, start: async () => {}, failed: async () => {}, end: async () => {} };

/**
 * The configured plugins (`plugins`: absolute paths; a project's only once the workspace is
 * trusted — an untrusted project file is never even parsed) as a tool source and every run's
 * lifecycle hooks. They start loading at once, beside the rest of start-up; a run waits for them
 * before its first request, and a plugin that fails to load or check refuses every run (exit 2).
 * Without plugins, nothing of the plugin layer is imported.
 */
export function cliPluginAccess(loaded: LoadedConfig): CliExtension {
  const files = loaded.config.plugins;
  if (files.length === 0) return { sources: [], close: async () => {}, killNow: () => {} };
  let host: PluginHost | undefined;
  const loading = import("../../plugin/host.ts").then((module) => (host = module.createPluginHost(files, loaded.config.agents)));
  const source: ToolSource = {
    name: "plugins",
    async ready(agent) {
      await (await loading).source.ready!(agent);
    },
    tools: (agent) => host?.source.tools(agent) ?? [],
  };
  const hooks: RunHooks = {
    async ready() {
      await (await loading).hooks.ready();
    },
    // A run attaches after its preparation waited for `ready`.
    attach: (run, io) => host?.hooks.attach(run, io) ?? NOTHING,
  };
  // Plugins hold nothing zero could close: no hot reload, no unloading.
  return { sources: [source], hooks, close: async () => {}, killNow: () => {} };
}
