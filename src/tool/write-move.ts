/**
 * The write tool's `move` and `delete` operations. Both act on directory entries: a symlink named
 * as the final component is moved or deleted itself, never what it points to (see `resolveEntry`).
 */
import { randomBytes } from "node:crypto";
import { cpSync, type Dirent, readdirSync, readlinkSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { openDirectoryChecked } from "../security/files.ts";
import type { Redactor } from "../security/redact.ts";
import { displayPath, type Roots } from "../security/roots.ts";
import { isWithin } from "../util/paths.ts";
import type { ToolOutput } from "./define.ts";
import { countLines, diffName, diffTexts } from "./write-diff.ts";
import { decodeText, ensureDirectory, inspectTarget, lstatOrUndefined, refuseRootsWithin, resolveEntry, syncDirectory } from "./write-fs.ts";
import { markerOverwriteProblem } from "./write-secrets.ts";

/** Counting stops here; the number is only for the summary. */
const MAX_COUNTED_ENTRIES = 100_000;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Across file systems rename is impossible: copy (symlinks copied as links, modes and times kept)
 * to a temporary sibling of the destination, rename that into place, then remove the source.
 */
function moveAcrossDevices(source: string, destination: string): void {
  const temp = join(dirname(destination), `.${basename(destination).slice(0, 180)}.${randomBytes(6).toString("hex")}.zero-tmp`);
  try {
    cpSync(source, temp, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false, preserveTimestamps: true });
    renameSync(temp, destination);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  rmSync(source, { recursive: true, force: true });
}

export type MoveRequest = { from: string; to: string; overwrite: boolean };

/**
 * A file moved over a file: the destination's content is replaced by the source's, so a source
 * carrying redaction markers must not overwrite a secret the destination holds (write-secrets.ts).
 */
function refuseMarkerOverwrite(source: string, from: string, destination: string, shown: string, redactor: Redactor): void {
  const moved = inspectTarget(source, from);
  if (moved.kind !== "file") return;
  const incoming = moved.bytes === undefined ? undefined : decodeText(moved.bytes);
  if (incoming === undefined) return; // binary or huge: nothing the model wrote from what it saw
  const replaced = inspectTarget(destination, shown);
  if (replaced.kind !== "file") return;
  const current = replaced.bytes === undefined ? "unexamined" : (decodeText(replaced.bytes) ?? "unexamined");
  const problem = markerOverwriteProblem(current, incoming, redactor, shown);
  if (problem !== undefined) throw new Error(problem);
}

export function moveEntry(roots: Roots, request: MoveRequest, redactor?: Redactor): ToolOutput {
  const source = resolveEntry(roots, request.from);
  const from = displayPath(roots, source.path);
  const sourceStat = lstatOrUndefined(source.path);
  if (sourceStat === undefined) throw new Error(`${from} does not exist`);
  refuseRootsWithin(roots, source.path, from, "move");

  const destination = resolveEntry(roots, request.to);
  const to = displayPath(roots, destination.path);
  if (destination.path === source.path) throw new Error(`${from} and ${to} are the same path; nothing to move`);
  const sourceIsDir = sourceStat.isDirectory();
  if (sourceIsDir && isWithin(source.path, destination.path)) throw new Error(`Cannot move the directory ${from} into itself (${to})`);

  const destinationStat = lstatOrUndefined(destination.path);
  if (destinationStat !== undefined) {
    if (!request.overwrite) throw new Error(`${to} already exists; set overwrite: true to replace it`);
    refuseRootsWithin(roots, destination.path, to, "overwrite");
    if (destinationStat.isDirectory() && !sourceIsDir) throw new Error(`${to} is a directory; a file cannot replace it`);
    if (!destinationStat.isDirectory() && sourceIsDir) throw new Error(`${to} is not a directory; a directory cannot replace it`);
    if (redactor !== undefined && sourceStat.isFile() && destinationStat.isFile()) refuseMarkerOverwrite(source.path, from, destination.path, to, redactor);
  }

  ensureDirectory(dirname(destination.path));
  try {
    // Both names resolved inside their checked parents, by descriptor.
    insideParent(source.path, (from) => insideParent(destination.path, (to) => renameSync(from, to)));
  } catch (error) {
    const code = errorCode(error);
    if (code === "EXDEV") moveAcrossDevices(source.path, destination.path);
    else if (code === "ENOTEMPTY" || code === "EEXIST") throw new Error(`${to} is a directory that is not empty; it cannot be replaced`);
    else throw error;
  }
  syncDirectory(dirname(source.path));
  syncDirectory(dirname(destination.path));
  const kind = source.isLink ? "symlink " : sourceIsDir ? "directory " : "";
  const replaced = destinationStat !== undefined ? ` (replacing the previous ${to})` : "";
  return { output: `moved ${kind}${from} → ${to}${replaced}`, diff: `rename from ${from}\nrename to ${to}\n` };
}

/** Files and directories below `dir`, not following symlinks; bounded. */
function countEntries(dir: string): { files: number; dirs: number; capped: boolean } {
  const counts = { files: 0, dirs: 0, capped: false };
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() ?? dir;
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (counts.files + counts.dirs >= MAX_COUNTED_ENTRIES) {
        counts.capped = true;
        return counts;
      }
      if (entry.isDirectory()) {
        counts.dirs += 1;
        pending.push(join(current, entry.name));
      } else {
        counts.files += 1;
      }
    }
  }
  return counts;
}

export type DeleteRequest = { path: string; recursive: boolean };

/** Runs `action` on a name inside its checked parent directory (by descriptor; see openDirectoryChecked). */
function insideParent<T>(path: string, action: (entry: string) => T): T {
  const directory = openDirectoryChecked(dirname(path));
  try {
    return action(join(directory.base, basename(path)));
  } finally {
    directory.close();
  }
}

export function deleteEntry(roots: Roots, request: DeleteRequest): ToolOutput {
  const target = resolveEntry(roots, request.path);
  const shown = displayPath(roots, target.path);
  const stat = lstatOrUndefined(target.path);
  if (stat === undefined) throw new Error(`${shown} does not exist`);
  refuseRootsWithin(roots, target.path, shown, "delete");

  if (target.isLink) {
    const pointsTo = readlinkSync(target.path);
    insideParent(target.path, (entry) => unlinkSync(entry));
    syncDirectory(dirname(target.path));
    return { output: `deleted symlink ${shown} (it pointed to ${pointsTo}; the target was not touched)` };
  }
  if (stat.isDirectory()) {
    const counts = countEntries(target.path);
    const what = `${counts.capped ? "at least " : ""}${counts.files} files and ${counts.dirs} directories`;
    if (!request.recursive) {
      throw new Error(`${shown} is a directory (${what}); set recursive: true to delete it and everything in it`);
    }
    insideParent(target.path, (entry) => rmSync(entry, { recursive: true }));
    syncDirectory(dirname(target.path));
    return { output: `deleted directory ${shown} (${what})` };
  }
  if (!stat.isFile()) {
    insideParent(target.path, (entry) => unlinkSync(entry));
    return { output: `deleted ${shown} (not a regular file)` };
  }
  // The removed content, for surfaces (bounded; binary or huge files get no diff).
  const existing = inspectTarget(target.path, shown);
  const text = existing.kind === "file" && existing.bytes !== undefined ? decodeText(existing.bytes) : undefined;
  insideParent(target.path, (entry) => unlinkSync(entry));
  syncDirectory(dirname(target.path));
  if (text === undefined) return { output: `deleted ${shown} (${stat.size} bytes, not shown as text)` };
  const diff = diffTexts(diffName(roots, target.path, "a"), "/dev/null", text, "");
  return {
    output: `deleted ${shown} (${countLines(text)} lines)`,
    ...(diff.diff !== undefined ? { diff: diff.diff } : {}),
  };
}
