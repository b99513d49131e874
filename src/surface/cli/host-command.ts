import { loadConfig } from "../../config/load.ts";
import { createHost } from "../host/server.ts";
import { splitLines } from "../../util/lines.ts";
import { parseCommandArgs } from "./args.ts";
import { HOST_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { RUN_OPTION_SPECS, resolveRunOptions } from "./run-options.ts";
import { cliSessionService } from "./session-access.ts";

const HOST_OPTIONS = {
  ...RUN_OPTION_SPECS,
  "bridge-compat": { type: "boolean" },
  "single-request": { type: "boolean" },
} as const;

/** Concurrent sessions a long-lived host runs at once (decisions.md). */
const MAX_CONCURRENT_SESSIONS = 4;

/**
 * `zero host`: NDJSON requests on stdin, protocol lines on stdout, logs on stderr.
 * The reader (util/lines.ts) splits bytes on "\n" only, so no byte sequence (U+2028,
 * a lone CR, invalid UTF-8) can break framing; each line is at most MAX_LINE_BYTES and
 * must be valid UTF-8, else it is answered INVALID_REQUEST and the host reads on.
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
  const sessions = cliSessionService(io, loaded, { workspace, extraDirs, overrides, surface: "host" });
  let interrupted = false;
  const host = createHost({
    sessions: sessions.service,
    store: sessions.store,
    bridgeCompat: values["bridge-compat"] === true,
    singleRequest: values["single-request"] === true,
    maxConcurrent: MAX_CONCURRENT_SESSIONS,
    write: (line) => io.stdout(`${JSON.stringify(line)}\n`),
    log: io.stderr,
    exit: (code) => {
      void sessions.close().then(() => io.exit(code));
    },
  });
  io.onInterrupt(() => {
    interrupted = true;
    host.cancelAll();
    // Stdin may stay open: answer the cancelled runs, then leave.
    void host
      .drain()
      .then(() => sessions.close())
      .then(() => io.exit(130));
  });
  // Bounded lines (MAX_LINE_BYTES): a longer line is refused and skipped without being held whole.
  for await (const line of splitLines(Bun.stdin.stream())) host.handleLine(line);
  await host.drain();
  await sessions.close();
  return interrupted ? 130 : 0;
}
