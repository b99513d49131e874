// Benchmark of the MCP client: `node_modules/.bin/bun bench/mcp.ts` (after a build). Medians over
// BENCH_MCP_RUNS runs (default 7), the sides of each comparison alternating:
// 1. start-up: `zero run --json` from spawn to the fake's first model request, with no MCP server,
//    with one and with three stdio servers (server-everything under node) that the root agent may
//    use. Connecting in parallel means three cost about what one does; serial would cost three times
//    (on a 2-core machine three node start-ups compete for CPU, so 1b compares against the SDK's own
//    clients connecting side by side in the same run).
// 2. per-call overhead: BENCH_MCP_CALLS calls of server-everything's `echo`, in this process,
//    through zero's tool (validation, classification, bounding, redaction of the contract) vs the
//    SDK's own Client.callTool on a second server instance, in alternating blocks.
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, spawnZero } from "../test/support/cli.ts";
import { createMcpHub } from "../src/mcp/hub.ts";
import { createRedactor } from "../src/security/redact.ts";
import type { EffectiveConfig } from "../src/config/schema.ts";
import type { ToolContext } from "../src/tool/define.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_MCP_RUNS ?? 7));
const CALLS = Math.max(10, Number(process.env.BENCH_MCP_CALLS ?? 200));
const EVERYTHING = resolve(import.meta.dir, "../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const server = { type: "stdio", command: "node", args: [EVERYTHING, "stdio"] };

async function startup() {
  const fake = await startFakeProvider({ fallback: () => ({ text: "done" }) });
  const sandbox = makeSandbox();
  const variants: Record<string, Record<string, unknown>> = {
    none: fakeConfig(fake.url),
    one: fakeConfig(fake.url, "chat", { mcp: { a: server }, agents: { build: { mcpServers: ["a"] } } }),
    three: fakeConfig(fake.url, "chat", { mcp: { a: server, b: server, c: server }, agents: { build: { mcpServers: ["a", "b", "c"] } } }),
  };
  const samples: Record<string, number[]> = { none: [], one: [], three: [] };
  try {
    for (let i = 0; i <= RUNS; i++) {
      for (const [name, config] of Object.entries(variants)) {
        sandbox.writeUserConfig(config);
        fake.reset();
        const startedAt = performance.timeOrigin + performance.now();
        const run = spawnZero(["run", "--json", "hi"], { sandbox, timeoutMs: 60_000 });
        const result = await run.result;
        if (result.code !== 0 || fake.requests.length !== 1) throw new Error(`${name}: exit ${result.code}, ${fake.requests.length} requests: ${result.stderr.slice(0, 400)}`);
        const tools = fake.requests[0]!.body.tools?.length ?? 0;
        if (name !== "none" && tools < 10) throw new Error(`${name}: only ${tools} tools offered`);
        if (i > 0) samples[name]!.push(fake.requests[0]!.receivedAt - startedAt); // run 0 warms caches
      }
    }
  } finally {
    sandbox.cleanup();
    await fake.close();
  }
  const none = median(samples.none!);
  const one = median(samples.one!);
  const three = median(samples.three!);
  console.log(`start → first model request (median of ${RUNS}): no MCP ${none.toFixed(0)} ms, 1 stdio server ${one.toFixed(0)} ms, 3 stdio servers ${three.toFixed(0)} ms`);
  console.log(`  MCP cost: 1 server +${(one - none).toFixed(0)} ms, 3 servers +${(three - none).toFixed(0)} ms (×${((three - none) / Math.max(1, one - none)).toFixed(2)} of one; serial would be ×3)`);
}

/** 1b: three servers connected and listed in this process: zero's hub vs the SDK's clients side by side (Promise.all). */
async function parallelConnect() {
  const config = { mcp: Object.fromEntries(["a", "b", "c"].map((id) => [id, { ...server, cwd: "/", env: {}, enabled: true }])), agents: {} } as unknown as EffectiveConfig;
  const ours: number[] = [];
  const sdk: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    let started = performance.now();
    const hub = createMcpHub({ config, env: process.env, log: () => {}, interactive: false, servers: ["a", "b", "c"] });
    await hub.start();
    if (hub.statuses().some((status) => status.state !== "connected")) throw new Error(JSON.stringify(hub.statuses()));
    if (i > 0) ours.push(performance.now() - started);
    await hub.close();
    started = performance.now();
    const clients = await Promise.all(
      ["a", "b", "c"].map(async () => {
        const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
        await client.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING, "stdio"], stderr: "ignore" }));
        await client.listTools();
        return client;
      }),
    );
    if (i > 0) sdk.push(performance.now() - started);
    await Promise.all(clients.map((client) => client.close()));
  }
  const a = median(ours);
  const b = median(sdk);
  console.log(`3 stdio servers connected + tools listed, in process (median of ${RUNS}): zero's hub ${a.toFixed(0)} ms, SDK clients in parallel ${b.toFixed(0)} ms (×${(a / b).toFixed(2)})`);
}

function toolContext(): ToolContext {
  return {
    callId: "bench",
    roots: { workspace: "/", roots: [] } as unknown as ToolContext["roots"],
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    progress: () => {},
    env: process.env,
    artifacts: { put: () => ({ uri: "artifact://none", sha256: "none" }), get: () => new Uint8Array() } as unknown as ToolContext["artifacts"],
    knownArtifacts: new Set(),
    maxAttachmentBytes: 10 * 1024 * 1024,
    redactor: createRedactor({ knownSecrets: [] }),
  };
}

async function perCall() {
  const config = { mcp: { everything: { ...server, cwd: "/", env: {}, enabled: true } }, agents: {} } as unknown as EffectiveConfig;
  const hub = createMcpHub({ config, env: process.env, log: () => {}, interactive: false, servers: ["everything"] });
  await hub.start();
  const agent = { name: "bench", tools: [], mcpServers: ["everything"] } as unknown as Parameters<typeof hub.source.tools>[0];
  const echo = [...hub.source.tools(agent)].find((tool) => tool.name === "mcp__everything__echo");
  if (!echo) throw new Error(`no echo tool: ${JSON.stringify(hub.statuses())}`);
  const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command: "node", args: [EVERYTHING, "stdio"], stderr: "ignore" }));
  const ctx = toolContext();
  const ours: number[] = [];
  const sdk: number[] = [];
  try {
    for (let block = 0; block < 10; block++) {
      for (let i = 0; i < CALLS / 10; i++) {
        let started = performance.now();
        const prepared = echo.prepare({ message: `hello ${i}` });
        if (!prepared.ok) throw new Error(prepared.error);
        const result = await echo.run(prepared.input, ctx);
        if (result.status !== "completed" || !result.output.includes(`hello ${i}`)) throw new Error(`echo: ${JSON.stringify(result)}`);
        ours.push(performance.now() - started);
        started = performance.now();
        const direct = await client.callTool({ name: "echo", arguments: { message: `hello ${i}` } });
        if (!JSON.stringify(direct.content).includes(`hello ${i}`)) throw new Error("sdk echo failed");
        sdk.push(performance.now() - started);
      }
    }
  } finally {
    await client.close();
    await hub.close();
  }
  const a = median(ours);
  const b = median(sdk);
  console.log(`echo per call (median of ${ours.length}): zero's MCP tool ${a.toFixed(3)} ms, SDK Client.callTool ${b.toFixed(3)} ms (×${(a / b).toFixed(2)}, +${(a - b).toFixed(3)} ms)`);
}

await startup();
await parallelConnect();
await perCall();
