/**
 * Deciding whether a URL may be fetched, before any connection: the scheme, credentials, the
 * host's name and every address it resolves to. The URL reader calls this for the first request
 * and again for every redirect hop, then connects only to one of the returned addresses.
 */
import { lookup } from "node:dns/promises";
import { classifyAddress, parseIPv4, type AddressVerdict } from "./net-address.ts";

/** Every address a name resolves to (IPv4 and IPv6), as text. */
export type Resolve = (hostname: string) => Promise<string[]>;
/** Whether an address may be connected to; classifyAddress unless a test supplies its own. */
export type Classify = (address: string) => AddressVerdict;

export type UrlCheck = { ok: true; url: URL; hostname: string; literal: boolean } | { ok: false; reason: string };
export type Destination = { ok: true; url: URL; hostname: string; addresses: string[] } | { ok: false; reason: string };

/** Names that never point at the public internet, whatever DNS says. */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa", ".localdomain"];
const LOCAL_NAMES = new Set(["localhost", "home.arpa", "localdomain"]);

export const systemResolve: Resolve = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

/** A lookup cannot be aborted (getaddrinfo): stop waiting for it when the signal fires. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** The checks that need no DNS: scheme, credentials, local names, and address literals. */
export function checkUrl(raw: string, classify: Classify = classifyAddress): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `${JSON.stringify(raw.slice(0, 200))} is not a valid URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `only http and https URLs can be read, not ${url.protocol.slice(0, -1)}` };
  }
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "URLs with credentials (user:password@) are refused" };
  const bracketed = url.hostname.startsWith("[");
  const hostname = (bracketed ? url.hostname.slice(1, -1) : url.hostname).replace(/\.+$/, "");
  if (hostname === "") return { ok: false, reason: "the URL has no host" };
  // URL parsers already turn numeric spellings into dotted quads; parseIPv4 is the second opinion.
  if (bracketed || parseIPv4(hostname) !== undefined) {
    const verdict = classify(hostname);
    return verdict.public ? { ok: true, url, hostname, literal: true } : { ok: false, reason: `${verdict.reason}: not a public address` };
  }
  if (LOCAL_NAMES.has(hostname) || LOCAL_SUFFIXES.some((suffix) => hostname.endsWith(suffix))) {
    return { ok: false, reason: `${hostname} is a local name` };
  }
  if (!hostname.includes(".")) return { ok: false, reason: `${hostname} is a single-label (intranet) name` };
  return { ok: true, url, hostname, literal: false };
}

/**
 * checkUrl plus resolution: refused when ANY address is not public (a name that mixes public and
 * private answers is refused whole, so a later resolution cannot pick the private one).
 */
export async function checkDestination(raw: string, resolve: Resolve, classify: Classify = classifyAddress, signal?: AbortSignal): Promise<Destination> {
  const checked = checkUrl(raw, classify);
  if (!checked.ok) return checked;
  if (checked.literal) return { ok: true, url: checked.url, hostname: checked.hostname, addresses: [checked.hostname] };
  let addresses: string[];
  try {
    addresses = await untilAborted(resolve(checked.hostname), signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    return { ok: false, reason: `${checked.hostname} did not resolve${typeof code === "string" ? ` (${code})` : ""}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${checked.hostname} did not resolve` };
  for (const address of addresses) {
    const verdict = classify(address);
    if (!verdict.public) return { ok: false, reason: `${checked.hostname} resolves to ${verdict.reason}: not a public address` };
  }
  return { ok: true, url: checked.url, hostname: checked.hostname, addresses };
}
