import type { LoadedConfig } from "../../config/load.ts";
import type { TuiScreen } from "../tui/start.tsx";
import type { Env } from "../../util/env.ts";

/** What a command may use of its process: arguments, environment, output, stdin, signals. */
export type CliIo = {
  argv: string[];
  env: Env;
  cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of standard input, or undefined when it is a terminal. */
  readStdin(): Promise<string | undefined>;
  /** Registers what a first SIGINT/SIGTERM (or a closed stdout) does: cancel the run. */
  onInterrupt(handler: () => void): void;
  /** Flushes stdout/stderr, then ends the process with `code` (for a signal before any run exists). */
  exit(code: number): Promise<never>;
  /** The TUI's screen when src/index.ts opened it before the runtime loaded (plain `zero`). */
  tuiScreen?: TuiScreen;
};

/**
 * One-line notices about the configuration: an untrusted project file, one whose content changed
 * since it was trusted (or that others can write), a project permission setting that would widen
 * the user's mode, a deprecated file name.
 */
export function reportConfigNotices(io: CliIo, loaded: LoadedConfig): void {
  const file = loaded.ignoredProjectFile;
  if (file && loaded.ignoredBecause) io.stderr(`zero: not loading project config ${file}: ${loaded.ignoredBecause}\n`);
  else if (file) io.stderr(`zero: ignoring untrusted project config ${file} (review it, then run 'zero trust')\n`);
  for (const ignored of loaded.ignoredPermissions ?? []) io.stderr(`zero: ${ignored.message}\n`);
  for (const source of loaded.sources) {
    if (/(^|\/)\.?devout(\.jsonc|\/)/.test(source.file)) {
      io.stderr(`zero: ${source.file} uses a deprecated name; rename it to zero-cli.jsonc (or .zero-cli/config.jsonc)\n`);
    }
  }
}

