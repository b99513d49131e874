import { existsSync } from "node:fs";
import { join } from "node:path";
import type { LoadedConfig } from "../../config/load.ts";
import type { SessionSurface, Store } from "../../store/store.ts";
import { databaseFileName } from "../../store/db.ts";
import { workspaceStateDir } from "../../store/state.ts";
import { createSessionService, type SessionService } from "../../session/service.ts";
import type { RunOverrides } from "../../session/run.ts";
import type { CliIo } from "./io.ts";
import type { SkillCatalog } from "../../skill/discover.ts";
import { cliExtensions } from "./extensions.ts";
import { openWorkspaceStore } from "./sessions-command.ts";

/** Where a workspace's database is (whether or not it exists yet). */
export function workspaceDatabaseFile(env: CliIo["env"], workspace: string, loaded: LoadedConfig): string {
  return join(workspaceStateDir(env, workspace), databaseFileName(loaded.config.storage.path));
}

// One process exit listener for every live service (an ACP server holds one per session).
const exitHandlers = new Set<() => void>();
const runExitHandlers = () => {
  for (const handler of exitHandlers) {
    try {
      handler();
    } catch {
      // one service's cleanup failing never keeps the others from theirs
    }
  }
};

/**
 * The CLI's session service for one workspace: the store is opened on first
 * need (so a run refused before it starts leaves no state directory) and
 * closed by `close`. `skills` is the catalog found at start-up (the TUI's menus reuse it).
 */
export function cliSessionService(
  io: Pick<CliIo, "stderr" | "env">,
  loaded: LoadedConfig,
  options: { workspace: string; extraDirs: string[]; overrides: RunOverrides; surface: SessionSurface; interactive?: boolean },
): { service: SessionService; store(): Store | undefined; close(): Promise<void>; skills?: SkillCatalog } {
  let store: Store | undefined;
  let opened = false;
  const dbFile = () => workspaceDatabaseFile(io.env, options.workspace, loaded);
  const open = () => {
    if (!opened) {
      store = openWorkspaceStore(io, loaded, options.workspace, io.env); // a failure is retried, never silently skipped
      opened = true;
    }
    return store;
  };
  // Host bridges have no one to open a browser: an MCP login they would need fails with a hint.
  const extensions = cliExtensions(io, loaded, { interactive: options.surface !== "host", workspace: options.workspace });
  const service = createSessionService({
    config: loaded.config,
    env: io.env,
    workspace: options.workspace,
    extraDirs: options.extraDirs,
    surface: options.surface,
    overrides: options.overrides,
    ...(options.interactive ? { interactive: true } : {}),
    log: (line) => io.stderr(line),
    toolSources: extensions.sources,
    ...(extensions.hooks ? { runHooks: extensions.hooks } : {}),
    store: {
      enabled: loaded.config.storage.enabled,
      exists: () => opened || existsSync(dbFile()),
      open,
    },
  });
  // Isolated child workspaces (worktrees, scratch dirs) never outlive the process, also when a
  // second Ctrl-C exits at once.
  const onExit = () => {
    service.shutdownSync();
    extensions.killNow();
  };
  exitHandlers.add(onExit);
  if (exitHandlers.size === 1) process.on("exit", runExitHandlers);
  return {
    service,
    store: open,
    ...(extensions.skills ? { skills: extensions.skills } : {}),
    async close() {
      await service.shutdown();
      await extensions.close();
      exitHandlers.delete(onExit);
      if (exitHandlers.size === 0) process.off("exit", runExitHandlers);
      store?.close();
    },
  };
}
