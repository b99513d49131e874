import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, type Stats } from "node:fs";

/**
 * Opening what was checked. A path is checked (canonicalized, inside the roots)
 * and then opened; between the two another process may swap in a symlink or a
 * FIFO. These helpers open without following a final symlink, without blocking
 * on FIFOs or devices, and confirm through /proc that the open file is the path
 * that was checked.
 */

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export type OpenedPath = { fd: number; stat: Stats; close(): void };

/** Where an open descriptor really points, when the platform can say (Linux). */
function realPathOf(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Opens a canonical path for reading. Throws a readable error when the path
 * changed into a symlink, or when the opened file is not `expected`.
 */
export function openChecked(path: string): OpenedPath {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new Error(`${path} changed into a symbolic link while it was being opened`);
    if (code === "ENOENT") throw new Error(`${path} does not exist`);
    if (code === "EACCES") throw new Error(`${path}: permission denied`);
    throw error;
  }
  const close = () => closeSync(fd);
  const real = realPathOf(fd);
  if (real !== undefined && real !== path) {
    close();
    throw new Error(`${path} changed while it was being opened (it now leads to ${real})`);
  }
  return { fd, stat: fstatSync(fd), close };
}

export type FileHead = { bytes: Uint8Array; size: number; truncated: boolean };

/** Reads at most `maxBytes` from an opened regular file, through its descriptor. */
export function readHead(opened: OpenedPath, maxBytes: number): FileHead {
  const size = opened.stat.size;
  const length = Math.min(size, maxBytes);
  const bytes = new Uint8Array(length);
  let offset = 0;
  while (offset < length) {
    const read = readSync(opened.fd, bytes, offset, length - offset, offset);
    if (read === 0) break;
    offset += read;
  }
  return { bytes: bytes.subarray(0, offset), size, truncated: size > offset };
}

/**
 * Reads a bounded regular file (a prompt, AGENTS.md): never a FIFO, device or
 * /proc entry, never more than `maxBytes` (+1 to know it was cut).
 */
export function readRegularFile(path: string, maxBytes: number): FileHead {
  const opened = openChecked(path);
  try {
    if (!opened.stat.isFile()) throw new Error(`${path} is not a regular file`);
    return readHead(opened, maxBytes);
  } finally {
    opened.close();
  }
}

export type CheckedDirectory = {
  /** A path that names the opened directory itself (Linux: /proc/self/fd/N), whatever happens to its name. */
  base: string;
  close(): void;
};

/**
 * Opens a canonical directory to act inside it by descriptor: names joined to `base`
 * resolve in the directory that was checked, even if another process swaps the
 * directory's path for a symlink meanwhile. Throws when the path no longer leads to
 * the checked directory. Where /proc is missing, `base` is the path itself.
 */
export function openDirectoryChecked(path: string): CheckedDirectory {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") throw new Error(`${path} changed into something other than a directory while it was being used`);
    throw error;
  }
  const real = realPathOf(fd);
  if (real !== undefined && real !== path) {
    closeSync(fd);
    throw new Error(`${path} changed while it was being used (it now leads to ${real})`);
  }
  return { base: real === undefined ? path : `/proc/self/fd/${fd}`, close: () => closeSync(fd) };
}
