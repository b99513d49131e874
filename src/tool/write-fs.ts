/**
 * File-system helpers for the write tool: resolving what an operation may touch, reading the
 * current content of a file, and replacing a file atomically.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  type Stats,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { openChecked, openDirectoryChecked, readHead } from "../security/files.ts";
import { type Roots, resolveInRoots } from "../security/roots.ts";
import { canonicalPath, isWithin } from "../util/paths.ts";

/** Files larger than this are not read for an edit or for a diff. */
export const MAX_TEXT_BYTES = 10 * 1024 * 1024;

/** A path an operation may write: canonical, inside a writable root. */
export type Target = { path: string; isLink: boolean };

/** Resolves a path for writing, or throws the boundary's readable error. */
export function resolveForWrite(roots: Roots, requested: string): string {
  const checked = resolveInRoots(roots, requested, "write");
  if (!checked.ok) throw new Error(checked.error);
  return checked.value.path;
}

/**
 * For move and delete, which act on a directory entry rather than on what it points to: when the
 * final component of `requested` is a symlink, the target is the link itself (like `rm link`),
 * located through its canonical parent, which must be writable. Otherwise the fully canonical path.
 */
export function resolveEntry(roots: Roots, requested: string): Target {
  const name = basename(requested);
  if (!requested.endsWith("/") && name !== "" && name !== "." && name !== ".." && !requested.includes("\0")) {
    let entry: string | undefined;
    try {
      entry = join(canonicalPath(dirname(requested), roots.workspace), name);
    } catch {
      entry = undefined; // unresolvable parent: the full check below reports it
    }
    if (entry !== undefined && lstatOrUndefined(entry)?.isSymbolicLink()) {
      // The link's own directory must be writable; never fall through to the link's target.
      const parent = resolveInRoots(roots, dirname(requested), "write");
      if (!parent.ok) throw new Error(parent.error);
      return { path: join(parent.value.path, name), isLink: true };
    }
  }
  return { path: resolveForWrite(roots, requested), isLink: false };
}

/** lstat that answers undefined for a missing path (also when a parent is not a directory). */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** Moving or deleting a root (or anything holding one, or zero's private state) is never allowed. */
export function refuseRootsWithin(roots: Roots, path: string, shown: string, verb: string): void {
  for (const root of roots.roots) {
    if (root.path === path) throw new Error(`Refusing to ${verb} ${shown}: it is the ${root.kind} root itself.`);
    if (isWithin(path, root.path)) throw new Error(`Refusing to ${verb} ${shown}: it contains the ${root.kind} root ${root.path}.`);
  }
  for (const dir of roots.privateDirs) {
    if (isWithin(path, dir)) throw new Error(`Refusing to ${verb} ${shown}: it contains zero's private state directory.`);
  }
}

/**
 * Creates the directory `dir` (canonical) and its missing parents, then confirms nothing along the
 * way turned into a symlink meanwhile, so the file lands where the check said it would.
 */
export function ensureDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "EEXIST") throw new Error(`Cannot create directory ${dir}: a parent is not a directory`);
    throw error;
  }
  if (canonicalPath(dir) !== dir) throw new Error(`${dir} changed while it was being created (a symlink appeared)`);
  if (!lstatSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
}

/** The current state of a path about to be written. */
export type Existing =
  | { kind: "missing" }
  | { kind: "file"; stat: Stats; bytes: Uint8Array | undefined };

/**
 * Looks at a canonical target before it is replaced. Directories, FIFOs, devices and sockets are
 * refused; a regular file's bytes are read (through a no-follow descriptor) when not too large.
 */
export function inspectTarget(path: string, shown: string, maxBytes = MAX_TEXT_BYTES): Existing {
  const stat = lstatOrUndefined(path);
  if (stat === undefined) return { kind: "missing" };
  if (stat.isDirectory()) throw new Error(`${shown} is a directory; give a file path`);
  if (stat.isSymbolicLink()) throw new Error(`${shown} changed into a symbolic link while it was being checked`);
  if (!stat.isFile()) throw new Error(`${shown} is not a regular file (a FIFO, device or socket is never written)`);
  const opened = openChecked(path);
  try {
    if (!opened.stat.isFile()) throw new Error(`${shown} is not a regular file`);
    if (opened.stat.size > maxBytes) return { kind: "file", stat: opened.stat, bytes: undefined };
    return { kind: "file", stat: opened.stat, bytes: readHead(opened, maxBytes).bytes };
  } finally {
    opened.close();
  }
}

/** Refuses to replace a file that changed since it was read (another writer, a swapped path). */
export function confirmUnchanged(path: string, before: Stats, shown: string): void {
  const now = lstatOrUndefined(path);
  const same =
    now !== undefined &&
    now.isFile() &&
    now.ino === before.ino &&
    now.dev === before.dev &&
    now.size === before.size &&
    now.mtimeMs === before.mtimeMs;
  if (!same) throw new Error(`${shown} changed while it was being written; read it again and retry`);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 text of a file, or undefined for binary (NUL bytes) or invalid UTF-8. A BOM is kept. */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Keeps the rename target's name recognizable while staying under NAME_MAX. */
function tempNameFor(target: string): string {
  return join(dirname(target), `.${basename(target).slice(0, 180)}.${randomBytes(6).toString("hex")}.zero-tmp`);
}

export type AtomicWriteOptions = {
  /** Permission bits to give the file; omitted for a new file (0o666 & ~umask). */
  mode?: number;
  /** Owner to keep when the process may (root rewriting another user's file). */
  owner?: { uid: number; gid: number };
};

/**
 * Replaces `target` (canonical; its directory exists) atomically: an exclusive, no-follow temp file
 * in the same directory, written and fsynced, then renamed over the target. Readers see the old or
 * the new content, never a mix; on any failure the original is untouched and the temp file removed.
 */
export function writeFileAtomic(target: string, data: Uint8Array, options: AtomicWriteOptions = {}): void {
  // Act inside the checked directory by descriptor: a parent swapped for a symlink
  // between the check and the write cannot redirect the file elsewhere.
  const directory = openDirectoryChecked(dirname(target));
  try {
    writeInside(directory.base, basename(target), data, options);
  } finally {
    directory.close();
  }
  syncDirectory(dirname(target));
}

function writeInside(base: string, name: string, data: Uint8Array, options: AtomicWriteOptions): void {
  const target = join(base, name);
  const temp = tempNameFor(target);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fd = openSync(temp, flags, 0o666);
  let renamed = false;
  try {
    try {
      let offset = 0;
      while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
      if (options.owner !== undefined) {
        try {
          fchownSync(fd, options.owner.uid, options.owner.gid);
        } catch {
          // Only root may give a file away; everyone else keeps their own ownership.
        }
      }
      // After chown, which may clear mode bits; setuid/setgid are not carried to rewritten content.
      if (options.mode !== undefined) fchmodSync(fd, options.mode & 0o777);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, target);
    renamed = true;
  } finally {
    if (!renamed) rmSync(temp, { force: true });
  }
}

/** Makes a rename durable; best effort, as some file systems refuse fsync on directories. */
export function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // durability hint only
  }
}
