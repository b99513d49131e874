import { existsSync } from "node:fs";
import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import type { EffectiveConfig } from "../../config/schema.ts";
import type { Message } from "../../protocol/messages.ts";
import { checkRestorable } from "../../session/resume.ts";
import type { CheckpointMeta } from "../../session/recorder.ts";
import type { SessionService } from "../../session/service.ts";
import type { SessionRow, Store } from "../../store/store.ts";
import { reportConfigNotices, type CliIo } from "../cli/io.ts";
import { cliSessionService, workspaceDatabaseFile } from "../cli/session-access.ts";
import { openWorkspaceStore } from "../cli/sessions-command.ts";
import { clientMcpServers, withClientServers } from "./mcp-servers.ts";

/** Everything one ACP session runs on: its own configuration, service, tools, plugins and MCP servers. */
export type AcpSessionHost = {
  service: SessionService;
  config: EffectiveConfig;
  /** A restored session's last checkpoint (load/resume), when it has one. */
  restored?: CheckpointMeta;
  /** The stored conversation of a session of this workspace (for `session/load`). */
  messages(sessionId: string): Message[];
  /** Stops what the session started (its MCP servers, children); the store keeps its checkpoint. */
  close(): Promise<void>;
};

export type OpenSessionRequest = {
  workspace: string;
  extraDirs: string[];
  /** The client's `mcpServers`, unchecked. */
  mcpServers: unknown;
  /** `session/load` / `session/resume`: the stored session to restore. */
  restore?: string;
};

export type AcpSessionHosts = {
  open(request: OpenSessionRequest): Promise<AcpSessionHost>;
  /** ACP sessions of a workspace, newest first: `limit` of them after the first `offset`. */
  list(workspace: string, page: { offset: number; limit: number }): SessionRow[];
};

/**
 * The CLI's ACP sessions: each loads the configuration of its canonical workspace (project config
 * only when trusted) and gets a session service of its own, so configuration, models, plugins,
 * tools, MCP servers (the configured ones and the client's) and store are the session's. A
 * restored session is checked against that configuration before anything starts.
 */
export function cliAcpSessionHosts(io: Pick<CliIo, "stderr" | "env">): AcpSessionHosts {
  const load = (workspace: string): LoadedConfig => {
    const loaded = loadConfig({ workspace, env: io.env });
    reportConfigNotices(io as CliIo, loaded);
    return loaded;
  };
  /** The workspace's store when it exists (nothing is created to look). */
  const existingStore = (loaded: LoadedConfig, workspace: string): Store | undefined => {
    if (!loaded.config.storage.enabled) return undefined;
    if (!existsSync(workspaceDatabaseFile(io.env, workspace, loaded))) return undefined;
    return openWorkspaceStore(io, loaded, workspace, io.env);
  };
  return {
    async open(request) {
      const loaded = load(request.workspace);
      const clientServers = clientMcpServers(request.mcpServers, loaded.config, request.workspace);
      let restored: CheckpointMeta | undefined;
      if (request.restore !== undefined) {
        // Before any MCP process starts: the session must be this surface's and workspace's, with the same agent and model.
        const store = existingStore(loaded, request.workspace);
        try {
          restored = checkRestorable(store, request.restore, { workspace: request.workspace, surface: "acp", config: loaded.config });
        } finally {
          store?.close();
        }
      }
      const config = withClientServers(loaded.config, clientServers);
      const built = cliSessionService(io, { ...loaded, config }, { workspace: request.workspace, extraDirs: request.extraDirs, overrides: {}, surface: "acp", interactive: true });
      return {
        service: built.service,
        config,
        ...(restored ? { restored } : {}),
        messages: (sessionId) => built.store()?.loadMessages(sessionId) ?? [],
        close: built.close,
      };
    },
    list(workspace, page) {
      const loaded = loadConfig({ workspace, env: io.env });
      const store = existingStore(loaded, workspace);
      try {
        return store?.listSessions({ workspace, surface: "acp", ...page }) ?? [];
      } finally {
        store?.close();
      }
    },
  };
}
