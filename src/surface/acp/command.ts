import * as acp from "@agentclientprotocol/sdk";
import { VERSION } from "../../util/version.ts";
import { canonicalPath } from "../../util/paths.ts";
import { parseCommandArgs } from "../cli/args.ts";
import { ACP_HELP } from "../cli/help.ts";
import type { CliIo } from "../cli/io.ts";
import { MAX_FRAME_BYTES, screenFrames } from "./framing.ts";
import { createAcpServer } from "./server.ts";
import { cliAcpSessionHosts } from "./session-host.ts";

/**
 * `zero acp`: an Agent Client Protocol agent on stdio. Stdout carries only ACP NDJSON
 * (JSON-RPC 2.0, one message a line); every diagnostic goes to stderr. The process serves until
 * stdin ends, then cancels what still runs and exits 0.
 */
export async function acpCommand(io: CliIo): Promise<number> {
  const { values } = parseCommandArgs("acp", io.argv, { help: { type: "boolean", short: "h" } }, false);
  if (values.help) {
    io.stdout(ACP_HELP);
    return 0;
  }
  const server = createAcpServer({ version: VERSION, log: io.stderr, hosts: cliAcpSessionHosts(io), serverCwd: canonicalPath(io.cwd) });
  const decoder = new TextDecoder();
  const frames = screenFrames(Bun.stdin.stream(), {
    reply: (message) => io.stdout(`${JSON.stringify(message)}\n`),
    onEnd: () => server.cancelAll(),
  });
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      const text = decoder.decode(chunk, { stream: true });
      frames.sent(text);
      io.stdout(text);
    },
  });
  const connection = server.app.connect(acp.ndJsonStream(output, frames.input, { maxMessageBytes: MAX_FRAME_BYTES + 1 }));
  let interrupted = false;
  io.onInterrupt(() => {
    interrupted = true;
    connection.close();
  });
  await connection.closed;
  await server.shutdown();
  return interrupted ? 130 : 0;
}
