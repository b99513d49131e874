import * as acp from "@agentclientprotocol/sdk";

/** The longest piece of a client's value an error message repeats. */
const MAX_QUOTED_CHARS = 120;

/** `-32602 Invalid params` with what is wrong. */
export function invalidParams(message: string): acp.RequestError {
  return acp.RequestError.invalidParams(undefined, message);
}

/** A client's value as JSON for an error message, cut short (a session id may be megabytes long). */
export function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}
