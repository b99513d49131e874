import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load.ts";
import { configSandbox } from "../config/config-test-support.ts";
import { loadSkills } from "./source.ts";

/** A SKILL.md text with this name and description (and a body the catalog must never carry). */
export function skillText(name: string, description: string, body = `# ${name}\n\nBODY-OF-${name}\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

/** Writes `<base>/<dir>/SKILL.md` and returns its path. */
export function writeSkill(base: string, dir: string, text: string): string {
  mkdirSync(join(base, dir), { recursive: true });
  const file = join(base, dir, "SKILL.md");
  writeFileSync(file, text);
  return file;
}

/** A config sandbox (temp HOME and workspace) with the five skill locations at hand. */
export function skillSandbox() {
  const box = configSandbox();
  const configDir = join(box.home, ".config", "zero-cli");
  return {
    ...box,
    configDir,
    codexSkills: join(box.home, ".codex", "skills"),
    userSkills: join(configDir, "skills"),
    workspaceSkills: join(box.ws, ".agents", "skills"),
    projectFile: (text: string) => box.write(join(box.ws, "zero-cli.jsonc"), text),
    load() {
      const loaded = loadConfig({ workspace: box.ws, env: box.env });
      return { loaded, catalog: loadSkills({ env: box.env, loaded, workspace: box.ws }) };
    },
  };
}
