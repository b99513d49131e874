import type { LoadedConfig } from "../../config/load.ts";
import { loadConfig } from "../../config/load.ts";
import type { Env } from "../../util/env.ts";
import { openStore, type Store } from "../../store/store.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { workspaceStateDir } from "../../store/state.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { SESSIONS_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { workspaceFrom } from "./workspace.ts";

/** Opens this workspace's store when storage is enabled; notices (a recovered corrupt file) go to stderr. */
export function openWorkspaceStore(io: Pick<CliIo, "stderr">, loaded: LoadedConfig, workspace: string, env: Env): Store | undefined {
  if (!loaded.config.storage.enabled) return undefined;
  const { store, notices } = openStore({ dir: workspaceStateDir(env, workspace), fileName: loaded.config.storage.path });
  for (const notice of notices) io.stderr(`zero: ${notice}\n`);
  return store;
}

function when(iso: string): string {
  return iso.replace("T", " ").slice(0, 16);
}

export function sessionsCommand(io: CliIo): number {
  const { values } = parseCommandArgs(
    "sessions",
    io.argv,
    { cwd: { type: "string" }, interrupted: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    false,
  );
  if (values.help) {
    io.stdout(SESSIONS_HELP);
    return 0;
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  const store = openWorkspaceStore(io, loaded, workspace, io.env);
  if (!store) {
    io.stderr("zero: persistence is disabled (storage.enabled: false): no sessions are kept\n");
    return 0;
  }
  try {
    if (values.interrupted) {
      const runs = store.listInterruptedRuns({ workspace, surface: "cli" });
      if (runs.length === 0) io.stderr("zero: no interrupted runs in this workspace\n");
      for (const run of runs) io.stdout(`${run.id}  ${when(run.startedAt)}  session ${run.sessionId}  ${sanitizeForTerminal(run.task.split("\n")[0]!.slice(0, 60))}\n`);
      return 0;
    }
    const sessions = store.listSessions({ workspace, surface: "cli" });
    if (sessions.length === 0) io.stderr("zero: no sessions in this workspace yet\n");
    // Titles and tasks are the user's (or a hostile repo's) text: shown with every control and invisible character escaped.
    for (const session of sessions) {
      io.stdout(`${session.id}  ${when(session.updatedAt)}  ${session.status.padEnd(11)}  ${spending(session).padEnd(20)}  ${sanitizeForTerminal(session.title)}\n`);
    }
    return 0;
  } finally {
    store.close();
  }
}

/** Tokens (children included) and, when any model was priced, the cost: `12,345 tok  $0.0123`. */
function spending(session: { tokens?: number; costMicroUsd?: number | null }): string {
  const tokens = `${(session.tokens ?? 0).toLocaleString("en-US")} tok`;
  return session.costMicroUsd == null ? tokens : `${tokens}  $${(session.costMicroUsd / 1_000_000).toFixed(4)}`;
}
