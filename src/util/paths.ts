import { realpathSync } from "node:fs";
import { dirname, basename, join, resolve } from "node:path";

/**
 * Canonical absolute form of a path: `..` removed and every symlink resolved.
 * For a path that does not exist yet, the deepest existing ancestor is resolved
 * and the missing tail is appended, so a new file under a symlinked directory
 * is judged by where it would really be written.
 */
export function canonicalPath(path: string, base?: string): string {
  const absolute = base === undefined ? resolve(path) : resolve(base, path);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** True when `child` is `parent` or lies inside it (both canonical, no prefix confusion). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith("/") ? parent : `${parent}/`;
  return child.startsWith(prefix);
}
