/**
 * The stdio transport for MCP servers, our own rather than the SDK's: the server leads its own
 * process group (so closing it kills everything it started, as `run` does), a line longer than a
 * bound ends the connection instead of growing a buffer without limit, and the tail of its stderr
 * is kept to explain a failure.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { commandEnvironment } from "../tool/run-env.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { signalGroup, terminateGroup } from "../util/process-group.ts";

/** The longest JSON-RPC line a server may send; a longer one closes the connection. */
export const MAX_STDIO_MESSAGE_BYTES = 16 * 1024 * 1024;
/** What may wait to be written to a server's stdin before the server counts as not reading. */
export const MAX_PENDING_INPUT_BYTES = 16 * 1024 * 1024;
/** How much of the server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2_000;
/** SIGTERM first; after this the group gets SIGKILL. */
const CLOSE_GRACE_MS = 2_000;

export type StdioServerSpec = { command: string; args: readonly string[]; cwd: string; env: Readonly<Record<string, string>> };

/** PATH without relative or empty entries: a bare command name never resolves inside the directory zero was started from. */
export function safePath(path: string | undefined): string {
  return (path ?? "").split(":").filter((entry) => entry !== "" && isAbsolute(entry)).join(":");
}

/**
 * The program to start: absolute as configured (`./`/`../` were resolved from the declaring file),
 * or a bare name looked up on the safe PATH. A relative path with a slash is refused: it would
 * depend on the directory zero runs in.
 */
export function resolveCommand(command: string, path: string): string {
  if (isAbsolute(command)) return command;
  if (command.includes("/")) throw new Error(`command ${JSON.stringify(command)} must be absolute, start with ./ or ../ (from the config file), or be a bare name on PATH`);
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`command ${JSON.stringify(command)} was not found on PATH`);
}

/** The server's environment: the same allowlist as `run` commands (no secrets, nothing of zero's), then the configured `env`. */
export function serverEnvironment(env: Env, configured: Readonly<Record<string, string>>): Record<string, string> {
  const base = commandEnvironment(env);
  base.PATH = safePath(env.PATH);
  base.ZERO_CLI_TOOL = "mcp";
  const result = { ...base, ...configured };
  // A configured PATH gets the same treatment: no entry that resolves against the server's cwd.
  if (configured.PATH !== undefined) result.PATH = safePath(configured.PATH);
  return result;
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrTail = "";
  private closed = false;
  /** Bytes written to the server's stdin since it last drained. */
  private unread = 0;
  /** The process group is known to be gone: its pid is not signalled any more. */
  private groupGone = false;
  private exitNote: string | undefined;

  constructor(private readonly spec: StdioServerSpec) {}

  /** Whether the server process has ended (or the connection was cut for a bound). */
  get ended(): boolean {
    return this.exitNote !== undefined;
  }

  /** Why the process ended, with its last stderr lines: for the error a failed call reports. */
  describeExit(): string {
    const tail = this.stderrTail.trim();
    return [this.exitNote ?? "the server closed its connection", tail === "" ? "" : `; its stderr ended with: ${tail.slice(-500)}`].join("");
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const stat = statSync(this.spec.cwd, { throwIfNoEntry: false });
      if (!stat?.isDirectory()) return reject(new Error(`cwd ${this.spec.cwd} is not a directory`));
      const child = spawn(this.spec.command, [...this.spec.args], {
        cwd: this.spec.cwd,
        env: { ...this.spec.env },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      this.child = child;
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        reject(new Error(`could not start ${this.spec.command}: ${error.message}`));
        this.finish();
      });
      child.once("exit", (code, signal) => {
        this.exitNote ??= signal ? `the server was ended by ${signal}` : `the server exited with code ${code}`;
        // Whatever it started goes with it; after that the pid is never signalled again (it may be reused).
        if (child.pid !== undefined) void terminateGroup(child.pid, CLOSE_GRACE_MS).finally(() => (this.groupGone = true));
        this.finish();
      });
      child.stdout!.on("data", (chunk: Buffer) => this.receive(chunk));
      child.stderr!.on("data", (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      });
      // A server that stops reading its stdin must not crash zero with EPIPE.
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdin!.on("drain", () => (this.unread = 0));
    });
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      if (line.trim() !== "") this.deliver(line);
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > MAX_STDIO_MESSAGE_BYTES) {
        this.pending = [];
        this.pendingBytes = 0;
        this.exitNote = `the server sent a message over ${MAX_STDIO_MESSAGE_BYTES} bytes; the connection was closed`;
        this.onerror?.(new Error(this.exitNote));
        void this.close();
      }
    }
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      // A stray log line on stdout is the server's bug, not a reason to drop the connection.
      this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC (${errorMessage(error).slice(0, 200)})`));
      return;
    }
    this.onmessage?.(message);
  }

  /**
   * Queues the message on the server's stdin. Nothing waits for "drain" (a server that stops
   * reading while it floods zero with requests would pile up waiters); instead what is waiting to
   * be written is bounded, and a server that lets it pass the bound is cut off.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed || this.exitNote !== undefined) return Promise.reject(new Error(this.describeExit()));
    const line = serializeMessage(message);
    // Counted here (Bun's writableLength stays 0): what was written since the pipe last drained.
    this.unread = stdin.write(line) ? 0 : this.unread + Buffer.byteLength(line);
    if (this.unread > MAX_PENDING_INPUT_BYTES) {
      this.exitNote = `the server stopped reading its input (${this.unread} bytes waiting); the connection was closed`;
      this.onerror?.(new Error(this.exitNote));
      void this.close();
    }
    return Promise.resolve();
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child?.pid !== undefined && !this.groupGone) {
      child.stdin?.end();
      await terminateGroup(child.pid, CLOSE_GRACE_MS);
      this.groupGone = true;
    }
    this.finish();
  }

  /** For a process that is exiting now: the whole group is killed without waiting. */
  killNow(): void {
    if (this.child?.pid !== undefined && !this.groupGone) signalGroup(this.child.pid, "SIGKILL");
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.child?.stdout?.removeAllListeners("data");
    this.onclose?.();
  }
}
