import { statSync } from "node:fs";
import { canonicalPath } from "../../util/paths.ts";
import { UsageError } from "../../util/errors.ts";

/** Canonicalizes a directory named on the command line; it must exist. */
export function existingDirectory(flag: string, path: string, base: string): string {
  const canonical = canonicalPath(path, base);
  let isDirectory = false;
  try {
    isDirectory = statSync(canonical).isDirectory();
  } catch {
    throw new UsageError(`${flag} ${path}: no such directory`);
  }
  if (!isDirectory) throw new UsageError(`${flag} ${path}: not a directory`);
  return canonical;
}

/** The workspace of a command: --cwd when given, else the process's directory. */
export function workspaceFrom(cwdFlag: string | undefined, processCwd: string): string {
  return existingDirectory("--cwd", cwdFlag ?? ".", processCwd);
}
