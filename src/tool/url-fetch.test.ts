import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { classifyAddress } from "../security/net-address.ts";
import type { Classify, Resolve } from "../security/net-target.ts";
import { fetchPublicUrl, type UrlFetchOptions } from "./url-fetch.ts";

/**
 * The pinned fetcher against real local servers. Only the address 127.0.0.1 is treated as public
 * here (every other address keeps the real rules), and names resolve through a table: the system
 * resolver knows none of them, so a successful fetch also proves the socket went to the pinned
 * address rather than through a second lookup.
 */

const tls = (name: string) => ({
  cert: readFileSync(join(import.meta.dir, "testdata/tls", `${name}.crt`), "utf8"),
  key: readFileSync(join(import.meta.dir, "testdata/tls", `${name}.key`), "utf8"),
});

// 127.0.0.3 passes too, with nothing listening there: a dead first address for the fallback test.
const classify: Classify = (address) => (address === "127.0.0.1" || address === "127.0.0.3" ? { public: true } : classifyAddress(address));
const answers: Record<string, string[]> = {
  "public.test": ["127.0.0.1"],
  "other.test": ["127.0.0.1"],
  "mixed.test": ["127.0.0.1", "10.0.0.5"],
  "meta.test": ["169.254.169.254"],
  "fallback.test": ["127.0.0.3", "127.0.0.1"],
  "dead.test": ["127.0.0.3"],
};
const resolve: Resolve = async (host) => {
  const found = answers[host];
  if (!found) throw Object.assign(new Error(`no such host ${host}`), { code: "ENOTFOUND" });
  return found;
};

let web: Server<undefined>;
let bystander: Server<undefined>; // listens on 127.0.0.2: must never see a connection
let bystanderHits = 0;
let seenHosts: string[] = [];
const base = () => `http://public.test:${web.port}`;

beforeAll(() => {
  web = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      seenHosts.push(request.headers.get("host") ?? "");
      const redirect = (to: string, status = 302) => new Response(null, { status, headers: { Location: to } });
      switch (url.pathname) {
        case "/page":
          return new Response("<html><body><h1>Hi</h1></body></html>", { headers: { "Content-Type": "text/html; charset=utf-8" } });
        case "/r1":
          return redirect("/r2", 301);
        case "/r2":
          return redirect(`${base()}/r3`, 307);
        case "/r3":
          return redirect("page", 303);
        case "/loop":
          return redirect("/loop");
        case "/to":
          return redirect(url.searchParams.get("target")!);
        case "/no-location":
          return new Response(null, { status: 302 });
        case "/big":
          return new Response("x".repeat(1_000_000));
        case "/exact":
          return new Response("y".repeat(1000));
        case "/slow-body":
          return new Response(
            new ReadableStream({
              async start(controller) {
                controller.enqueue(new TextEncoder().encode("first part;"));
                await Bun.sleep(5_000);
                controller.close();
              },
            }),
          );
        case "/no-answer":
          await Bun.sleep(5_000);
          return new Response("late");
        default:
          return new Response("missing", { status: 404 });
      }
    },
  });
  bystander = Bun.serve({
    hostname: "127.0.0.2",
    port: 0,
    fetch() {
      bystanderHits += 1;
      return new Response("private");
    },
  });
});
afterAll(() => {
  web.stop(true);
  bystander.stop(true);
});

const options = (extra: Partial<UrlFetchOptions> = {}): UrlFetchOptions => ({ resolve, classify, maxBytes: 100_000, timeoutMs: 3_000, maxRedirects: 5, ...extra });
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("fetching", () => {
  test("a public name is fetched at its validated address, with the original Host header", async () => {
    seenHosts = [];
    const result = await fetchPublicUrl(`${base()}/page`, options());
    expect(result).toMatchObject({ ok: true, status: 200, contentType: "text/html; charset=utf-8", url: `${base()}/page` });
    if (result.ok) expect(text(result.body)).toContain("<h1>Hi</h1>");
    expect(seenHosts).toEqual([`public.test:${web.port}`]);
  });

  test("a redirect chain within the bound is followed, each hop recorded; relative locations resolve", async () => {
    const result = await fetchPublicUrl(`${base()}/r1`, options());
    expect(result).toMatchObject({ ok: true, status: 200, url: `${base()}/page`, redirects: [`${base()}/r2`, `${base()}/r3`, `${base()}/page`] });
  });

  test("more redirects than the bound, or a redirect without Location, is an error", async () => {
    expect(await fetchPublicUrl(`${base()}/loop`, options({ maxRedirects: 3 }))).toMatchObject({ ok: false, reason: "more than 3 redirects" });
    expect(await fetchPublicUrl(`${base()}/no-location`, options())).toMatchObject({ ok: false, reason: "HTTP 302 redirect without a Location header" });
  });

  test("when the first validated address refuses the connection, the next one is tried; none left is an error", async () => {
    const result = await fetchPublicUrl(`http://fallback.test:${web.port}/page`, options());
    expect(result.ok && result.status).toBe(200);
    const dead = await fetchPublicUrl(`http://dead.test:${web.port}/page`, options());
    expect(dead.ok).toBe(false);
  });

  test("a 404 is an answer, not a failure (the reader reports the status)", async () => {
    expect(await fetchPublicUrl(`${base()}/nothing`, options())).toMatchObject({ ok: true, status: 404 });
  });
});

describe("SSRF", () => {
  const targets = () => [
    [`http://127.0.0.2:${bystander.port}/`, "loopback"],
    [`http://[::ffff:127.0.0.2]:${bystander.port}/`, "loopback"],
    [`http://2130706434:${bystander.port}/`, "loopback"],
    ["http://169.254.169.254/latest/meta-data/", "cloud metadata"],
    [`http://localhost:${bystander.port}/`, "local name"],
    [`http://mixed.test:${web.port}/page`, "10.0.0.5 is private"],
    ["http://meta.test/", "cloud metadata"],
    ["file:///etc/passwd", "only http and https"],
    [`http://user:pw@public.test:${web.port}/page`, "credentials"],
  ];

  test("every private destination is refused, directly and as a redirect from a public page, before any connection", async () => {
    bystanderHits = 0;
    for (const [target, why] of targets()) {
      // Plain checks: Bun's toMatchObject with asymmetric matchers writes the matcher into the received object.
      const direct = await fetchPublicUrl(target!, options());
      expect(direct.ok ? "fetched" : direct.reason).toContain(why!);
      const hopped = await fetchPublicUrl(`${base()}/to?target=${encodeURIComponent(target!)}`, options());
      const reason = hopped.ok ? "fetched" : hopped.reason;
      expect(reason).toContain(`redirect to ${new URL(target!).href} refused`);
      expect(reason).toContain(why!);
    }
    expect(bystanderHits).toBe(0);
  });

  test("HTTP_PROXY in the environment is not used (a control fetch shows Bun would use it)", async () => {
    let proxied = 0;
    const proxy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => ((proxied += 1), new Response("from the proxy")) });
    const saved = process.env.HTTP_PROXY;
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    try {
      const control = await fetch(`http://127.0.0.1:${web.port}/page`);
      expect(await control.text()).toBe("from the proxy");
      const result = await fetchPublicUrl(`${base()}/page`, options());
      expect(result.ok && text(result.body)).toContain("<h1>Hi</h1>");
      expect(proxied).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.HTTP_PROXY;
      else process.env.HTTP_PROXY = saved;
      proxy.stop(true);
    }
  });
});

describe("TLS on a pinned connection", () => {
  test("the certificate is verified against the original name (and SNI asks for it)", async () => {
    const publicCert = tls("public.test");
    const otherCert = tls("other.test");
    const secure = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: [{ ...publicCert, serverName: "public.test" }, { ...otherCert, serverName: "other.test" }], fetch: (r) => new Response(`secure ${r.headers.get("host")}`) });
    try {
      const trusted = [publicCert.cert, otherCert.cert];
      const good = await fetchPublicUrl(`https://public.test:${secure.port}/`, options({ trustedCertificates: trusted }));
      expect(good.ok && text(good.body)).toBe(`secure public.test:${secure.port}`);
      const other = await fetchPublicUrl(`https://other.test:${secure.port}/`, options({ trustedCertificates: trusted }));
      expect(other.ok && text(other.body)).toBe(`secure other.test:${secure.port}`);
      // Only public.test's certificate trusted: other.test's server cannot pass as public.test's.
      const untrusted = await fetchPublicUrl(`https://other.test:${secure.port}/`, options({ trustedCertificates: [publicCert.cert] }));
      expect(untrusted.ok).toBe(false);
      const system = await fetchPublicUrl(`https://public.test:${secure.port}/`, options());
      expect(system).toMatchObject({ ok: false, reason: expect.stringMatching(/certificate|CERT/i) });
    } finally {
      secure.stop(true);
    }
  });
});

describe("TLS names and downgrades", () => {
  test("a trusted certificate for another name is refused for the name asked (hostname verification, not just the chain)", async () => {
    const publicCert = tls("public.test");
    const onlyPublic = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: publicCert, fetch: () => new Response("secure") });
    try {
      const trusted = [publicCert.cert, tls("other.test").cert];
      const wrongName = await fetchPublicUrl(`https://other.test:${onlyPublic.port}/`, options({ trustedCertificates: trusted }));
      expect(wrongName.ok ? "fetched" : wrongName.reason).toContain("ALTNAME");
      expect((await fetchPublicUrl(`https://public.test:${onlyPublic.port}/`, options({ trustedCertificates: trusted }))).ok).toBe(true);
    } finally {
      onlyPublic.stop(true);
    }
  });

  test("a redirect from https to plain http is refused", async () => {
    const publicCert = tls("public.test");
    const secure = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: publicCert, fetch: () => new Response(null, { status: 302, headers: { Location: `${base()}/page` } }) });
    seenHosts = [];
    try {
      const result = await fetchPublicUrl(`https://public.test:${secure.port}/`, options({ trustedCertificates: [publicCert.cert] }));
      expect(result.ok ? "fetched" : result.reason).toContain("redirect from https to plain http");
      expect(seenHosts).toEqual([]);
    } finally {
      secure.stop(true);
    }
  });
});

describe("bounds", () => {
  test("a resolver that never answers is bounded by the time limit and by cancellation", async () => {
    const hanging: Resolve = () => new Promise(() => {});
    let started = performance.now();
    const timedOut = await fetchPublicUrl("http://slow-dns.test/", options({ resolve: hanging, timeoutMs: 300 }));
    expect(timedOut).toEqual({ ok: false, reason: "no answer within 300 ms", redirects: [] });
    expect(performance.now() - started).toBeLessThan(1_500);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    started = performance.now();
    const canceled = await fetchPublicUrl("http://slow-dns.test/", options({ resolve: hanging, signal: controller.signal }));
    expect(canceled).toEqual({ ok: false, reason: "canceled", redirects: [] });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  test("an oversized body is cut at maxBytes and marked; a body of exactly maxBytes is whole", async () => {
    const big = await fetchPublicUrl(`${base()}/big`, options({ maxBytes: 1000 }));
    expect(big).toMatchObject({ ok: true, truncated: "size" });
    if (big.ok) expect(big.body.length).toBe(1000);
    const exact = await fetchPublicUrl(`${base()}/exact`, options({ maxBytes: 1000 }));
    expect(exact.ok && exact.body.length).toBe(1000);
    expect(exact.ok && exact.truncated).toBeUndefined();
  });

  test("a slow body is cut at the time bound, keeping what arrived", async () => {
    const started = performance.now();
    const slow = await fetchPublicUrl(`${base()}/slow-body`, options({ timeoutMs: 500 }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(slow).toMatchObject({ ok: true, truncated: "time" });
    if (slow.ok) expect(text(slow.body)).toBe("first part;");
  });

  test("no answer within the bound is an error; the caller's cancel is 'canceled'", async () => {
    const started = performance.now();
    expect(await fetchPublicUrl(`${base()}/no-answer`, options({ timeoutMs: 400 }))).toMatchObject({ ok: false, reason: "no answer within 400 ms" });
    expect(performance.now() - started).toBeLessThan(2_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await fetchPublicUrl(`${base()}/no-answer`, options({ signal: controller.signal }))).toMatchObject({ ok: false, reason: "canceled" });
  });
});
