import type { LanguageModel } from "ai";
import type { ProviderType, ReasoningEffort, ResolvedModel, Speed } from "../config/schema.ts";
import type { Env } from "../util/env.ts";
import { UsageError } from "../util/errors.ts";
import { VERSION } from "../util/version.ts";

/** Where each built-in provider type lives and which variable holds its key. */
const PROVIDER_DEFAULTS: Record<ProviderType, { baseURL?: string; keyEnv?: string; label: string }> = {
  openai: { keyEnv: "OPENAI_API_KEY", label: "OpenAI" },
  anthropic: { keyEnv: "ANTHROPIC_API_KEY", label: "Anthropic" },
  "openai-compatible": { label: "OpenAI-compatible endpoint" },
  kimi: { baseURL: "https://api.kimi.com/coding/v1", keyEnv: "KIMI_API_KEY", label: "Kimi Code" },
  nebius: { baseURL: "https://api.tokenfactory.nebius.com/v1", keyEnv: "NEBIUS_API_KEY", label: "Nebius Token Factory" },
  gateway: { keyEnv: "AI_GATEWAY_API_KEY", label: "Vercel AI Gateway" },
  "openai-codex": { label: "ChatGPT subscription (Codex)" },
};

const STANDARD_EFFORTS: ReasoningEffort[] = ["default", "low", "medium", "high", "xhigh"];

/** Reasoning efforts a model accepts: its declared list, else the standard ones (max/ultra need metadata). */
export function supportedEfforts(model: ResolvedModel): ReasoningEffort[] {
  if (model.supportedReasoningEfforts) return model.supportedReasoningEfforts;
  // Kimi transports expose only the provider's default reasoning.
  return model.type === "kimi" ? ["default"] : STANDARD_EFFORTS;
}

/** Speeds a model accepts: its declared list, else only `standard` (a fast tier must be declared). */
export function supportedSpeeds(model: ResolvedModel): Speed[] {
  return model.supportedSpeeds ?? ["standard"];
}

/** Finds the API key for a model: the named apiKeyEnv first (must be set), then the canonical variable. */
export function resolveApiKey(model: ResolvedModel, env: Env): string | undefined {
  if (model.apiKeyEnv) {
    const value = env[model.apiKeyEnv];
    if (value === undefined || value === "") {
      throw new UsageError(
        `model '${model.alias}' reads its API key from ${model.apiKeyEnv} (apiKeyEnv), but ${model.apiKeyEnv} is not set`,
      );
    }
    return value;
  }
  const canonical = PROVIDER_DEFAULTS[model.type].keyEnv;
  const value = canonical ? env[canonical] : undefined;
  if (value !== undefined && value !== "") return value;
  if (model.type === "gateway" && env.VERCEL_OIDC_TOKEN) return undefined; // the gateway package uses OIDC itself
  if (canonical) {
    throw new UsageError(
      `model '${model.alias}' (${PROVIDER_DEFAULTS[model.type].label}, ${model.model}) needs an API key: set ${canonical}, ` +
        `or configure another model (see 'zero agents')`,
    );
  }
  return undefined;
}

/**
 * The environment variable a model's key is read from, as resolveApiKey picks it: apiKeyEnv,
 * else the provider's canonical variable when it is set (the gateway may use its OIDC token).
 * For failure messages; undefined when no variable is involved.
 */
export function apiKeyEnvName(model: ResolvedModel, env: Env): string | undefined {
  if (model.apiKeyEnv) return model.apiKeyEnv;
  const canonical = PROVIDER_DEFAULTS[model.type].keyEnv;
  if (canonical && env[canonical]) return canonical;
  if (model.type === "gateway" && env.VERCEL_OIDC_TOKEN) return "VERCEL_OIDC_TOKEN";
  return undefined;
}

/** Where the SDK packages send requests when no baseURL is configured. */
const SDK_DEFAULT_ENDPOINTS: Partial<Record<ProviderType, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
  gateway: "https://ai-gateway.vercel.sh/v4/ai",
};

/** The host (and port) a model's requests go to, for messages: never a path, query or credentials. */
export function endpointHost(model: ResolvedModel): string | undefined {
  const url = model.baseURL ?? PROVIDER_DEFAULTS[model.type].baseURL ?? SDK_DEFAULT_ENDPOINTS[model.type];
  if (!url) return undefined;
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** Checks flag or config overrides against what the model declares, before any request. */
export function validateModelOptions(model: ResolvedModel, effort: ReasoningEffort | undefined, speed: Speed | undefined): void {
  if (effort !== undefined && effort !== "default" && !supportedEfforts(model).includes(effort)) {
    throw new UsageError(
      `model '${model.alias}' does not support reasoning effort '${effort}' (supported: ${supportedEfforts(model).join(", ")}; ` +
        `declare supportedReasoningEfforts on the model to allow more)`,
    );
  }
  if (speed !== undefined && !supportedSpeeds(model).includes(speed)) {
    throw new UsageError(
      `model '${model.alias}' does not support speed '${speed}' (supported: ${supportedSpeeds(model).join(", ")}; ` +
        `declare supportedSpeeds on the model to allow more)`,
    );
  }
}

/**
 * Builds the AI SDK model for a resolved alias. Provider packages are imported
 * lazily so a run pays only for the one it uses.
 */
export async function createLanguageModel(model: ResolvedModel, env: Env): Promise<LanguageModel> {
  const apiKey = resolveApiKey(model, env);
  const defaults = PROVIDER_DEFAULTS[model.type];
  const baseURL = model.baseURL ?? defaults.baseURL;
  const headers = { ...model.headers };
  switch (model.type) {
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ apiKey: apiKey ?? "", baseURL, headers })(model.model);
    }
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ apiKey: apiKey ?? "", baseURL, headers })(model.model);
    }
    case "gateway": {
      const { createGateway } = await import("@ai-sdk/gateway");
      return createGateway({ apiKey, baseURL, headers })(model.model);
    }
    case "kimi":
    case "nebius":
    case "openai-compatible": {
      if (!baseURL) throw new UsageError(`model '${model.alias}' needs a baseURL`);
      // Kimi requires a real client identity.
      if (model.type === "kimi") headers["User-Agent"] = `zero-cli/${VERSION}`;
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({ name: model.type, baseURL, apiKey, headers, includeUsage: true })(model.model);
    }
    case "openai-codex":
      throw new UsageError(
        `model '${model.alias}' uses the ChatGPT subscription transport (openai-codex), which this build does not support yet; ` +
          `use an API-key provider (openai, anthropic, kimi, nebius, openai-compatible, gateway)`,
      );
  }
}

/** Per-call options for reasoning effort and speed, in the shape each provider expects. */
export function callOptions(model: ResolvedModel, effort: ReasoningEffort | undefined, speed: Speed | undefined) {
  const reasoning =
    effort === undefined || effort === "default" ? undefined : effort === "ultra" ? ("max" as const) : effort;
  const providerOptions: Record<string, Record<string, string>> = {};
  if (speed === "fast") {
    if (model.type === "openai") providerOptions.openai = { serviceTier: "priority" };
    if (model.type === "anthropic") providerOptions.anthropic = { speed: "fast" };
  }
  return { reasoning, providerOptions };
}
