/**
 * Progressive disclosure: what an agent is told about its skills (one line each — name,
 * description, SKILL.md path — under one instruction), which package directories it may read,
 * and what its runs should be told about packages that did not load or ids it lists in vain.
 */
import type { AgentProfile } from "../config/schema.ts";
import { sanitizeForTerminal } from "../security/terminal.ts";
import type { EnabledSkill, SkillCatalog, SkillEntry, SkillProvenance } from "./discover.ts";
import header from "./catalog.md" with { type: "text" };

/** The catalog's bounds: packages, and bytes of their lines in a prompt. */
export const CATALOG_LIMITS = { packages: 200, bytes: 64 * 1024 } as const;

const PRECEDENCE: Record<SkillProvenance, number> = { "codex-user": 0, user: 1, "user-config": 2, workspace: 3, "project-config": 4 };

/** One package's line in the catalog. */
export function catalogLine(skill: Pick<EnabledSkill, "id" | "description" | "file">): string {
  return `- ${skill.id}: ${skill.description} (${skill.file})`;
}

/**
 * Keeps the catalog within its bounds: packages are admitted from the highest precedence down
 * (then by id) while the count and the bytes of their lines fit; the rest overflow with a reason.
 * Disabled entries cost nothing and are always kept. Both lists come back sorted by id.
 */
export function boundCatalog(entries: readonly SkillEntry[]): { kept: SkillEntry[]; overflow: Array<EnabledSkill & { reason: string }> } {
  const enabled = entries.filter((entry): entry is EnabledSkill => entry.enabled);
  const ranked = [...enabled].sort((a, b) => PRECEDENCE[b.provenance] - PRECEDENCE[a.provenance] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const dropped = new Map<string, string>();
  let count = 0;
  let bytes = 0;
  for (const skill of ranked) {
    const size = Buffer.byteLength(catalogLine(skill)) + 1;
    if (count + 1 > CATALOG_LIMITS.packages) dropped.set(skill.id, `the skill catalog is full (at most ${CATALOG_LIMITS.packages} packages)`);
    else if (bytes + size > CATALOG_LIMITS.bytes) dropped.set(skill.id, `the skill catalog is full (at most ${CATALOG_LIMITS.bytes / 1024} KiB of names, descriptions and paths)`);
    else {
      count += 1;
      bytes += size;
    }
  }
  return {
    kept: entries.filter((entry) => !dropped.has(entry.id)),
    overflow: enabled.filter((entry) => dropped.has(entry.id)).map((entry) => ({ ...entry, reason: dropped.get(entry.id)! })),
  };
}

/** Whether the agent's allowlist selects `id` (`"*"`: every enabled skill). */
export function agentListsSkill(agent: Pick<AgentProfile, "skills">, id: string): boolean {
  return agent.skills.includes("*") || agent.skills.includes(id);
}

/**
 * The enabled skills this agent is offered, by id. None without the `read` tool: a skill is
 * loaded by reading its SKILL.md, and a catalog the agent cannot act on would only mislead it.
 */
export function skillsForAgent(catalog: SkillCatalog, agent: Pick<AgentProfile, "skills" | "tools">): EnabledSkill[] {
  if (agent.skills.length === 0 || !agent.tools.includes("read")) return [];
  return catalog.entries.filter((entry): entry is EnabledSkill => entry.enabled && agentListsSkill(agent, entry.id));
}

/** The system-prompt section for these skills; undefined when there are none. */
export function catalogText(skills: readonly EnabledSkill[]): string | undefined {
  if (skills.length === 0) return undefined;
  return `${header.trim()}\n\n${skills.map(catalogLine).join("\n")}`;
}

/** What a run of this agent should tell a person: packages that did not load, ids it lists in vain, no `read`. */
export function agentNotices(catalog: SkillCatalog, agent: Pick<AgentProfile, "name" | "skills" | "tools">): string[] {
  if (agent.skills.length === 0) return [];
  const skipped = catalog.skipped.map((skip) => cleanText(`skill package ${skip.path} (${skip.provenance}) was not loaded: ${skip.reason}`));
  return [...skipped, ...agentSkillProblems(catalog, agent)];
}

/** Ids the agent lists that no enabled package provides, and skills it cannot load for want of `read`. */
export function agentSkillProblems(catalog: SkillCatalog, agent: Pick<AgentProfile, "name" | "skills" | "tools">): string[] {
  const notices: string[] = [];
  for (const id of agent.skills) {
    if (id === "*") continue;
    const entry = catalog.entries.find((candidate) => candidate.id === id);
    if (entry === undefined) notices.push(cleanText(`agents.${agent.name}.skills: no skill package named "${id}" was found`));
    else if (!entry.enabled) notices.push(cleanText(`agents.${agent.name}.skills: skill "${id}" is disabled (${entry.provenance})`));
  }
  const selectable = catalog.entries.some((entry) => entry.enabled && agentListsSkill(agent, entry.id));
  if (selectable && !agent.tools.includes("read")) {
    notices.push(cleanText(`agent "${agent.name}" lists skills but has no read tool, so none is offered to it; add "read" to agents.${agent.name}.tools`));
  }
  return notices;
}

/** Package paths and reasons come from disk: escaped so they can drive no terminal, on one line, and bounded. */
export function cleanText(text: string): string {
  // Control characters are shown as escapes (a whole escape sequence stays visible, never swallowed).
  const visible = text.replace(/[\x00-\x1f\x7f-\x9f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
  const safe = sanitizeForTerminal(visible);
  return safe.length > 600 ? `${safe.slice(0, 600)}…` : safe;
}
