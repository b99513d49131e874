/**
 * Where skill packages come from, in increasing precedence (a later package with the same id
 * replaces an earlier one):
 *   1. codex-user      `~/.codex/skills/<dir>/SKILL.md` (HOME from the env given; dot-directories such as `.system` never)
 *   2. user            `<config dir>/skills/<dir>/SKILL.md`
 *   3. user-config     explicit entries of the user configuration
 *   4. workspace       `<workspace>/.agents/skills/<dir>/SKILL.md`, only in a trusted workspace
 *   5. project-config  explicit entries of the trusted project configuration (or ZERO_CLI_CONFIG)
 * A discovered package that fails validation is skipped with its reason; an explicit entry that
 * fails is the configuration's error (its `fail`). An explicit entry with `enabled: false` is not
 * read: it disables its id from its level on (a higher level's package brings the id back).
 */
import { readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { configDir, stateDir } from "../config/paths.ts";
import { unsafeOwnership } from "../config/trust.ts";
import type { Env } from "../util/env.ts";
import { canonicalPath } from "../util/paths.ts";
import { errorMessage } from "../util/errors.ts";
import { boundCatalog } from "./catalog.ts";
import { readSkillPackage, SKILL_FILE, type PackageRules } from "./package.ts";

export const PROVENANCES = ["codex-user", "user", "user-config", "workspace", "project-config"] as const;
export type SkillProvenance = (typeof PROVENANCES)[number];

/** The most directories one discovery location is searched for packages. */
export const MAX_DIRS_PER_LOCATION = 400;

export type EnabledSkill = { id: string; enabled: true; provenance: SkillProvenance; description: string; dir: string; file: string };
export type DisabledSkill = { id: string; enabled: false; provenance: SkillProvenance; file: string };
export type SkillEntry = EnabledSkill | DisabledSkill;

export type SkippedPackage = { path: string; provenance: SkillProvenance; reason: string };
export type ReplacedPackage = { id: string; file: string; provenance: SkillProvenance; by: SkillProvenance };

/** Every package the process knows, after precedence and the catalog bounds. */
export type SkillCatalog = {
  /** One entry per id, sorted by id. */
  entries: SkillEntry[];
  /** Packages a higher level's entry with the same id replaced. */
  replaced: ReplacedPackage[];
  /** Discovered packages that were not loaded, with the reason. */
  skipped: SkippedPackage[];
};

/** An entry of the `skills` map, with the layer that decided it and a way to fail at its file:line. */
export type ExplicitSkill = {
  id: string;
  path: string;
  enabled: boolean;
  provenance: "user-config" | "project-config";
  fail(problem: string): never;
};

export type DiscoveryOptions = {
  env: Env;
  /** Canonical workspace directory. */
  workspace: string;
  /** Whether the workspace's own packages may load (`zero trust`, or the ephemeral override). */
  trusted: boolean;
  explicit: readonly ExplicitSkill[];
};

/** Finds, validates and ranks every package; throws the configuration's error for a bad explicit entry. */
export function discoverSkills(options: DiscoveryOptions): SkillCatalog {
  const { env } = options;
  const config = configDir(env);
  const rules: PackageRules = {
    privateDirs: [canonicalPath(stateDir(env)), canonicalPath(config)],
    privateSkillsDir: canonicalPath(join(config, "skills")),
    workspace: canonicalPath(options.workspace),
  };
  const skipped: SkippedPackage[] = [];
  const home = env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : undefined;
  const explicit = (level: ExplicitSkill["provenance"]) => explicitLevel(options.explicit.filter((entry) => entry.provenance === level), rules);
  const levels: SkillEntry[][] = [
    home === undefined ? [] : discoverIn(join(home, ".codex", "skills"), "codex-user", rules, skipped),
    discoverIn(join(config, "skills"), "user", rules, skipped),
    explicit("user-config"),
    options.trusted ? workspacePackages(options.workspace, rules, skipped) : [],
    explicit("project-config"),
  ];
  const byId = new Map<string, SkillEntry>();
  const replaced: ReplacedPackage[] = [];
  for (const level of levels) {
    for (const entry of level) {
      const lower = byId.get(entry.id);
      if (lower !== undefined) replaced.push({ id: lower.id, file: lower.file, provenance: lower.provenance, by: entry.provenance });
      byId.set(entry.id, entry);
    }
  }
  const ranked = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const { kept, overflow } = boundCatalog(ranked);
  for (const entry of overflow) skipped.push({ path: entry.file, provenance: entry.provenance, reason: entry.reason });
  return { entries: kept, replaced, skipped };
}

/** Explicit entries: enabled ones must validate (else the config fails), disabled ones are not read. */
function explicitLevel(entries: readonly ExplicitSkill[], rules: PackageRules): SkillEntry[] {
  const out: SkillEntry[] = [];
  for (const entry of entries) {
    if (!entry.enabled) {
      out.push({ id: entry.id, enabled: false, provenance: entry.provenance, file: entry.path });
      continue;
    }
    const checked = readSkillPackage(entry.path, rules);
    if (!checked.ok) entry.fail(`skill package ${entry.path} cannot be loaded: ${checked.reason}`);
    const found = checked.value;
    if (found.name !== entry.id) entry.fail(`${entry.path} names itself "${found.name}", not "${entry.id}"; the entry's id must be the frontmatter name`);
    out.push({ id: entry.id, enabled: true, provenance: entry.provenance, description: found.description, dir: found.dir, file: found.file });
  }
  return out;
}

/**
 * A trusted workspace's `.agents/skills`. Trust names a path, so — as for a project file — what
 * another user could have written there is refused: `.agents`, `.agents/skills`, each package
 * directory and SKILL.md must be the user's own and not writable by everyone.
 */
function workspacePackages(workspace: string, rules: PackageRules, skipped: SkippedPackage[]): SkillEntry[] {
  const base = join(workspace, ".agents", "skills");
  const unsafe = unsafeOwnership([join(workspace, ".agents"), base]);
  if (unsafe !== undefined) {
    skipped.push({ path: base, provenance: "workspace", reason: unsafe });
    return [];
  }
  return discoverIn(base, "workspace", { ...rules, ownerOnly: true }, skipped);
}

/** The direct child packages of one location, sorted by directory name; the first of a name wins there. */
function discoverIn(base: string, provenance: SkillProvenance, rules: PackageRules, skipped: SkippedPackage[]): SkillEntry[] {
  let dirents;
  try {
    dirents = readdirSync(base, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") skipped.push({ path: base, provenance, reason: `cannot list the directory: ${errorMessage(error)}` });
    return [];
  }
  const names = dirents
    .filter((dirent) => !dirent.name.startsWith(".") && (dirent.isDirectory() || dirent.isSymbolicLink()))
    .map((dirent) => ({ name: dirent.name, link: dirent.isSymbolicLink() }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (names.length > MAX_DIRS_PER_LOCATION) {
    skipped.push({ path: base, provenance, reason: `it has more than ${MAX_DIRS_PER_LOCATION} package directories; only the first ${MAX_DIRS_PER_LOCATION} (by name) are read` });
  }
  const found = new Map<string, SkillEntry>();
  for (const { name, link } of names.slice(0, MAX_DIRS_PER_LOCATION)) {
    const file = join(base, name, SKILL_FILE);
    if (link) {
      skipped.push({ path: join(base, name), provenance, reason: "the package directory is a symbolic link; register its SKILL.md under \"skills\" in your configuration instead" });
      continue;
    }
    const checked = readSkillPackage(file, rules);
    if (!checked.ok) {
      // A directory without SKILL.md is not a package (Codex keeps other things there too).
      if (checked.reason !== `${SKILL_FILE} does not exist`) skipped.push({ path: file, provenance, reason: checked.reason });
      continue;
    }
    const { name: id, description, dir, file: canonical } = checked.value;
    const first = found.get(id);
    if (first !== undefined) {
      skipped.push({ path: canonical, provenance, reason: `another package here is also named "${id}" (${first.file}), and it was read first` });
      continue;
    }
    found.set(id, { id, enabled: true, provenance, description, dir, file: canonical });
  }
  return [...found.values()];
}
