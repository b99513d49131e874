import { realpathSync } from "node:fs";
import type { AgentProfile, EffectiveConfig, ResolvedModel } from "../config/schema.ts";
import { SECRET_ENV_NAME } from "../security/redact-rules.ts";
import type { Env } from "../util/env.ts";
import { UsageError } from "../util/errors.ts";

const CANONICAL_KEY_VARIABLES = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KIMI_API_KEY", "NEBIUS_API_KEY", "AI_GATEWAY_API_KEY", "BRAVE_SEARCH_API_KEY"];

/**
 * The secret values zero itself can see: every key variable the config names,
 * the providers' canonical variables, and any variable named like a secret.
 * Their exact text is scrubbed from tool output wherever it appears.
 */
export function knownSecretValues(config: EffectiveConfig, env: Env): string[] {
  const names = new Set(CANONICAL_KEY_VARIABLES);
  for (const model of Object.values(config.models)) if (model.apiKeyEnv) names.add(model.apiKeyEnv);
  if (config.webSearch.apiKeyEnv) names.add(config.webSearch.apiKeyEnv);
  for (const name of Object.keys(env)) if (SECRET_ENV_NAME.test(name)) names.add(name);
  // A value that is a plain word (MONKEY_KEY=keyboard) would be scrubbed everywhere: keep
  // only values that look like credentials (long enough, not just letters).
  return [...names]
    .map((name) => env[name])
    .filter((value): value is string => typeof value === "string" && value.length >= 8 && !/^[A-Za-z]+$/.test(value));
}

/** Files the configuration points at that steer an agent (prompt files), canonical where they exist. */
export function configuredFiles(config: EffectiveConfig): string[] {
  const files = new Set<string>();
  for (const agent of Object.values(config.agents)) {
    if (agent.promptFile === undefined) continue;
    files.add(agent.promptFile);
    try {
      files.add(realpathSync(agent.promptFile));
    } catch {
      // Not there (yet): the configured path itself counts.
    }
  }
  return [...files];
}

/** The profile a run uses: the named one (a child's), else the configured default agent. */
export function pickAgent(config: EffectiveConfig, name?: string): AgentProfile {
  const agent = Object.hasOwn(config.agents, name ?? config.defaultAgent) ? config.agents[name ?? config.defaultAgent] : undefined;
  if (!agent) throw new UsageError(name ? `agent '${name}' is not a configured agent` : `defaultAgent '${config.defaultAgent}' is not a configured agent`);
  return agent;
}

export function pickModel(config: EffectiveConfig, alias: string, fromFlag: boolean): ResolvedModel {
  const model = config.models[alias];
  if (model) return model;
  const known = Object.keys(config.models).sort().join(", ");
  throw new UsageError(`${fromFlag ? "--model" : "agent model"} '${alias}' is not a configured model alias (known: ${known})`);
}

