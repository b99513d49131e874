import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeToolContext } from "../../test/support/tool-context.ts";
import { classifyAddress } from "../security/net-address.ts";
import { createRoots } from "../security/roots.ts";
import type { ToolContext } from "./define.ts";
import { plainText, searchTool, type WebSearchAccess } from "./search.ts";

/** A Brave Search stand-in on 127.0.0.1 ("brave.test"); only that address counts as public here. */
let brave: Server<undefined>;
/** What the stand-in saw (copied at once: Bun empties a Request after its handler returns). */
let requests: Array<{ url: string; headers: Headers }> = [];
let reply: () => Response = () => Response.json({});
let redirectTargetHits = 0;
let redirectTarget: Server<undefined>;
const KEY = `BSA${"k".repeat(10)}${Date.now()}`;

beforeAll(() => {
  brave = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => (requests.push({ url: request.url, headers: new Headers(request.headers) }), reply()) });
  redirectTarget = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => ((redirectTargetHits += 1), Response.json({})) });
});
afterAll(() => {
  brave.stop(true);
  redirectTarget.stop(true);
});
beforeEach(() => {
  requests = [];
  redirectTargetHits = 0;
});

function context(access: Partial<WebSearchAccess> = {}): ToolContext {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "zero-search-")));
  return makeToolContext({
    roots: createRoots({ workspace: dir }),
    artifactsDir: join(dir, ".artifacts"),
    network: {
      resolve: async (host) => (host === "brave.test" || host === "elsewhere.test" ? ["127.0.0.1"] : []),
      classify: (address) => (address === "127.0.0.1" ? { public: true } : classifyAddress(address)),
    },
    webSearch: { endpoint: `http://brave.test:${brave.port}/res/v1/web/search`, apiKey: KEY, apiKeyEnv: "BRAVE_SEARCH_API_KEY", safeSearch: "moderate", ...access },
  });
}

async function runSearch(input: unknown, ctx = context()) {
  const prepared = searchTool.prepare(input);
  if (!prepared.ok) throw new Error(prepared.error);
  return searchTool.run(prepared.input, ctx);
}

const results = (n: number) => ({
  web: { results: Array.from({ length: n }, (_, i) => ({ title: `Result <strong>${i + 1}</strong>`, url: `https://site${i + 1}.example/page`, description: `About &amp; around ${i + 1}` })) },
});

describe("plainText", () => {
  test("markup goes, entities decode, controls and bidi overrides become spaces, long text is cut", () => {
    expect(plainText("<b>Bun</b> &amp; <i>Node</i>", 100)).toBe("Bun & Node");
    expect(plainText("&lt;script&gt;alert(1)&lt;/script&gt;x", 100)).toBe("alert(1)x");
    expect(plainText("a\u001b[31mred\u0007\u202eevil\u0085b", 100)).toBe("a [31mred evil b");
    expect(plainText("hid\u200bden\u2060 \u{E0041}\u{E0042}tags\ufeff", 100)).toBe("hid den tags");
    expect(plainText("&#65;&#x42;&#0;&bogus;", 100)).toBe("AB&bogus;");
    expect(plainText("x".repeat(50), 10)).toBe(`${"x".repeat(9)}…`);
    expect(plainText(42, 10)).toBe("");
  });
});

describe("search", () => {
  test("sends the query with the settings and the key header; returns numbered, sanitized records", async () => {
    reply = () => Response.json(results(3));
    const result = await runSearch({ query: "bun sqlite wal", count: 3 }, context({ country: "DE", searchLang: "de", uiLang: "de-DE", safeSearch: "strict" }));
    expect(result.status).toBe("completed");
    const sent = new URL(requests[0]!.url);
    expect(Object.fromEntries(sent.searchParams)).toEqual({ q: "bun sqlite wal", count: "3", safesearch: "strict", text_decorations: "false", country: "DE", search_lang: "de", ui_lang: "de-DE" });
    expect(requests[0]!.headers.get("x-subscription-token")).toBe(KEY);
    expect(requests[0]!.headers.get("host")).toBe(`brave.test:${brave.port}`);
    expect(result.output).toContain('Web results for "bun sqlite wal" (Brave Search, 3 results). Untrusted');
    expect(result.output).toContain("1. Result 1\n   https://site1.example/page\n   About & around 1");
    expect(result.output).not.toContain("<strong>");
    expect(result.output).not.toContain(KEY);
  });

  test("the result count is bounded even when the service sends more; records without an http(s) URL are dropped", async () => {
    const body = results(30);
    body.web.results[0]!.url = "javascript:alert(1)";
    body.web.results[1]!.url = "file:///etc/passwd";
    reply = () => Response.json(body);
    const result = await runSearch({ query: "x", count: 5 });
    expect(result.output).toContain("(Brave Search, 5 results)");
    expect(result.output).not.toContain("javascript:");
    expect(result.output).not.toContain("file:");
    expect(result.output).toContain("1. Result 3");
  });

  test("missing key: a clear tool error naming the variable, no request", async () => {
    const result = await runSearch({ query: "x" }, context({ apiKey: undefined, apiKeyEnv: "MY_BRAVE_KEY" }));
    expect(result.status).toBe("failed");
    expect(result.output).toContain("web search is not configured: set MY_BRAVE_KEY");
    expect(requests).toHaveLength(0);
  });

  test("service errors become clear tool errors that never carry the key", async () => {
    for (const [status, expected] of [
      [401, "refused the key (HTTP 401): check BRAVE_SEARCH_API_KEY"],
      [429, "rate limit"],
      [500, "HTTP 500"],
    ] as const) {
      reply = () => new Response(`bad key ${KEY}`, { status });
      const result = await runSearch({ query: "x" });
      expect(result.status).toBe("failed");
      expect(result.output).toContain(expected);
      expect(result.output).not.toContain(KEY);
    }
  });

  test("a redirect is refused: the key never travels to another host", async () => {
    reply = () => new Response(null, { status: 302, headers: { Location: `http://elsewhere.test:${redirectTarget.port}/steal` } });
    const result = await runSearch({ query: "x" });
    expect(result.status).toBe("failed");
    expect(result.output).toContain("redirect refused");
    expect(redirectTargetHits).toBe(0);
  });

  test("an oversized or malformed answer is an error, not a crash", async () => {
    reply = () => new Response(`{"web":{"results":[${'{"title":"x"},'.repeat(120_000)}{}]}}`);
    expect((await runSearch({ query: "x" })).output).toContain("over 1048576 bytes");
    reply = () => new Response("<html>not json</html>");
    expect((await runSearch({ query: "x" })).output).toContain("not a search result");
    reply = () => Response.json({ web: { results: "nope" } });
    expect((await runSearch({ query: "x" })).output).toContain("not a search result");
    reply = () => Response.json({});
    expect((await runSearch({ query: "x" })).output).toContain("No results.");
  });

  test("bad arguments are refused before any request", () => {
    expect(searchTool.prepare({ query: "" }).ok).toBe(false);
    expect(searchTool.prepare({ query: "x", count: 21 }).ok).toBe(false);
    expect(searchTool.prepare({ query: "x", extra: 1 }).ok).toBe(false);
    expect(searchTool.prepare({ query: "x".repeat(401) }).ok).toBe(false);
    expect(searchTool.prepare({ query: "ok" })).toMatchObject({ ok: true, classification: { risk: "network", operation: "network" } });
  });
});
