import type { ConfigLayer } from "./layer.ts";
import { formatKeyPath, type KeyPath } from "./location.ts";
import { PERMISSION_MODES } from "./schema.ts";
import type { AgentFile, PermissionMode } from "./schema.ts";

// A project file may narrow the permission mode, never widen it beyond what the user's own
// configuration gives: only the user config (or the command line) can widen. Config cannot import
// policy, so the order lives here too (policy's mostRestrictive uses the same one).

/** From the most restrictive to the most permissive. */
export const PERMISSION_ORDER: readonly PermissionMode[] = PERMISSION_MODES;

export function isWiderThan(mode: PermissionMode, than: PermissionMode): boolean {
  return PERMISSION_ORDER.indexOf(mode) > PERMISSION_ORDER.indexOf(than);
}

function widest(a: PermissionMode, b: PermissionMode): PermissionMode {
  return isWiderThan(a, b) ? a : b;
}

/** A project setting that was not applied because it would widen the permission mode. */
export type IgnoredPermission = {
  file: string;
  line: number;
  column: number;
  keyPath: string;
  /** The value the file gives (a mode, or an agent name for defaultAgent). */
  value: string;
  /** The widest mode the user's own configuration allows here. */
  ceiling: PermissionMode;
  /** `file:line:column: keyPath "value" ignored: why`, one line. */
  message: string;
};

/**
 * Drops from a project layer every permission setting more permissive than the user's own:
 * - top-level `permissionMode` wider than the user's default (the lower layers' value: the user
 *   config's, else the built-in `ask`);
 * - `agents.<name>.permissionMode` wider than both that default and the mode the lower layers give
 *   that agent (re-stating the built-in `implement: accept-edits` widens nothing);
 * - `defaultAgent` naming an agent that would run wider than the root would without the project
 *   (for example the built-in `implement`, accept-edits, when the user's default is ask).
 * Returns the layer to merge (a copy; the input is not changed) and what was dropped.
 */
export function limitProjectPermissions(project: ConfigLayer, lower: readonly ConfigLayer[]): { layer: ConfigLayer; ignored: IgnoredPermission[] } {
  const ignored: IgnoredPermission[] = [];
  const data = { ...project.data };
  const userDefault = lastDefined(lower, (layer) => layer.data.permissionMode) ?? "ask";
  const lowerAgentMode = (name: string) => lastDefined(lower, (layer) => ownAgent(layer.data.agents, name)?.permissionMode);
  const ignore = (path: KeyPath, value: string, ceiling: PermissionMode, why: string) => {
    const where = project.locate?.(path) ?? { line: 1, column: 1 };
    const keyPath = formatKeyPath(path);
    const message = `${project.file}:${where.line}:${where.column}: ${keyPath} "${value}" ignored: ${why}`;
    ignored.push({ file: project.file ?? "", ...where, keyPath, value, ceiling, message });
  };
  const onlyUser = "only your user config or --permission-mode can widen it";

  if (data.permissionMode !== undefined && isWiderThan(data.permissionMode, userDefault)) {
    ignore(["permissionMode"], data.permissionMode, userDefault, `a project file may narrow the permission mode, never widen it beyond your default (${userDefault}); ${onlyUser}`);
    delete data.permissionMode;
  }

  if (data.agents !== undefined) {
    const agents: Record<string, AgentFile> = {};
    for (const [name, agent] of Object.entries(data.agents)) {
      const own = lowerAgentMode(name);
      const ceiling = own === undefined ? userDefault : widest(userDefault, own);
      if (agent.permissionMode !== undefined && isWiderThan(agent.permissionMode, ceiling)) {
        const given = own !== undefined && isWiderThan(own, userDefault) ? `your default (${userDefault}) and this agent's own mode (${own})` : `your default (${userDefault})`;
        ignore(["agents", name, "permissionMode"], agent.permissionMode, ceiling, `a project file may not give an agent a wider permission mode than ${given}; ${onlyUser}`);
        const { permissionMode: _dropped, ...rest } = agent;
        agents[name] = rest;
      } else agents[name] = agent;
    }
    data.agents = agents;
  }

  if (data.defaultAgent !== undefined) {
    const topLevel = data.permissionMode ?? userDefault;
    const modeOf = (name: string, top: PermissionMode) => ownAgent(data.agents, name)?.permissionMode ?? lowerAgentMode(name) ?? top;
    const lowerRoot = lastDefined(lower, (layer) => layer.data.defaultAgent) ?? "build";
    const rootBefore = lowerAgentMode(lowerRoot) ?? userDefault;
    const ceiling = widest(userDefault, rootBefore);
    const rootAfter = modeOf(data.defaultAgent, topLevel);
    if (isWiderThan(rootAfter, ceiling)) {
      ignore(["defaultAgent"], data.defaultAgent, ceiling, `that agent runs in ${rootAfter}, wider than your root agent's mode (${ceiling}); choose it in your user config to widen`);
      delete data.defaultAgent;
    }
  }
  return { layer: { ...project, data }, ignored };
}

function lastDefined<T>(layers: readonly ConfigLayer[], pick: (layer: ConfigLayer) => T | undefined): T | undefined {
  let found: T | undefined;
  for (const layer of layers) found = pick(layer) ?? found;
  return found;
}

function ownAgent(agents: Record<string, AgentFile> | undefined, name: string): AgentFile | undefined {
  return agents !== undefined && Object.hasOwn(agents, name) ? agents[name] : undefined;
}
