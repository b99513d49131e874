import { loadConfig } from "../../config/load.ts";
import { createHost } from "../host/server.ts";
import { parseCommandArgs } from "./args.ts";
import { HOST_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { RUN_OPTION_SPECS, resolveRunOptions } from "./run-options.ts";
import { openWorkspaceStore } from "./sessions-command.ts";

const HOST_OPTIONS = {
  ...RUN_OPTION_SPECS,
  "bridge-compat": { type: "boolean" },
  "single-request": { type: "boolean" },
} as const;

/** Concurrent sessions a long-lived host runs at once (decisions.md). */
const MAX_CONCURRENT_SESSIONS = 4;

/**
 * `zero host`: NDJSON requests on stdin, protocol lines on stdout, logs on stderr.
 * The reader splits on "\n" only, over a streaming decoder, so no byte sequence
 * (U+2028, a lone CR, invalid UTF-8) can break framing.
 */
export async function hostCommand(io: CliIo): Promise<number> {
  const { values } = parseCommandArgs("host", io.argv, HOST_OPTIONS, false);
  if (values.help) {
    io.stdout(HOST_HELP);
    return 0;
  }
  const { workspace, extraDirs, overrides } = resolveRunOptions(values, io.cwd);
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  let store: ReturnType<typeof openWorkspaceStore>;
  let opened = false;
  const getStore = () => {
    if (!opened) {
      store = openWorkspaceStore(io, loaded, workspace, io.env); // a failure is retried, never silently skipped
      opened = true;
    }
    return store;
  };
  const getStoreIfOpen = () => (opened ? store : undefined);
  let interrupted = false;
  const host = createHost({
    config: loaded.config,
    env: io.env,
    workspace,
    extraDirs,
    overrides,
    store: getStore,
    bridgeCompat: values["bridge-compat"] === true,
    singleRequest: values["single-request"] === true,
    maxConcurrent: MAX_CONCURRENT_SESSIONS,
    write: (line) => io.stdout(`${JSON.stringify(line)}\n`),
    log: io.stderr,
    exit: (code) => {
      store?.close();
      void io.exit(code);
    },
  });
  io.onInterrupt(() => {
    interrupted = true;
    host.cancelAll();
    // Stdin may stay open: answer the cancelled runs, then leave.
    void host.drain().then(() => {
      getStoreIfOpen()?.close();
      return io.exit(130);
    });
  });
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of Bun.stdin.stream()) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      host.handleLine(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf("\n");
    }
  }
  pending += decoder.decode();
  if (pending !== "") host.handleLine(pending);
  await host.drain();
  getStoreIfOpen()?.close();
  return interrupted ? 130 : 0;
}
