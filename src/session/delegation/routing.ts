import type { AgentProfile, Deliverable, PermissionMode } from "../../config/effective.ts";
import { mostRestrictive as narrowerOf } from "../../policy/rules.ts";

// Which profile a delegated child runs as, and with how much authority. Routing reads only
// configuration metadata (canDelegateTo, accepts, workspaceMode): it never guesses from a
// profile's name, and nothing here can widen what the parent already has.

/**
 * The most restrictive of the given modes (read-only < ask < accept-edits < full-access);
 * undefined entries are ignored. With nothing defined it fails closed to read-only.
 */
export function mostRestrictive(...modes: Array<PermissionMode | undefined>): PermissionMode {
  const known = modes.filter((mode): mode is PermissionMode => mode !== undefined);
  if (known.length === 0) return "read-only";
  return known.reduce(narrowerOf);
}

/**
 * A child's effective permission mode: the most restrictive of its own (the profile's mode, else
 * the configured default), its parent's effective mode, and what its workspace allows (a
 * shared-readonly workspace cannot be written, so it forces read-only).
 */
export function childPermission(child: AgentProfile, parentMode: PermissionMode, configDefault: PermissionMode): PermissionMode {
  const own = child.permissionMode ?? configDefault;
  const workspace = child.workspaceMode === "shared-readonly" ? "read-only" : undefined;
  return mostRestrictive(own, parentMode, workspace);
}

/** Deliverables that only inspect: auto-routed, they must see the parent's live checkout read-only. */
const READ_DELIVERABLES: ReadonlySet<Deliverable> = new Set(["plan", "analysis", "review"]);

export type RouteRequest = {
  /** A profile name, "auto", or undefined (the same as "auto"). */
  requested?: string;
  deliverable: Deliverable;
  parent: AgentProfile;
  agents: Record<string, AgentProfile>;
  /** Children started per profile so far in this campaign, for least-used routing. */
  used: ReadonlyMap<string, number>;
};

export type RouteResult = { ok: true; agent: AgentProfile } | { ok: false; error: string };

function lookup(agents: Record<string, AgentProfile>, name: string): AgentProfile | undefined {
  return Object.hasOwn(agents, name) ? agents[name] : undefined;
}

const list = (names: readonly string[]) => `[${names.join(", ")}]`;

/**
 * Picks the profile a child runs as.
 *
 * A named profile is an orchestration hint taken as asked, provided it exists and is in the
 * parent's canDelegateTo; its accepts list is not consulted, so capability specialists without
 * accepts (vision) stay reachable by name.
 *
 * Otherwise ("auto" or omitted) the candidates are the parent's canDelegateTo profiles, in that
 * order, that exist and list the deliverable in accepts; for plan, analysis and review only
 * shared-readonly profiles qualify (those must inspect the live checkout, uncommitted changes
 * included, and must not be able to write it). The least used candidate in this campaign wins,
 * ties going to the earlier one in canDelegateTo, so repeated requests alternate deterministically.
 */
export function chooseProfile(request: RouteRequest): RouteResult {
  const { requested, deliverable, parent, agents } = request;
  const allowlist = [...new Set(parent.canDelegateTo)];
  if (requested !== undefined && requested !== "auto") {
    const agent = lookup(agents, requested);
    if (agent === undefined) {
      return { ok: false, error: `unknown agent "${requested}" (known agents: ${Object.keys(agents).join(", ")})` };
    }
    if (!allowlist.includes(requested)) {
      return { ok: false, error: `agent "${parent.name}" may not delegate to "${requested}": it is not in canDelegateTo ${list(allowlist)}` };
    }
    return { ok: true, agent };
  }

  const readOnly = READ_DELIVERABLES.has(deliverable);
  const rejected: string[] = [];
  let best: { agent: AgentProfile; uses: number } | undefined;
  for (const name of allowlist) {
    const agent = lookup(agents, name);
    const why =
      agent === undefined
        ? "not configured"
        : !agent.accepts.includes(deliverable)
          ? `accepts ${list(agent.accepts)}`
          : readOnly && agent.workspaceMode !== "shared-readonly"
            ? `workspaceMode ${agent.workspaceMode}`
            : undefined;
    if (agent === undefined || why !== undefined) {
      rejected.push(`${name}: ${why}`);
      continue;
    }
    const uses = request.used.get(name) ?? 0;
    // Strictly fewer: on a tie the earlier profile in canDelegateTo keeps the choice.
    if (best === undefined || uses < best.uses) best = { agent, uses };
  }
  if (best !== undefined) return { ok: true, agent: best.agent };

  const rule = readOnly
    ? `a profile qualifies when its accepts lists "${deliverable}" and its workspaceMode is shared-readonly`
    : `a profile qualifies when its accepts lists "${deliverable}"`;
  const detail = rejected.length > 0 ? `; ${rejected.join("; ")}` : "";
  return {
    ok: false,
    error: `no eligible profile for deliverable "${deliverable}" among canDelegateTo ${list(allowlist)} of "${parent.name}" (${rule})${detail}`,
  };
}
