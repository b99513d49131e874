/**
 * Skills as a run's tool source: no tools, only the agent's catalog as a prompt section, its
 * packages' directories as read-only roots, and notices. A skill grants nothing else: no tool,
 * permission, writable root or delegation target.
 */
import type { LoadedConfig } from "../config/load.ts";
import type { ToolSource } from "../session/tool-sources.ts";
import type { Env } from "../util/env.ts";
import { agentNotices, catalogText, skillsForAgent } from "./catalog.ts";
import { discoverSkills, type SkillCatalog } from "./discover.ts";
import { explicitSkills } from "./explicit.ts";

/**
 * Every skill package of a process for this workspace. Throws the configuration's error
 * (file:line) for an explicit entry that does not validate; discovered packages that do not
 * validate are in `skipped`.
 */
export function loadSkills(options: { env: Env; loaded: LoadedConfig; workspace: string }): SkillCatalog {
  const { env, loaded, workspace } = options;
  return discoverSkills({ env, workspace, trusted: loaded.trusted, explicit: explicitSkills(loaded, env) });
}

export function skillToolSource(catalog: SkillCatalog): ToolSource {
  return {
    name: "skills",
    tools: () => [],
    notices: (agent) => agentNotices(catalog, agent),
    instructions: (agent) => catalogText(skillsForAgent(catalog, agent)),
    readRoots: (agent) => skillsForAgent(catalog, agent).map((skill) => skill.dir),
  };
}
