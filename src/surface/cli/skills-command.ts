import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import { EXIT } from "../../protocol/events.ts";
import { agentSkillProblems, cleanText, skillsForAgent } from "../../skill/catalog.ts";
import type { SkillCatalog } from "../../skill/discover.ts";
import { loadSkills, skillToolSource } from "../../skill/source.ts";
import { UsageError } from "../../util/errors.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import type { CliExtension } from "./extensions.ts";
import { SKILLS_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { workspaceFrom } from "./workspace.ts";

/**
 * The process's skill packages as a run's source: found and validated once at start-up, before
 * any request (an invalid explicit entry fails the configuration here, exit 2).
 */
export function cliSkillAccess(io: Pick<CliIo, "env">, loaded: LoadedConfig, options: { workspace: string }): CliExtension {
  const catalog = loadSkills({ env: io.env, loaded, workspace: options.workspace });
  return { sources: [skillToolSource(catalog)], close: async () => {}, killNow: () => {}, skills: catalog };
}

const OPTIONS = { cwd: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;

/** `zero skills`: every package with its provenance, who sees it, and what was not loaded and why. */
export function skillsCommand(io: CliIo): number {
  const { values, positionals } = parseCommandArgs("skills", io.argv, OPTIONS, true);
  if (values.help) {
    io.stdout(SKILLS_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'; run 'zero skills --help' for the options`, { command: "skills" });
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  const catalog = loadSkills({ env: io.env, loaded, workspace });
  const report = skillsReport(catalog, loaded, workspace);
  if (values.json === true) io.stdout(`${JSON.stringify(report)}\n`);
  else io.stdout(formatSkills(report));
  return EXIT.ok;
}

export type SkillsReport = ReturnType<typeof skillsReport>;

export function skillsReport(catalog: SkillCatalog, loaded: LoadedConfig, workspace: string) {
  const agents = Object.values(loaded.config.agents);
  const workspaceDir = join(workspace, ".agents", "skills");
  return {
    skills: catalog.entries.map((entry) => ({
      id: entry.id,
      ...(entry.enabled ? { description: entry.description } : {}),
      path: cleanText(entry.file),
      provenance: entry.provenance,
      enabled: entry.enabled,
      agents: agents.filter((agent) => skillsForAgent(catalog, agent).some((skill) => skill.id === entry.id)).map((agent) => agent.name),
    })),
    replaced: catalog.replaced.map((entry) => ({ id: entry.id, path: cleanText(entry.file), provenance: entry.provenance, by: entry.by })),
    skipped: catalog.skipped.map((entry) => ({ path: cleanText(entry.path), provenance: entry.provenance, reason: cleanText(entry.reason) })),
    notices: agents.flatMap((agent) => agentSkillProblems(catalog, agent)),
    ...(!loaded.trusted && existsSync(workspaceDir) ? { untrustedWorkspaceSkills: workspaceDir } : {}),
  };
}

function formatSkills(report: SkillsReport): string {
  const lines: string[] = [];
  if (report.skills.length === 0) lines.push("No skill packages were found (see docs/skills.md for where zero looks).");
  for (const skill of report.skills) {
    lines.push(`${skill.id}  ${skill.provenance}  ${skill.enabled ? "enabled" : "disabled"}`);
    if (skill.description !== undefined) lines.push(`  ${skill.description}`);
    lines.push(`  ${skill.path}`);
    if (skill.enabled) lines.push(`  agents: ${skill.agents.length > 0 ? skill.agents.join(", ") : "none (list it in an agent's skills)"}`);
  }
  for (const entry of report.replaced) lines.push(`replaced: ${entry.id} (${entry.provenance}) ${entry.path}, by the ${entry.by} entry`);
  for (const entry of report.skipped) lines.push(`skipped: ${entry.path} (${entry.provenance}): ${entry.reason}`);
  for (const notice of report.notices) lines.push(`notice: ${notice}`);
  if (report.untrustedWorkspaceSkills !== undefined) {
    lines.push(`not read: ${report.untrustedWorkspaceSkills} (the workspace is not trusted; review its packages, then run 'zero trust')`);
  }
  return `${lines.join("\n")}\n`;
}
