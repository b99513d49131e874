/**
 * Whether a write-tool call is `write-sensitive` (asked below full-access, even in accept-edits):
 * it touches a secret-like file (policy/secret-paths.ts), a file that makes other programs run
 * code or tells an agent what to do (policy/sensitive-paths.ts), a directory git runs hooks from
 * (`core.hooksPath` in the repository's config), or changes a manifest field that runs code on
 * install or build (package.json scripts and the like, judged on the old and new content).
 *
 * Every path a call touches is judged — write/edit/mkdir their path, patch every path in the
 * diff, move its source and destination, delete its entry — both as asked (`..` resolved) and
 * as it really resolves (symlinks followed, relative to its root), for files that exist and files
 * that do not yet. A directory moved or deleted is judged by everything in it too (a directory
 * moved to `.github` brings its `workflows/` along). Classification must never throw and never
 * block: files are read through the no-follow, non-blocking opener and bounded; anything that
 * cannot be judged is sensitive.
 */
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, posix } from "node:path";
import { isSecretLikePath } from "../policy/secret-paths.ts";
import { type Manifest, isSensitivePath, manifestChangeIsSensitive, manifestOf } from "../policy/sensitive-paths.ts";
import { readRegularFile } from "../security/files.ts";
import { type Roots, resolveInRoots } from "../security/roots.ts";
import { canonicalPath, isWithin } from "../util/paths.ts";
import { applyEdit } from "./write-edit.ts";
import { decodeText } from "./write-fs.ts";
import { inspectPatch } from "./write-patch-parse.ts";

/** The parts of a write call classification looks at. */
export type WriteRequest = {
  operation: "write" | "edit" | "patch" | "move" | "delete" | "mkdir";
  path?: string;
  to?: string;
  patch?: string;
  content?: string;
  oldText?: string;
  newText?: string;
  replaceAll?: boolean;
};

/** Entries looked at inside a directory that is moved or deleted; more than this is judged sensitive. */
const MAX_WALKED_ENTRIES = 10_000;
/** Manifests larger than this are not parsed: judged sensitive. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Git config files and `.git` files larger than this are ignored. */
const MAX_GIT_FILE_BYTES = 256 * 1024;
/** How far up from a root the repository's `.git` is looked for. */
const MAX_PARENT_LEVELS = 64;

/** One path a call touches: as asked, and where it really leads (undefined when outside the roots). */
type Touched = { asked: string; resolved?: { path: string; relative: string } };

function touch(asked: string, roots: Roots | undefined): Touched {
  if (roots === undefined || asked.includes("\0")) return { asked };
  const checked = resolveInRoots(roots, asked, "write");
  return checked.ok ? { asked, resolved: { path: checked.value.path, relative: checked.value.relative } } : { asked };
}

/** The names a touched path is matched by: the request (unless it is absolute and resolved) and its root-relative form. */
function namesOf(touched: Touched): string[] {
  const names: string[] = [];
  // An absolute request is judged relative to its root when it resolves, so a workspace that
  // itself lies under, say, ~/.config/nvim is not sensitive everywhere.
  if (!(isAbsolute(touched.asked) && touched.resolved !== undefined)) names.push(posix.normalize(touched.asked));
  if (touched.resolved !== undefined) names.push(touched.resolved.relative);
  return names;
}

function sensitiveName(name: string): boolean {
  return isSecretLikePath(name) || isSensitivePath(name);
}

/** Text of a canonical regular file, bounded; undefined when missing; "unreadable" when it can't be judged. */
function readText(path: string, maxBytes: number): string | undefined | "unreadable" {
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!stat.isFile()) return "unreadable";
  try {
    const head = readRegularFile(path, maxBytes);
    if (head.truncated) return "unreadable";
    return decodeText(head.bytes) ?? "unreadable";
  } catch {
    return "unreadable";
  }
}

// ---- core.hooksPath ------------------------------------------------------------------------

/** `core.hooksPath` from git config text (last one wins); includes are not followed. */
export function hooksPathFromConfig(text: string): string | undefined {
  let section = "";
  let found: string | undefined;
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (header !== null) {
      section = (header[1] ?? "").toLowerCase();
      line = (header[2] ?? "").trim(); // `[core] hooksPath = x` on one line
      if (line === "") continue;
    }
    if (section !== "core") continue;
    const entry = /^hookspath\s*=\s*(.*)$/i.exec(line);
    if (entry === null) continue;
    found = gitConfigValue(entry[1] ?? "");
  }
  return found === "" ? undefined : found;
}

/** A git config value: quotes removed, escapes read, a comment (`#`, `;`) outside quotes dropped. */
function gitConfigValue(raw: string): string {
  let value = "";
  let quoted = false;
  for (let index = 0; index < raw.length; index++) {
    const char = raw[index] ?? "";
    if (char === '"') {
      quoted = !quoted;
      continue;
    }
    if (char === "\\") {
      const next = raw[index + 1] ?? "";
      value += next === "n" ? "\n" : next === "t" ? "\t" : next;
      index += 1;
      continue;
    }
    if (!quoted && (char === "#" || char === ";")) break;
    value += char;
  }
  return value.trim();
}

/** The repository a directory belongs to: its git directory, common directory and work-tree top. */
function findRepository(start: string): { gitDir: string; commonDir: string; top: string } | undefined {
  let dir = start;
  for (let level = 0; level < MAX_PARENT_LEVELS; level++) {
    const dotGit = join(dir, ".git");
    let stat: ReturnType<typeof lstatSync> | undefined;
    try {
      stat = lstatSync(dotGit);
    } catch {
      stat = undefined;
    }
    let gitDir: string | undefined;
    if (stat?.isDirectory()) gitDir = dotGit;
    else if (stat?.isFile()) {
      const text = readText(dotGit, MAX_GIT_FILE_BYTES);
      const pointer = typeof text === "string" && text !== "unreadable" ? /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1] : undefined;
      if (pointer !== undefined) gitDir = canonicalPath(pointer, dir);
    }
    if (gitDir !== undefined) {
      const common = readText(join(gitDir, "commondir"), MAX_GIT_FILE_BYTES);
      const commonDir = typeof common === "string" && common !== "unreadable" && common.trim() !== "" ? canonicalPath(common.trim(), gitDir) : gitDir;
      return { gitDir, commonDir, top: dir };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** The canonical directories git runs hooks from, as the repositories of the writable roots configure them. */
export function configuredHookDirs(roots: Roots): string[] {
  const dirs = new Set<string>();
  for (const root of roots.roots) {
    if (root.kind === "read-only") continue;
    try {
      const repository = findRepository(root.path);
      if (repository === undefined) continue;
      let hooksPath: string | undefined;
      for (const file of [join(repository.commonDir, "config"), join(repository.gitDir, "config.worktree")]) {
        const text = readText(canonicalPath(file), MAX_GIT_FILE_BYTES);
        if (typeof text === "string" && text !== "unreadable") hooksPath = hooksPathFromConfig(text) ?? hooksPath;
      }
      if (hooksPath === undefined) continue;
      const expanded = hooksPath === "~" || hooksPath.startsWith("~/") ? join(homedir(), hooksPath.slice(1)) : hooksPath;
      dirs.add(canonicalPath(expanded, repository.top));
    } catch {
      // A repository that can't be read configures nothing we could honor.
    }
  }
  return [...dirs];
}

// ---- directories moved or deleted ------------------------------------------------------------

/**
 * Relative paths of everything inside a real directory (symlinks not followed), or undefined when
 * there are more than MAX_WALKED_ENTRIES or it can't be read (judged sensitive).
 */
function walk(dir: string): string[] | undefined {
  const found: string[] = [];
  const pending = [""];
  while (pending.length > 0) {
    const current = pending.pop() ?? "";
    let entries: Dirent[];
    try {
      entries = readdirSync(join(dir, current), { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const entry of entries) {
      const path = current === "" ? entry.name : `${current}/${entry.name}`;
      found.push(path);
      if (found.length > MAX_WALKED_ENTRIES) return undefined;
      if (entry.isDirectory()) pending.push(path);
    }
  }
  return found;
}

/** The entry a move or delete acts on (a final symlink itself), when it is a real directory. */
function directoryEntry(asked: string, roots: Roots): string | undefined {
  const isDirectory = (path: string) => {
    try {
      return lstatSync(path).isDirectory();
    } catch {
      return false; // missing, or under a file: the operation fails with its own error
    }
  };
  const name = basename(asked);
  // Like resolveEntry: a trailing slash, `.` or `..` means what the path leads to, links followed.
  if (asked.endsWith("/") || name === "" || name === "." || name === "..") {
    const checked = resolveInRoots(roots, asked, "write");
    return checked.ok && isDirectory(checked.value.path) ? checked.value.path : undefined;
  }
  const entry = join(canonicalPath(dirname(asked), roots.workspace), name);
  return isDirectory(entry) ? entry : undefined;
}

// ---- manifests -----------------------------------------------------------------------------

function manifestOfTouched(touched: Touched): Manifest | undefined {
  for (const name of namesOf(touched)) {
    const manifest = manifestOf(name);
    if (manifest !== undefined) return manifest;
  }
  return undefined;
}

/** A write or edit of a manifest: sensitive when the change touches a field that runs code. */
function manifestWriteIsSensitive(manifest: Manifest, touched: Touched, value: WriteRequest): boolean {
  if (touched.resolved === undefined) return false; // refused by the tool anyway
  const before = readText(touched.resolved.path, MAX_MANIFEST_BYTES);
  if (before === "unreadable") return true;
  if (value.operation === "write") return manifestChangeIsSensitive(manifest, before, value.content ?? "");
  // edit: judged on what the edit would make of the file as it is now. An edit that cannot apply
  // fails when it runs (the file does not change between admission and execution), so it is
  // judged by its name alone and the model gets the edit's own error.
  if (before === undefined || value.oldText === undefined || value.newText === undefined) return false;
  const outcome = applyEdit(before, { oldText: value.oldText, newText: value.newText, replaceAll: value.replaceAll === true }, "");
  return outcome.ok ? manifestChangeIsSensitive(manifest, before, outcome.text) : false;
}

// ---- the classification --------------------------------------------------------------------

/**
 * True when the call must be asked even in accept-edits mode. Never throws (anything unexpected
 * is sensitive).
 */
export function isSensitiveWrite(value: WriteRequest, roots: Roots | undefined, configured: readonly string[] = []): boolean {
  try {
    return judge(value, roots, configured);
  } catch {
    return true;
  }
}

function judge(value: WriteRequest, roots: Roots | undefined, configured: readonly string[]): boolean {
  const source = value.path !== undefined ? touch(value.path, roots) : undefined;
  const destination = value.to !== undefined ? touch(value.to, roots) : undefined;
  const patched: Touched[] = [];
  if (value.operation === "patch" && value.patch !== undefined) {
    const inspected = inspectPatch(value.patch);
    if (inspected.ok) patched.push(...inspected.value.paths.map((p) => touch(p, roots)));
  }
  const all = [source, destination, ...patched].filter((t): t is Touched => t !== undefined);

  // By name: secret-like files and files that run code or instruct an agent.
  if (all.some((touched) => namesOf(touched).some(sensitiveName))) return true;

  // Files the configuration reads as instructions or code (a prompt file replaces an agent's instructions).
  if (configured.length > 0 && all.some((touched) => touched.resolved !== undefined && configured.some((file) => isWithin(file, touched.resolved!.path)))) return true;

  // By where git runs hooks from.
  const hookDirs = roots === undefined ? [] : configuredHookDirs(roots);
  const inHookDir = (path: string) => hookDirs.some((dir) => isWithin(dir, path));
  if (all.some((touched) => touched.resolved !== undefined && inHookDir(touched.resolved.path))) return true;

  // A directory moved or deleted: everything in it, where it is and where it goes.
  if (roots !== undefined && source !== undefined && (value.operation === "move" || value.operation === "delete")) {
    const dir = directoryEntry(source.asked, roots);
    if (dir !== undefined) {
      const inside = walk(dir);
      if (inside === undefined) return true;
      const places: { relative: string; path: string }[] = [];
      const sourceRoot = resolveInRoots(roots, dir, "write");
      if (sourceRoot.ok) places.push({ relative: sourceRoot.value.relative, path: dir });
      if (destination?.resolved !== undefined) places.push(destination.resolved);
      for (const place of places) {
        for (const rel of inside) {
          if (sensitiveName(place.relative === "" ? rel : `${place.relative}/${rel}`)) return true;
          if (inHookDir(join(place.path, rel))) return true;
        }
      }
    }
  }

  // Manifests, judged by what the change does to them.
  switch (value.operation) {
    case "write":
    case "edit": {
      const manifest = source === undefined ? undefined : manifestOfTouched(source);
      return manifest !== undefined && source !== undefined && manifestWriteIsSensitive(manifest, source, value);
    }
    case "patch":
      // Its effect is only known once git applied it: a patch to a manifest always asks.
      return patched.some((touched) => manifestOfTouched(touched) !== undefined);
    case "move": {
      const manifest = destination === undefined ? undefined : manifestOfTouched(destination);
      if (manifest === undefined || destination?.resolved === undefined || source?.resolved === undefined) return false;
      const before = readText(destination.resolved.path, MAX_MANIFEST_BYTES);
      const after = readText(source.resolved.path, MAX_MANIFEST_BYTES);
      if (before === "unreadable" || after === "unreadable") return true;
      return manifestChangeIsSensitive(manifest, before, after);
    }
    default:
      // A manifest deleted (or a directory made) runs nothing.
      return false;
  }
}

