import { z } from "zod";
import { PLUGIN_TOOL_NAME } from "../config/enforcement.ts";
import type { AgentProfile } from "../config/schema.ts";
import type { Tool } from "../tool/define.ts";
import { withinBound } from "../util/timers.ts";

/** How long one plugin module may take to load (its top-level code). */
const LOAD_BOUND_MS = 10_000;
import { CORE_TOOL_NAMES } from "../tool/registry.ts";
import { errorMessage, UsageError } from "../util/errors.ts";
import { ACTIVITY_KINDS, HOOK_NAMES, type PluginHooks, type ToolDefinition } from "./define.ts";
import { pluginTool } from "./tools.ts";

/** One plugin, loaded and checked: its hooks (bound, fixed at load) and its tools as zero's. */
export type LoadedPlugin = { file: string; hooks: Readonly<PluginHooks>; tools: Tool[] };

/** Tool names no plugin may take: the core tools, the todo ledger, the session's yes/no question. */
const RESERVED_TOOL_NAMES: readonly string[] = [...CORE_TOOL_NAMES, "todo", "ask"];

const MAX_DESCRIPTION_CHARS = 4_096;

const fn = z.custom<(...args: unknown[]) => unknown>((value) => typeof value === "function", { message: "must be a function" });

/** A Zod 4 schema, from whichever copy of Zod the plugin imported (zero's bundle has its own). */
const zodSchema = z.custom<z.ZodType>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as { safeParse?: unknown }).safeParse === "function" &&
    typeof (value as { _zod?: unknown })._zod === "object",
  { message: "must be a Zod (version 4) schema, e.g. z.object({ … })" },
);

const toolSchema = z.strictObject({
  name: z.string().regex(PLUGIN_TOOL_NAME, "must be letters, digits, _ or -, starting with a letter, at most 64 characters"),
  description: z.string().trim().min(1, "must not be empty").max(MAX_DESCRIPTION_CHARS, `must be at most ${MAX_DESCRIPTION_CHARS} characters`),
  inputSchema: zodSchema,
  risk: z.enum(["read", "write", "execute", "network"]),
  kind: z.enum(ACTIVITY_KINDS),
  execute: fn,
});

const pluginSchema = z.strictObject({
  hooks: z.strictObject(Object.fromEntries(HOOK_NAMES.map((name) => [name, fn.optional()]))).optional(),
  tools: z.array(toolSchema).optional(),
});

function pathOf(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`)).join("");
}

/** The first problem of a plugin's shape, in words that say where. */
function shapeProblem(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const where = pathOf(issue.path);
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((key) => `"${key}"`).join(", ");
    if (where === "hooks") return `unknown hook ${keys} (hooks: ${HOOK_NAMES.join(", ")})`;
    if (where === "") return `unknown field ${keys} (a plugin is { hooks?, tools? })`;
    return `${where}: unknown field ${keys} (a tool is { name, description, inputSchema, risk, kind, execute })`;
  }
  if (issue.input === undefined && where !== "") return `${where}: is missing (${issue.message.replace(/, received undefined$/, "")})`;
  return `${where === "" ? "the default export" : where}: ${issue.message}`;
}

async function importPlugin(file: string): Promise<unknown> {
  let module: { default?: unknown };
  try {
    // A module whose top level never settles must not hold the start-up (or exit 0 silently).
    module = (await withinBound(import(file), LOAD_BOUND_MS, `it did not finish loading within ${LOAD_BOUND_MS / 1000} s`)) as { default?: unknown };
  } catch (error) {
    throw new UsageError(`plugin ${file}: could not be loaded: ${errorMessage(error)}`);
  }
  if (module.default === undefined) throw new UsageError(`plugin ${file}: has no default export (export default definePlugin({ hooks, tools }))`);
  if (typeof module.default !== "object" || module.default === null || Array.isArray(module.default)) {
    throw new UsageError(`plugin ${file}: the default export must be an object ({ hooks?, tools? }), not ${Array.isArray(module.default) ? "an array" : typeof module.default}`);
  }
  return module.default;
}

/** The hooks as they are now, bound to the object that declared them: replacing one later changes nothing. */
function fixHooks(hooks: Record<string, unknown> | undefined): Readonly<PluginHooks> {
  const fixed: Record<string, unknown> = {};
  for (const name of HOOK_NAMES) {
    const hook = hooks?.[name];
    if (typeof hook === "function") fixed[name] = hook.bind(hooks);
  }
  return Object.freeze(fixed) as Readonly<PluginHooks>;
}

/**
 * Loads the configured plugins once, one after the other in configured order (a module's top
 * level runs at its import), and checks each: the default export's shape, its hook names, each
 * tool's schema, risk, kind and executor, and that no tool name is reserved or taken by an earlier
 * plugin. Then every agent's tool names must be provided by someone. Any problem is a UsageError
 * naming the file (exit 2), before any request.
 */
export async function loadPlugins(files: readonly string[], agents: Readonly<Record<string, AgentProfile>>): Promise<LoadedPlugin[]> {
  const plugins: LoadedPlugin[] = [];
  const owners = new Map<string, string>();
  for (const file of files) {
    const exported = await importPlugin(file);
    const parsed = pluginSchema.safeParse(exported, { reportInput: true });
    if (!parsed.success) throw new UsageError(`plugin ${file}: ${shapeProblem(parsed.error)}`);
    const declared = exported as { hooks?: Record<string, unknown>; tools?: readonly ToolDefinition[] };
    const tools: Tool[] = [];
    for (const [index, definition] of (declared.tools ?? []).entries()) {
      const name = definition.name;
      if (RESERVED_TOOL_NAMES.includes(name) || /^mcp__/i.test(name)) {
        throw new UsageError(`plugin ${file}: tools[${index}]: the name "${name}" is reserved (${RESERVED_TOOL_NAMES.join(", ")}, mcp__…)`);
      }
      const owner = owners.get(name);
      if (owner !== undefined) {
        throw new UsageError(`plugin ${file}: tools[${index}]: a tool named "${name}" is already defined${owner === file ? " in this plugin" : ` by plugin ${owner}`}`);
      }
      owners.set(name, file);
      try {
        tools.push(pluginTool({ ...definition }));
      } catch (error) {
        throw new UsageError(`plugin ${file}: tools[${index}] ("${name}"): ${errorMessage(error)}`);
      }
    }
    plugins.push({ file, hooks: fixHooks(declared.hooks), tools });
  }
  checkAgentTools(agents, owners);
  return plugins;
}

/** Every name an agent lists must be a core tool, an `mcp:` entry, or a loaded plugin's tool. */
function checkAgentTools(agents: Readonly<Record<string, AgentProfile>>, pluginTools: ReadonlyMap<string, string>): void {
  for (const agent of Object.values(agents)) {
    for (const name of agent.tools) {
      if ((CORE_TOOL_NAMES as readonly string[]).includes(name) || name.startsWith("mcp:") || pluginTools.has(name)) continue;
      const known = pluginTools.size > 0 ? `plugin tools: ${[...pluginTools.keys()].join(", ")}` : "no plugin defines a tool";
      throw new UsageError(`agents.${agent.name}.tools: no tool source provides '${name}' (core tools: ${CORE_TOOL_NAMES.join(", ")}; ${known})`);
    }
  }
}
