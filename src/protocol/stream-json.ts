import { z } from "zod";

/**
 * The public stream-json contract of `zero exec`, schema version 2. Clients build
 * on it: objects are strict, and nothing here follows the internal events
 * automatically — the mapper in surface/stream-json translates explicitly.
 */
export const STREAM_JSON_VERSION = 2;

const version = z.literal(STREAM_JSON_VERSION);

// ---- input (client → zero) ----

export const inputMessageSchema = z.strictObject({
  schemaVersion: version,
  type: z.literal("message"),
  role: z.literal("user"),
  content: z.string(),
});

export const inputPromptSchema = z.strictObject({
  schemaVersion: version,
  type: z.literal("prompt"),
  content: z.string(),
});

export const inputEventSchema = z.discriminatedUnion("type", [inputMessageSchema, inputPromptSchema]);
export type InputEvent = z.infer<typeof inputEventSchema>;

// ---- output (zero → client) ----

const envelope = { schemaVersion: version, runId: z.string() };
export const sideEffectSchema = z.enum(["read", "write", "shell", "network", "delegate"]);
export type SideEffect = z.infer<typeof sideEffectSchema>;
const riskSchema = z.strictObject({ level: z.enum(["low", "medium", "high", "critical"]), categories: z.array(z.string()) });
const blockSchema = z.strictObject({
  code: z.string(),
  toolName: z.string(),
  action: z.literal("prompt"),
  risk: riskSchema,
  reason: z.string(),
  recoverable: z.boolean(),
});

export const errorCodeSchema = z.enum(["invalid_input", "config_error", "provider_error", "limit_reached", "timeout", "cancelled", "internal"]);
export type ErrorCode = z.infer<typeof errorCodeSchema>;

export const outputEventSchema = z.discriminatedUnion("type", [
  z.strictObject({ ...envelope, type: z.literal("run_start"), sessionId: z.string(), cwd: z.string(), provider: z.string(), model: z.string(), apiModel: z.string() }),
  z.strictObject({ ...envelope, type: z.literal("reasoning"), delta: z.string() }),
  z.strictObject({ ...envelope, type: z.literal("text"), delta: z.string() }),
  z.strictObject({ ...envelope, type: z.literal("tool_call"), id: z.string(), name: z.string(), args: z.unknown(), sideEffect: sideEffectSchema }),
  z.strictObject({
    ...envelope,
    type: z.literal("permission_request"),
    id: z.string(),
    name: z.string(),
    action: z.literal("prompt"),
    permission: z.literal("prompt"),
    permissionMode: z.string(),
    sideEffect: sideEffectSchema,
    reason: z.string(),
    risk: riskSchema.optional(),
    block: blockSchema.optional(),
  }),
  z.strictObject({
    ...envelope,
    type: z.literal("permission_decision"),
    id: z.string(),
    name: z.string(),
    action: z.enum(["allow", "deny"]),
    permission: z.literal("prompt"),
    permissionGranted: z.boolean(),
    decisionReason: z.string(),
  }),
  z.strictObject({
    ...envelope,
    type: z.literal("tool_result"),
    id: z.string(),
    status: z.enum(["ok", "error", "denied", "cancelled"]),
    output: z.string(),
    truncated: z.boolean(),
    block: blockSchema.optional(),
  }),
  z.strictObject({
    ...envelope,
    type: z.literal("usage"),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    totalTokens: z.number().int(),
    // An addition of ours: present only when the model has configured pricing.
    costUsd: z.number().nonnegative().optional(),
  }),
  z.strictObject({ ...envelope, type: z.literal("final"), text: z.string() }),
  z.strictObject({ ...envelope, type: z.literal("error"), code: errorCodeSchema, message: z.string(), recoverable: z.boolean() }),
  z.strictObject({ ...envelope, type: z.literal("run_end"), status: z.enum(["success", "error"]), exitCode: z.number().int() }),
]);
export type OutputEvent = z.infer<typeof outputEventSchema>;

/** Distributes Omit over the union, so each event keeps its own fields. */
export type OutputBody = OutputEvent extends infer E ? (E extends OutputEvent ? Omit<E, "schemaVersion" | "runId"> : never) : never;
