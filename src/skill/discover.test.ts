import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadError, removeConfigSandboxes } from "../config/config-test-support.ts";
import { loadConfig } from "../config/load.ts";
import { trustWorkspace } from "../config/trust.ts";
import type { SkillEntry } from "./discover.ts";
import { SKILL_LIMITS } from "./package.ts";
import { loadSkills } from "./source.ts";
import { skillSandbox, skillText, writeSkill } from "./skill-test-support.ts";

afterEach(removeConfigSandboxes);

const summary = (entries: SkillEntry[]) => entries.map((entry) => `${entry.id}:${entry.provenance}:${entry.enabled ? ("description" in entry ? entry.description : "") : "off"}`);

describe("discovery precedence", () => {
  test("the same id at all five levels: the trusted project config's entry wins; each lower one is replaced", () => {
    const s = skillSandbox();
    writeSkill(s.codexSkills, "same", skillText("same", "from codex"));
    writeSkill(s.userSkills, "same", skillText("same", "from the user dir"));
    const userEntry = writeSkill(join(s.home, "mine"), "same", skillText("same", "from the user config"));
    writeSkill(s.workspaceSkills, "same", skillText("same", "from the workspace"));
    writeSkill(join(s.ws, "automation"), "same", skillText("same", "from the project config"));
    s.userFile(`{ "skills": { "same": "${userEntry}" } }`);
    s.projectFile(`{\n  "skills": { "same": "./automation/same/SKILL.md" }\n}\n`);
    trustWorkspace(s.ws, s.env);
    const { catalog } = s.load();
    expect(summary(catalog.entries)).toEqual(["same:project-config:from the project config"]);
    expect(catalog.replaced.map((entry) => `${entry.provenance}>${entry.by}`)).toEqual([
      "codex-user>user",
      "user>user-config",
      "user-config>workspace",
      "workspace>project-config",
    ]);
    expect(catalog.entries[0]).toMatchObject({ file: join(s.ws, "automation", "same", "SKILL.md"), dir: join(s.ws, "automation", "same") });
  });

  test("each level only adds what it has; ids are sorted", () => {
    const s = skillSandbox();
    writeSkill(s.codexSkills, "c", skillText("codex-only", "c"));
    writeSkill(s.userSkills, "u", skillText("user-only", "u"));
    writeSkill(s.userSkills, "shared", skillText("codex-only", "user replaces codex"));
    expect(summary(s.load().catalog.entries)).toEqual(["codex-only:user:user replaces codex", "user-only:user:u"]);
  });

  test("Codex's .system and every dot-directory are never imported; directories without SKILL.md and loose files are ignored", () => {
    const s = skillSandbox();
    writeSkill(join(s.codexSkills, ".system"), "sys", skillText("sys", "system"));
    writeSkill(s.codexSkills, ".hidden", skillText("hidden", "hidden"));
    writeSkill(s.codexSkills, "real", skillText("real", "real"));
    mkdirSync(join(s.codexSkills, "empty"));
    writeFileSync(join(s.codexSkills, "README.md"), "not a package");
    const { catalog } = s.load();
    expect(summary(catalog.entries)).toEqual(["real:codex-user:real"]);
    expect(catalog.skipped).toEqual([]);
  });

  test("HOME comes from the env given: without an absolute HOME there is no ~/.codex to read", () => {
    const s = skillSandbox();
    writeSkill(s.codexSkills, "real", skillText("real", "real"));
    expect(s.load().catalog.entries.map((entry) => entry.id)).toEqual(["real"]);
    const env = { HOME: "relative/home", XDG_CONFIG_HOME: join(s.home, ".config"), XDG_STATE_HOME: join(s.home, ".local", "state") };
    const loaded = loadConfig({ workspace: s.ws, env });
    expect(loadSkills({ env, loaded, workspace: s.ws }).entries).toEqual([]);
  });

  test("workspace packages load only in a trusted workspace, also one without a project config", () => {
    const s = skillSandbox();
    writeSkill(s.workspaceSkills, "release-notes", skillText("release-notes", "Use when drafting release notes"));
    expect(s.load().catalog.entries).toEqual([]);
    trustWorkspace(s.ws, s.env);
    const { loaded, catalog } = s.load();
    expect(loaded.sources).toEqual([]);
    expect(summary(catalog.entries)).toEqual(["release-notes:workspace:Use when drafting release notes"]);
  });

  test("two packages of one location with the same name: the first by directory name wins, the other is skipped", () => {
    const s = skillSandbox();
    writeSkill(s.userSkills, "a-dir", skillText("twin", "first"));
    const second = writeSkill(s.userSkills, "b-dir", skillText("twin", "second"));
    const { catalog } = s.load();
    expect(summary(catalog.entries)).toEqual(["twin:user:first"]);
    expect(catalog.skipped).toEqual([{ path: second, provenance: "user", reason: expect.stringContaining('also named "twin"') }]);
  });
});

describe("validation of discovered packages: skipped with the reason, the rest still loads", () => {
  test("a symlinked SKILL.md and a symlinked package directory are refused", () => {
    const s = skillSandbox();
    const real = writeSkill(join(s.root, "elsewhere"), "x", skillText("linked", "linked"));
    mkdirSync(join(s.userSkills, "file-link"), { recursive: true });
    symlinkSync(real, join(s.userSkills, "file-link", "SKILL.md"));
    symlinkSync(join(s.root, "elsewhere", "x"), join(s.userSkills, "dir-link"));
    writeSkill(s.userSkills, "ok", skillText("ok", "fine"));
    const { catalog } = s.load();
    expect(summary(catalog.entries)).toEqual(["ok:user:fine"]);
    expect(catalog.skipped.map((skip) => skip.reason)).toEqual([
      "the package directory is a symbolic link; register its SKILL.md under \"skills\" in your configuration instead",
      "SKILL.md is a symbolic link; only a regular file is loaded",
    ]);
  });

  test("a SKILL.md over 64 KiB, a package with too many entries or bytes", () => {
    const s = skillSandbox();
    writeSkill(s.userSkills, "huge", skillText("huge", "huge", "x".repeat(SKILL_LIMITS.fileBytes)));
    writeSkill(s.userSkills, "many", skillText("many", "many"));
    for (let i = 0; i < SKILL_LIMITS.packageEntries; i++) writeFileSync(join(s.userSkills, "many", `f${i}`), "");
    writeSkill(s.userSkills, "heavy", skillText("heavy", "heavy"));
    writeFileSync(join(s.userSkills, "heavy", "blob.bin"), "");
    truncateSync(join(s.userSkills, "heavy", "blob.bin"), SKILL_LIMITS.packageBytes + 1); // sparse: no real disk use
    const { catalog } = s.load();
    expect(catalog.entries).toEqual([]);
    expect(catalog.skipped.map((skip) => [skip.path.split("/").at(-2), skip.reason])).toEqual([
      ["heavy", "the package is larger than 16 MiB"],
      ["huge", "SKILL.md is larger than 64 KiB"],
      ["many", `the package has more than ${SKILL_LIMITS.packageEntries} files and directories`],
    ]);
  });

  test("bad frontmatter, invalid UTF-8, bad names, overlong values", () => {
    const s = skillSandbox();
    writeSkill(s.userSkills, "dup", "---\nname: a\nname: b\ndescription: d\n---\n");
    writeSkill(s.userSkills, "latin1", "x");
    writeFileSync(join(s.userSkills, "latin1", "SKILL.md"), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a]));
    writeSkill(s.userSkills, "spaces", skillText("two words", "d"));
    writeSkill(s.userSkills, "long-name", skillText("n".repeat(SKILL_LIMITS.nameChars + 1), "d"));
    writeSkill(s.userSkills, "long-desc", skillText("long-desc", "d".repeat(SKILL_LIMITS.descriptionChars + 1)));
    writeSkill(s.userSkills, "max", skillText("n".repeat(SKILL_LIMITS.nameChars), "é".repeat(SKILL_LIMITS.descriptionChars)));
    const { catalog } = s.load();
    expect(catalog.entries.map((entry) => entry.id)).toEqual(["n".repeat(SKILL_LIMITS.nameChars)]);
    const reasons = Object.fromEntries(catalog.skipped.map((skip) => [skip.path.split("/").at(-2), skip.reason]));
    expect(reasons).toEqual({
      dup: 'invalid frontmatter: line 3: duplicate key "name"',
      latin1: "SKILL.md is not valid UTF-8",
      spaces: expect.stringContaining('"name" "two words" must be letters, digits'),
      "long-name": `"name" is longer than ${SKILL_LIMITS.nameChars} characters`,
      "long-desc": `"description" is longer than ${SKILL_LIMITS.descriptionChars} characters`,
    });
  });

  test("a control character in a package's path is refused (the path goes into the prompt)", () => {
    const s = skillSandbox();
    writeSkill(s.userSkills, "evil\x1b[2Jdir", skillText("evil", "d"));
    const { catalog } = s.load();
    expect(catalog.entries).toEqual([]);
    expect(catalog.skipped[0]!.reason).toBe("its path contains the unsafe character U+001B");
  });

  test("a workspace package that another user could have written is refused", () => {
    const s = skillSandbox();
    const file = writeSkill(s.workspaceSkills, "open", skillText("open", "d"));
    chmodSync(file, 0o666);
    writeSkill(s.workspaceSkills, "closed", skillText("closed", "d"));
    trustWorkspace(s.ws, s.env);
    const { catalog } = s.load();
    expect(catalog.entries.map((entry) => entry.id)).toEqual(["closed"]);
    expect(catalog.skipped).toEqual([{ path: file, provenance: "workspace", reason: `${file} is writable by every user` }]);
    chmodSync(s.workspaceSkills, 0o777);
    const open = s.load().catalog;
    expect(open.entries).toEqual([]);
    expect(open.skipped).toEqual([{ path: s.workspaceSkills, provenance: "workspace", reason: `${s.workspaceSkills} is writable by every user` }]);
  });
});

describe("explicit entries", () => {
  test("a string is an enabled package; the object form with enabled false disables the id (its file is not read)", () => {
    const s = skillSandbox();
    writeSkill(s.userSkills, "legacy-checks", skillText("legacy-checks", "discovered"));
    const notes = writeSkill(join(s.home, "skills-src"), "notes", skillText("notes", "explicit notes"));
    s.userFile(`{ "skills": { "notes": "${notes}", "legacy-checks": { "path": "/nowhere/SKILL.md", "enabled": false } } }`);
    const { catalog } = s.load();
    expect(summary(catalog.entries)).toEqual(["legacy-checks:user-config:off", "notes:user-config:explicit notes"]);
    expect(catalog.replaced).toEqual([{ id: "legacy-checks", file: join(s.userSkills, "legacy-checks", "SKILL.md"), provenance: "user", by: "user-config" }]);
  });

  test("a disabled user entry is brought back by a higher level's package; a project entry disables a user one", () => {
    const s = skillSandbox();
    const a = writeSkill(join(s.home, "src"), "a", skillText("a", "user a"));
    const b = writeSkill(join(s.home, "src"), "b", skillText("b", "user b"));
    writeSkill(s.workspaceSkills, "a", skillText("a", "workspace a"));
    s.userFile(`{ "skills": { "a": { "path": "${a}", "enabled": false }, "b": "${b}" } }`);
    s.projectFile(`{ "skills": { "b": { "enabled": false } } }`);
    trustWorkspace(s.ws, s.env);
    expect(summary(s.load().catalog.entries)).toEqual(["a:workspace:workspace a", "b:project-config:off"]);
  });

  test("an invalid explicit entry is a configuration error at the file:line of its path", () => {
    const s = skillSandbox();
    writeSkill(join(s.home, "src"), "bad", "---\nname: bad\n---\n");
    s.userFile(`{\n  "skills": {\n    "bad": "../../src/bad/SKILL.md"\n  }\n}\n`);
    const error = loadError(() => s.load());
    expect(error.file).toBe(s.userPath);
    expect([error.line, error.keyPath]).toEqual([3, "skills.bad.path"]);
    expect(error.problem).toBe(`skill package ${join(s.home, "src", "bad", "SKILL.md")} cannot be loaded: invalid frontmatter: missing "description"`);

    s.userFile(`{ "skills": {\n "gone": { "path": "./nope/SKILL.md" } } }`);
    const missing = loadError(() => s.load());
    expect([missing.line, missing.keyPath, missing.problem]).toEqual([2, "skills.gone.path", `skill package ${join(s.configDir, "nope", "SKILL.md")} cannot be loaded: SKILL.md does not exist`]);
  });

  test("the frontmatter name must be the entry's id; the path must name a SKILL.md", () => {
    const s = skillSandbox();
    const other = writeSkill(join(s.home, "src"), "x", skillText("other-name", "d"));
    s.userFile(`{ "skills": { "mine": "${other}" } }`);
    expect(loadError(() => s.load()).problem).toContain(`names itself "other-name", not "mine"`);
    writeFileSync(join(s.home, "src", "x", "README.md"), "x");
    s.userFile(`{ "skills": { "mine": "${join(s.home, "src", "x", "README.md")}" } }`);
    expect(loadError(() => s.load()).problem).toContain("the entry point must be a file named SKILL.md");
  });

  test("a package may not be or hold the workspace, nor be, hold, or sit elsewhere in zero's private directories; <config>/skills is fine", () => {
    const s = skillSandbox();
    writeSkill(s.configDir, ".", skillText("whole", "d"));
    s.userFile(`{ "skills": { "whole": "./SKILL.md" } }`);
    expect(loadError(() => s.load()).problem).toContain("contains zero's private directory");
    writeSkill(join(s.configDir, "mcp-oauth"), "x", skillText("tokens", "d"));
    s.userFile(`{ "skills": { "tokens": "./mcp-oauth/x/SKILL.md" } }`);
    expect(loadError(() => s.load()).problem).toContain("lies inside zero's private directory");
    writeSkill(s.home, ".", skillText("home", "d"));
    s.userFile(`{ "skills": { "home": "${join(s.home, "SKILL.md")}" } }`);
    expect(loadError(() => s.load()).problem).toContain("contains zero's private directory");
    writeSkill(s.ws, ".", skillText("repo", "d"));
    s.userFile(`{ "skills": { "repo": "${join(s.ws, "SKILL.md")}" } }`);
    expect(loadError(() => s.load()).problem).toContain("is or contains the workspace");
    s.userFile(`{ "skills": { "fine": "./skills/fine/SKILL.md" } }`);
    writeSkill(s.userSkills, "fine", skillText("fine", "d"));
    expect(summary(s.load().catalog.entries)).toEqual(["fine:user-config:d"]);
  });
});

describe("catalog bounds", () => {
  test("at most 200 packages: the highest precedence is kept, the rest skipped with the reason", () => {
    const s = skillSandbox();
    for (let i = 0; i < 200; i++) writeSkill(s.codexSkills, `s${String(i).padStart(3, "0")}`, skillText(`s${String(i).padStart(3, "0")}`, "d"));
    writeSkill(s.userSkills, "zz-user", skillText("zz-user", "user level"));
    const { catalog } = s.load();
    expect(catalog.entries).toHaveLength(200);
    expect(catalog.entries.at(-1)!.id).toBe("zz-user");
    expect(catalog.skipped).toEqual([{ path: join(s.codexSkills, "s199", "SKILL.md"), provenance: "codex-user", reason: "the skill catalog is full (at most 200 packages)" }]);
  });

  test("at most 64 KiB of catalog lines", () => {
    const s = skillSandbox();
    for (let i = 0; i < 70; i++) writeSkill(s.userSkills, `d${i}`, skillText(`d${String(i).padStart(2, "0")}`, "x".repeat(1000)));
    const { catalog } = s.load();
    expect(catalog.entries.length).toBeLessThan(70);
    expect(catalog.entries.length).toBeGreaterThan(55);
    expect(catalog.skipped.every((skip) => skip.reason.includes("64 KiB"))).toBe(true);
    expect(catalog.entries.length + catalog.skipped.length).toBe(70);
  });
});
