/**
 * One configured MCP server: connecting (stdio or Streamable HTTP, OAuth when configured), its
 * catalog of tools, and the requests zero makes of it. Every wait is bounded; a server that went
 * away fails the call that needed it with the reason, and the next call connects again.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServer } from "../config/schema.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { withinBound } from "../util/timers.ts";
import { VERSION } from "../util/version.ts";
import { boundedFetch } from "./http-fetch.ts";
import { BoundedStdioTransport, resolveCommand, safePath, serverEnvironment } from "./stdio-transport.ts";

/** How long a server may take to start and list its tools before a run goes on without it. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
/** Pages of one listing; a server that keeps paging past this is cut off (with a notice). */
export const MAX_PAGES = 20;
/** At most one progress event per this many ms of a call; its message is cut to MAX_PROGRESS_CHARS. */
const PROGRESS_INTERVAL_MS = 100;
const MAX_PROGRESS_CHARS = 300;
/** How much of a server's error text a problem keeps. */
const MAX_PROBLEM_CHARS = 1_000;
/** Tools of one server offered to models. */
export const MAX_TOOLS_PER_SERVER = 128;
/** What one server's tool definitions (descriptions and schemas) may add to every request. */
export const MAX_SERVER_DEFINITION_CHARS = 256 * 1024;

export type McpToolInfo = { name: string; description: string; inputSchema: Record<string, unknown> };
export type ConnectionState = "idle" | "connecting" | "connected" | "failed" | "closed";

export type ConnectionOptions = {
  id: string;
  server: McpServer;
  env: Env;
  log(line: string): void;
  /** Whether an OAuth login may wait for a browser (false: fail with the `zero mcp login` hint). */
  interactive: boolean;
  startupTimeoutMs?: number;
  /** Runs a connection attempt in turn with others (OAuth logins share one callback port). */
  serialize?<T>(work: () => Promise<T>): Promise<T>;
};

/** A listing's items and why it stopped early, if it did. */
export type Listing<T> = { items: T[]; notice?: string };

/**
 * Follows `nextCursor` at most MAX_PAGES times and never to a cursor it has seen (a server that
 * loops), keeping at most `maxItems`.
 */
export async function paginate<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>, maxItems: number, what: string): Promise<Listing<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 0; ; pages++) {
    if (pages === MAX_PAGES) return { items, notice: `${what}: stopped after ${MAX_PAGES} pages` };
    const answer = await page(cursor);
    for (const item of answer.items) {
      if (items.length === maxItems) return { items, notice: `${what}: only the first ${maxItems} are used` };
      items.push(item);
    }
    if (answer.nextCursor === undefined || answer.nextCursor === null) return { items };
    if (typeof answer.nextCursor !== "string" || seen.has(answer.nextCursor)) return { items, notice: `${what}: the server repeated a page cursor; listing stopped` };
    seen.add(answer.nextCursor);
    cursor = answer.nextCursor;
  }
}

/** The HTTP server no longer knows the session (404 by the spec; some servers answer 400 naming the session). */
function sessionLost(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

export class ServerConnection {
  state: ConnectionState = "idle";
  /** Why the last connection attempt failed or the connection ended. */
  problem: string | undefined;
  tools: McpToolInfo[] = [];
  notices: string[] = [];
  /** Tools the server lists that zero cannot call, and why. */
  leftOut: Array<{ name: string; reason: string }> = [];
  private client: Client | undefined;
  private transport: Transport | undefined;
  /** HTTP with OAuth: completes a login that a request started (the server asked for more scopes). */
  private reauthorize: ((signal?: AbortSignal) => Promise<void>) | undefined;
  /** Stops what the OAuth session holds (a callback listener nobody waits for any more). */
  private disposeAuth: (() => void) | undefined;
  /** Why a bound cut the connection, kept over the error the cut causes. */
  private cutReason: string | undefined;
  private connecting: Promise<void> | undefined;
  /** Aborted by `close`: a connection attempt (an OAuth login waiting for a browser) stops with it. */
  private readonly closing = new AbortController();
  readonly startupTimeoutMs: number;

  constructor(private readonly options: ConnectionOptions) {
    this.startupTimeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  }

  get id(): string {
    return this.options.id;
  }

  get transportKind(): "stdio" | "http" {
    return this.options.server.type;
  }

  /**
   * Connects and lists the tools; settles (never rejects) within the startup bound, or the OAuth
   * bound while a login waits. The attempt is shared by concurrent callers, so one caller's
   * `signal` stops only its own wait, never the attempt the others wait for; `close` stops it.
   */
  connect(signal?: AbortSignal): Promise<void> {
    if (this.state === "connected") return Promise.resolve();
    this.connecting ??= this.attempt(this.closing.signal).finally(() => {
      this.connecting = undefined;
      this.lastAttemptAt = Date.now();
    });
    return signal ? withinBound(this.connecting, Number.MAX_SAFE_INTEGER, "", signal).catch(() => undefined) : this.connecting;
  }

  /** When the last connection attempt ended (0: none yet). */
  lastAttemptAt = 0;

  private async attempt(signal?: AbortSignal): Promise<void> {
    this.state = "connecting";
    this.cutReason = undefined;
    try {
      // A queued attempt that was closed meanwhile does not start.
      const open = () => (signal?.aborted ? Promise.reject(signal.reason) : this.open(signal));
      const client = await (this.options.serialize ? this.options.serialize(open) : open());
      const listing = await withinBound(
        paginate(async (cursor) => {
          const page = await this.withReauthorization(signal, () => client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.startupTimeoutMs }));
          return { items: page.tools, nextCursor: page.nextCursor };
        }, MAX_TOOLS_PER_SERVER, `tools of MCP server "${this.id}"`),
        this.startupTimeoutMs,
        `MCP server "${this.id}" did not list its tools within ${this.startupTimeoutMs} ms`,
        signal,
      );
      // Tools that can only run as tasks (task-based execution) are not something zero can call.
      const callable = listing.items.filter((tool) => (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport !== "required");
      // Not a run's notice (it would repeat on every run): `zero mcp list` shows them.
      this.leftOut = listing.items.filter((tool) => !callable.includes(tool)).map((tool) => ({ name: tool.name, reason: "requires task-based execution, which zero does not implement" }));
      // Every tool definition is sent with every model request: one server gets a bounded share.
      let spent = 0;
      const kept: McpToolInfo[] = [];
      for (const tool of callable) {
        const info = { name: tool.name, description: typeof tool.description === "string" ? tool.description : "", inputSchema: tool.inputSchema as Record<string, unknown> };
        spent += Math.min(info.description.length, 2_000) + JSON.stringify(info.inputSchema ?? null).length;
        if (spent > MAX_SERVER_DEFINITION_CHARS) this.leftOut.push({ name: tool.name, reason: `the server's tool definitions pass ${MAX_SERVER_DEFINITION_CHARS} characters` });
        else kept.push(info);
      }
      this.tools = kept;
      const overBudget = callable.length - kept.length;
      this.notices = [
        ...(listing.notice ? [listing.notice] : []),
        ...(overBudget > 0 ? [`its tool definitions pass ${MAX_SERVER_DEFINITION_CHARS} characters; ${overBudget} tools are left out`] : []),
      ];
      if (this.closing.signal.aborted) throw this.closing.signal.reason;
      this.state = "connected";
      this.problem = undefined;
    } catch (error) {
      if (!this.closing.signal.aborted) {
        this.state = "failed";
        this.problem = this.cutReason ?? this.explain(error);
      }
      this.cutReason = undefined;
      await this.dropTransport();
    }
  }

  /** A connected client; the transport's end marks the connection closed so the next use reconnects. */
  private async open(signal?: AbortSignal): Promise<Client> {
    const server = this.options.server;
    const client = new Client({ name: "zero-cli", version: VERSION }, { capabilities: {} });
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      if (this.state === "connected") {
        this.state = "failed";
        this.problem = this.transport instanceof BoundedStdioTransport ? this.transport.describeExit() : "the server closed the connection";
      }
    };
    if (server.type === "stdio") {
      const path = safePath(this.options.env.PATH);
      const transport = new BoundedStdioTransport({
        command: resolveCommand(server.command, path),
        args: server.args,
        cwd: server.cwd,
        env: serverEnvironment(this.options.env, server.env),
      });
      this.transport = transport;
      this.client = client;
      await withinBound(client.connect(transport), this.startupTimeoutMs, `MCP server "${this.id}" did not answer initialize within ${this.startupTimeoutMs} ms`, signal);
      return client;
    }
    const { connectHttp } = await import("./http-connect.ts");
    // Set only once connected: a login closes the first transport, and that close must not
    // count as the end of this connection.
    const http = await connectHttp(client, {
      id: this.id,
      server,
      env: this.options.env,
      log: this.options.log,
      interactive: this.options.interactive,
      timeoutMs: this.startupTimeoutMs,
      fetch: boundedFetch(fetch, `MCP server "${this.id}"`, (reason) => void this.cutOff(reason)),
      ...(signal ? { signal } : {}),
    });
    this.client = client;
    this.transport = http.transport;
    this.reauthorize = http.reauthorize;
    this.disposeAuth = http.dispose;
    return client;
  }

  /**
   * The error, with how the process ended when it did (a server that is merely slow has not);
   * control characters out and cut short — it can quote anything the server sent.
   */
  private explain(error: unknown): string {
    const message = errorMessage(error);
    const transport = this.transport;
    const full = transport instanceof BoundedStdioTransport && transport.ended ? `${message} (${transport.describeExit()})` : message;
    const flat = full.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, " ");
    return flat.length > MAX_PROBLEM_CHARS ? `${flat.slice(0, MAX_PROBLEM_CHARS)}…` : flat;
  }

  /** A bound was passed: the connection ends with that reason (pending requests fail now, not at their timeout). */
  private async cutOff(reason: string): Promise<void> {
    if (this.state === "closed") return;
    this.state = "failed";
    this.problem = reason;
    this.cutReason = reason;
    await this.dropTransport();
  }

  private async dropTransport(): Promise<void> {
    const transport = this.transport;
    this.transport = undefined;
    this.client = undefined;
    this.reauthorize = undefined;
    this.disposeAuth?.();
    this.disposeAuth = undefined;
    await transport?.close().catch(() => undefined);
  }

  /** The client, connecting again first when the server went away since the last use. */
  async ready(signal?: AbortSignal): Promise<Client> {
    if (this.state !== "connected" || !this.client) {
      if (this.state === "closed") throw new Error(`MCP server "${this.id}" was closed`);
      await this.connect(signal);
    }
    if (this.state !== "connected" || !this.client) throw new Error(`MCP server "${this.id}" is unavailable: ${this.problem ?? "not connected"}`);
    return this.client;
  }

  /**
   * Runs one request on a ready client: a login the server asks for on the way (step-up) is
   * finished once, and an HTTP session the server forgot (it restarted: 404) is replaced by a new
   * one before the request is sent once more — the server never saw it.
   */
  async request<T>(signal: AbortSignal | undefined, run: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.ready(signal);
    try {
      return await this.withReauthorization(signal, () => run(client));
    } catch (error) {
      if (!sessionLost(error) || this.state === "closed") throw error;
      // Only the first request to see it replaces the session (others on the dead one fail).
      if (this.client === client) {
        this.state = "failed";
        this.problem = "the server ended zero's session";
        await this.dropTransport();
      }
      const fresh = await this.ready(signal);
      return await this.withReauthorization(signal, () => run(fresh));
    }
  }

  /** Calls one tool; a server that goes away during the call fails it with the reason. */
  async callTool(name: string, args: Record<string, unknown>, options: { signal: AbortSignal; timeoutMs: number; onProgress?(message: string): void }) {
    try {
      return await this.request(options.signal, (client) => this.call(client, name, args, options));
    } catch (error) {
      if (options.signal.aborted) throw error;
      if (this.state !== "connected") throw new Error(`MCP server "${this.id}" went away during the call: ${this.problem ?? errorMessage(error)}`);
      throw error;
    }
  }

  /** Runs a request; when the server wants a new authorization (step-up), waits for the login once and runs it again. */
  private async withReauthorization<T>(signal: AbortSignal | undefined, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || !this.reauthorize) throw error;
      await this.reauthorize(signal);
      return await request();
    }
  }

  private call(client: Client, name: string, args: Record<string, unknown>, options: { signal: AbortSignal; timeoutMs: number; onProgress?(message: string): void }) {
    // A server may send progress as fast as it likes: one update per interval, each cut short, becomes an event.
    let lastProgress = -Infinity;
    const progress = (update: { progress: number; total?: number; message?: string }) => {
      const now = performance.now();
      if (now - lastProgress < PROGRESS_INTERVAL_MS) return;
      lastProgress = now;
      const text = `${typeof update.message === "string" ? update.message.slice(0, MAX_PROGRESS_CHARS) : "progress"}: ${update.progress}${update.total !== undefined ? `/${update.total}` : ""}`;
      options.onProgress!(text);
    };
    return client.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
        ...(options.onProgress
          ? {
              onprogress: progress,
            }
          : {}),
      });
  }

  /** Whether the server offers resources or prompts (for `read mcp://content/<id>`). */
  hasContent(): boolean {
    const capabilities = this.client?.getServerCapabilities();
    return Boolean(capabilities?.resources || capabilities?.prompts);
  }

  /** The request timeout for catalog and content requests. */
  requestOptions(signal: AbortSignal) {
    return { signal, timeout: this.startupTimeoutMs };
  }

  async close(): Promise<void> {
    this.state = "closed";
    this.closing.abort(new Error(`MCP server "${this.id}" was closed`));
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
    await this.dropTransport();
  }

  /** The process is exiting: a stdio server's group is killed without waiting. */
  killNow(): void {
    if (this.transport instanceof BoundedStdioTransport) this.transport.killNow();
  }
}
