import { z } from "zod";

/**
 * The host protocol v1 for bridge programs (NDJSON over stdio). Unlike stream-json,
 * requests may carry extra fields (ignored, for forward compatibility); what is
 * required is checked precisely so a bridge gets a clear INVALID_REQUEST.
 */
export const HOST_PROTOCOL_VERSION = 1;

export const hostErrorCodeSchema = z.enum(["TIMEOUT", "PROVIDER_AUTH", "PROVIDER_RATE_LIMIT", "PROVIDER_DOWN", "INVALID_REQUEST", "INTERNAL"]);
export type HostErrorCode = z.infer<typeof hostErrorCodeSchema>;

const nonEmpty = z.string().min(1);

export const pingRequestSchema = z.object({ protocol_version: z.literal(1), type: z.literal("ping"), request_id: nonEmpty, session_id: nonEmpty });
export const runRequestSchema = z.object({
  protocol_version: z.literal(1),
  type: z.literal("run"),
  request_id: nonEmpty,
  session_id: nonEmpty,
  prompt: nonEmpty,
  idempotency_key: nonEmpty,
  ts_ms: z.number().optional(),
  timeout_ms: z.number().int().positive().optional(),
  stream: z.boolean().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export const cancelRequestSchema = z.object({
  protocol_version: z.literal(1),
  type: z.literal("cancel"),
  request_id: nonEmpty,
  session_id: nonEmpty,
  target_request_id: nonEmpty,
});

export type RunRequest = z.infer<typeof runRequestSchema>;
export type CancelRequest = z.infer<typeof cancelRequestSchema>;

export type HostUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
export type HostError = { code: HostErrorCode; message: string; retryable: boolean };
export type FinalStatus = "OK" | "TIMEOUT" | "CANCELED" | "ERROR";

export const DEFAULT_TIMEOUT_MS = 120_000;
export const TIMEOUT_TEXT = "Request timed out. Please retry with a simpler prompt or a higher timeout.";

/** The common head of every response line, in the protocol's field order. */
export function head(type: string, requestId: string | null, sessionId: string | null, now: number) {
  return { protocol_version: HOST_PROTOCOL_VERSION, type, request_id: requestId, session_id: sessionId, ts_ms: now };
}
