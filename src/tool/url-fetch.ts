/**
 * Fetching a public URL without letting it reach anything private (issue 8's transport).
 *
 * Every hop is checked before it connects (checkDestination: scheme, credentials, local names,
 * every resolved address), then the request goes to the validated IP itself: the URL carries the
 * address, `Host` carries the original host, and `tls.serverName` makes Bun send SNI for and verify
 * the certificate against the original name (checked on this machine: a wrong serverName fails with
 * ERR_TLS_CERT_ALTNAME_INVALID). So a DNS answer that changes between check and connect cannot
 * redirect the socket. Proxies are never used (Bun's fetch honors HTTP_PROXY even for literal
 * IPs), redirects are followed by hand and re-checked, and the body is read under a byte and a
 * time bound.
 */
import { checkDestination, type Classify, type Resolve } from "../security/net-target.ts";

/** How a run reaches the network: its resolver and, in tests only, its own address rules and CAs. */
export type NetworkAccess = {
  resolve: Resolve;
  /** Defaults to the real public-address rules; tests pass their own. */
  classify?: Classify;
  /** Certificates to trust instead of the system's; only tests set it (it is not reachable from config). */
  trustedCertificates?: string[];
};

export type UrlFetchOptions = NetworkAccess & {
  maxBytes: number;
  /** For the whole fetch, every hop and the body included. */
  timeoutMs: number;
  maxRedirects: number;
  signal?: AbortSignal;
  /** Extra request headers (an API key for a fixed endpoint); never sent to a redirect target, as redirects are refused then. */
  headers?: Record<string, string>;
};

export type UrlFetchResult =
  | {
      ok: true;
      /** The URL that answered, after redirects. */
      url: string;
      status: number;
      contentType: string;
      body: Uint8Array;
      /** Why the body stops early, when it does. */
      truncated?: "size" | "time";
      redirects: string[];
    }
  | { ok: false; reason: string; redirects: string[] };

/** Under the tool's own timeout, so a slow page is cut (keeping what arrived) before the call is stopped. */
export function fetchBudget(toolTimeoutMs: number, cap: number): number {
  return Math.min(cap, Math.max(Math.floor(toolTimeoutMs / 2), toolTimeoutMs - 2_000));
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = "zero-cli (+https://github.com/zero-cli) url-read";

export async function fetchPublicUrl(raw: string, options: UrlFetchOptions): Promise<UrlFetchResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const redirects: string[] = [];
  let current = raw;
  for (let hop = 0; ; hop += 1) {
    let destination: Awaited<ReturnType<typeof checkDestination>>;
    try {
      destination = await checkDestination(current, options.resolve, options.classify, signal);
    } catch (error) {
      return { ok: false, reason: failureReason(error, signal, options), redirects };
    }
    if (!destination.ok) return { ok: false, reason: hop === 0 ? destination.reason : `redirect to ${current} refused: ${destination.reason}`, redirects };
    const connected = await connectAny(destination.url, destination.hostname, destination.addresses, signal, options);
    if ("failure" in connected) return { ok: false, reason: connected.failure, redirects };
    const response = connected.response;
    if (REDIRECT_STATUSES.has(response.status)) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get("location");
      if (location === null) return { ok: false, reason: `HTTP ${response.status} redirect without a Location header`, redirects };
      // Extra headers carry credentials for one endpoint: they never follow a redirect.
      const bound = options.headers ? 0 : options.maxRedirects;
      if (hop >= bound) return { ok: false, reason: bound === 0 ? `HTTP ${response.status} redirect refused (redirects are not followed here)` : `more than ${bound} redirects`, redirects };
      let next: URL;
      try {
        next = new URL(location, destination.url);
      } catch {
        return { ok: false, reason: `HTTP ${response.status} redirect to an invalid URL`, redirects };
      }
      if (destination.url.protocol === "https:" && next.protocol === "http:") {
        return { ok: false, reason: `redirect from https to plain http (${next.host}) refused`, redirects };
      }
      current = next.href;
      redirects.push(current);
      continue;
    }
    const contentType = response.headers.get("content-type") ?? "application/octet-stream";
    const body = await readBounded(response, options.maxBytes, signal, options.signal);
    if (body.aborted) return { ok: false, reason: "canceled", redirects };
    return { ok: true, url: destination.url.href, status: response.status, contentType, body: body.bytes, redirects, ...(body.truncated ? { truncated: body.truncated } : {}) };
  }
}

/** Tries the validated addresses in resolver order until one connects (all of them passed the check). */
async function connectAny(url: URL, hostname: string, addresses: string[], signal: AbortSignal, options: UrlFetchOptions): Promise<{ response: Response } | { failure: string }> {
  let failure = "no address to connect to";
  for (const address of addresses) {
    try {
      return { response: await pinnedFetch(url, hostname, address, signal, options) };
    } catch (error) {
      failure = failureReason(error, signal, options);
      if (signal.aborted) break;
    }
  }
  return { failure };
}

/** One request to one validated address, never through a proxy, never following redirects. */
function pinnedFetch(url: URL, hostname: string, address: string, signal: AbortSignal, options: UrlFetchOptions): Promise<Response> {
  const target = new URL(url.href);
  target.hostname = address.includes(":") ? `[${address}]` : address;
  const ca = options.trustedCertificates;
  const init = {
    method: "GET",
    headers: { "User-Agent": USER_AGENT, Accept: "text/html, text/plain;q=0.9, */*;q=0.5", ...options.headers, Host: url.host },
    redirect: "manual",
    proxy: false,
    signal,
    ...(url.protocol === "https:" ? { tls: { serverName: hostname, ...(ca ? { ca } : {}) } } : {}),
  } as RequestInit;
  return fetch(target, init);
}

async function readBounded(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
  caller: AbortSignal | undefined,
): Promise<{ bytes: Uint8Array; truncated?: "size" | "time"; aborted?: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array() };
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  let truncated: "size" | "time" | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (value.length >= room && (value.length > room || !(await atEnd(reader)))) {
        truncated = "size";
        break;
      }
    }
  } catch {
    // A stream cut by the time bound keeps what arrived.
  } finally {
    signal.removeEventListener("abort", stop);
    void stop();
  }
  if (caller?.aborted) return { bytes: new Uint8Array(), aborted: true };
  if (truncated === undefined && signal.aborted) truncated = "time";
  return { bytes: Buffer.concat(chunks, size), ...(truncated ? { truncated } : {}) };
}

/** Whether a body that exactly filled the bound has nothing more (so it is whole, not truncated). */
async function atEnd(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }): Promise<boolean> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return true;
    if (value !== undefined && value.length > 0) return false;
  }
}

function failureReason(error: unknown, signal: AbortSignal, options: UrlFetchOptions): string {
  if (options.signal?.aborted) return "canceled";
  if (signal.aborted) return `no answer within ${options.timeoutMs} ms`;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message.split("\n")[0]!.replace(/ For more information.*$/, "") : String(error);
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}
