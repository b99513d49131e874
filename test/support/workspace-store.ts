import { existsSync } from "node:fs";
import { join } from "node:path";
import { databaseFileName } from "../../src/store/db.ts";
import { workspaceStateDir } from "../../src/store/state.ts";
import { openStore, type Store } from "../../src/store/store.ts";

/**
 * A session service's store access over a sandbox workspace's real database, opened on first
 * need the way the CLI opens it (so "exists" is true once the file is there or it was opened).
 */
export function lazyWorkspaceStore(env: Record<string, string | undefined>, workspace: string) {
  const dir = workspaceStateDir(env, workspace);
  let store: Store | undefined;
  return {
    access: {
      enabled: true,
      exists: () => store !== undefined || existsSync(join(dir, databaseFileName(undefined))),
      open: () => (store ??= openStore({ dir }).store),
    },
    /** The store when it has been opened. */
    current: (): Store | undefined => store,
    close(): void {
      store?.close();
      store = undefined;
    },
  };
}
