import { jsonSchema, streamText, tool, type LanguageModel, type ToolSet } from "ai";
import type { ModelSettings, ReasoningEffort, ResolvedModel, Speed } from "../config/schema.ts";
import type { Message } from "../protocol/messages.ts";
import { fromSdkResponse, toSdkMessages } from "./messages.ts";
import { emptyUsage, type Usage } from "../protocol/events.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { classifyProviderError, refusalFailure, type FailureContext, type ProviderFailure } from "./errors.ts";
import { apiKeyEnvName, callOptions, createLanguageModel, endpointHost, validateModelOptions } from "./providers.ts";

// Route the SDK's console warnings away from stdout/stderr: protocol surfaces must stay clean.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** A tool as the model sees it: name, description and a JSON schema computed once. */
export type ToolSpec = { name: string; description: string; inputSchema: Record<string, unknown> };

export type StepToolCall = {
  callId: string;
  tool: string;
  input: unknown;
  /** Set when the SDK could not parse the call or the tool is unknown; the SDK already answered it. */
  invalid?: string;
};

export type RetryNotice = {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  failure: ProviderFailure;
  /** The failed attempt had already emitted deltas (onText/onReasoning) that the retry discards. */
  discardedOutput: boolean;
};

export type StepRequest = {
  instructions: string;
  messages: Message[];
  signal: AbortSignal;
  onText(delta: string): void;
  onReasoning(delta: string): void;
  /**
   * Told before a failed request is retried, also after deltas of it were emitted: a step
   * runs no tool, so nothing irreversible happened (`discardedOutput` says so).
   */
  onRetry?(notice: RetryNotice): void;
  /** The most output tokens this request may produce (a campaign budget's allowance); lowers the model's own setting. */
  maxOutputTokens?: number;
};

/** Attempts per model step: the first request and two retries. */
export const MAX_ATTEMPTS = 3;
const BACKOFF_MS = [2000, 4000];
const MAX_HONORED_RETRY_AFTER_MS = 60_000;

/** The provider's retry-after when it is sane, else exponential backoff. */
export function retryDelay(failure: ProviderFailure, attempt: number): number {
  const asked = failure.retryAfterMs;
  if (asked !== null && asked >= 0 && asked <= MAX_HONORED_RETRY_AFTER_MS) return asked;
  return BACKOFF_MS[Math.min(attempt - 1, BACKOFF_MS.length - 1)]!;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

export type StepOutcome =
  | {
      ok: true;
      text: string;
      toolCalls: StepToolCall[];
      responseMessages: Message[];
      usage: Usage;
      finishReason: string;
      /** Set when the model refused (finish reason content-filter): not an answer, the run fails. */
      refusal?: StepRefusal;
    }
  | { ok: false; aborted: boolean; failure: ProviderFailure };

/** A refusal: the provider's explanation (stop_details.explanation, else the refusal text) and the failure to report. */
export type StepRefusal = { explanation: string | null; failure: ProviderFailure };

/** The separator between two text blocks of one step (a commentary message, then the answer). */
function paragraphBreak(before: string): string {
  return before === "" || before.endsWith("\n\n") ? "" : before.endsWith("\n") ? "\n" : "\n\n";
}

/** Anthropic's stop_details.explanation, when a refusal carries one. */
function stopExplanation(metadata: unknown): string | null {
  const details = (metadata as { anthropic?: { stopDetails?: { explanation?: unknown } } } | undefined)?.anthropic?.stopDetails;
  return typeof details?.explanation === "string" && details.explanation.trim() !== "" ? details.explanation : null;
}

/** `provider` is the built-in type; `profile` the provider profile the alias named, if any. */
export type ModelIdentity = { alias: string; provider: string; model: string; profile?: string };

/** One configured model, ready to run steps with a fixed tool set. */
export type ModelRunner = {
  identity: ModelIdentity;
  step(request: StepRequest): Promise<StepOutcome>;
};

function toUsage(usage: {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  inputTokenDetails?: { cacheReadTokens?: number };
  outputTokenDetails?: { reasoningTokens?: number };
}): Usage {
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: usage.totalTokens ?? input + output,
    reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
    cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
  };
}

/**
 * Prepares a model for a run: validates options, resolves the key (a missing
 * key fails here, before any request) and builds the tool declarations once.
 * Tools are declared WITHOUT execute: the runtime's loop runs them.
 */
/** Provider types spoken over Chat Completions, whose tool messages take text only. */
const CHAT_COMPLETIONS_TYPES = new Set(["openai-compatible", "kimi", "nebius"]);

export async function createModelRunner(options: {
  model: ResolvedModel;
  env: Env;
  tools: ToolSpec[];
  reasoningEffort?: ReasoningEffort;
  speed?: Speed;
  /** Abandon (and retry) a stream that sends nothing for this long: no first token, or a gap. */
  streamIdleTimeoutMs?: number;
}): Promise<ModelRunner> {
  const { model } = options;
  const effort = options.reasoningEffort ?? model.reasoningEffort;
  const speed = options.speed ?? model.speed;
  validateModelOptions(model, effort, speed);
  const languageModel: LanguageModel = await createLanguageModel(model, options.env);
  const { reasoning, providerOptions } = callOptions(model, effort, speed);
  const settings: ModelSettings = model.settings;
  const toolSet: ToolSet = {};
  for (const spec of options.tools) {
    toolSet[spec.name] = tool({ description: spec.description, inputSchema: jsonSchema(spec.inputSchema) });
  }
  const hasTools = options.tools.length > 0;
  const idleMs = options.streamIdleTimeoutMs;
  // What a failure message names: the alias, the endpoint host and the key variable (never a secret).
  const keyEnv = apiKeyEnvName(model, options.env);
  const host = endpointHost(model);
  const context: FailureContext = { alias: model.alias, ...(host ? { host } : {}), ...(keyEnv ? { keyEnv } : {}) };
  const idleFailure = (): ProviderFailure => ({
    category: "unavailable",
    message: `the provider sent nothing for ${(idleMs ?? 0) / 1000} s (model '${model.alias}'${host ? ` at ${host}` : ""}; limits.streamIdleTimeoutMs)`,
    statusCode: null,
    retryAfterMs: null,
    retryable: true,
    url: null,
  });

  /** One HTTP attempt; `streamed` is set as soon as a delta reached the caller. */
  async function attempt(request: StepRequest, progress: { streamed: boolean }): Promise<StepOutcome> {
    let streamError: unknown;
    // Our own idle watchdog: re-armed by every chunk the provider sends (raw SSE
    // events included, so keep-alives and hidden-reasoning progress count), and
    // also covering the wait for the response headers.
    const idle = new AbortController();
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      if (idleMs === undefined) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => idle.abort(), idleMs);
    };
    arm();
    const result = streamText({
      model: languageModel,
      instructions: request.instructions,
      messages: toSdkMessages(request.messages, { toolMediaAsUser: CHAT_COMPLETIONS_TYPES.has(model.type) }),
      tools: hasTools ? toolSet : undefined,
      abortSignal: idleMs === undefined ? request.signal : AbortSignal.any([request.signal, idle.signal]),
      include: { rawChunks: idleMs !== undefined },
      // Retries are ours (see step below), so they are visible as events (with what they discard).
      maxRetries: 0,
      ...settings,
      ...(request.maxOutputTokens !== undefined
        ? { maxOutputTokens: Math.min(request.maxOutputTokens, settings.maxOutputTokens ?? Number.POSITIVE_INFINITY) }
        : {}),
      ...(reasoning ? { reasoning } : {}),
      ...(Object.keys(providerOptions).length > 0 ? { providerOptions } : {}),
      onError: ({ error }) => {
        streamError ??= error;
      },
    });
    let text = "";
    const toolCalls: StepToolCall[] = [];
    let usage = emptyUsage();
    let finishReason = "unknown";
    let rawFinishReason: string | undefined;
    let explanation: string | null = null;
    let abortedStream = false;
    // A new text block (another output message, a text block after a tool call) starts a new
    // paragraph: the deltas and the step's text get a break instead of gluing the blocks together.
    let newBlock = false;
    try {
      for await (const part of result.stream) {
        arm();
        switch (part.type) {
          case "text-start":
            newBlock = true;
            break;
          case "text-delta":
            if (part.text) {
              const delta = newBlock ? paragraphBreak(text) + part.text : part.text;
              newBlock = false;
              text += delta;
              progress.streamed = true;
              request.onText(delta);
            }
            break;
          case "reasoning-delta":
            if (part.text) {
              progress.streamed = true;
              request.onReasoning(part.text);
            }
            break;
          case "tool-call":
            toolCalls.push({
              callId: part.toolCallId,
              tool: part.toolName,
              input: part.input,
              ...("invalid" in part && part.invalid ? { invalid: errorMessage(part.error) } : {}),
            });
            break;
          case "finish-step":
            usage = toUsage(part.usage);
            finishReason = part.finishReason;
            rawFinishReason = part.rawFinishReason;
            explanation = stopExplanation(part.providerMetadata);
            break;
          case "error":
            streamError ??= part.error;
            break;
          case "abort":
            abortedStream = true;
            break;
          default:
            break;
        }
      }
      if (streamError !== undefined) throw streamError;
      // An abort that is not ours is the SDK's idle timer firing.
      if ((abortedStream || idle.signal.aborted) && !request.signal.aborted) return { ok: false, aborted: false, failure: idleFailure() };
      const invalid = new Set(toolCalls.filter((call) => call.invalid !== undefined).map((call) => call.callId));
      const responseMessages = fromSdkResponse(await result.responseMessages, invalid);
      if (finishReason === "content-filter") {
        // A refusal streams its explanation as text (OpenAI) or sends it in stop_details (Anthropic).
        const said = explanation ?? (text.trim() === "" ? null : text);
        const refusal: StepRefusal = { explanation: said, failure: refusalFailure(said, rawFinishReason, context) };
        return { ok: true, text, toolCalls, responseMessages, usage, finishReason, refusal };
      }
      return { ok: true, text, toolCalls, responseMessages, usage, finishReason };
    } catch (error) {
      const failure = streamError ?? error;
      if (request.signal.aborted) return { ok: false, aborted: true, failure: classifyProviderError(failure, context) };
      if (idle.signal.aborted) return { ok: false, aborted: false, failure: idleFailure() };
      return { ok: false, aborted: false, failure: classifyProviderError(failure, context) };
    } finally {
      clearTimeout(idleTimer);
    }
  }

  async function step(request: StepRequest): Promise<StepOutcome> {
    for (let number = 1; ; number++) {
      const progress = { streamed: false };
      const outcome = await attempt(request, progress);
      if (outcome.ok || outcome.aborted) return outcome;
      const { failure } = outcome;
      // Also after deltas were emitted: tools run after the step, so a failed step did nothing
      // irreversible; the retry notice tells surfaces that what they showed is discarded.
      if (!failure.retryable || number >= MAX_ATTEMPTS) {
        return number > 1 ? { ...outcome, failure: { ...failure, message: `${failure.message} (after ${number} attempts)` } } : outcome;
      }
      const delayMs = retryDelay(failure, number);
      request.onRetry?.({ attempt: number + 1, maxAttempts: MAX_ATTEMPTS, delayMs, failure, discardedOutput: progress.streamed });
      await sleep(delayMs, request.signal);
      if (request.signal.aborted) return { ok: false, aborted: true, failure };
    }
  }

  return { identity: { alias: model.alias, provider: model.type, model: model.model, ...(model.profile ? { profile: model.profile } : {}) }, step };
}
