import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import type { Server } from "bun";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { fakeConfig, jsonLines, makeSandbox, runZero, type Sandbox } from "../support/cli.ts";

/**
 * `read` of URLs through the whole program: the model asks, zero fetches from a stand-in web
 * server on 127.0.0.1, and the test checks what the model was sent. The stand-in passes as public
 * only through the test seam (ZERO_CLI_TEST_MODE=1 + ZERO_CLI_TEST_NETWORK); the last tests show
 * the seam does nothing without the mode variable.
 */

let fake: FakeProvider;
let sandbox: Sandbox;
let web: Server<undefined>;
let bystander: Server<undefined>; // 127.0.0.2: private, must never be reached
let webHits = 0;
let bystanderHits = 0;

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("tiny png payload \u0000\u0001")]);
/** Shape-correct, built at run time so nothing secret-looking is committed. */
const token = `ghp_${Array.from(crypto.getRandomValues(new Uint8Array(36)), (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("")}`;

beforeAll(async () => {
  fake = await startFakeProvider();
  web = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      webHits += 1;
      const url = new URL(request.url);
      if (url.pathname === "/page") {
        const html = `<html><head><title>Release notes</title><script>steal()</script></head><body><h1>Version 2</h1><p>Use <code>zero run</code> now.</p><p>leaked ${token}</p></body></html>`;
        return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
      }
      if (url.pathname === "/notes.txt") return new Response("plain line one\nplain line two\n", { headers: { "Content-Type": "text/plain" } });
      if (url.pathname === "/logo.png") return new Response(PNG, { headers: { "Content-Type": "image/png" } });
      if (url.pathname === "/to-private") return new Response(null, { status: 302, headers: { Location: `http://127.0.0.2:${bystander.port}/secret` } });
      if (url.pathname === "/to-metadata") return new Response(null, { status: 301, headers: { Location: "http://169.254.169.254/latest/meta-data/" } });
      return new Response("missing", { status: 404 });
    },
  });
  bystander = Bun.serve({ hostname: "127.0.0.2", port: 0, fetch: () => ((bystanderHits += 1), new Response("internal secrets")) });
});
afterAll(async () => {
  web.stop(true);
  bystander.stop(true);
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  webHits = 0;
  bystanderHits = 0;
  sandbox = makeSandbox();
  sandbox.writeUserConfig(fakeConfig(fake.url));
});
afterEach(() => sandbox.cleanup());

const site = () => `http://public.test:${web.port}`;
const testNetwork = () => JSON.stringify({ hosts: { "public.test": ["127.0.0.1"] }, publicAddresses: ["127.0.0.1"] });
const seam = () => ({ ZERO_CLI_TEST_MODE: "1", ZERO_CLI_TEST_NETWORK: testNetwork() });

/** The text of the last tool answer the model received. */
const toolAnswer = (index: number): string => fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool").at(-1).content;

test("an HTML page reaches the model as Markdown, labeled untrusted, scripts dropped, secrets redacted", async () => {
  fake.script([{ toolCalls: [{ name: "read", args: { path: `${site()}/page` } }] }, { text: "done" }]);
  const result = await runZero(["run", "-y", "read the notes"], { sandbox, env: seam() });
  expect(result.code).toBe(0);
  const answer = toolAnswer(1);
  expect(answer).toContain(`${site()}/page: HTTP 200, text/html`);
  expect(answer).toContain("untrusted content from the web");
  expect(answer).toContain("Title: Release notes");
  expect(answer).toContain("# Version 2");
  expect(answer).toContain("Use `zero run` now.");
  expect(answer).not.toContain("steal()");
  expect(answer).not.toContain(token);
  expect(answer).toContain("[REDACTED:github-token]");
  expect(result.stdout + result.stderr).not.toContain(token);
});

test("plain text stays as is; an image becomes typed content for an image-capable model", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "anthropic", {
      models: { fake: { provider: "anthropic", model: "fake-1", baseURL: fake.url, apiKeyEnv: "FAKE_KEY", capabilities: ["text", "image", "tools"] } },
    }),
  );
  fake.script([
    { toolCalls: [{ name: "read", args: { path: `${site()}/notes.txt` }, id: "toolu_1" }] },
    { toolCalls: [{ name: "read", args: { path: `${site()}/logo.png` }, id: "toolu_2" }] },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "-y", "x"], { sandbox, env: { ...seam(), FAKE_KEY: "k" } });
  expect(result.code).toBe(0);
  const parts = (index: number) =>
    fake.requests[index]!.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((p: any) => p.type === "tool_result");
  const text = JSON.stringify(parts(1).at(-1));
  expect(text).toContain("plain line one\\nplain line two");
  const image = parts(2).at(-1).content.find((p: any) => p.type === "image");
  expect(image.source).toEqual({ type: "base64", media_type: "image/png", data: PNG.toString("base64") });
});

test("redirects to a private address or the metadata endpoint are refused before connecting", async () => {
  fake.script([
    { toolCalls: [{ name: "read", args: { path: `${site()}/to-private` } }] },
    { toolCalls: [{ name: "read", args: { path: `${site()}/to-metadata` } }] },
    { toolCalls: [{ name: "read", args: { path: `http://127.0.0.2:${bystander.port}/secret` } }] },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox, env: seam() });
  expect(result.code).toBe(0);
  expect(toolAnswer(1)).toContain(`redirect to http://127.0.0.2:${bystander.port}/secret refused: 127.0.0.2 is loopback`);
  expect(toolAnswer(2)).toContain("169.254.169.254 is cloud metadata");
  expect(toolAnswer(3)).toContain("127.0.0.2 is loopback");
  expect(bystanderHits).toBe(0);
  const completed = jsonLines(result.stdout).filter((e) => e.type === "tool.completed");
  expect(completed.map((e) => e.status)).toEqual(["failed", "failed", "failed"]);
});

test("a URL read is network access: denied headless in ask mode while a local read in the same run is allowed", async () => {
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }, { name: "read", args: { path: `${site()}/page` } }] }, { text: "ok" }]);
  const result = await runZero(["run", "--json", "x"], { sandbox, env: seam() });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const statuses = events.filter((e) => e.type === "tool.completed").map((e) => e.status);
  expect(statuses.sort()).toEqual(["completed", "denied"]);
  expect(events.some((e) => e.type === "permission.requested" && e.risk === "network")).toBe(true);
  expect(webHits).toBe(0);
});

test("without ZERO_CLI_TEST_MODE=1 the seam is ignored: the stand-in's address is refused as loopback", async () => {
  // A literal address only: a name would make the real resolver ask the network.
  fake.script([{ toolCalls: [{ name: "read", args: { path: `http://127.0.0.1:${web.port}/page` } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox, env: { ZERO_CLI_TEST_NETWORK: testNetwork(), ZERO_CLI_TEST_MODE: "yes" } });
  expect(result.code).toBe(0);
  expect(toolAnswer(1)).toContain("127.0.0.1 is loopback");
  expect(webHits).toBe(0);
  fake.reset();
  fake.script([{ toolCalls: [{ name: "read", args: { path: `http://127.0.0.1:${web.port}/page` } }] }, { text: "ok" }]);
  const enabled = await runZero(["run", "-y", "x"], { sandbox, env: seam() });
  expect(enabled.code).toBe(0);
  expect(toolAnswer(1)).toContain("# Version 2"); // the same call with the seam on reaches the stand-in
  expect(webHits).toBe(1);
});

test("other schemes are refused with a clear error, not read as file names", async () => {
  fake.script([{ toolCalls: [{ name: "read", args: { path: "file:///etc/passwd" } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox, env: seam() });
  expect(result.code).toBe(0);
  expect(toolAnswer(1)).toContain("file:///etc/passwd: only http and https URLs can be read");
});
