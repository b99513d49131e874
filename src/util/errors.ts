/**
 * A mistake the user can fix (a bad flag, an unknown alias, a missing key).
 * Surfaces print its message without a stack and exit with code 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The subcommand the mistake belongs to, for the "zero <command>:" prefix. */
  readonly command: string | undefined;
  constructor(message: string, options: { command?: string } = {}) {
    super(message);
    this.command = options.command;
  }
}

/** Error text for anything thrown, without a stack. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
