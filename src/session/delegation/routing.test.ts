import { afterEach, describe, expect, test } from "bun:test";
import { configSandbox, removeConfigSandboxes } from "../../config/config-test-support.ts";
import type { AgentProfile, Deliverable, EffectiveConfig, PermissionMode } from "../../config/effective.ts";
import { loadConfig } from "../../config/load.ts";
import { PERMISSION_MODES } from "../../config/schema.ts";
import { childPermission, chooseProfile, mostRestrictive, type RouteRequest } from "./routing.ts";

afterEach(removeConfigSandboxes);

/** The effective configuration from the built-in defaults plus an optional user file. */
function builtIn(userFile?: string): EffectiveConfig {
  const sandbox = configSandbox();
  if (userFile !== undefined) sandbox.userFile(userFile);
  return loadConfig({ workspace: sandbox.ws, env: sandbox.env }).config;
}

function profile(name: string, fields: Partial<AgentProfile> = {}): AgentProfile {
  return { name, model: "default", tools: [], skills: [], mcpServers: [], canDelegateTo: [], accepts: [], workspaceMode: "shared-readonly", ...fields };
}

function agentsOf(...profiles: AgentProfile[]): Record<string, AgentProfile> {
  return Object.fromEntries(profiles.map((p) => [p.name, p]));
}

function route(fields: Partial<RouteRequest> & Pick<RouteRequest, "deliverable" | "parent" | "agents">) {
  return chooseProfile({ used: new Map(), ...fields });
}

function chosen(result: ReturnType<typeof chooseProfile>): string {
  if (!result.ok) throw new Error(`expected a profile, got: ${result.error}`);
  return result.agent.name;
}

function refused(result: ReturnType<typeof chooseProfile>): string {
  if (result.ok) throw new Error(`expected a refusal, got ${result.agent.name}`);
  return result.error;
}

describe("mostRestrictive", () => {
  test("read-only < ask < accept-edits < full-access, whatever the argument order", () => {
    expect(mostRestrictive("full-access", "ask", "accept-edits")).toBe("ask");
    expect(mostRestrictive("accept-edits", "full-access")).toBe("accept-edits");
    expect(mostRestrictive("full-access", "read-only")).toBe("read-only");
    for (const a of PERMISSION_MODES) {
      for (const b of PERMISSION_MODES) {
        const expected = PERMISSION_MODES.indexOf(a) <= PERMISSION_MODES.indexOf(b) ? a : b;
        expect(mostRestrictive(a, b)).toBe(expected);
        expect(mostRestrictive(b, a)).toBe(expected);
      }
    }
  });

  test("undefined entries are ignored; nothing known fails closed", () => {
    expect(mostRestrictive(undefined, "full-access", undefined)).toBe("full-access");
    expect(mostRestrictive()).toBe("read-only");
    expect(mostRestrictive(undefined)).toBe("read-only");
  });
});

describe("childPermission", () => {
  const writer = (permissionMode?: PermissionMode) => profile("w", { workspaceMode: "shared-write", ...(permissionMode ? { permissionMode } : {}) });

  test("a child never gets more than its parent", () => {
    expect(childPermission(writer("full-access"), "ask", "full-access")).toBe("ask");
    expect(childPermission(writer("accept-edits"), "read-only", "full-access")).toBe("read-only");
  });

  test("a child's own narrower mode wins over a wider parent", () => {
    expect(childPermission(writer("ask"), "full-access", "full-access")).toBe("ask");
  });

  test("a profile without its own mode uses the configured default", () => {
    expect(childPermission(writer(), "full-access", "accept-edits")).toBe("accept-edits");
    expect(childPermission(writer(), "ask", "full-access")).toBe("ask");
  });

  test("a shared-readonly workspace forces read-only even under a full-access parent", () => {
    const reader = profile("r", { workspaceMode: "shared-readonly", permissionMode: "full-access" });
    expect(childPermission(reader, "full-access", "full-access")).toBe("read-only");
  });

  test("isolated workspaces keep the narrowed mode (only shared-readonly forces read-only)", () => {
    for (const workspaceMode of ["git-worktree", "scratch"] as const) {
      expect(childPermission(profile("x", { workspaceMode, permissionMode: "accept-edits" }), "full-access", "ask")).toBe("accept-edits");
    }
  });
});

describe("chooseProfile with the built-in configuration", () => {
  const expected: Array<[Deliverable, string]> = [
    ["analysis", "explore"],
    ["plan", "plan"],
    ["patch", "implement"],
    ["test_result", "verify"],
    ["review", "review"],
  ];

  test("the build root covers every deliverable: analysis→explore, plan→plan, patch→implement, test_result→verify, review→review", () => {
    const config = builtIn();
    const parent = config.agents[config.defaultAgent]!;
    for (const [deliverable, agent] of expected) {
      expect(chosen(route({ deliverable, parent, agents: config.agents }))).toBe(agent);
      expect(chosen(route({ requested: "auto", deliverable, parent, agents: config.agents }))).toBe(agent);
    }
  });

  test("the vision specialist (no accepts) is never an auto candidate, but stays reachable by name", () => {
    const config = builtIn();
    const parent = config.agents.build!;
    const counts = new Map([["explore", 50]]);
    expect(chosen(route({ deliverable: "analysis", parent, agents: config.agents, used: counts }))).toBe("explore");
    expect(chosen(route({ requested: "vision", deliverable: "analysis", parent, agents: config.agents }))).toBe("vision");
  });

  test("overriding accepts in configuration changes the routing", () => {
    const config = builtIn(`{ "agents": { "review": { "accepts": [] }, "plan": { "accepts": ["plan", "review"] } } }`);
    expect(chosen(route({ deliverable: "review", parent: config.agents.build!, agents: config.agents }))).toBe("plan");
  });

  test("a built-in child without canDelegateTo cannot delegate at all", () => {
    const config = builtIn();
    const error = refused(route({ deliverable: "analysis", parent: config.agents.explore!, agents: config.agents }));
    expect(error).toContain('no eligible profile for deliverable "analysis" among canDelegateTo []');
  });
});

describe("chooseProfile by name", () => {
  const explore = profile("explore", { accepts: ["analysis"] });
  const implement = profile("implement", { accepts: ["patch"], workspaceMode: "git-worktree" });
  const agents = agentsOf(explore, implement, profile("root", { canDelegateTo: ["explore"] }));
  const parent = agents.root!;

  test("an unknown name is refused with the known agents listed", () => {
    const error = refused(route({ requested: "explorer", deliverable: "analysis", parent, agents }));
    expect(error).toContain('unknown agent "explorer"');
    expect(error).toContain("explore, implement, root");
  });

  test("a profile outside canDelegateTo is refused, naming the allowlist", () => {
    const error = refused(route({ requested: "implement", deliverable: "patch", parent, agents }));
    expect(error).toContain('"root" may not delegate to "implement"');
    expect(error).toContain("canDelegateTo [explore]");
  });

  test("a listed profile is used as asked", () => {
    expect(chosen(route({ requested: "explore", deliverable: "analysis", parent, agents }))).toBe("explore");
  });

  test("object prototype names are not agents", () => {
    expect(refused(route({ requested: "constructor", deliverable: "analysis", parent, agents }))).toContain('unknown agent "constructor"');
  });
});

describe("chooseProfile automatically", () => {
  test("two eligible profiles alternate by least use, ties to the earlier in canDelegateTo", () => {
    const agents = agentsOf(
      profile("scout", { accepts: ["analysis"] }),
      profile("survey", { accepts: ["analysis"] }),
      profile("root", { canDelegateTo: ["survey", "scout"] }),
    );
    const used = new Map<string, number>();
    const picks: string[] = [];
    for (let i = 0; i < 4; i++) {
      const name = chosen(route({ deliverable: "analysis", parent: agents.root!, agents, used }));
      picks.push(name);
      used.set(name, (used.get(name) ?? 0) + 1);
    }
    expect(picks).toEqual(["survey", "scout", "survey", "scout"]);
  });

  test("a profile named like the deliverable is not chosen without accepts", () => {
    const agents = agentsOf(
      profile("review"),
      profile("critic", { accepts: ["review"] }),
      profile("root", { canDelegateTo: ["review", "critic"] }),
    );
    expect(chosen(route({ deliverable: "review", parent: agents.root!, agents }))).toBe("critic");
    const alone = agentsOf(profile("review"), profile("root", { canDelegateTo: ["review"] }));
    expect(refused(route({ deliverable: "review", parent: alone.root!, agents: alone }))).toContain("no eligible profile");
  });

  test("read deliverables need shared-readonly: the only reviewer on a git-worktree is no candidate", () => {
    for (const workspaceMode of ["git-worktree", "shared-write", "scratch"] as const) {
      const agents = agentsOf(
        profile("review", { accepts: ["review", "analysis", "plan"], workspaceMode, permissionMode: "read-only" }),
        profile("root", { canDelegateTo: ["review"] }),
      );
      for (const deliverable of ["review", "analysis", "plan"] as const) {
        const error = refused(route({ deliverable, parent: agents.root!, agents }));
        expect(error).toContain(`no eligible profile for deliverable "${deliverable}" among canDelegateTo [review]`);
        expect(error).toContain("shared-readonly");
        expect(error).toContain(`review: workspaceMode ${workspaceMode}`);
      }
    }
  });

  test("patch and test_result may go to writing workspaces", () => {
    const agents = agentsOf(
      profile("impl", { accepts: ["patch"], workspaceMode: "git-worktree" }),
      profile("tester", { accepts: ["test_result"], workspaceMode: "shared-write" }),
      profile("root", { canDelegateTo: ["impl", "tester"] }),
    );
    expect(chosen(route({ deliverable: "patch", parent: agents.root!, agents }))).toBe("impl");
    expect(chosen(route({ deliverable: "test_result", parent: agents.root!, agents }))).toBe("tester");
  });

  test("never bypasses the allowlist, even when a matching profile exists elsewhere", () => {
    const agents = agentsOf(
      profile("explore", { accepts: ["analysis"] }),
      profile("root", { canDelegateTo: ["missing"] }),
    );
    const error = refused(route({ deliverable: "analysis", parent: agents.root!, agents }));
    expect(error).toContain("among canDelegateTo [missing]");
    expect(error).toContain("missing: not configured");
    expect(error).toContain('a profile qualifies when its accepts lists "analysis"');
  });
});
