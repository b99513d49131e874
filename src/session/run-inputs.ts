import { realpathSync } from "node:fs";
import type { LoopHooks } from "../agent/loop-input.ts";
import type { AgentProfile, EffectiveConfig, PermissionMode, ResolvedModel, WorkDepth, WorkflowStep } from "../config/schema.ts";
import type { ModelRunner } from "../llm/step.ts";
import { campaignCeilings } from "../config/work-depth.ts";
import type { Message } from "../protocol/messages.ts";
import { mostRestrictive } from "../policy/rules.ts";
import type { RunRequest } from "./run.ts";
import type { Gates } from "./gates.ts";
import type { Compactor } from "./compaction/compactor.ts";
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
  const values = [...names].map((name) => env[name]);
  // Credentials handed to MCP servers (configured, or supplied by an ACP client): secret-named
  // environment variables of stdio servers, authorization-like headers of HTTP ones (with and
  // without their scheme word, e.g. "Bearer").
  for (const server of Object.values(config.mcp)) {
    if (server.type === "stdio") {
      for (const [name, value] of Object.entries(server.env)) if (SECRET_ENV_NAME.test(name)) values.push(value);
    } else {
      for (const [name, value] of Object.entries(server.headers)) {
        if (!SECRET_HEADER_NAME.test(name)) continue;
        values.push(value, value.replace(/^\S+\s+/, ""));
      }
    }
  }
  // A value that is a plain word (MONKEY_KEY=keyboard) would be scrubbed everywhere: keep
  // only values that look like credentials (long enough, not just letters).
  return values.filter((value): value is string => typeof value === "string" && value.length >= 8 && !/^[A-Za-z]+$/.test(value));
}

const SECRET_HEADER_NAME = /(authorization|cookie|token|key|secret|password|credential)/i;

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


/**
 * The run's permission mode: the flag, else the profile's, else the configured default. An
 * interrupted run keeps the authority it was granted; a shared-readonly profile never writes.
 */
export function runPermission(request: RunRequest, agent: AgentProfile): PermissionMode {
  const { overrides = {}, continuation, config } = request;
  let mode = overrides.permissionMode ?? agent.permissionMode ?? config.permissionMode;
  if (continuation?.kind === "run") {
    const saved = continuation.meta;
    if (saved.agent !== agent.name) {
      throw new UsageError(`run ${continuation.run.id} was a run of agent ${saved.agent}; the configured root agent is now ${agent.name}`);
    }
    if (overrides.permissionMode !== undefined && overrides.permissionMode !== saved.permissionMode) {
      throw new UsageError(`--resume-run keeps the run's permission mode (${saved.permissionMode}); it cannot be changed to ${overrides.permissionMode}`);
    }
    mode = saved.permissionMode as PermissionMode;
  }
  return agent.workspaceMode === "shared-readonly" ? mostRestrictive(mode, "read-only") : mode;
}

/**
 * How long the run may take: a resumed run keeps its absolute deadline (a passed one stops it at
 * once); otherwise the smallest of runTimeoutMs, the profile's timeoutMs and the campaign's
 * duration (a root opens its campaign at its work depth; a child never outlives its campaign).
 */
export function runTimeout(request: RunRequest, agent: AgentProfile, workDepth: WorkDepth, now: Date): number {
  const { continuation, config, parent } = request;
  if (continuation?.kind === "run") return Math.max(1, Date.parse(continuation.meta.deadline) - now.getTime());
  const campaign = parent ? Math.max(1, parent.campaign.limits.deadline.getTime() - now.getTime()) : campaignCeilings(config, workDepth).durationMs;
  return Math.min(config.limits.runTimeoutMs, agent.timeoutMs ?? Number.POSITIVE_INFINITY, campaign);
}

/** The surface's hooks plus delegation's: background completions join the queued input before each step. */
export function withPendingInput(hooks: LoopHooks | undefined, completions: (() => Message[]) | undefined): LoopHooks | undefined {
  if (!completions) return hooks;
  return { ...hooks, pendingInput: () => [...(hooks?.pendingInput?.() ?? []), ...completions()] };
}

/** A configured workflow by name; an unknown one is the user's to fix (exit 2), naming the known ones. */
export function pickWorkflow(config: EffectiveConfig, name: string): { name: string; steps: WorkflowStep[] } {
  const workflow = Object.hasOwn(config.workflows, name) ? config.workflows[name] : undefined;
  if (!workflow) {
    const known = Object.keys(config.workflows).sort().join(", ") || "none configured";
    throw new UsageError(`--workflow: unknown workflow '${name}' (known: ${known})`);
  }
  return { name, steps: workflow.steps };
}

/**
 * The coordinator of a workflow as a run profile: no tools of its own and no model calls; it
 * starts the phases. Its authority is the configured default (or the flag's): phases narrow from it.
 */
export function workflowProfile(config: EffectiveConfig, name: string): AgentProfile {
  const root = config.agents[config.defaultAgent]!;
  return {
    name: `workflow:${name}`,
    description: `the ${name} workflow`,
    model: root.model,
    tools: [],
    skills: [],
    mcpServers: [],
    canDelegateTo: [],
    accepts: [],
    workspaceMode: "shared-write",
    // Phases and their retries (at most 3 each) are its children.
    maxChildren: (config.workflows[name]?.steps.length ?? 0) * 4,
  };
}

/** The model identity a workflow coordinator records: it makes no model calls. */
export function coordinatorRunner(name: string): ModelRunner {
  return {
    identity: { alias: "workflow", provider: "workflow", model: name },
    step: () => Promise.reject(new Error("a workflow coordinator makes no model calls")),
  };
}

/** The hooks plus the work-depth gates: they see the root's tool results and decide its finish. */
export function withGates(hooks: LoopHooks | undefined, gates: Gates | undefined): LoopHooks | undefined {
  if (!gates) return hooks;
  return {
    ...hooks,
    // The starting state must be fingerprinted before any tool can change it (a race otherwise).
    async beforeToolCall(call) {
      await gates.ready();
      return hooks?.beforeToolCall?.(call);
    },
    async afterToolCall(call, result) {
      gates.afterToolCall(call, result);
      await hooks?.afterToolCall?.(call, result);
    },
    async beforeFinish(signal) {
      const own = (await hooks?.beforeFinish?.(signal)) ?? { finish: true };
      return "finish" in own ? gates.beforeFinish(signal) : own;
    },
  };
}

/** The hooks plus compaction: the model sees the compacted view, the estimate learns, an overflow compacts once. */
export function withCompaction(hooks: LoopHooks | undefined, compactor: Compactor | undefined): LoopHooks | undefined {
  if (!compactor) return hooks;
  return {
    ...hooks,
    async transformContext(history) {
      const shown = hooks?.transformContext ? await hooks.transformContext(history) : history;
      return compactor.view(shown);
    },
    afterStep(usage) {
      compactor.learn(usage);
      hooks?.afterStep?.(usage);
    },
    onContextOverflow: (history) => compactor.recover(history),
  };
}
