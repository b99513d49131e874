/**
 * The `run` tool: one non-interactive shell command.
 *
 * - `/bin/sh -c <command>`: a NON-login shell (no profile scripts), stdin is /dev/null, the process
 *   leads its own session and process group (`detached: true` = setsid), so signals reach everything
 *   it started and there is no controlling terminal to prompt on.
 * - The working directory is checked through the roots (`resolveInRoots(..., "write")`), must exist
 *   and be a directory; the default is the workspace.
 * - The environment is `commandEnvironment(ctx.env)` (run-env.ts): an allowlist of terminal/runtime
 *   variables, minus anything secret-like and zero's own variables, never the whole process
 *   environment; editors, pagers and prompts are pointed at programs that end at once, so nothing
 *   waits for a person (the command has no terminal: its own session, stdin /dev/null).
 * - stdout and stderr are read from two pipes and kept in arrival order as one text (decoded as
 *   streaming UTF-8 per pipe). Memory stays bounded whatever the command prints: the first
 *   RUN_OUTPUT_HEAD_CHARS and a ring of the last RUN_OUTPUT_TAIL_CHARS characters are kept for the
 *   model, and the raw bytes are spooled only up to MAX_ARTIFACT_BYTES. When output was cut, the
 *   spool goes to the artifact store and the result names its `artifact://` reference.
 * - Progress: output chunks are passed to `ctx.progress`, merged, at most every
 *   RUN_OUTPUT_PROGRESS_INTERVAL_MS, each message at most RUN_OUTPUT_PROGRESS_MAX_CHARS (the newest text).
 * - The result's first line is `exit code N`, `killed by signal SIG…` or `timed out after N ms; …`;
 *   then the output or `(no output)`. A non-zero exit is a normal result, not an error; only a
 *   failure to start (bad cwd, spawn error) throws.
 * - Timeout (see `effectiveTimeout`) and cancellation (`ctx.signal`) terminate the whole process
 *   group: SIGTERM, up to RUN_KILL_GRACE_MS, then SIGKILL. When the shell exits on its own, whatever
 *   is still running in its group (`sleep 100 &`) is terminated the same way, and remaining output
 *   is awaited at most RUN_OUTPUT_DRAIN_MS, so a background child holding a pipe cannot hang the call.
 *
 * Limit: a descendant that leaves the group on purpose (`setsid`, a double-forking daemon) escapes
 * the group kill; only a PID namespace (e.g. bwrap --unshare-pid) would stop it. Such processes are
 * found afterwards by the marker in their environment (run-escape.ts), named in the result, and
 * terminated when zero exits. This is not a sandbox: the command can do whatever zero's user can,
 * including network access.
 */
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { Readable } from "node:stream";
import { z } from "zod";
import { reachesNetwork } from "../policy/network-command.ts";
import { normalizeCommand } from "../policy/shell-words.ts";
import { resolveInRoots } from "../security/roots.ts";
import { groupIsAlive, signalGroup, terminateGroup } from "../util/process-group.ts";
import { setSafeTimeout } from "../util/timers.ts";
import { defineTool } from "./define.ts";
import { commandEnvironment } from "./run-env.ts";
import { describeEscaped, watchEscapes } from "./run-escape.ts";
import { RUN_OUTPUT_PROGRESS_INTERVAL_MS, RUN_OUTPUT_PROGRESS_MAX_CHARS, createOutputCollector, createProgressThrottle } from "./run-output.ts";

export { NON_INTERACTIVE_ENV, batchSshCommand, commandEnvironment } from "./run-env.ts";
export { RUN_MARKER_NAME, killEscapedProcesses } from "./run-escape.ts";

export {
  RUN_OUTPUT_HEAD_CHARS,
  RUN_OUTPUT_MEMORY_SPOOL_BYTES,
  RUN_OUTPUT_PROGRESS_INTERVAL_MS,
  RUN_OUTPUT_PROGRESS_MAX_CHARS,
  RUN_OUTPUT_TAIL_CHARS,
  createOutputCollector,
} from "./run-output.ts";

/** After the shell exited, how long remaining output is awaited before the pipes are dropped. */
export const RUN_OUTPUT_DRAIN_MS = 250;
/** SIGTERM first; whatever is still alive after this gets SIGKILL. */
export const RUN_KILL_GRACE_MS = 2_000;

/** A per-call timeout may only shorten the configured one (limits.toolTimeoutMs). */
export function effectiveTimeout(requested: number | undefined, callTimeoutMs: number): number {
  return Math.min(requested ?? callTimeoutMs, callTimeoutMs);
}

/** The promise's value, or undefined after `ms`; the timer is cleared so it cannot delay exit. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function streamEnded(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.readableEnded || stream.destroyed) resolve();
    for (const event of ["end", "close", "error"]) stream.once(event, () => resolve());
  });
}

/** The directory the command starts in: checked through the roots, existing, a directory. */
function resolveCwd(roots: Parameters<typeof resolveInRoots>[0], requested: string | undefined): string {
  if (requested === undefined) return roots.workspace;
  const checked = resolveInRoots(roots, requested, "write");
  if (!checked.ok) throw new Error(checked.error);
  const stat = statSync(checked.value.path, { throwIfNoEntry: false });
  if (stat === undefined) throw new Error(`cwd ${JSON.stringify(requested)} does not exist`);
  if (!stat.isDirectory()) throw new Error(`cwd ${JSON.stringify(requested)} is not a directory`);
  return checked.value.path;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

const input = z
  .object({
    command: z.string().min(1).describe("Shell command for /bin/sh -c; non-interactive, stdin is empty"),
    cwd: z.string().min(1).optional().describe("Working directory (default: the workspace)"),
    timeoutMs: z.number().int().positive().optional().describe("Timeout in ms (capped by the configured limit)"),
  })
  .strict();

export const runTool = defineTool({
  name: "run",
  description:
    "Run one shell command and return its exit status and combined stdout/stderr. Non-interactive: no terminal, empty stdin, editors/pagers/password prompts fail at once (pass messages on the command line, e.g. git commit -m). Long output is cut to head and tail with an artifact:// reference to the full text. Background processes are stopped when the command ends.",
  input,
  // The command is the target (so "always" covers this command only); one that plainly reaches
  // the network says so, for the one asked to approve it. The policy is the same either way.
  classify: ({ command }) => ({ risk: "execute", operation: "execute", target: normalizeCommand(command), categories: reachesNetwork(command) ? ["shell", "network"] : ["shell"] }),
  async execute(args, ctx) {
    const cwd = resolveCwd(ctx.roots, args.cwd);
    const escapes = watchEscapes();
    const env = { ...commandEnvironment(ctx.env), PWD: cwd, ...escapes.env };
    const timeoutMs = effectiveTimeout(args.timeoutMs, ctx.timeoutMs);

    const child = spawn("/bin/sh", ["-c", args.command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    escapes.started(child.pid); // before any await: the shell's start time and pid bound the later scan
    // Listeners first, so a fast exit or an early error is not missed.
    const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const started = new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => reject(new Error(`could not start /bin/sh: ${error.message}`)));
    });
    const stdout = child.stdout as Readable;
    const stderr = child.stderr as Readable;
    const drained = Promise.all([streamEnded(stdout), streamEnded(stderr)]);

    const tmp = ctx.env.TMPDIR;
    const collector = createOutputCollector({ tempDir: tmp !== undefined && isAbsolute(tmp) ? tmp : "/tmp" });
    const progress = createProgressThrottle(ctx.progress, RUN_OUTPUT_PROGRESS_INTERVAL_MS, RUN_OUTPUT_PROGRESS_MAX_CHARS);
    const decoders = new Map<Readable, TextDecoder>([
      [stdout, new TextDecoder()],
      [stderr, new TextDecoder()],
    ]);
    for (const [stream, decoder] of decoders) {
      stream.on("data", (chunk: Uint8Array) => {
        collector.addBytes(chunk);
        const text = decoder.decode(chunk, { stream: true });
        if (text === "") return;
        collector.addText(text);
        progress.push(text);
      });
      stream.on("error", () => undefined); // a broken pipe ends the read; the exit status still counts
    }

    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await started;
      const pgid = child.pid as number;
      let stopReason: "timeout" | "cancelled" | undefined;
      const stopped = new Promise<void>((resolve) => {
        timer = setSafeTimeout(() => {
          stopReason ??= "timeout";
          resolve();
        }, timeoutMs);
        onAbort = () => {
          // The contract's own timer aborts with a TimeoutError: that is a timeout, not a cancellation.
          stopReason ??= (ctx.signal.reason as { name?: string } | undefined)?.name === "TimeoutError" ? "timeout" : "cancelled";
          resolve();
        };
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener("abort", onAbort, { once: true });
      });

      let exit = await Promise.race([exited, stopped.then(() => undefined)]);
      clearTimeout(timer);
      // Decided here: a timer or abort after the shell exited does not rewrite its status.
      const reason = exit === undefined ? stopReason : undefined;
      let leftovers = false;
      if (exit === undefined) {
        await terminateGroup(pgid, RUN_KILL_GRACE_MS);
        exit = await within(exited, 1_000);
      } else if (groupIsAlive(pgid)) {
        leftovers = true;
        await terminateGroup(pgid, RUN_KILL_GRACE_MS);
      }
      // The group is gone (or being SIGKILLed): whatever still carries the marker left it.
      const escaped = escapes.finish(pgid);
      // Output still in the pipes arrives quickly; a pipe held open by an escaped process does not end.
      await within(drained, RUN_OUTPUT_DRAIN_MS);
      stdout.destroy();
      stderr.destroy();
      for (const decoder of decoders.values()) {
        const rest = decoder.decode();
        if (rest !== "") {
          collector.addText(rest);
          progress.push(rest);
        }
      }
      progress.flush();

      let status: string;
      if (reason === "timeout") status = `timed out after ${timeoutMs} ms; the process group was terminated`;
      else if (reason === "cancelled") status = "cancelled; the process group was terminated";
      else if (exit?.code !== null && exit?.code !== undefined) status = `exit code ${exit.code}`;
      else if (exit?.signal) status = `killed by signal ${exit.signal}`;
      else status = "exit status unknown";
      if (leftovers) status += "; processes it left running in the background were terminated";
      if (escaped.length > 0) status += `\n${describeEscaped(escaped)}`;

      const { text, truncated } = collector.finish(ctx.artifacts);
      const body = text === "" ? "(no output)" : text;
      return { output: `${status}\n${body}`, truncated };
    } catch (error) {
      collector.dispose();
      stdout.destroy();
      stderr.destroy();
      if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
      throw error;
    } finally {
      clearTimeout(timer);
      progress.stop();
      if (onAbort) ctx.signal.removeEventListener("abort", onAbort);
    }
  },
});
