// Kept apart from events.ts (and its Zod schemas) so the TUI's view bundle can use it without
// loading them.
import type { RuntimeEvent } from "./events.ts";

/**
 * An event of a delegated child run (children's events carry their parent's id). The public
 * protocols (stream-json, host) show only the root run: child activity reaches them as the
 * parent's delegate call and its result; `run --json` shows the whole tree.
 */
export function isChildEvent(event: RuntimeEvent): boolean {
  return typeof (event as { parentRunId?: unknown }).parentRunId === "string";
}
