import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import { configSandbox, loadError, removeConfigSandboxes } from "../config/config-test-support.ts";
import { UsageError } from "../util/errors.ts";
import { loadPlugins } from "./load.ts";
import { pluginDir, profile, readLog, removePluginDirs, writePlugin } from "./plugin-test-support.ts";

afterEach(() => {
  removePluginDirs();
  removeConfigSandboxes();
});

const AGENTS = { build: profile("build", ["read", "write"]) };

/** The UsageError loadPlugins rejects with. */
async function refusal(files: string[], agents = AGENTS): Promise<string> {
  try {
    await loadPlugins(files, agents);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected the plugins to be refused");
}

const TOOL = `{ name: "shout", description: "upper-cases a text", inputSchema: z.object({ text: z.string().describe("what to shout") }), risk: "read", kind: "other", execute: ({ text }) => text.toUpperCase() }`;

describe("loading", () => {
  test("a valid plugin: hooks kept, tools become zero's tools with the JSON schema the model is shown", async () => {
    const dir = pluginDir();
    const file = writePlugin(dir, "ok", `export default definePlugin({ hooks: { beforeRun() {}, shouldStop: () => false }, tools: [${TOOL}] });`);
    const [plugin] = await loadPlugins([file], AGENTS);
    expect(plugin!.file).toBe(file);
    expect(Object.keys(plugin!.hooks).sort()).toEqual(["beforeRun", "shouldStop"]);
    expect(plugin!.tools.map((tool) => tool.name)).toEqual(["shout"]);
    expect(plugin!.tools[0]!.inputSchema).toMatchObject({ type: "object", properties: { text: { type: "string", description: "what to shout" } }, required: ["text"] });
  });

  test("plugins load once each, one after the other, in configured order", async () => {
    const dir = pluginDir();
    const log = join(dir, "log");
    const body = (name: string) =>
      `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(log)}, "${name}\\n");\nawait new Promise((r) => setTimeout(r, ${name === "first" ? 30 : 0}));\nexport default definePlugin({});`;
    const first = writePlugin(dir, "first", body("first"));
    const second = writePlugin(dir, "second", body("second"));
    await loadPlugins([second, first], AGENTS);
    expect(readLog(log)).toEqual(["second", "first"]);
    // The module is not evaluated again (no hot reload).
    await loadPlugins([first], AGENTS);
    expect(readLog(log)).toEqual(["second", "first"]);
  });

  test("hooks are fixed when the plugin loads: replacing one afterwards changes nothing", async () => {
    const dir = pluginDir();
    const file = writePlugin(dir, "fixed", `const hooks = { beforeRun() { return "original"; } };\nexport const swap = () => { hooks.beforeRun = () => "swapped"; };\nexport default definePlugin({ hooks });`);
    const [plugin] = await loadPlugins([file], AGENTS);
    ((await import(file)) as { swap(): void }).swap();
    expect((plugin!.hooks.beforeRun as () => unknown)()).toBe("original");
  });
});

describe("a malformed plugin is refused, naming its file", () => {
  const cases: Array<[string, string, string]> = [
    ["unknown hook", `export default definePlugin({ hooks: { beforeTol() {} } } as never);`, `unknown hook "beforeTol" (hooks: beforeRun, beforeStep, beforeModel, afterModel, beforeTool, afterTool, onAgentSpawn, shouldStop, afterRun, onError)`],
    ["hook that is not a function", `export default { hooks: { beforeRun: "yes" } };`, "hooks.beforeRun: must be a function"],
    ["unknown top-level field", `export default { hook: {} };`, `unknown field "hook" (a plugin is { hooks?, tools? })`],
    ["tool without a risk", `export default { tools: [{ name: "t", description: "d", inputSchema: z.object({}), kind: "other", execute() { return ""; } }] };`, "tools[0].risk"],
    ["tool without a kind", `export default { tools: [{ name: "t", description: "d", inputSchema: z.object({}), risk: "read", execute() { return ""; } }] };`, "tools[0].kind"],
    ["tool without an executor", `export default { tools: [{ name: "t", description: "d", inputSchema: z.object({}), risk: "read", kind: "other" }] };`, "tools[0].execute"],
    ["tool with a JSON schema instead of Zod", `export default { tools: [{ name: "t", description: "d", inputSchema: { type: "object" }, risk: "read", kind: "other", execute() { return ""; } }] };`, "tools[0].inputSchema: must be a Zod (version 4) schema"],
    ["tool whose schema is no object", `export default { tools: [{ name: "t", description: "d", inputSchema: z.string(), risk: "read", kind: "other", execute() { return ""; } }] };`, `tools[0] ("t"): its inputSchema must be a Zod object schema`],
    ["tool with an unknown risk", `export default { tools: [{ name: "t", description: "d", inputSchema: z.object({}), risk: "delegate", kind: "other", execute() { return ""; } }] };`, "tools[0].risk"],
    ["tool with a name providers refuse", `export default { tools: [{ name: "no spaces", description: "d", inputSchema: z.object({}), risk: "read", kind: "other", execute() { return ""; } }] };`, "tools[0].name: must be letters, digits"],
    ["no default export", `export const plugin = definePlugin({});`, "has no default export"],
    ["a default export that is a function", `export default () => ({});`, "the default export must be an object ({ hooks?, tools? }), not function"],
    ["a module that throws at import", `throw new Error("kaput at import");`, "could not be loaded: kaput at import"],
  ];
  for (const [what, body, problem] of cases) {
    test(what, async () => {
      const file = writePlugin(pluginDir(), "bad", body);
      const message = await refusal([file]);
      expect(message).toStartWith(`plugin ${file}: `);
      expect(message).toContain(problem);
    });
  }

  test("a file that does not exist", async () => {
    const file = join(pluginDir(), "missing.ts");
    expect(await refusal([file])).toStartWith(`plugin ${file}: could not be loaded: `);
  });
});

describe("tool names", () => {
  test("two plugins defining the same tool: the second is refused, naming the first", async () => {
    const dir = pluginDir();
    const a = writePlugin(dir, "a", `export default definePlugin({ tools: [${TOOL}] });`);
    const b = writePlugin(dir, "b", `export default definePlugin({ tools: [${TOOL}] });`);
    expect(await refusal([a, b])).toBe(`plugin ${b}: tools[0]: a tool named "shout" is already defined by plugin ${a}`);
  });

  test("names of core tools, todo, ask and the MCP prefix are reserved", async () => {
    for (const name of ["read", "delegate", "todo", "ask", "mcp__docs__search"]) {
      const file = writePlugin(pluginDir(), `reserved-${name}`, `export default definePlugin({ tools: [{ ...${TOOL}, name: "${name}" }] });`);
      expect(await refusal([file])).toStartWith(`plugin ${file}: tools[0]: the name "${name}" is reserved`);
    }
  });

  test("an agent listing a tool no plugin provides is refused at start-up, naming agent and tool", async () => {
    const file = writePlugin(pluginDir(), "one", `export default definePlugin({ tools: [${TOOL}] });`);
    const agents = { build: profile("build", ["read", "shout"]), review: profile("review", ["read", "y"]) };
    expect(await refusal([file], agents)).toBe(`agents.review.tools: no tool source provides 'y' (core tools: read, write, run, find, search, delegate; plugin tools: shout)`);
    expect((await loadPlugins([file], { build: agents.build }))[0]!.tools).toHaveLength(1);
  });
});

describe("configuration", () => {
  test("with plugins configured, names that are not core or MCP tools wait for start-up; without, they are refused", () => {
    const s = configSandbox();
    s.userFile(`{ "plugins": ["./p.ts"], "agents": { "build": { "tools": ["read", "shout"] } } }`);
    const loaded = loadConfig({ workspace: s.ws, env: s.env });
    expect(loaded.config.agents.build!.tools).toEqual(["read", "shout"]);
    expect(loaded.config.plugins).toEqual([join(s.home, ".config", "zero-cli", "p.ts")]);
    // A name no plugin tool could have is still a config error (file:line).
    s.userFile(`{ "plugins": ["./p.ts"], "agents": { "build": { "tools": ["read", "not a tool"] } } }`);
    expect(loadError(() => loadConfig({ workspace: s.ws, env: s.env })).problem).toStartWith(`unknown tool "not a tool"`);
    s.userFile(`{ "agents": { "build": { "tools": ["read", "shout"] } } }`);
    expect(loadError(() => loadConfig({ workspace: s.ws, env: s.env })).problem).toStartWith(`unknown tool "shout"`);
  });

  test("an untrusted project's plugins never reach the effective configuration", () => {
    const s = configSandbox();
    s.write(join(s.ws, "zero-cli.jsonc"), `{ "plugins": ["./evil.ts"] }`);
    const untrusted = loadConfig({ workspace: s.ws, env: s.env });
    expect(untrusted.trusted).toBe(false);
    expect(untrusted.config.plugins).toEqual([]);
    const overridden = loadConfig({ workspace: s.ws, env: { ...s.env, ZERO_CLI_TRUST_PROJECT_CONFIG: "1" } });
    expect(overridden.config.plugins).toEqual([join(s.ws, "evil.ts")]);
  });
});
