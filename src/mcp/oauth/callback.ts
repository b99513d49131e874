/**
 * The loopback listener that receives the browser's redirect after authorization
 * (`http://127.0.0.1:<port>/oauth/callback`). Bound to 127.0.0.1 only. It accepts exactly one
 * callback: the one carrying the state this login sent. Anything else is answered 400 and ignored,
 * so a stray or forged request can neither complete nor cancel the login. It closes itself after
 * the answer, on `close()`, or when the time bound runs out.
 */
import { setSafeTimeout } from "../../util/timers.ts";
import { McpAuthError, sanitizeRemoteText } from "./errors.ts";

export const CALLBACK_PATH = "/oauth/callback";

export type CallbackListener = {
  /** Resolves with the authorization code; rejects on an `error=` callback with our state, the timeout, or close(). */
  readonly code: Promise<string>;
  /** Stops listening; a wait still pending rejects with `reason` (default: "cancelled"). */
  close(reason?: Error): void;
};

export type CallbackOptions = {
  serverId: string;
  port: number;
  state: string;
  timeoutMs: number;
};

const PAGE_HEADERS = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

export function listenForCallback(options: CallbackOptions): CallbackListener {
  const { serverId, state } = options;
  const settled = Promise.withResolvers<string>();
  let done = false;
  let server: ReturnType<typeof Bun.serve> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = (outcome: { code: string } | { error: Error }) => {
    if (done) return;
    done = true;
    if (timer !== undefined) clearTimeout(timer);
    // Not forced: the answer to the browser in flight still goes out.
    void server?.stop(false);
    if ("code" in outcome) settled.resolve(outcome.code);
    else settled.reject(outcome.error);
  };
  const page = (status: number, text: string) => new Response(`${text}\n`, { status, headers: PAGE_HEADERS });
  try {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: options.port,
      fetch(request) {
        const url = new URL(request.url);
        if (url.pathname !== CALLBACK_PATH) return page(404, "Not found.");
        if (request.method !== "GET") return page(405, "Method not allowed.");
        if (done || url.searchParams.get("state") !== state) return page(400, "This authorization response does not belong to a login in progress.");
        const error = url.searchParams.get("error");
        if (error !== null) {
          const description = url.searchParams.get("error_description");
          const why = sanitizeRemoteText(description ? `${error}: ${description}` : error);
          finish({ error: new McpAuthError(`authorization for MCP server "${serverId}" failed: ${why}`) });
          return page(200, "Authorization failed; you can close this tab and check the terminal.");
        }
        const code = url.searchParams.get("code");
        if (code === null || code === "") return page(400, "The authorization response has no code.");
        finish({ code });
        return page(200, `Zero CLI is authorized for MCP server "${sanitizeRemoteText(serverId, 80)}". You can close this tab.`);
      },
    });
  } catch (error) {
    throw new McpAuthError(
      `MCP server "${serverId}": cannot listen on 127.0.0.1:${options.port} for the OAuth callback (${sanitizeRemoteText((error as Error).message)}); ` +
        "set ZERO_CLI_MCP_OAUTH_CALLBACK_PORT or oauth.callbackPort to a free port",
      { cause: error },
    );
  }
  timer = setSafeTimeout(() => {
    finish({ error: new McpAuthError(`authorization for MCP server "${serverId}" timed out after ${formatSeconds(options.timeoutMs)} s`) });
  }, options.timeoutMs);
  // The listener keeps the process alive while it waits; the timer alone need not.
  timer.unref?.();
  // Nobody may be waiting (a connection that gave up): a rejection then is expected, not unhandled.
  settled.promise.catch(() => {});
  return {
    code: settled.promise,
    close: (reason) => finish({ error: reason ?? new McpAuthError(`authorization for MCP server "${serverId}" was cancelled`) }),
  };
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}
