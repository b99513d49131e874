/**
 * ZERO_TUI_TRACE: "<mark> <ms since process start>" lines appended to a file, read by
 * bench/tui.ts. Undefined when the variable is unset, so tracing costs nothing then (node:fs is
 * loaded only when tracing: the entry's --version path must not pay for it).
 */
export function traceMarks(file: string | undefined): ((mark: string) => void) | undefined {
  if (!file) return undefined;
  const { appendFileSync } = require("node:fs") as typeof import("node:fs");
  return (mark) => appendFileSync(file, `${mark} ${performance.now().toFixed(1)}\n`);
}
