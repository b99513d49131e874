/**
 * A store problem the user has to act on (a database from a newer zero, an
 * unusable file name, a file that cannot be opened, an oversized checkpoint).
 * Its message is written for the user; the CLI prints it without a stack and
 * exits 2 when it happens while opening.
 */
export type StoreErrorCode =
  | "newer_schema"
  | "invalid_name"
  | "open_failed"
  | "migration_failed"
  | "too_large"
  | "closed"
  | "not_found"
  | "duplicate_event"
  | "malformed";

export class StoreError extends Error {
  override readonly name = "StoreError";
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
