/**
 * The write tool's `patch` operation: a unified diff applied with `git apply`, after every path it
 * names was checked against the workspace boundary — first as we read the patch, then as git itself
 * reads it (`--numstat`), and only then `--check` and the real apply.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { Redactor } from "../security/redact.ts";
import { displayPath, type Roots, resolveInRoots } from "../security/roots.ts";
import type { Env } from "../util/env.ts";
import { canonicalPath, isWithin } from "../util/paths.ts";
import type { ToolOutput } from "./define.ts";
import { boundDiff } from "./write-diff.ts";
import { decodeText, inspectTarget } from "./write-fs.ts";
import { inspectPatch, type PatchLines, patchLines } from "./write-patch-parse.ts";
import { addedMarkers, hiddenFragments, markerInPatchHint, secretOverwriteMessage } from "./write-secrets.ts";

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
const MAX_MESSAGE_CHARS = 8_000;
const MAX_LISTED_FILES = 50;

/** Checks one patch path: relative, inside the workspace root (git apply works from there), writable. */
function checkPatchPath(roots: Roots, path: string): string | undefined {
  if (path === "") return "the patch names an empty path";
  if (isAbsolute(path)) return `patch paths must be relative to the workspace, not absolute: ${JSON.stringify(path)}`;
  const checked = resolveInRoots(roots, path, "write");
  if (!checked.ok) return checked.error;
  if (!isWithin(roots.workspace, checked.value.path)) {
    return `patch path ${JSON.stringify(path)} resolves to ${checked.value.path}, outside the workspace ${roots.workspace}; patches apply inside the workspace only`;
  }
  return undefined;
}

type GitRun = { code: number; stdout: string; stderr: string };

/**
 * Runs git with a minimal environment. GIT_DIR is a throwaway empty repository and the work tree is
 * the workspace: paths are always relative to the workspace (never to an enclosing repository's
 * root), and no repository or user configuration applies — so a checked-in .gitattributes cannot
 * call a configured clean/smudge filter command during apply.
 */
type GitSetup = { git: string; searchPath: string; cwd: string; gitDir: string; signal: AbortSignal };

async function runGit(setup: GitSetup, args: string[], stdin: string): Promise<GitRun> {
  const { git, cwd, gitDir, signal } = setup;
  const env: Record<string, string> = {
    PATH: setup.searchPath,
    GIT_DIR: gitDir,
    GIT_WORK_TREE: cwd,
    GIT_CEILING_DIRECTORIES: dirname(cwd),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
  };
  const child = Bun.spawn([git, ...args], { cwd, env, stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const kill = () => child.kill("SIGKILL");
  signal.addEventListener("abort", kill, { once: true });
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    return { code, stdout, stderr };
  } finally {
    signal.removeEventListener("abort", kill);
  }
}

function gitMessage(run: GitRun): string {
  const text = (run.stderr.trim() || run.stdout.trim() || `git exited with code ${run.code}`).replace(/^error: /gm, "");
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)} …` : text;
}

/** A minimal valid git directory: enough for git to accept it, holding no configuration. */
function makeEmptyGitDir(tempRoot: string): string {
  const dir = mkdtempSync(join(tempRoot, "zero-git-apply-"));
  mkdirSync(join(dir, "objects"));
  mkdirSync(join(dir, "refs"));
  writeFileSync(join(dir, "HEAD"), "ref: refs/heads/main\n");
  return dir;
}

type NumstatEntry = { added: string; removed: string; path: string };

function parseNumstat(output: string): NumstatEntry[] {
  return output
    .split("\0")
    .filter((record) => record !== "")
    .map((record) => {
      const [added = "", removed = "", ...rest] = record.split("\t");
      return { added, removed, path: rest.join("\t") };
    });
}

export type PatchContext = { roots: Roots; env: Env; signal: AbortSignal; redactor?: Redactor };

/**
 * A patch that adds redaction markers while removing text the redactor hides in a file it touches
 * would replace that secret with the marker (write-secrets.ts): the secret can only leave the file
 * through the patch's removed lines, since git applies them only where they match exactly.
 */
function refuseMarkerOverwrite(paths: readonly string[], lines: PatchLines, roots: Roots, redactor: Redactor): void {
  const removed = lines.removed.join("\n");
  const added = lines.added.join("\n");
  const markers = addedMarkers(removed, added);
  if (markers.length === 0) return;
  for (const path of paths) {
    const checked = resolveInRoots(roots, path, "write");
    if (!checked.ok) continue; // refused by the path checks already
    const shown = displayPath(roots, checked.value.path);
    const existing = inspectTarget(checked.value.path, shown);
    if (existing.kind === "missing") continue;
    const text = existing.bytes === undefined ? undefined : decodeText(existing.bytes);
    if (text === undefined) {
      throw new Error(`Patch refused before anything was applied: it adds ${markers.join(", ")} and ${shown} is binary or too large to check for the secret it may stand for. Edit around secrets instead, keeping every [REDACTED:…] marker out of the patch.`);
    }
    const redaction = redactor.redact(text);
    if (redaction.count === 0) continue;
    const lost = hiddenFragments(text, redaction.text).some((fragment) => removed.includes(fragment) && !added.includes(fragment));
    if (!lost) continue;
    throw new Error(`Patch ${secretOverwriteMessage(shown, redaction, markers).replace(/^Refused: /, "refused: ")}`);
  }
}

/** A patch git refused: when its context or removed lines hold a marker, say why they never match. */
function withMarkerHint(message: string, lines: PatchLines): string {
  const hint = markerInPatchHint([...lines.removed, ...lines.context]);
  return hint === undefined ? message : `${message}\n${hint}`;
}

/** Validates and applies a patch; throws a readable error when it is refused or does not apply. */
export async function applyPatch(patch: string, ctx: PatchContext): Promise<ToolOutput> {
  const inspected = inspectPatch(patch);
  if (!inspected.ok) throw new Error(`Patch refused: ${inspected.error}.`);
  const { strip, paths } = inspected.value;
  for (const path of paths) {
    const problem = checkPatchPath(ctx.roots, path);
    if (problem !== undefined) throw new Error(`Patch refused before anything was applied: ${problem}`);
  }
  const body = patchLines(patch);
  if (ctx.redactor !== undefined) refuseMarkerOverwrite(paths, body, ctx.roots, ctx.redactor);

  // Only PATH entries the model cannot write: never relative ones, never inside a root or a
  // private directory (under npm exec, PATH starts with the workspace's node_modules/.bin).
  const searchPath = (ctx.env.PATH ?? DEFAULT_PATH)
    .split(":")
    .filter((dir) => isAbsolute(dir) && !ctx.roots.roots.some((root) => isWithin(root.path, canonicalPath(dir))))
    .join(":");
  const git = Bun.which("git", { PATH: searchPath });
  if (git === null) {
    throw new Error(`The patch operation needs git (git apply), but no git executable was found on PATH (${searchPath}). Install git, or use the edit or write operations instead.`);
  }
  const input = patch.endsWith("\n") ? patch : `${patch}\n`;
  const workspace = ctx.roots.workspace;
  const tmp = ctx.env.TMPDIR;
  const gitDir = makeEmptyGitDir(tmp !== undefined && isAbsolute(tmp) ? tmp : "/tmp");
  try {
    const base = ["apply", `-p${strip}`, "--whitespace=nowarn"];
    // Git's own reading of the paths; it must agree with ours before git may touch anything.
    const setup: GitSetup = { git, searchPath, cwd: workspace, gitDir, signal: ctx.signal };
    const numstat = await runGit(setup, [...base, "--numstat", "-z", "-"], input);
    if (numstat.code !== 0) throw new Error(withMarkerHint(`Patch does not apply (nothing was changed):\n${gitMessage(numstat)}`, body));
    const entries = parseNumstat(numstat.stdout);
    for (const entry of entries) {
      const problem = checkPatchPath(ctx.roots, entry.path);
      if (problem !== undefined) throw new Error(`Patch refused before anything was applied: ${problem}`);
    }
    const check = await runGit(setup, [...base, "--check", "-"], input);
    if (check.code !== 0) throw new Error(withMarkerHint(`Patch does not apply (nothing was changed):\n${gitMessage(check)}`, body));
    const applied = await runGit(setup, [...base, "-"], input);
    if (applied.code !== 0) throw new Error(`git apply failed after its check passed:\n${gitMessage(applied)}`);

    const lines = entries.slice(0, MAX_LISTED_FILES).map((entry) => {
      const shown = displayPath(ctx.roots, join(workspace, entry.path));
      return `  ${shown} (+${entry.added} -${entry.removed})`;
    });
    if (entries.length > MAX_LISTED_FILES) lines.push(`  … ${entries.length - MAX_LISTED_FILES} more files`);
    const summary = `applied patch to ${entries.length} file${entries.length === 1 ? "" : "s"}:\n${lines.join("\n")}`;
    return { output: summary, diff: boundDiff(input) };
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
  }
}
