/**
 * The workspace boundary. Every file tool resolves the path the model asked for through
 * `resolveInRoots` and then uses ONLY the returned canonical `path` (never the raw request), so
 * what was checked is what gets opened.
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { canonicalPath, isWithin } from "../util/paths.ts";

export type RootKind = "workspace" | "extra" | "read-only";

export type Root = { path: string; kind: RootKind };

export type Roots = {
  /** Canonical workspace directory; relative requests resolve from here. */
  workspace: string;
  /** The workspace first, then extra roots, then read-only roots; all canonical, no duplicates. */
  roots: Root[];
  /**
   * Canonical directories nothing may touch (zero's own state), even inside a root — except a
   * read-only root that lies inside one of `privateReadable` (a skill package under zero's config
   * dir): that root alone may be read.
   */
  privateDirs: string[];
  /** Canonical directories inside private ones where read-only roots may open (`<config>/skills`). */
  privateReadable: string[];
};

export type ResolvedPath = {
  /** Canonical absolute path: symlinks resolved, including a dangling link in the tail. */
  path: string;
  /** The most specific root that contains `path`. */
  root: Root;
  /** `path` relative to `root.path`; "" for the root itself. */
  relative: string;
};

export type PathCheck = { ok: true; value: ResolvedPath } | { ok: false; error: string };

export type RootsOptions = {
  workspace: string;
  /** Directories added read-write (e.g. `--add-dir`); relative ones resolve from the workspace. */
  extraDirs?: string[];
  /** Directories that may be read but never written; relative ones resolve from the workspace. */
  readOnlyDirs?: string[];
  /** Directories that may be neither read nor written (zero's state directory). */
  privateDirs?: string[];
  /**
   * Inside a private directory, where a read-only root may still be read (zero's own skills
   * directory). A read-only root anywhere else in a private directory opens nothing — whatever it
   * resolves to by then (a package swapped for a link to the trust records).
   */
  privateReadable?: string[];
};

/** Same bound as the kernel's MAXSYMLINKS: more hops than this is a loop. */
const MAX_SYMLINK_HOPS = 40;

/**
 * Canonicalizes the workspace and every extra, read-only and private directory.
 * Throws when the workspace does not exist or is not a directory. Other directories may be
 * missing: they are canonicalized through their deepest existing ancestor.
 */
export function createRoots(options: RootsOptions): Roots {
  const workspace = canonicalPath(options.workspace);
  let isDirectory = false;
  try {
    isDirectory = statSync(workspace).isDirectory();
  } catch {
    throw new Error(`Workspace does not exist: ${options.workspace}`);
  }
  if (!isDirectory) throw new Error(`Workspace is not a directory: ${options.workspace}`);

  const roots: Root[] = [{ path: workspace, kind: "workspace" }];
  const add = (dirs: string[] | undefined, kind: RootKind): void => {
    for (const dir of dirs ?? []) {
      const path = canonicalPath(dir, workspace);
      if (!roots.some((root) => root.path === path && root.kind === kind)) roots.push({ path, kind });
    }
  };
  add(options.extraDirs, "extra");
  add(options.readOnlyDirs, "read-only");

  const privateDirs = [...new Set((options.privateDirs ?? []).map((dir) => canonicalPath(dir, workspace)))];
  const privateReadable = [...new Set((options.privateReadable ?? []).map((dir) => canonicalPath(dir, workspace)))];
  return { workspace, roots, privateDirs, privateReadable };
}

/**
 * Checks a model-supplied path against the roots. The request is canonicalized first (relative to
 * the workspace, `~` taken literally, every symlink resolved), then it must lie inside a root, not
 * inside a private directory, and — for writes — not in a read-only root.
 */
export function resolveInRoots(roots: Roots, requested: string, access: "read" | "write"): PathCheck {
  if (requested.includes("\0")) {
    return { ok: false, error: `Invalid path ${JSON.stringify(requested)}: it contains a NUL byte.` };
  }
  if (requested.trim() === "") {
    return { ok: false, error: `Invalid path: it is empty. ${describeRoots(roots)}` };
  }

  let path: string;
  try {
    path = resolveFully(resolve(roots.workspace, requested));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `Cannot resolve path ${JSON.stringify(requested)}: ${reason}` };
  }
  const shown = path === resolve(roots.workspace, requested) ? "" : ` (resolves to ${path})`;

  if (isPrivatePath(roots, path)) {
    return {
      ok: false,
      error: `Access denied: ${JSON.stringify(requested)}${shown} is inside zero's private state directory.`,
    };
  }

  const root = mostSpecificRoot(roots, path);
  if (root === undefined) {
    return {
      ok: false,
      error: `Access denied: ${JSON.stringify(requested)}${shown} is outside the allowed roots. ${describeRoots(roots)}`,
    };
  }
  if (access === "write" && root.kind === "read-only") {
    return {
      ok: false,
      error: `Access denied: ${JSON.stringify(requested)}${shown} is in the read-only root ${root.path}; it may be read but not written.`,
    };
  }
  return { ok: true, value: { path, root, relative: relative(root.path, path) } };
}

/** Workspace-relative when inside the workspace ("." for the workspace itself), else absolute. */
export function displayPath(roots: Roots, absolute: string): string {
  if (!isWithin(roots.workspace, absolute)) return absolute;
  return relative(roots.workspace, absolute) || ".";
}

/**
 * True when a canonical path is inside a private directory. Tools that walk a directory tree
 * (search, find) use it to skip entries, since checking only the starting path is not enough.
 */
export function isPrivatePath(roots: Roots, absolute: string): boolean {
  return roots.privateDirs.some((dir) => isWithin(dir, absolute) && !inReadOnlyRootWithin(roots, dir, absolute));
}

/** True when `path` lies in a read-only root that sits strictly inside one of the private directory's readable places. */
function inReadOnlyRootWithin(roots: Roots, dir: string, path: string): boolean {
  return roots.roots.some(
    (root) =>
      root.kind === "read-only" &&
      root.path !== dir &&
      isWithin(dir, root.path) &&
      roots.privateReadable.some((place) => place !== root.path && isWithin(place, root.path)) &&
      isWithin(root.path, path),
  );
}

/** The deepest root containing `path`; on a tie the read-only one wins, as it is narrower. */
function mostSpecificRoot(roots: Roots, path: string): Root | undefined {
  let best: Root | undefined;
  for (const root of roots.roots) {
    if (!isWithin(root.path, path)) continue;
    if (
      best === undefined ||
      root.path.length > best.path.length ||
      (root.path.length === best.path.length && root.kind === "read-only")
    ) {
      best = root;
    }
  }
  return best;
}

function describeRoots(roots: Roots): string {
  const list = roots.roots.map((root) => `${root.path} (${root.kind})`).join(", ");
  return `Allowed roots: ${list}. Relative paths resolve from the workspace ${roots.workspace}.`;
}

/**
 * `canonicalPath` plus dangling symlinks: `canonicalPath` keeps the missing tail as written, but if
 * the first missing component is a symlink whose target does not exist yet, creating the path
 * would write through the link. Such links are followed by hand until the path is fully real.
 */
function resolveFully(absolute: string): string {
  let current = absolute;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const canonical = canonicalPath(current);
    const dangling = findDanglingLink(canonical);
    if (dangling === undefined) return canonical;
    const target = readlinkSync(dangling.link);
    current = join(resolve(dirname(dangling.link), target), ...dangling.rest);
  }
  throw new Error("too many levels of symbolic links");
}

/**
 * In a path whose existing prefix is already canonical, finds the first component that is a
 * symlink (it can only be a dangling one) together with the components after it.
 */
function findDanglingLink(canonical: string): { link: string; rest: string[] } | undefined {
  try {
    // Fast path: a path that exists was fully resolved by realpath.
    if (!lstatSync(canonical).isSymbolicLink()) return undefined;
  } catch {
    // Some tail is missing: walk down from the top to find where.
  }
  const parts = canonical.split(sep).filter((part) => part !== "");
  let current = isAbsolute(canonical) ? sep : "";
  for (let index = 0; index < parts.length; index++) {
    current = join(current, parts[index] ?? "");
    try {
      if (lstatSync(current).isSymbolicLink()) return { link: current, rest: parts.slice(index + 1) };
    } catch {
      return undefined; // missing (or not a directory): nothing below it exists either
    }
  }
  return undefined;
}
