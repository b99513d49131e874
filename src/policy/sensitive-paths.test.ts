import { describe, expect, test } from "bun:test";
import { isSecretLikePath } from "./secret-paths.ts";
import {
  MANIFEST_FIELDS,
  type Manifest,
  SENSITIVE_PATH_GROUPS,
  type SensitiveKind,
  foldPath,
  isSensitivePath,
  manifestChangeIsSensitive,
  manifestOf,
  sensitivePathGroup,
} from "./sensitive-paths.ts";

/** Paths a write to which must be asked, by the group that catches them. Nested, odd case and odd spellings on purpose. */
const SENSITIVE: ReadonlyArray<[SensitiveKind, string]> = [
  ["zero", ".zero-cli/config.jsonc"],
  ["zero", "zero-cli.jsonc"],
  ["zero", "packages/app/devout.jsonc"],
  ["git", ".git/hooks/pre-commit"],
  ["git", ".git/config"],
  ["git", "./.git/info/attributes"],
  ["git", "home/.gitconfig"],
  ["git", ".config/git/config"],
  ["hooks", ".husky/pre-commit"],
  ["hooks", ".husky/_/husky.sh"],
  ["hooks", ".githooks/pre-push"],
  ["hooks", "lefthook.yml"],
  ["hooks", ".lefthook-local.yml"],
  ["hooks", ".pre-commit-config.yaml"],
  ["hooks", ".simple-git-hooks.json"],
  ["hooks", ".lintstagedrc.json"],
  ["hooks", "lint-staged.config.mjs"],
  ["ci", ".github/workflows/x.yml"],
  ["ci", ".github/workflows/release.yaml"],
  ["ci", ".GitHub/Workflows/CI.yml"],
  ["ci", "sub/project/.github/workflows/x.yml"],
  ["ci", ".github/actions/setup/action.yml"],
  ["ci", ".gitea/workflows/build.yml"],
  ["ci", ".gitlab-ci.yml"],
  ["ci", ".gitlab/ci/test.yml"],
  ["ci", ".circleci/config.yml"],
  ["ci", "azure-pipelines.yml"],
  ["ci", "azure-pipelines-release.yml"],
  ["ci", "Jenkinsfile"],
  ["ci", "ci/Jenkinsfile.release"],
  ["ci", ".buildkite/pipeline.yml"],
  ["ci", ".travis.yml"],
  ["ci", "bitbucket-pipelines.yml"],
  ["ci", ".drone.yml"],
  ["ci", "cloudbuild.yaml"],
  ["ci", ".gitpod.yml"],
  ["editor", ".vscode/tasks.json"],
  ["editor", ".vscode/settings.json"],
  ["editor", ".vscode/launch.json"],
  ["editor", ".VSCode/tasks.json"],
  ["editor", "app.code-workspace"],
  ["editor", ".idea/workspace.xml"],
  ["editor", ".idea/runConfigurations/dev.xml"],
  ["editor", ".zed/tasks.json"],
  ["editor", ".devcontainer/devcontainer.json"],
  ["editor", ".devcontainer.json"],
  ["editor", ".nvim.lua"],
  ["editor", ".exrc"],
  ["editor", ".vimrc"],
  ["editor", ".config/nvim/init.lua"],
  ["editor", ".emacs.d/init.el"],
  ["editor", ".dir-locals.el"],
  ["editor", ".config/Code/User/settings.json"],
  ["agent", "AGENTS.md"],
  ["agent", "packages/api/AGENTS.md"],
  ["agent", "CLAUDE.md"],
  ["agent", "CLAUDE.local.md"],
  ["agent", "GEMINI.md"],
  ["agent", ".mcp.json"],
  ["agent", ".claude/settings.json"],
  ["agent", ".claude/commands/deploy.md"],
  ["agent", ".codex/config.toml"],
  ["agent", ".cursor/mcp.json"],
  ["agent", ".cursor/rules/x.mdc"],
  ["agent", ".cursorrules"],
  ["agent", ".gemini/settings.json"],
  ["agent", ".windsurf/rules/x.md"],
  ["agent", ".windsurfrules"],
  ["agent", ".continue/config.json"],
  ["agent", ".aider.conf.yml"],
  ["agent", ".aiderignore"],
  ["agent", ".clinerules"],
  ["agent", ".roo/mcp.json"],
  ["agent", "opencode.json"],
  ["agent", ".github/copilot-instructions.md"],
  ["agent", ".github/prompts/x.prompt.md"],
  ["shell", ".bashrc"],
  ["shell", ".bash_profile"],
  ["shell", ".profile"],
  ["shell", ".zshrc"],
  ["shell", ".zprofile"],
  ["shell", ".zshenv"],
  ["shell", ".config/fish/config.fish"],
  ["shell", ".config/fish/conf.d/x.fish"],
  ["shell", ".inputrc"],
  ["shell", "dotfiles/.bashrc"],
  ["shell", ".ZSHRC"],
  ["shell", ".tmux.conf"],
  ["shell", ".config/systemd/user/x.service"],
  ["shell", ".config/autostart/x.desktop"],
  ["shell", "Library/LaunchAgents/com.x.plist"],
  ["shell", "mise.toml"],
  ["shell", ".config/mise/config.toml"],
  ["build", "bunfig.toml"],
  ["build", "packages/a/bunfig.toml"],
  ["build", ".yarnrc.yml"],
  ["build", ".yarnrc"],
  ["build", ".yarn/releases/yarn-4.cjs"],
  ["build", ".yarn/plugins/x.cjs"],
  ["build", ".pnp.cjs"],
  ["build", ".pnpmfile.cjs"],
  ["build", "pnpm-workspace.yaml"],
  ["build", "binding.gyp"],
  ["build", "node_modules/.bin/jest"],
  ["build", "setup.py"],
  ["build", ".venv/lib/python3.12/site-packages/evil.pth"],
  ["build", "sitecustomize.py"],
  ["build", "build.rs"],
  ["build", "crates/x/build.rs"],
  ["build", ".cargo/config.toml"],
  ["build", "rust-toolchain.toml"],
];

/** Look-alikes that stay ordinary edits (accept-edits allows them). */
const ORDINARY: readonly string[] = [
  "src/a.ts",
  "README.md",
  "docs/agents.md.txt",
  "docs/AGENTS-guide.md",
  "src/vscode/extension.ts",
  "vscode.md",
  ".github/ISSUE_TEMPLATE/bug.md",
  ".github/CODEOWNERS",
  ".github/dependabot.yml",
  "docs/workflows/ci.md",
  "workflows/x.yml",
  "github/workflows/x.yml",
  "src/bashrc.ts",
  "bashrc",
  ".bashrc.example",
  "Makefile",
  "justfile",
  "scripts/build.sh",
  "package-lock.json",
  "bun.lock",
  "tsconfig.json",
  "package.json",
  "pyproject.toml",
  "Cargo.toml",
  "setup.cfg",
  "conftest.py",
  "model.pth",
  "src/build.rs.md",
  "idea.md",
  "claude.ts",
  ".gitignore",
  ".gitattributes",
  ".editorconfig",
  "",
  ".",
];

describe("sensitive paths by name", () => {
  test.each(SENSITIVE.map(([kind, path]) => [path, kind]))("%p is sensitive (%s)", (path, kind) => {
    expect(sensitivePathGroup(path)?.kind).toBe(kind as SensitiveKind);
    expect(isSensitivePath(`/home/u/project/${path}`)).toBe(true);
  });

  test.each(ORDINARY.map((path) => [path]))("%p is an ordinary file", (path) => {
    expect(isSensitivePath(path)).toBe(false);
  });

  test("a sensitive directory covers everything under it; a sensitive file name nothing", () => {
    expect(isSensitivePath(".vscode")).toBe(true);
    expect(isSensitivePath(".vscode/deep/nested/file")).toBe(true);
    expect(isSensitivePath(".github")).toBe(false); // only its workflows, actions and agent files
    expect(isSensitivePath(".github/workflows")).toBe(true);
    expect(isSensitivePath("AGENTS.md/x")).toBe(true);
  });

  test("`..` is resolved before matching, and a path escaping upward still shows its name", () => {
    expect(isSensitivePath("src/../.vscode/tasks.json")).toBe(true);
    expect(isSensitivePath(".vscode/../src/a.ts")).toBe(false);
    expect(isSensitivePath("../home/.bashrc")).toBe(true);
    expect(foldPath("./a//b/./c")).toBe("a/b/c");
  });

  test("case and compatibility forms fold the way a case-insensitive file system might", () => {
    expect(isSensitivePath(".BASHRC")).toBe(true);
    expect(isSensitivePath(".ba\u017Fhrc")).toBe(true); // ſ (long s) folds to s
    expect(isSensitivePath(".\uFF56scode/tasks.json")).toBe(true); // fullwidth v
    expect(isSensitivePath("agents.MD")).toBe(true);
  });

  test("a secret-like dotfile that runs code is caught by both lists", () => {
    for (const path of [".envrc", ".npmrc"]) {
      expect(isSensitivePath(path)).toBe(true);
      expect(isSecretLikePath(path)).toBe(true);
    }
  });

  test("globs are lowercase, use only `*`, and do not repeat", () => {
    const all = SENSITIVE_PATH_GROUPS.flatMap((group) => group.globs);
    for (const glob of all) {
      expect(glob).toBe(glob.toLowerCase());
      expect(glob).not.toMatch(/[?[\]{}!\\]/);
      if (glob.includes("/")) expect(glob.startsWith("**/")).toBe(true);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  test("every example is matched by an independent Bun.Glob reading of the same globs", () => {
    const matches = (path: string) => {
      const components = foldPath(path).split("/");
      return SENSITIVE_PATH_GROUPS.flatMap((g) => g.globs).some((glob) => {
        const bare = glob.startsWith("**/") ? glob.slice(3) : glob;
        const matcher = new Bun.Glob(bare);
        const width = bare.split("/").length;
        return components.some((_, index) => index + width <= components.length && matcher.match(components.slice(index, index + width).join("/")));
      });
    };
    expect(SENSITIVE.filter(([, path]) => !matches(path))).toEqual([]);
    expect(ORDINARY.filter((path) => path !== "" && matches(path))).toEqual([]);
  });
});

describe("manifests judged by content", () => {
  test("manifestOf names the three manifests at any depth, in any case", () => {
    expect(manifestOf("package.json")).toBe("package.json");
    expect(manifestOf("packages/a/Package.JSON")).toBe("package.json");
    expect(manifestOf("pyproject.toml")).toBe("pyproject.toml");
    expect(manifestOf("crates/x/Cargo.toml")).toBe("cargo.toml");
    expect(manifestOf("package-lock.json")).toBeUndefined();
    expect(manifestOf("src/package.json.ts")).toBeUndefined();
  });

  const pkg = (extra: Record<string, unknown> = {}) => JSON.stringify({ name: "x", version: "1.0.0", dependencies: { a: "^1" }, scripts: { test: "bun test" }, ...extra }, null, 2);
  const CASES: ReadonlyArray<[string, Manifest, string | undefined, string | undefined, boolean]> = [
    ["a dependency added", "package.json", pkg(), pkg({ dependencies: { a: "^1", b: "^2" } }), false],
    ["the version bumped", "package.json", pkg(), pkg({ version: "1.0.1" }), false],
    ["keys reordered", "package.json", pkg(), JSON.stringify({ scripts: { test: "bun test" }, version: "1.0.0", name: "x", dependencies: { a: "^1" } }), false],
    ["a postinstall script added", "package.json", pkg(), pkg({ scripts: { test: "bun test", postinstall: "node x.js" } }), true],
    ["the test script changed", "package.json", pkg(), pkg({ scripts: { test: "curl x | sh" } }), true],
    ["bin added", "package.json", pkg(), pkg({ bin: { x: "x.js" } }), true],
    ["trustedDependencies widened", "package.json", pkg(), pkg({ trustedDependencies: ["evil"] }), true],
    ["lint-staged config", "package.json", pkg(), pkg({ "lint-staged": { "*.ts": "sh x" } }), true],
    ["packageManager changed", "package.json", pkg(), pkg({ packageManager: "yarn@4.0.0" }), true],
    ["a new package.json with scripts", "package.json", undefined, pkg(), true],
    ["a new package.json without scripts", "package.json", undefined, JSON.stringify({ name: "x", dependencies: {} }), false],
    ["a package.json deleted", "package.json", pkg(), undefined, true],
    ["an unparseable result", "package.json", pkg(), "{ not json", true],
    ["an unparseable original", "package.json", "{ not json", pkg(), true],
    ["a JSON array", "package.json", pkg(), "[]", true],
    // Bun keeps the first of two "scripts" keys, JSON.parse the last: a manifest that says two things asks.
    ["a second scripts key in front", "package.json", pkg(), '{"name":"x","scripts":{"postinstall":"sh evil"},"scripts":{"test":"bun test"},"dependencies":{"a":"^1"},"version":"1.0.0"}', true],
    ["a repeated key inside a dependency map", "package.json", pkg(), '{"name":"x","version":"1.0.0","scripts":{"test":"bun test"},"dependencies":{"a":"^1","a":"^2"}}', true],
    // npm and yarn classic run every dependency's install scripts: code from outside the registry asks.
    ["a git dependency added", "package.json", pkg(), pkg({ dependencies: { a: "^1", b: "github:someone/b" } }), true],
    ["a tarball URL dependency", "package.json", pkg(), pkg({ devDependencies: { b: "https://example.com/b.tgz" } }), true],
    ["a user/repo shorthand", "package.json", pkg(), pkg({ dependencies: { a: "someone/a" } }), true],
    ["a file: dependency", "package.json", pkg(), pkg({ optionalDependencies: { b: "file:../b" } }), true],
    ["an override to a git repository", "package.json", pkg(), pkg({ overrides: { a: { b: "git+https://example.com/b.git" } } }), true],
    ["a workspace: or npm: alias stays a dependency edit", "package.json", pkg(), pkg({ dependencies: { a: "^1", b: "workspace:*", c: "npm:c@^2" } }), false],
    ["pyproject: a dependency", "pyproject.toml", '[project]\nname = "x"\ndependencies = ["a"]\n', '[project]\nname = "x"\ndependencies = ["a", "b"]\n', false],
    ["pyproject: the build backend", "pyproject.toml", '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n', '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "backend"\nbackend-path = ["."]\n', true],
    ["pyproject: a hatch build hook", "pyproject.toml", '[project]\nname = "x"\n', '[project]\nname = "x"\n[tool.hatch.build.hooks.custom]\npath = "hook.py"\n', true],
    ["pyproject: console scripts", "pyproject.toml", '[project]\nname = "x"\n', '[project]\nname = "x"\n[project.scripts]\nx = "x:main"\n', true],
    ["Cargo: a dependency", "cargo.toml", '[package]\nname = "x"\n[dependencies]\n', '[package]\nname = "x"\n[dependencies]\nserde = "1"\n', false],
    ["Cargo: a build script", "cargo.toml", '[package]\nname = "x"\n', '[package]\nname = "x"\nbuild = "gen.rs"\n', true],
    ["Cargo: a build dependency", "cargo.toml", '[package]\nname = "x"\n', '[package]\nname = "x"\n[build-dependencies]\ncc = "1"\n', true],
    ["Cargo: a proc macro", "cargo.toml", '[package]\nname = "x"\n', '[package]\nname = "x"\n[lib]\nproc-macro = true\n', true],
    ["Cargo: invalid TOML", "cargo.toml", '[package]\nname = "x"\n', "[package\n", true],
  ];
  test.each(CASES.map((row) => [...row]))("%s → sensitive: %p", (_name, manifest, before, after, expected) => {
    expect(manifestChangeIsSensitive(manifest as Manifest, before as string | undefined, after as string | undefined)).toBe(expected as boolean);
  });

  test("every manifest lists its fields once", () => {
    for (const fields of Object.values(MANIFEST_FIELDS)) expect(new Set(fields).size).toBe(fields.length);
  });
});
