/**
 * An MCP OAuth problem worded for the user (what failed, for which server, what to do). Messages
 * never contain tokens, codes, verifiers or secrets. `file` is set when a file is the problem.
 */
export class McpAuthError extends Error {
  override readonly name = "McpAuthError";
  readonly file: string | undefined;
  constructor(message: string, options: { file?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.file = options.file;
  }
}

/** Remote text (an authorization server's error) made safe for one terminal line: printable ASCII, bounded. */
export function sanitizeRemoteText(text: string, max = 200): string {
  const clean = text.replace(/[^\x20-\x7e]+/g, " ").trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}
