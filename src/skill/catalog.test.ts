import { describe, expect, test } from "bun:test";
import { agentNotices, catalogText, skillsForAgent } from "./catalog.ts";
import type { EnabledSkill, SkillCatalog } from "./discover.ts";
import { skillToolSource } from "./source.ts";

const skill = (id: string, description = `about ${id}`): EnabledSkill => ({
  id,
  enabled: true,
  provenance: "user",
  description,
  dir: `/skills/${id}`,
  file: `/skills/${id}/SKILL.md`,
});

const catalog: SkillCatalog = {
  entries: [skill("alpha"), { id: "off", enabled: false, provenance: "project-config", file: "/p/off/SKILL.md" }, skill("release-notes", "Use when drafting release notes")],
  replaced: [],
  skipped: [{ path: "/ws/.agents/skills/evil\x1b]0;title\x07/SKILL.md", provenance: "workspace", reason: "invalid frontmatter: missing \"name\"" }],
};

const agent = (skills: string[], tools = ["read", "find"]) => ({ name: "x", skills, tools });

describe("which skills an agent is offered", () => {
  test('its allowlist picks; "*" is every enabled skill; a disabled one never', () => {
    expect(skillsForAgent(catalog, agent(["release-notes"])).map((s) => s.id)).toEqual(["release-notes"]);
    expect(skillsForAgent(catalog, agent(["*"])).map((s) => s.id)).toEqual(["alpha", "release-notes"]);
    expect(skillsForAgent(catalog, agent(["off", "alpha"])).map((s) => s.id)).toEqual(["alpha"]);
    expect(skillsForAgent(catalog, agent([]))).toEqual([]);
  });

  test("nothing without the read tool: a skill is loaded by reading its SKILL.md", () => {
    expect(skillsForAgent(catalog, agent(["*"], ["run", "write"]))).toEqual([]);
  });
});

test("the catalog: one instruction, then name, description and SKILL.md path per skill, nothing more", () => {
  const text = catalogText(skillsForAgent(catalog, agent(["*"])))!;
  expect(text).toStartWith("# Skills\n\n");
  expect(text).toContain("`$<name>`");
  expect(text).toContain("read tool");
  expect(text.split("\n").filter((line) => line.startsWith("- "))).toEqual([
    "- alpha: about alpha (/skills/alpha/SKILL.md)",
    "- release-notes: Use when drafting release notes (/skills/release-notes/SKILL.md)",
  ]);
  expect(catalogText([])).toBeUndefined();
});

describe("notices", () => {
  test("packages that did not load (escaped), unknown and disabled ids, skills without read", () => {
    expect(agentNotices(catalog, agent(["alpha", "ghost", "off"]))).toEqual([
      'skill package /ws/.agents/skills/evil\\x1b]0;title\\x07/SKILL.md (workspace) was not loaded: invalid frontmatter: missing "name"',
      'agents.x.skills: no skill package named "ghost" was found',
      'agents.x.skills: skill "off" is disabled (project-config)',
    ]);
    expect(agentNotices(catalog, agent(["*"], ["write"])).at(-1)).toBe('agent "x" lists skills but has no read tool, so none is offered to it; add "read" to agents.x.tools');
  });

  test("an agent without skills hears nothing", () => {
    expect(agentNotices(catalog, agent([]))).toEqual([]);
  });
});

test("the tool source: no tools; the catalog, roots and notices of the agent's own skills", () => {
  const source = skillToolSource(catalog);
  const profile = { ...agent(["release-notes"]), skills: ["release-notes"] } as never;
  expect([...source.tools(profile)]).toEqual([]);
  expect(source.readRoots!(profile)).toEqual(["/skills/release-notes"]);
  expect(source.instructions!(profile)).toContain("- release-notes: Use when drafting release notes (/skills/release-notes/SKILL.md)");
  expect(source.instructions!(profile)).not.toContain("alpha");
  expect(source.readRoots!(agent(["*"], ["write"]) as never)).toEqual([]);
});
