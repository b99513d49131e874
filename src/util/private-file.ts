/**
 * Files only this user may read or change (the trust record, MCP OAuth tokens): an exclusive lock
 * for read-modify-write across processes, an atomic 0600 write in a 0700 directory, and a read that
 * refuses symlinks and files owned by someone else.
 *
 * Errors are PrivateFileError (with the file they concern); callers turn them into their own error
 * type, so this module stays below config/ in the layers.
 */
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";

export class PrivateFileError extends Error {
  override readonly name = "PrivateFileError";
  readonly file: string;
  constructor(message: string, file: string) {
    super(message);
    this.file = file;
  }
}

export type FileLockOptions = {
  /** Names the lock in messages ("trust lock"). */
  label?: string;
  /** How long to wait for another process's lock; an update holds it for milliseconds. */
  waitMs?: number;
  /** A lock older than this is abandoned whoever holds it (a hung or killed process on another host). */
  staleMs?: number;
};

const LOCK_WAIT_MS = 10_000;
const LOCK_STALE_MS = 30_000;

type LockHolder = { pid: number; host: string; token: string };

/**
 * Runs `update` holding an exclusive lock file: created with O_EXCL, holding the owner's pid, host
 * and a random token, removed afterwards only if it is still ours. A lock whose owner died (same
 * host, pid gone) or that is older than `staleMs` is broken. Synchronous on purpose: nothing else
 * may run between the read and the write it protects.
 */
export function withFileLock<T>(lock: string, update: () => T, options: FileLockOptions = {}): T {
  const label = options.label ?? "lock";
  const waitMs = options.waitMs ?? LOCK_WAIT_MS;
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const holder: LockHolder = { pid: process.pid, host: hostname(), token: crypto.randomUUID() };
  const deadline = Date.now() + waitMs;
  for (let delay = 2; !tryLock(lock, holder, label); delay = Math.min(delay * 2, 64)) {
    if (breakStaleLock(lock, staleMs)) continue;
    if (Date.now() > deadline) {
      throw new PrivateFileError(`another zero process has held the ${label} for ${waitMs / 1000} s; if none is running, delete the lock file`, lock);
    }
    sleepSync(delay / 2 + Math.random() * delay); // jittered, so waiting processes do not retry in step
  }
  try {
    return update();
  } finally {
    if (readHolder(lock)?.token === holder.token) rmSync(lock, { force: true });
  }
}

function tryLock(lock: string, holder: LockHolder, label: string): boolean {
  let fd: number;
  try {
    fd = openSync(lock, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new PrivateFileError(`cannot create the ${label}: ${(error as Error).message}`, lock);
  }
  try {
    writeSync(fd, JSON.stringify(holder));
  } finally {
    closeSync(fd);
  }
  return true;
}

function readHolder(path: string): Partial<LockHolder> | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Partial<LockHolder>;
  } catch {
    return undefined; // gone, or created but not written yet
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the lock when it is stale; true when the caller should retry at once (also when the lock
 * vanished meanwhile). Two processes may judge the same lock stale: each first renames it to a
 * private name and checks that what it moved is the very file it judged (same inode), so a fresh
 * lock a faster process already took is put back instead of deleted.
 */
function breakStaleLock(lock: string, staleMs: number): boolean {
  const judged = statSync(lock, { throwIfNoEntry: false });
  if (judged === undefined) return true;
  const holder = readHolder(lock);
  const ownerDead = holder?.host === hostname() && typeof holder.pid === "number" && holder.pid !== process.pid && !processAlive(holder.pid);
  if (!ownerDead && Date.now() - judged.mtimeMs < staleMs) return false;
  const aside = `${lock}.${process.pid}.${crypto.randomUUID()}.stale`;
  try {
    renameSync(lock, aside);
  } catch {
    return true; // someone else moved it first
  }
  try {
    const moved = statSync(aside);
    if (moved.ino !== judged.ino || moved.dev !== judged.dev) {
      try {
        linkSync(aside, lock); // a live lock: back it goes, unless yet another process holds the name now
      } catch {
        // EEXIST: that newer lock stands; the one moved aside is lost to its owner, who then leaves it alone
      }
    }
  } finally {
    rmSync(aside, { force: true });
  }
  return true;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Writes through an exclusive temp file in the same directory and renames it over the target, so a
 * reader sees the old or the new content, never half of it. Directory 0700 (created if missing),
 * file 0600. Renaming replaces a symlink at `file` rather than writing through it.
 */
export function writePrivateFileAtomically(file: string, content: string, dir: string = dirname(file)): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  // Web Crypto is global; importing node:crypto would cost every load ~5 ms for a rare write.
  const temp = join(dir, `.${basename(file).replace(/\.json$/, "")}.${process.pid}.${crypto.randomUUID()}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Checks a directory that holds private files: not a symlink, a directory, owned by this user.
 * Creates it (0700) when missing; tightens an owned directory's mode to 0700.
 */
export function ensurePrivateDir(dir: string): void {
  if (!checkPrivateDir(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkPrivateDir(dir);
  if ((lstatSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/** The checks of ensurePrivateDir without creating or changing anything; false when it does not exist. */
export function checkPrivateDir(dir: string): boolean {
  const info = lstatSync(dir, { throwIfNoEntry: false });
  if (info === undefined) return false;
  if (info.isSymbolicLink()) throw new PrivateFileError(`${dir} is a symlink; private files are only kept in a real directory`, dir);
  if (!info.isDirectory()) throw new PrivateFileError(`${dir} is not a directory`, dir);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new PrivateFileError(`${dir} belongs to another user (uid ${info.uid}); refusing to keep private files there`, dir);
  return true;
}

/**
 * The text of a private file, or undefined when it does not exist. Opened with O_NOFOLLOW (a
 * symlink is refused, not followed), then checked on the open descriptor: a regular file owned by
 * this user. Group/other permission bits are removed, since the content is a secret either way.
 */
export function readPrivateFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "EMLINK") throw new PrivateFileError(`${file} is a symlink; refusing to follow it`, file);
    throw new PrivateFileError(`cannot read ${file}: ${(error as Error).message}`, file);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new PrivateFileError(`${file} is not a regular file`, file);
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) throw new PrivateFileError(`${file} belongs to another user (uid ${info.uid}); refusing to use it`, file);
    if ((info.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
