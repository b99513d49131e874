import type { Message } from "../protocol/messages.ts";

/**
 * How big a request is before it is sent. Providers tokenize differently and report the real
 * input size only afterwards, so the estimate is a plain character count (about four characters
 * a token) that a calibration corrects from what the provider reported for earlier requests.
 */

/** A provider bills media by its dimensions or pages, not its base64 length: each file part counts this much. */
export const MEDIA_PART_TOKENS = 1_000;
const CHARS_PER_TOKEN = 4;

/**
 * Estimated input tokens of these messages: the characters of their JSON form / 4, with media
 * `data` counted as MEDIA_PART_TOKENS per file part and `provider` data left out (signatures and
 * encrypted reasoning travel back but are not what makes a context full).
 */
/** A size in characters as tokens (about four characters a token), rounded up. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(messages: readonly Message[]): number {
  // The JSON of the array is "[" + the messages' JSON joined by "," + "]". Messages are never
  // mutated (a changed one is a new object), so each one's size is computed once: the estimate
  // runs before every request and must not re-serialize the whole history each time.
  let chars = 2 + Math.max(0, messages.length - 1);
  let files = 0;
  for (const message of messages) {
    const size = sizeOf(message);
    chars += size.chars;
    files += size.files;
  }
  return estimateTokens(chars) + files * MEDIA_PART_TOKENS;
}

type Size = { chars: number; files: number };
const sizes = new WeakMap<Message, Size>();

function sizeOf(message: Message): Size {
  const known = sizes.get(message);
  if (known) return known;
  let files = 0;
  const json = JSON.stringify(message, function (this: unknown, key: string, value: unknown): unknown {
    if (key === "provider") return undefined;
    if (key === "data" && typeof value === "string" && (this as { type?: unknown } | null)?.type === "file") {
      files += 1;
      return "";
    }
    return value;
  });
  const size = { chars: json?.length ?? 0, files };
  sizes.set(message, size);
  return size;
}

export type Calibration = {
  /** Multiply an estimate by this to predict what the provider will count. */
  factor(): number;
  /** Records one request: what was estimated for it and the input tokens the provider reported. */
  learn(estimated: number, reportedInputTokens: number): void;
};

const MIN_FACTOR = 0.5;
const MAX_FACTOR = 3;
/** Weight of the newest observation: a few requests move the factor, one odd request does not. */
const SMOOTHING = 0.3;
/**
 * Below this estimate a request is mostly fixed overhead (role markers, system framing) and its
 * ratio says little about the tokenizer, so it is not learned from.
 */
export const MIN_CALIBRATION_ESTIMATE = 200;

const clamp = (value: number) => Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, value));

/** A per-model correction of the character estimate, learned from reported usage; starts at 1. */
export function createCalibration(): Calibration {
  let factor = 1;
  return {
    factor: () => factor,
    learn(estimated, reportedInputTokens) {
      if (!Number.isFinite(estimated) || !Number.isFinite(reportedInputTokens)) return;
      if (estimated < MIN_CALIBRATION_ESTIMATE || reportedInputTokens <= 0) return;
      const ratio = clamp(reportedInputTokens / estimated);
      factor = clamp(factor + SMOOTHING * (ratio - factor));
    },
  };
}

export type ContextBudgetInput = {
  /** The model's context window (contextWindow, or context.fallbackWindowTokens). */
  window: number;
  reservedOutputTokens: number;
  safetyBufferTokens: number;
  /** The tool definitions sent with every request. */
  toolSchemaTokens: number;
};

/** What the messages plus instructions may use of the window: the rest is spoken for. Never below 0. */
export function contextBudget(input: ContextBudgetInput): number {
  const { window, reservedOutputTokens, safetyBufferTokens, toolSchemaTokens } = input;
  const parts = [window, reservedOutputTokens, safetyBufferTokens, toolSchemaTokens];
  if (!parts.every(Number.isFinite)) return 0;
  const spoken = Math.max(0, reservedOutputTokens) + Math.max(0, safetyBufferTokens) + Math.max(0, toolSchemaTokens);
  return Math.max(0, Math.floor(window - spoken));
}
