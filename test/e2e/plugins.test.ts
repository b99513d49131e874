/**
 * Lifecycle plugins as a user meets them: the real CLI loading plugin modules from the
 * configuration, the scripted fake model, and what the fake was sent. Plugins written here import
 * the real plugin API by absolute path, as a plugin outside this checkout would.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FakeProvider, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { ZERO_BIN, fakeConfig, jsonLines, runZero, waitUntil, type Sandbox } from "../support/cli.ts";
import { envelope, scriptBySender, spawn, task, toolNames, toolResults } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(30_000);

const DEFINE = resolve(import.meta.dir, "../../src/plugin/define.ts");
const EXAMPLE = resolve(import.meta.dir, "../../examples/plugins/command-guard.ts");
const CORE = ["read", "write", "run", "find"];

/** A plugin module outside the workspace (or at `dir`): `body` follows the import of the API. */
function writePlugin(name: string, body: string, dir = join(sandbox.root, "plugins")): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, `import { appendFileSync, writeFileSync } from "node:fs";\nimport { definePlugin, definePluginTool, z } from ${JSON.stringify(DEFINE)};\n${body}\n`);
  return file;
}

const logFile = () => join(sandbox.root, "hooks.log");
const logged = () => (existsSync(logFile()) ? readFileSync(logFile(), "utf8").split("\n").filter((line) => line !== "") : []);
/** Source of a statement appending `expression` (a string) to the hook log. */
const log = (expression: string) => `appendFileSync(${JSON.stringify(logFile())}, ${expression} + "\\n")`;

function configWith(plugins: string[], extra: Record<string, unknown> = {}) {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { plugins, ...extra }));
}

const systemText = (req: RecordedRequest): string => req.body.messages.find((m: any) => m.role === "system")?.content ?? "";

test("PLUG-03/05: beforeTool's rewrite is what runs; a listed plugin tool is offered with its schema and called; an unlisted one is not; bad input is a schema error", async () => {
  const file = writePlugin(
    "rewrite",
    `export default definePlugin({
  hooks: {
    beforeTool: ({ call }) => call.tool === "read" && (call.input as any)?.path === "notes/missing.md" ? { ...call, input: { path: "README.md" } } : undefined,
  },
  tools: [
    definePluginTool({ name: "shout", description: "Upper-cases a text.", inputSchema: z.object({ text: z.string().describe("what to shout") }), risk: "read", kind: "other", execute: ({ text }) => text.toUpperCase() + "!" }),
    definePluginTool({ name: "hidden", description: "Listed by no agent.", inputSchema: z.object({}), risk: "read", kind: "other", execute: () => "hidden" }),
  ],
});`,
  );
  configWith([file], { agents: { build: { tools: [...CORE, "shout"] } } });
  fake.script([
    {
      toolCalls: [
        { name: "read", args: { path: "notes/missing.md" }, id: "call_read" },
        { name: "shout", args: { text: "hi" }, id: "call_shout" },
        { name: "shout", args: { text: 5 }, id: "call_bad" },
      ],
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "--json", "read the notes"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  const offered = fake.requests[0]!.body.tools.find((t: any) => t.function.name === "shout");
  expect(offered.function).toMatchObject({ description: "Upper-cases a text.", parameters: { type: "object", properties: { text: { type: "string", description: "what to shout" } } } });
  expect(toolNames(fake.requests[0]!)).not.toContain("hidden");
  const answers = toolResults(fake.requests[1]!);
  expect(answers.call_read).toContain("The answer is 42.");
  expect(answers.call_shout).toBe("HI!");
  expect(answers.call_bad).toStartWith("invalid input for shout: text: ");
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "tool.requested" && e.callId === "call_read")).toMatchObject({ tool: "read", input: { path: "README.md" }, target: "README.md" });
  expect(events.find((e) => e.type === "tool.requested" && e.callId === "call_shout")).toMatchObject({ risk: "read", operation: "read", target: "plugin:shout" });
});

test("PLUG-03: a rewrite is judged by policy — read turned into write is denied in read-only mode", async () => {
  const file = writePlugin("to-write", `export default definePlugin({ hooks: { beforeTool: ({ call }) => ({ callId: call.callId, tool: "write", input: { operation: "write", path: "b.txt", content: "planted" } }) } });`);
  configWith([file]);
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }] }, { text: "ok" }]);
  const result = await runZero(["run", "--json", "--permission-mode", "read-only", "read it"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(existsSync(join(sandbox.workspace, "b.txt"))).toBe(false);
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "permission.decided")).toMatchObject({ callId: "call_read", tool: "write", decision: "deny", source: "mode" });
  expect(toolResults(fake.requests[1]!).call_read).toContain("read-only mode does not allow editing files");
});

test("PERM-11: a network-risk plugin tool in accept-edits mode asks for permission; headless, it is denied and never runs", async () => {
  const ran = join(sandbox.root, "lookup-ran");
  const file = writePlugin(
    "net",
    `export default definePlugin({ tools: [definePluginTool({ name: "lookup", description: "Looks a word up online.", inputSchema: z.object({ word: z.string() }), risk: "network", kind: "fetch", execute: ({ word }) => { writeFileSync(${JSON.stringify(ran)}, word); return "found"; } })] });`,
  );
  configWith([file], { agents: { build: { tools: [...CORE, "lookup"] } } });
  fake.script([{ toolCalls: [{ name: "lookup", args: { word: "zero" }, id: "call_lookup" }] }, { text: "ok" }]);
  const result = await runZero(["run", "--json", "--permission-mode", "accept-edits", "look it up"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "permission.requested")).toMatchObject({ callId: "call_lookup", tool: "lookup", risk: "network", operation: "network", target: "plugin:lookup", permissionMode: "accept-edits" });
  expect(events.find((e) => e.type === "permission.decided")).toMatchObject({ callId: "call_lookup", decision: "deny" });
  expect(events.find((e) => e.type === "tool.completed")).toMatchObject({ callId: "call_lookup", status: "denied" });
  expect(existsSync(ran)).toBe(false);
});

test("PLUG-02: hooks fire in the documented order for a one-tool run", async () => {
  const file = writePlugin(
    "order",
    `export default definePlugin({ hooks: {
  beforeRun: (c) => { ${log('`beforeRun ${c.agent}`')}; },
  beforeStep: (c) => { ${log('`beforeStep ${c.step}`')}; },
  beforeModel: () => { ${log('"beforeModel"')}; },
  afterModel: (r) => { ${log('`afterModel ${r.toolCalls.length}`')}; },
  beforeTool: (c) => { ${log('`beforeTool ${c.call.tool}`')}; },
  afterTool: (r) => { ${log('`afterTool ${r.tool} ${r.status}`')}; },
  shouldStop: (c) => { ${log('`shouldStop ${c.step}`')}; return false; },
  afterRun: (r) => { ${log('`afterRun ${r.status} ${r.exitCode}`')}; },
} });`,
  );
  configWith([file]);
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }] }, { text: "42" }]);
  const result = await runZero(["run", "read it"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(logged()).toEqual([
    "beforeRun build",
    "beforeStep 1",
    "beforeModel",
    "afterModel 1",
    "beforeTool read",
    "afterTool read completed",
    "shouldStop 1",
    "beforeStep 2",
    "beforeModel",
    "afterModel 0",
    "afterRun completed 0",
  ]);
});

test("PLUG-02: onError fires on a provider failure (HTTP 500), afterRun after it", async () => {
  const file = writePlugin(
    "errors",
    `export default definePlugin({ hooks: {
  onError: (error: any, c) => { ${log('`onError ${error.name} ${error.statusCode} ${c.agent}`')}; },
  afterRun: (r) => { ${log('`afterRun ${r.status} ${r.reason}`')}; },
} });`,
  );
  configWith([file]);
  const down = { kind: "error" as const, status: 500, message: "upstream exploded", headers: { "retry-after-ms": "0" } };
  fake.script([down, down, down]);
  const result = await runZero(["run", "hello"], { sandbox });
  expect(result.code).toBe(3);
  expect(logged()).toEqual(["onError ProviderError 500 build", "afterRun failed provider_error"]);
});

test("PLUG-02: onAgentSpawn fires when a delegated child starts, naming parent and child", async () => {
  const file = writePlugin(
    "spawn",
    `export default definePlugin({ hooks: {
  onAgentSpawn: (parent, child) => { ${log('`spawn ${parent.agent}(${parent.depth}) -> ${child.agent}(${child.depth}) ${child.parentRunId === parent.runId}`')}; },
  beforeRun: (c) => { ${log('`beforeRun ${c.agent}`')}; },
} });`,
  );
  configWith([file]);
  scriptBySender(fake, {
    root: [spawn("d1", { ...task("look-around"), agent: "explore" }), { text: "done" }],
    "look-around": [envelope({ summary: "nothing to see" })],
  });
  const result = await runZero(["run", "look around"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(logged()).toEqual(["beforeRun build", "spawn build(0) -> explore(1) true", "beforeRun explore"]);
});

test("a throwing or rejecting hook is reported (notice, onError) and the run completes; a throwing beforeTool blocks its call", async () => {
  const file = writePlugin(
    "broken",
    `export default definePlugin({ hooks: {
  beforeRun: () => { throw new Error("boom at start"); },
  afterModel: async () => { throw new Error("late boom"); },
  beforeTool: () => { throw new Error("no verdict"); },
  onError: (error: any) => { ${log('`onError ${error.hook}`')}; },
} });`,
  );
  configWith([file]);
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }] }, { text: "The answer is 42." }]);
  const human = await runZero(["run", "read it"], { sandbox });
  expect(human.code).toBe(0);
  expect(human.stdout).toBe("The answer is 42.\n");
  expect(human.stderr).toContain(`zero: plugin ${file}: beforeRun failed: boom at start\n`);
  expect(human.stderr).toContain(`zero: plugin ${file}: afterModel failed: late boom\n`);
  expect(toolResults(fake.requests[1]!).call_read).toBe(`blocked: plugin ${file} failed in beforeTool (no verdict); the call was not run`);
  expect(logged()).toEqual(["onError beforeRun", "onError afterModel", "onError beforeTool", "onError afterModel"]);

  fake.reset();
  fake.script([{ text: "fine" }]);
  const json = await runZero(["run", "--json", "hi"], { sandbox });
  expect(json.code).toBe(0);
  const notices = jsonLines(json.stdout).filter((e) => e.type === "notice");
  expect(notices.map((e) => [e.source, e.message])).toEqual([
    ["plugin", `plugin ${file}: beforeRun failed: boom at start`],
    ["plugin", `plugin ${file}: afterModel failed: late boom`],
  ]);
});

test("PLUG-04: shouldStop ends the run after step 2 — exactly two model calls, exit 4; beforeModel's system text reaches the model", async () => {
  const file = writePlugin(
    "stop",
    `export default definePlugin({ hooks: {
  beforeModel: (request) => ({ ...request, system: request.system + "\\nPLUGIN RULE: answer in haiku." }),
  shouldStop: ({ step }) => step > 1,
} });`,
  );
  configWith([file]);
  const read = { toolCalls: [{ name: "read", args: { path: "README.md" } }] };
  fake.script([read, { toolCalls: [{ name: "find", args: { pattern: "*.ts" } }] }, { text: "never asked" }]);
  const result = await runZero(["run", "--json", "explore"], { sandbox });
  expect(result.code).toBe(4);
  expect(fake.requests).toHaveLength(2);
  expect(systemText(fake.requests[0]!)).toEndWith("\nPLUGIN RULE: answer in haiku.");
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "guard.triggered")).toMatchObject({ guard: "plugin", message: `plugin ${file} ended the run after step 2 (shouldStop)` });
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "limit", reason: "plugin", exitCode: 4, steps: 2 });
});

test("PLUG-07: an untrusted project's plugin is never imported; after 'zero trust' it is", async () => {
  configWith([]);
  const marker = join(sandbox.root, "imported");
  writePlugin("project-plugin", `writeFileSync(${JSON.stringify(marker)}, "imported");\nexport default definePlugin({});`, sandbox.workspace);
  sandbox.writeProjectConfig({ plugins: ["./project-plugin.ts"] });
  fake.script([{ text: "one" }, { text: "two" }]);
  const untrusted = await runZero(["run", "hi"], { sandbox });
  expect(untrusted.code, untrusted.stderr).toBe(0);
  expect(existsSync(marker)).toBe(false);

  const trust = await runZero(["trust"], { sandbox });
  expect(trust.code).toBe(0);
  expect(trust.stdout).toContain("plugin project-plugin.ts");
  expect(existsSync(marker)).toBe(false);
  const trusted = await runZero(["run", "hi"], { sandbox });
  expect(trusted.code, trusted.stderr).toBe(0);
  expect(existsSync(marker)).toBe(true);
});

test("PLUG-07: plugins load once, in configured order", async () => {
  const first = writePlugin("first", `${log('"first loaded"')};\nexport default definePlugin({ hooks: { beforeRun: () => { ${log('"first beforeRun"')}; } } });`);
  const second = writePlugin("second", `${log('"second loaded"')};\nexport default definePlugin({ hooks: { beforeRun: () => { ${log('"second beforeRun"')}; } } });`);
  configWith([second, first]);
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "hi"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(logged()).toEqual(["second loaded", "first loaded", "second beforeRun", "first beforeRun"]);
});

test("PLUG-07: no hot reload — a plugin edited while `zero host` serves keeps its loaded hooks until the process restarts", async () => {
  const source = (label: string) => `export default definePlugin({ hooks: { beforeRun: () => { ${log(JSON.stringify(label))}; } } });`;
  const file = writePlugin("reloaded", source("version 1"));
  configWith([file]);
  fake.script([{ text: "one" }, { text: "two" }]);
  const proc = Bun.spawn([ZERO_BIN, "host"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  let out = "";
  const reading = (async () => {
    for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
  })();
  const finals = () => out.split("\n").filter((line) => line.includes('"type":"final"'));
  const run = (id: string) => {
    proc.stdin.write(`${JSON.stringify({ protocol_version: 1, type: "run", request_id: id, session_id: `s-${id}`, prompt: "hi", idempotency_key: id, stream: false })}\n`);
    proc.stdin.flush();
  };
  try {
    run("r1");
    await waitUntil("the first final", () => finals().length === 1, 20_000);
    writePlugin("reloaded", source("version 2"));
    run("r2");
    await waitUntil("the second final", () => finals().length === 2, 20_000);
    expect(finals().map((line) => JSON.parse(line).status)).toEqual(["OK", "OK"]);
  } finally {
    proc.stdin.end();
    const killer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await proc.exited;
    clearTimeout(killer);
    await reading;
  }
  expect(logged()).toEqual(["version 1", "version 1"]);
  // The next process loads the edited module.
  fake.script([{ text: "three" }]);
  const next = await runZero(["run", "hi"], { sandbox });
  expect(next.code, next.stderr).toBe(0);
  expect(logged()).toEqual(["version 1", "version 1", "version 2"]);
});

test("a malformed plugin stops start-up with exit 2, naming the file, before any request", async () => {
  const file = writePlugin("malformed", `export default definePlugin({ hooks: { beforeTol() {} } } as never);`);
  configWith([file]);
  fake.script([{ text: "never" }]);
  const result = await runZero(["run", "hi"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toStartWith(`zero: plugin ${file}: unknown hook "beforeTol"`);
  expect(fake.requests).toHaveLength(0);
  expect(existsSync(join(sandbox.stateHome, "zero-cli"))).toBe(false);
});

test("PLUG-06: a duplicate tool name, a reserved one, or an agent's tool no source provides: exit 2 at start-up", async () => {
  const tool = `definePluginTool({ name: "same", description: "d", inputSchema: z.object({}), risk: "read", kind: "other", execute: () => "x" })`;
  const a = writePlugin("dup-a", `export default definePlugin({ tools: [${tool}] });`);
  const b = writePlugin("dup-b", `export default definePlugin({ tools: [${tool}] });`);
  configWith([a, b]);
  const duplicate = await runZero(["run", "hi"], { sandbox });
  expect(duplicate.code).toBe(2);
  expect(duplicate.stderr).toBe(`zero: plugin ${b}: tools[0]: a tool named "same" is already defined by plugin ${a}\n`);

  const core = writePlugin("core-name", `export default definePlugin({ tools: [{ ...${tool}, name: "read" }] });`);
  configWith([core]);
  const reserved = await runZero(["run", "hi"], { sandbox });
  expect(reserved.code).toBe(2);
  expect(reserved.stderr).toStartWith(`zero: plugin ${core}: tools[0]: the name "read" is reserved`);

  configWith([a], { agents: { review: { tools: ["read", "y"] } } });
  const unknown = await runZero(["run", "hi"], { sandbox });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toStartWith("zero: agents.review.tools: no tool source provides 'y'");
  expect(fake.requests).toHaveLength(0);
});

test("the example plugin (examples/plugins/command-guard.ts): blocks rm -rf before policy, and its tool answers", async () => {
  configWith([EXAMPLE], { agents: { build: { tools: [...CORE, "count_words"] } } });
  fake.script([
    {
      toolCalls: [
        { name: "run", args: { command: "rm -rf src" }, id: "call_rm" },
        { name: "count_words", args: { text: "one two\nthree" }, id: "call_count" },
      ],
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "-y", "clean up"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(existsSync(join(sandbox.workspace, "src", "main.ts"))).toBe(true);
  const answers = toolResults(fake.requests[1]!);
  expect(answers.call_rm).toBe(`blocked: recursive forced deletes are not allowed by the command-guard plugin (plugin ${EXAMPLE})`);
  expect(answers.call_count).toBe("3 words, 2 lines, 13 characters");
});

test("a hook that never settles after the run is given up after its bound; a returned call whose getter throws blocks the call", async () => {
  const file = writePlugin(
    "stuck",
    `export default definePlugin({ hooks: {
  afterRun: () => new Promise(() => {}),
  beforeTool: () => ({ get tool(): string { throw new Error("getter trap"); } }),
} });`,
  );
  configWith([file]);
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }] }, { text: "done" }]);
  const result = await runZero(["run", "x"], { sandbox, timeoutMs: 20_000 });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe("done\n");
  expect(result.stderr).toContain("afterRun failed: afterRun did not finish within 5000 ms");
  expect(toolResults(fake.requests[1]!).call_read).toContain("getter trap");
  expect(result.ms).toBeLessThan(15_000);
}, 30_000);
