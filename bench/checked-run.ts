import { jsonLines, type ZeroResult } from "../test/support/cli.ts";

/** A broken run must never produce a figure: its exit code and output are checked, its `--json` events returned. */
export function checkedEvents(result: ZeroResult, what: string): Array<Record<string, any>> {
  const fail = (why: string) => new Error(`broken run of ${what} (${why}); exit ${result.code}\nstderr: ${result.stderr.slice(-2000)}\nstdout tail: ${result.stdout.slice(-2000)}`);
  if (result.code !== 0) throw fail("non-zero exit");
  try {
    return jsonLines(result.stdout);
  } catch {
    throw fail("stdout is not JSON lines");
  }
}
