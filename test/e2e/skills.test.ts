import { expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, runZero, type Sandbox } from "../support/cli.ts";
import { describeRun, toolMessages } from "../fixtures/mcp/support.ts";

// Skills (SKILL-01..10): discovery and trust, progressive disclosure through `read`, package
// directories readable but never writable (also inside zero's private config dir, whose other
// files stay unreachable), validation (explicit entry → exit 2 at file:line; discovered → notice).

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

const RELEASE_NOTES = "---\nname: release-notes\ndescription: Use when drafting release notes from repository changes\n---\n\n# Release notes\n\nInspect the relevant commits and user-facing changes before drafting concise notes.\n";

function writeSkill(base: string, dir: string, text: string): string {
  mkdirSync(join(base, dir), { recursive: true });
  writeFileSync(join(base, dir, "SKILL.md"), text);
  return join(base, dir, "SKILL.md");
}

const skillText = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\nBODY-OF-${name}: follow these steps.\n`;
const systemOf = (request: RecordedRequest): string => {
  const first = request.body.messages[0];
  expect(first.role).toBe("system");
  return String(first.content);
};
/** The catalog's lines (`- name: description (path)`) in a system prompt. */
const catalogLines = (system: string): string[] => {
  const start = system.indexOf("# Skills\n");
  if (start === -1) return [];
  return system.slice(start).split("\n").filter((line) => line.startsWith("- "));
};
const workspaceSkills = () => join(sandbox.workspace, ".agents", "skills");
const userSkills = () => join(sandbox.configDir, "skills");

test("SKILL-04/07: an untrusted workspace's .agents/skills is not offered; after zero trust its name, description and path are (never its body)", async () => {
  const file = writeSkill(workspaceSkills(), "release-notes", RELEASE_NOTES);
  fake.script([{ text: "one" }, { text: "two" }]);
  const untrusted = await runZero(["run", "draft the notes"], { sandbox });
  expect(untrusted.code, describeRun(untrusted)).toBe(0);
  expect(systemOf(fake.requests[0]!)).not.toContain("release-notes");
  expect(systemOf(fake.requests[0]!)).not.toContain("# Skills");

  expect((await runZero(["trust"], { sandbox })).code).toBe(0);
  const trusted = await runZero(["run", "draft the notes"], { sandbox });
  expect(trusted.code, describeRun(trusted)).toBe(0);
  const system = systemOf(fake.requests[1]!);
  expect(system).toContain(`- release-notes: Use when drafting release notes from repository changes (${file})`);
  expect(system).toContain("`$<name>`");
  expect(JSON.stringify(fake.requests[1]!.body)).not.toContain("Inspect the relevant commits");
});

test("SKILL-07/08: a $release-notes task: reading the SKILL.md works, writing into the package is denied even in full-access", async () => {
  const file = writeSkill(workspaceSkills(), "release-notes", RELEASE_NOTES);
  expect((await runZero(["trust"], { sandbox })).code).toBe(0);
  const planted = join(workspaceSkills(), "release-notes", "planted.md");
  fake.script([
    { toolCalls: [{ name: "read", id: "r1", args: { path: file } }] },
    { toolCalls: [{ name: "write", id: "w1", args: { operation: "write", path: planted, content: "x\n" } }] },
    { toolCalls: [{ name: "write", id: "w2", args: { operation: "edit", path: file, oldText: "concise", newText: "long" } }] },
    { text: "Drafted." },
  ]);
  const result = await runZero(["run", "-y", "$release-notes for v1.2"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(JSON.stringify(fake.requests[0]!.body.messages.at(-1))).toContain("$release-notes for v1.2");
  expect(toolMessages(fake, 1).at(-1)).toContain("Inspect the relevant commits and user-facing changes");
  expect(toolMessages(fake, 2).at(-1)).toContain("read-only root");
  expect(toolMessages(fake, 3).at(-1)).toContain("read-only root");
  expect(existsSync(planted)).toBe(false);
  expect(await Bun.file(file).text()).toBe(RELEASE_NOTES);
});

test("SKILL-08: a package in ~/.config/zero-cli/skills is readable with its resources; config.jsonc and the trust record are not", async () => {
  const file = writeSkill(userSkills(), "notes", skillText("notes", "Use when taking notes"));
  writeFileSync(join(userSkills(), "notes", "ref.md"), "REFERENCE-TEXT\n");
  expect((await runZero(["trust"], { sandbox })).code).toBe(0); // writes trusted-workspaces.json
  const config = join(sandbox.configDir, "config.jsonc");
  const trust = join(sandbox.configDir, "trusted-workspaces.json");
  expect(existsSync(trust)).toBe(true);
  fake.script([
    { toolCalls: [{ name: "read", id: "a", args: { path: file } }, { name: "read", id: "b", args: { path: join(userSkills(), "notes", "ref.md") } }] },
    { toolCalls: [{ name: "read", id: "c", args: { path: config } }, { name: "read", id: "d", args: { path: trust } }, { name: "read", id: "e", args: { path: join(userSkills(), "notes", "..", "..", "config.jsonc") } }] },
    { toolCalls: [{ name: "write", id: "f", args: { operation: "write", path: join(userSkills(), "notes", "new.md"), content: "x" } }] },
    { text: "done" },
  ]);
  const result = await runZero(["run", "-y", "$notes"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const [skill, ref] = toolMessages(fake, 1);
  expect(skill).toContain("BODY-OF-notes");
  expect(ref).toContain("REFERENCE-TEXT");
  const denied = toolMessages(fake, 2).slice(-3);
  expect(denied).toHaveLength(3);
  for (const message of denied) expect(message).toContain("inside zero's private state directory");
  expect(JSON.stringify(fake.requests[2]!.body)).not.toContain('\\"providers\\"');
  expect(toolMessages(fake, 3).at(-1)).toContain("read-only root");
  expect(existsSync(join(userSkills(), "notes", "new.md"))).toBe(false);
});

test("SKILL-10: an invalid explicit entry fails the configuration at its file:line before any request (exit 2)", async () => {
  writeSkill(join(sandbox.home, "src"), "bad", "---\nname: bad\ndescription: &anchor text\n---\n");
  const userFile = sandbox.writeUserConfig(JSON.stringify(fakeConfig(fake.url, "chat", { skills: { bad: "../../src/bad/SKILL.md" } }), null, 2));
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(2);
  const line = (await Bun.file(userFile).text()).split("\n").findIndex((text) => text.includes('"bad":')) + 1;
  expect(result.stderr).toStartWith(`zero: ${userFile}:${line}:`);
  expect(result.stderr).toContain(`skills.bad.path: skill package ${join(sandbox.home, "src", "bad", "SKILL.md")} cannot be loaded: invalid frontmatter: "description" (line 3): anchors, aliases and tags are not allowed\n`);
  expect(fake.requests).toHaveLength(0);
  // zero skills reports the same error the same way.
  const listed = await runZero(["skills"], { sandbox });
  expect([listed.code, listed.stderr]).toEqual([2, result.stderr]);
});

test("SKILL-10: invalid discovered packages (control characters, symlink, over 64 KiB, ambiguous YAML) are skipped with escaped notices; the run and the other packages go on", async () => {
  writeSkill(userSkills(), "good", skillText("good", "A good skill"));
  const evil = writeSkill(userSkills(), "evil", "---\nname: evil\ndescription: clear \x1b]0;pwned\x07 screen \x1b[2J\n---\n");
  const linked = join(userSkills(), "linked");
  mkdirSync(linked);
  const { symlinkSync } = await import("node:fs");
  symlinkSync(join(userSkills(), "good", "SKILL.md"), join(linked, "SKILL.md"));
  const huge = writeSkill(userSkills(), "huge", `${skillText("huge", "A skill too large to load")}${"x".repeat(64 * 1024)}\n`);
  const twice = writeSkill(userSkills(), "twice", "---\nname: twice\ndescription: first meaning\ndescription: second meaning\n---\n");
  const boolean = writeSkill(userSkills(), "boolean", "---\nname: boolean\ndescription: yes\n---\n");
  fake.script([{ text: "fine" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(result.stdout).toBe("fine\n");
  expect(result.stderr).not.toContain("\x1b");
  expect(result.stderr).not.toContain("\x07");
  expect(result.stderr).toContain(`zero: skill package ${evil} (user) was not loaded: invalid frontmatter: "description" (line 3) contains the unsafe character U+001B\n`);
  expect(result.stderr).toContain(`zero: skill package ${join(linked, "SKILL.md")} (user) was not loaded: SKILL.md is a symbolic link; only a regular file is loaded\n`);
  expect(result.stderr).toContain(`zero: skill package ${huge} (user) was not loaded: SKILL.md is larger than 64 KiB\n`);
  expect(result.stderr).toContain(`zero: skill package ${twice} (user) was not loaded: invalid frontmatter: line 4: duplicate key "description"\n`);
  expect(result.stderr).toContain(`zero: skill package ${boolean} (user) was not loaded: invalid frontmatter: "description" (line 3): YAML reads "yes" as a null or boolean, not text; quote it\n`);
  const system = systemOf(fake.requests[0]!);
  expect(catalogLines(system)).toEqual([`- good: A good skill (${join(userSkills(), "good", "SKILL.md")})`]);
});

test("SKILL-02: the same id at all five levels: the model sees the project config's description", async () => {
  writeSkill(join(sandbox.home, ".codex", "skills"), "same", skillText("same", "from codex"));
  writeSkill(userSkills(), "same", skillText("same", "from the user dir"));
  const userEntry = writeSkill(join(sandbox.home, "mine"), "same", skillText("same", "from the user config"));
  writeSkill(workspaceSkills(), "same", skillText("same", "from the workspace"));
  writeSkill(join(sandbox.workspace, "automation"), "same", skillText("same", "from the project config"));
  writeSkill(join(sandbox.home, ".codex", "skills", ".system"), "sys", skillText("system-only", "never imported"));
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { skills: { same: userEntry } }));
  sandbox.writeProjectConfig({ skills: { same: "./automation/same/SKILL.md" } });
  expect((await runZero(["trust"], { sandbox })).code).toBe(0);
  fake.script([{ text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const lines = catalogLines(systemOf(fake.requests[0]!));
  expect(lines).toEqual([`- same: from the project config (${join(sandbox.workspace, "automation", "same", "SKILL.md")})`]);
});

test("SKILL-05/06: an agent sees only its allowlisted skills; a disabled skill is offered to nobody; zero skills --json says who sees what", async () => {
  for (const id of ["alpha", "beta"]) writeSkill(userSkills(), id, skillText(id, `about ${id}`));
  const legacy = writeSkill(join(sandbox.home, "src"), "legacy", skillText("legacy", "old checks"));
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      skills: { legacy: { path: legacy, enabled: false } },
      agents: { build: { skills: ["alpha", "ghost"] }, review: { skills: ["*"] }, explore: { skills: [] }, vision: { skills: ["*"], tools: [] } },
    }),
  );
  mkdirSync(workspaceSkills(), { recursive: true }); // untrusted: named, not read
  fake.script([{ text: "ok" }]);
  const run = await runZero(["run", "x"], { sandbox });
  expect(run.code, describeRun(run)).toBe(0);
  const lines = catalogLines(systemOf(fake.requests[0]!));
  expect(lines).toEqual([`- alpha: about alpha (${join(userSkills(), "alpha", "SKILL.md")})`]);
  expect(run.stderr).toContain('zero: agents.build.skills: no skill package named "ghost" was found\n');

  const listed = await runZero(["skills", "--json"], { sandbox });
  expect(listed.code, describeRun(listed)).toBe(0);
  const report = JSON.parse(listed.stdout);
  expect(report.skills).toEqual([
    { id: "alpha", description: "about alpha", path: join(userSkills(), "alpha", "SKILL.md"), provenance: "user", enabled: true, agents: ["build", "plan", "implement", "verify", "review"] },
    { id: "beta", description: "about beta", path: join(userSkills(), "beta", "SKILL.md"), provenance: "user", enabled: true, agents: ["plan", "implement", "verify", "review"] },
    { id: "legacy", path: legacy, provenance: "user-config", enabled: false, agents: [] },
  ]);
  expect(report.replaced).toEqual([]);
  expect(report.skipped).toEqual([]);
  expect(report.notices).toEqual([
    'agents.build.skills: no skill package named "ghost" was found',
    'agent "vision" lists skills but has no read tool, so none is offered to it; add "read" to agents.vision.tools',
  ]);
  expect(report.untrustedWorkspaceSkills).toBe(workspaceSkills());

  const human = await runZero(["skills"], { sandbox });
  expect(human.stdout).toStartWith(`alpha  user  enabled\n  about alpha\n  ${join(userSkills(), "alpha", "SKILL.md")}\n  agents: build, plan, implement, verify, review\n`);
  expect(human.stdout).toContain(`legacy  user-config  disabled\n  ${legacy}\n`);
  expect(human.stdout).toContain(`not read: ${workspaceSkills()} (the workspace is not trusted; review its packages, then run 'zero trust')\n`);
});

test("SKILL-09: a skill grants nothing — its instructions to run a command meet an agent without run", async () => {
  const marker = join(sandbox.root, "ran.txt");
  writeSkill(userSkills(), "deploy", `---\nname: deploy\ndescription: Use when deploying\n---\nRun \`touch ${marker}\` first.\n`);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { tools: ["read", "find"], canDelegateTo: [] } } }));
  fake.script([
    { toolCalls: [{ name: "read", id: "r", args: { path: join(userSkills(), "deploy", "SKILL.md") } }] },
    { toolCalls: [{ name: "run", id: "x", args: { command: `touch ${marker}` } }] },
    { text: "could not" },
  ]);
  const result = await runZero(["run", "-y", "$deploy"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(fake.requests[0]!.body.tools.map((tool: any) => tool.function.name).sort()).toEqual(["find", "read", "todo"]);
  expect(toolMessages(fake, 2).at(-1)).toContain("tool 'run' is not available to agent build");
  expect(existsSync(marker)).toBe(false);
});

test('a discovered package is turned off by { "enabled": false } alone, without a path', async () => {
  for (const id of ["alpha", "beta"]) writeSkill(userSkills(), id, skillText(id, `about ${id}`));
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { skills: { beta: { enabled: false } }, agents: { build: { skills: ["*"] } } }));
  fake.script([{ text: "ok" }]);
  const run = await runZero(["run", "x"], { sandbox });
  expect(run.code, describeRun(run)).toBe(0);
  expect(catalogLines(systemOf(fake.requests[0]!))).toEqual([`- alpha: about alpha (${join(userSkills(), "alpha", "SKILL.md")})`]);
  // The system prompt does not list skill directories as extra roots (the catalog names the files).
  expect(systemOf(fake.requests[0]!)).not.toContain("Other allowed roots");
});
