import { isAbsolute, join, normalize } from "node:path";
import { displayPath, resolveInRoots, type Roots } from "../security/roots.ts";
import { canonicalPath } from "../util/paths.ts";

/** What a call acts on, as policy and approvals see it (a rule's target pattern, an "always" answer). */

/**
 * One path as a policy target: canonical (symlinks resolved; `entry` resolves every component
 * but the last, for operations on a link itself), workspace-relative inside the workspace,
 * absolute outside. Without roots, the path as asked, normalized. Control characters and
 * backslashes are escaped, so a target never holds a raw line break (the separator of
 * several paths) and two different paths never give the same target.
 */
export function pathTarget(requested: string, roots: Roots | undefined, how: "path" | "entry" = "path"): string {
  let shown: string;
  if (roots === undefined) {
    shown = requested === "" ? "" : normalize(requested);
  } else {
    let absolute: string | undefined;
    try {
      if (how === "entry" && !requested.endsWith("/")) {
        const slash = requested.lastIndexOf("/");
        const name = requested.slice(slash + 1);
        if (name !== "" && name !== "." && name !== "..") {
          const parent = slash === -1 ? "." : slash === 0 ? "/" : requested.slice(0, slash);
          absolute = join(canonicalPath(parent, roots.workspace), name);
        }
      }
      if (absolute === undefined) {
        const checked = resolveInRoots(roots, requested, "read");
        absolute = checked.ok ? checked.value.path : canonicalPath(requested, roots.workspace);
      }
    } catch {
      absolute = isAbsolute(requested) ? normalize(requested) : normalize(`${roots.workspace}/${requested}`);
    }
    shown = displayPath(roots, absolute);
  }
  return escapeTarget(shown);
}

/**
 * Text as a target: control characters and backslashes escaped (JSON style) when there are
 * any, so a target never holds a raw line break and the escaping can't make two texts equal.
 */
export function escapeTarget(text: string): string {
  return /[\u0000-\u001f\u007f\\]/.test(text) ? JSON.stringify(text).slice(1, -1) : text;
}

/** A URL as a target: its origin and path (no credentials, query or fragment, which vary or hold secrets). */
export function urlTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return escapeTarget(`${parsed.origin}${parsed.pathname}`);
  } catch {
    return escapeTarget(url.split(/[?#]/, 1)[0] ?? "");
  }
}

/** Several paths as one target, one per line (see pathTarget), without repeats. */
export function pathsTarget(paths: readonly string[]): string {
  return [...new Set(paths)].join("\n");
}
