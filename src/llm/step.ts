import { jsonSchema, streamText, tool, type LanguageModel, type ModelMessage as SdkMessage, type ToolSet } from "ai";
import type { ModelSettings, ReasoningEffort, ResolvedModel, Speed } from "../config/schema.ts";
import type { ModelMessage } from "../protocol/messages.ts";
import { emptyUsage, type Usage } from "../protocol/events.ts";
import type { Env } from "../util/env.ts";
import { classifyProviderError, type ProviderFailure } from "./errors.ts";
import { callOptions, createLanguageModel, validateModelOptions } from "./providers.ts";

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

export type StepRequest = {
  instructions: string;
  messages: ModelMessage[];
  signal: AbortSignal;
  onText(delta: string): void;
  onReasoning(delta: string): void;
};

export type StepOutcome =
  | {
      ok: true;
      text: string;
      toolCalls: StepToolCall[];
      responseMessages: ModelMessage[];
      usage: Usage;
      finishReason: string;
    }
  | { ok: false; aborted: boolean; failure: ProviderFailure };

export type ModelIdentity = { alias: string; provider: string; model: string };

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

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Prepares a model for a run: validates options, resolves the key (a missing
 * key fails here, before any request) and builds the tool declarations once.
 * Tools are declared WITHOUT execute: the runtime's loop runs them.
 */
export async function createModelRunner(options: {
  model: ResolvedModel;
  env: Env;
  tools: ToolSpec[];
  reasoningEffort?: ReasoningEffort;
  speed?: Speed;
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

  async function step(request: StepRequest): Promise<StepOutcome> {
    let streamError: unknown;
    const result = streamText({
      model: languageModel,
      instructions: request.instructions,
      messages: request.messages as SdkMessage[],
      tools: hasTools ? toolSet : undefined,
      abortSignal: request.signal,
      ...settings,
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
    try {
      for await (const part of result.stream) {
        switch (part.type) {
          case "text-delta":
            if (part.text) {
              text += part.text;
              request.onText(part.text);
            }
            break;
          case "reasoning-delta":
            if (part.text) request.onReasoning(part.text);
            break;
          case "tool-call":
            toolCalls.push({
              callId: part.toolCallId,
              tool: part.toolName,
              input: part.input,
              ...("invalid" in part && part.invalid ? { invalid: errorText(part.error) } : {}),
            });
            break;
          case "finish-step":
            usage = toUsage(part.usage);
            finishReason = part.finishReason;
            break;
          case "error":
            streamError ??= part.error;
            break;
          default:
            break;
        }
      }
      if (streamError !== undefined) throw streamError;
      const responseMessages = (await result.responseMessages) as ModelMessage[];
      return { ok: true, text, toolCalls, responseMessages, usage, finishReason };
    } catch (error) {
      const failure = streamError ?? error;
      return { ok: false, aborted: request.signal.aborted, failure: classifyProviderError(failure) };
    }
  }

  return { identity: { alias: model.alias, provider: model.type, model: model.model }, step };
}
