import type { AgentProfile, WorkspaceMode } from "./schema.ts";

// Which tool names a profile may use, and which profile settings are accepted but not enforced
// yet. `zero agents` marks the latter so nobody mistakes them for live settings.

/**
 * The six core capability tools a profile may name. The same list as `CORE_TOOL_NAMES` in
 * tool/registry.ts, which config may not import; a test in surface/cli keeps the two equal.
 */
export const PROFILE_CORE_TOOLS = ["read", "write", "run", "find", "search", "delegate"] as const;

/**
 * What a plugin tool may be called: a name every provider accepts for a function. Names of the
 * core tools, `todo`, `ask` and the `mcp__` prefix are reserved (checked when plugins load).
 */
export const PLUGIN_TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** `mcp:<server>:<tool>` or `mcp:<server>:*`: the tools of one server configured under `mcp`. */
const MCP_TOOL_NAME = /^mcp:([^:\s]+):([^:\s]+)$/;

/** The server an MCP tool name refers to, or undefined when the name is not of that form. */
export function mcpToolServer(name: string): string | undefined {
  return MCP_TOOL_NAME.exec(name)?.[1];
}

export type NotEnforcedMark = "not yet available" | "not yet enforced";

/**
 * What a profile may say that nothing enforces yet: THE one list. The issue that builds a feature
 * removes its entry here; `zero agents` then shows the setting as live, unmarked.
 */
export const NOT_YET_ENFORCED: {
  /** Tool names no tool source offers yet; an entry ending in `*` is a prefix. */
  readonly tools: readonly string[];
  /** Profile fields that are validated and displayed but read by nothing at run time. */
  readonly fields: Readonly<Partial<Record<keyof AgentProfile, NotEnforcedMark>>>;
  /** Workspace modes whose isolation is not built (a run uses the shared workspace as is). */
  readonly workspaceModes: readonly WorkspaceMode[];
} = {
  tools: [],
  fields: {},
  workspaceModes: [],
};

/** "not yet available" when no tool source offers `name` yet. */
export function toolMark(name: string): NotEnforcedMark | undefined {
  const pending = NOT_YET_ENFORCED.tools.some((entry) => (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : name === entry));
  return pending ? "not yet available" : undefined;
}

/** The mark of a profile field nothing reads yet. */
export function fieldMark(field: keyof AgentProfile): NotEnforcedMark | undefined {
  return NOT_YET_ENFORCED.fields[field];
}

/** "not yet enforced" for a workspace mode whose isolation is not built. */
export function workspaceModeMark(mode: WorkspaceMode): NotEnforcedMark | undefined {
  return NOT_YET_ENFORCED.workspaceModes.includes(mode) ? "not yet enforced" : undefined;
}
