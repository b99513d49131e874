/**
 * Files whose change makes some other program run code later, or changes what an agent (zero
 * included) will do: a write to one is `write-sensitive` — asked below full-access, even in
 * accept-edits mode. The companion of secret-paths.ts (a write to a secret-like file is
 * `write-sensitive` too).
 *
 * Where the line is. Editing ordinary source is what accept-edits is for, and that code runs when
 * the user chooses to run the project (`npm test`, `make`, `cargo run`): a `Makefile`, a
 * `justfile`, a test or a script the project calls are ordinary source, reviewed like any diff. A
 * file is sensitive when it makes code run WITHOUT the user choosing to run the project's code —
 * when an editor opens the folder (`.vscode/tasks.json`, `.idea/`), a shell or a login starts
 * (`.bashrc`, `.profile`), a directory is entered (`.envrc`), a commit is made (git hooks and hook
 * managers), a branch is pushed (CI workflows, which also hold the repository's CI secrets), an
 * install runs (install scripts, `bunfig.toml` preloads, `.yarnrc.yml`'s yarnPath, build scripts),
 * or another agent starts (its config, hooks and MCP servers) — and when it tells an agent what to
 * do (instruction files such as `AGENTS.md`, `CLAUDE.md`: a prompt injection that outlives the run).
 *
 * Three manifests are judged by their content instead of their name (see `manifestChangeIsSensitive`):
 * `package.json`, `pyproject.toml` and `Cargo.toml` are edited all the time for dependencies and
 * versions, so only a change to the fields that run code on install or build (scripts, bin,
 * install-script allowlists, hook-manager config; build-system and build hooks; build scripts and
 * proc macros) is sensitive, and so is a package.json that repeats a key or adds a dependency
 * from outside the registry (npm and yarn classic run every dependency's install scripts).
 * Registry dependency changes are not: they are the ordinary risk of a dependency, reviewed in
 * the diff, and Bun/pnpm gate install scripts by fields that are sensitive.
 *
 * Matching: case-insensitive (on a case-insensitive file system `.VSCode` is `.vscode`) after
 * NFKC folding, on the path's components, like secret-paths.ts: a glob without `/` matches one
 * component at any depth — a file of that name and everything under a directory of that name
 * (`.husky` covers `.husky/pre-commit`); a glob with `/` matches that run of components at any
 * depth. Only `*` (within one component) is a wildcard. Give it the canonical path that will
 * really be written (symlinks resolved) as well as the path as asked; `..` is resolved here.
 * Known gaps (documented in docs/security.md): hooks configured in the user's global git config
 * point outside the workspace; a script that one of these files merely calls is ordinary source.
 */
import { visit } from "jsonc-parser";
import { posix } from "node:path";
import { stableJson } from "../util/stable-json.ts";
import { componentGlobPattern } from "./secret-paths.ts";

export type SensitiveKind = "zero" | "git" | "hooks" | "ci" | "editor" | "agent" | "shell" | "build";

export type SensitiveGroup = { kind: SensitiveKind; what: string; globs: readonly string[] };

/** The groups of sensitive names. Globs are lowercase and use only `*` (see the module comment). */
export const SENSITIVE_PATH_GROUPS: readonly SensitiveGroup[] = Object.freeze([
  {
    kind: "zero",
    what: "zero's own configuration",
    globs: [".zero-cli", ".devout", "zero-cli.jsonc", "devout.jsonc"],
  },
  {
    kind: "git",
    what: "a git control file (config, hooks)",
    globs: [".git", ".gitconfig", "**/.config/git"],
  },
  {
    kind: "hooks",
    what: "a git hook or hook manager's configuration",
    globs: [
      ".husky",
      ".huskyrc",
      ".huskyrc.*",
      ".githooks",
      ".git-hooks",
      "lefthook*",
      ".lefthook*",
      ".pre-commit-config.yaml",
      ".pre-commit-config.yml",
      ".pre-commit-hooks.yaml",
      ".simple-git-hooks*",
      "simple-git-hooks.*",
      ".lintstagedrc",
      ".lintstagedrc.*",
      "lint-staged.config.*",
      ".overcommit.yml",
    ],
  },
  {
    kind: "ci",
    what: "a CI pipeline definition",
    globs: [
      "**/.github/workflows",
      "**/.github/actions",
      "**/.gitea/workflows",
      "**/.forgejo/workflows",
      ".gitlab-ci.yml",
      ".gitlab-ci.yaml",
      "**/.gitlab/ci",
      ".circleci",
      "azure-pipelines*.yml",
      "azure-pipelines*.yaml",
      ".azure-pipelines",
      "jenkinsfile",
      "jenkinsfile.*",
      "*.jenkinsfile",
      ".buildkite",
      ".travis.yml",
      "appveyor.yml",
      ".appveyor.yml",
      "bitbucket-pipelines.yml",
      ".drone.yml",
      ".drone.jsonnet",
      ".woodpecker",
      ".woodpecker.yml",
      ".woodpecker.yaml",
      "cloudbuild.yaml",
      "cloudbuild.yml",
      "cloudbuild.json",
      "buildspec.yml",
      "buildspec.yaml",
      ".cirrus.yml",
      ".cirrus.star",
      ".semaphore",
      ".tekton",
      "codemagic.yaml",
      "bitrise.yml",
      ".gitpod.yml",
    ],
  },
  {
    kind: "editor",
    what: "an editor's tasks, settings or start-up file",
    globs: [
      ".vscode",
      "*.code-workspace",
      ".idea",
      ".fleet",
      ".zed",
      ".theia",
      ".devcontainer",
      ".devcontainer.json",
      "*.sublime-project",
      ".nvim.lua",
      ".nvimrc",
      ".exrc",
      ".vimrc",
      ".gvimrc",
      ".vim",
      "**/.config/nvim",
      ".emacs",
      ".emacs.d",
      "**/.config/emacs",
      ".dir-locals.el",
      ".dir-locals-2.el",
      "**/.config/code/user",
      "**/application support/code/user",
    ],
  },
  {
    kind: "agent",
    what: "an agent's configuration, MCP servers or instructions",
    globs: [
      "agents.md",
      "agents.override.md",
      ".agents",
      ".mcp.json",
      ".claude",
      "claude.md",
      "claude.local.md",
      ".codex",
      ".cursor",
      ".cursorrules",
      ".gemini",
      "gemini.md",
      ".windsurf",
      ".windsurfrules",
      ".continue",
      ".continuerc.json",
      ".aider*",
      ".clinerules",
      ".roo",
      ".roomodes",
      ".kiro",
      ".amazonq",
      ".junie",
      ".opencode",
      "opencode.json",
      "opencode.jsonc",
      ".goosehints",
      "**/.github/copilot-instructions.md",
      "**/.github/instructions",
      "**/.github/prompts",
      "**/.github/chatmodes",
      "**/.github/agents",
    ],
  },
  {
    kind: "shell",
    what: "a shell, login or session start-up file",
    globs: [
      ".bashrc",
      ".bash_profile",
      ".bash_login",
      ".bash_logout",
      ".bash_aliases",
      ".profile",
      ".zshrc",
      ".zprofile",
      ".zshenv",
      ".zlogin",
      ".zlogout",
      ".kshrc",
      ".mkshrc",
      ".cshrc",
      ".tcshrc",
      ".login",
      ".logout",
      ".inputrc",
      ".tmux.conf",
      ".xprofile",
      ".xinitrc",
      ".xsession",
      ".xsessionrc",
      ".pam_environment",
      ".envrc",
      ".direnvrc",
      "**/.config/direnv",
      "**/.config/fish",
      "**/.config/environment.d",
      "**/.config/autostart",
      "**/.config/systemd",
      "**/library/launchagents",
      "mise.toml",
      ".mise.toml",
      "mise.local.toml",
      ".mise.local.toml",
      ".mise",
      "**/.config/mise",
    ],
  },
  {
    kind: "build",
    what: "package-manager or build configuration that runs code on install or build",
    globs: [
      ".npmrc",
      ".yarnrc",
      ".yarnrc.yml",
      "**/.yarn/releases",
      "**/.yarn/plugins",
      ".pnp.cjs",
      ".pnp.js",
      ".pnp.loader.mjs",
      ".pnpmfile.cjs",
      ".pnpmfile.mjs",
      "pnpm-workspace.yaml",
      "bunfig.toml",
      ".bunfig.toml",
      "binding.gyp",
      "**/node_modules/.bin",
      "setup.py",
      "sitecustomize.py",
      "usercustomize.py",
      "**/site-packages/*.pth",
      "build.rs",
      "**/.cargo/config",
      "**/.cargo/config.toml",
      "rust-toolchain",
      "rust-toolchain.toml",
    ],
  },
] satisfies SensitiveGroup[]);

// One regex per group, derived from the constant list (no ambient state).
const GROUP_PATTERNS: readonly { group: SensitiveGroup; pattern: RegExp }[] = SENSITIVE_PATH_GROUPS.map((group) => ({
  group,
  pattern: componentGlobPattern(group.globs),
}));

/**
 * The form a path is matched in: `..` and `.` resolved, NFKC-folded and case-folded (upper then
 * lower, so `ſ` and the Kelvin sign fold like a case-insensitive file system would fold them —
 * folding more than a file system does only asks more often), without empty components.
 */
export function foldPath(path: string): string {
  const normalized = path === "" ? "" : posix.normalize(path.normalize("NFKC"));
  return normalized
    .toUpperCase()
    .toLowerCase()
    .split("/")
    .filter((component) => component !== "" && component !== ".")
    .join("/");
}

/** Which sensitive group a path falls in by its name (manifests judged by content are not here). */
export function sensitivePathGroup(path: string): SensitiveGroup | undefined {
  const folded = foldPath(path);
  if (folded === "") return undefined;
  return GROUP_PATTERNS.find(({ pattern }) => pattern.test(folded))?.group;
}

/** True when a write to this path (or to a directory it lies in) is sensitive by its name. */
export function isSensitivePath(path: string): boolean {
  return sensitivePathGroup(path) !== undefined;
}

/** Manifests judged by what a change does to them, not by their name. */
export type Manifest = "package.json" | "pyproject.toml" | "cargo.toml";

/** The fields of each manifest whose change runs code on install or build (dotted paths). */
export const MANIFEST_FIELDS: Readonly<Record<Manifest, readonly string[]>> = Object.freeze({
  "package.json": [
    // npm/yarn/pnpm/bun run these on install, pack and publish, and pre/post around every `run`.
    "scripts",
    // executables linked onto PATH (node_modules/.bin) wherever the package is installed
    "bin",
    "directories",
    // node-gyp runs on install when set (or when binding.gyp exists)
    "gypfile",
    // which package-manager executable corepack downloads and runs
    "packageManager",
    "devEngines",
    // which dependencies may run install scripts
    "trustedDependencies",
    "pnpm",
    "allowScripts",
    "lavamoat",
    // hook managers configured in package.json: run commands on commit
    "husky",
    "simple-git-hooks",
    "lint-staged",
    "pre-commit",
    "precommit",
    "gitHooks",
    "ghooks",
    "config",
  ],
  "pyproject.toml": [
    "build-system",
    "project.scripts",
    "project.gui-scripts",
    "project.entry-points",
    "tool.hatch.build",
    "tool.hatch.metadata",
    "tool.hatch.envs",
    "tool.setuptools.cmdclass",
    "tool.pdm.scripts",
    "tool.pdm.build",
    "tool.poetry.scripts",
    "tool.poetry.build",
    "tool.poetry.plugins",
  ],
  "cargo.toml": ["package.build", "package.links", "build-dependencies", "build_dependencies", "lib.proc-macro", "lib.proc_macro", "target"],
});

/** The manifest a path names (by its last component, case-folded), if it is one. */
export function manifestOf(path: string): Manifest | undefined {
  const name = foldPath(path).split("/").at(-1) ?? "";
  return name === "package.json" || name === "pyproject.toml" || name === "cargo.toml" ? name : undefined;
}

type Parsed = { ok: true; value: unknown } | { ok: false };

/**
 * Whether some object in the JSON text repeats a key. JSON.parse keeps the last copy of a key,
 * Bun's package manager the first: a manifest that says two things must be asked about.
 */
function hasDuplicateKeys(text: string): boolean {
  const seen: Array<Set<string>> = [];
  let duplicate = false;
  visit(text, {
    onObjectBegin: () => void seen.push(new Set()),
    onObjectEnd: () => void seen.pop(),
    onObjectProperty: (property) => {
      const keys = seen.at(-1);
      if (!keys) return;
      if (keys.has(property)) duplicate = true;
      keys.add(property);
    },
  });
  return duplicate;
}

/** Dependency fields whose specs may name code from outside the registry. */
const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies", "overrides", "resolutions"];

/**
 * A dependency spec that fetches code from elsewhere than the registry (a git repository, a
 * tarball URL, a local path, `user/repo`): npm and yarn classic run every dependency's install
 * scripts by default, so adding one runs code the registry never saw.
 */
function outsideRegistry(spec: unknown): boolean {
  if (typeof spec !== "string") return typeof spec === "object" && spec !== null; // nested overrides: judged by their leaves below
  return /[:/\\]/.test(spec) && !/^(?:workspace|npm|catalog):/.test(spec);
}

/** Specs in the dependency fields that are new or changed and point outside the registry. */
function newOutsideDependencies(before: unknown, after: unknown): boolean {
  for (const field of DEPENDENCY_FIELDS) {
    const next = fieldAt(after, field);
    if (next === null || typeof next !== "object" || Array.isArray(next)) continue;
    const old = fieldAt(before, field);
    const oldRecord = old !== null && typeof old === "object" && !Array.isArray(old) ? (old as Record<string, unknown>) : {};
    for (const [name, spec] of Object.entries(next as Record<string, unknown>)) {
      if (stableJson(oldRecord[name]) === stableJson(spec)) continue;
      if (typeof spec === "object" && spec !== null) {
        if (JSON.stringify(spec).match(/"[^"]*[:/\\][^"]*"/)) return true;
      } else if (outsideRegistry(spec)) return true;
    }
  }
  return false;
}

function parseManifest(manifest: Manifest, text: string): Parsed {
  try {
    if (manifest === "package.json" && hasDuplicateKeys(text)) return { ok: false };
    const value: unknown = manifest === "package.json" ? JSON.parse(text) : Bun.TOML.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? { ok: true, value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

function fieldAt(value: unknown, dotted: string): unknown {
  let current = value;
  for (const key of dotted.split(".")) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : undefined;
  }
  return current;
}

/**
 * Whether changing a manifest from `before` to `after` (undefined: the file does not exist) touches
 * a field that runs code (MANIFEST_FIELDS). Fails closed: text that does not parse is sensitive
 * (a tool reading it would see something else than we did).
 */
export function manifestChangeIsSensitive(manifest: Manifest, before: string | undefined, after: string | undefined): boolean {
  const parse = (text: string | undefined): Parsed => (text === undefined ? { ok: true, value: {} } : parseManifest(manifest, text));
  const old = parse(before);
  const next = parse(after);
  if (!old.ok || !next.ok) return true;
  if (manifest === "package.json" && newOutsideDependencies(old.value, next.value)) return true;
  return MANIFEST_FIELDS[manifest].some((field) => stableJson(fieldAt(old.value, field)) !== stableJson(fieldAt(next.value, field)));
}
