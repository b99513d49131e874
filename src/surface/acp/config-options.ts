import type * as acp from "@agentclientprotocol/sdk";
import { REASONING_EFFORTS, WORK_DEPTHS } from "../../config/schema.ts";
import type { EffectiveConfig, ReasoningEffort, WorkDepth } from "../../config/schema.ts";
import type { RunOverrides } from "../../session/run.ts";
import { supportedEfforts } from "../../llm/providers.ts";
import { invalidParams, quoted } from "./errors.ts";

/**
 * What a client chose for an ACP session's next turns (`session/set_config_option`). Unset means
 * the configuration's own choice (or, for a restored session, what its checkpoint saved).
 */
export type SessionChoices = { model?: string; reasoning?: ReasoningEffort; depth?: WorkDepth; workflow?: string };

/** What the session stands on when nothing is chosen: the root agent's model, or a restored session's. */
export type SessionDefaults = { model: string; depth: WorkDepth };

/** The one root mode: specialists run as child runs, workflows are a config option. */
export const ROOT_MODE_ID = "zero";
export const MODES: acp.SessionModeState = {
  currentModeId: ROOT_MODE_ID,
  availableModes: [{ id: ROOT_MODE_ID, name: "Zero", description: "zero's root agent; specialists run as its child runs" }],
};

const DEPTH_NOTES: Record<WorkDepth, string> = {
  flash: "answer directly, no planning or delegation",
  medium: "plan and delegate when it helps",
  pro: "deeper work, more steps and children",
  ultra: "the largest budgets",
};

/** The reasoning efforts a model takes — the runtime's own rule — with "default" (the model's own setting) first. */
function effortsOf(config: EffectiveConfig, model: string): ReasoningEffort[] {
  const resolved = config.models[model];
  return ["default", ...(resolved ? supportedEfforts(resolved) : []).filter((effort) => effort !== "default")];
}

/** The session's config options as ACP shows them: model, reasoning effort, work depth and (when any exist) workflow. */
export function configOptions(config: EffectiveConfig, choices: SessionChoices, defaults: SessionDefaults): acp.SessionConfigOption[] {
  const model = choices.model ?? defaults.model;
  const options: acp.SessionConfigOption[] = [
    {
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: model,
      options: Object.entries(config.models).map(([alias, resolved]) => ({ value: alias, name: alias, description: `${resolved.type}/${resolved.model}` })),
    },
    {
      id: "reasoning",
      name: "Reasoning effort",
      category: "thought_level",
      type: "select",
      currentValue: choices.reasoning ?? "default",
      options: effortsOf(config, model).map((effort) => (effort === "default" ? { value: effort, name: effort, description: "the model's own setting" } : { value: effort, name: effort })),
    },
    {
      id: "depth",
      name: "Work depth",
      category: "_depth",
      type: "select",
      currentValue: choices.depth ?? defaults.depth,
      options: WORK_DEPTHS.map((depth) => ({ value: depth, name: depth, description: DEPTH_NOTES[depth] })),
    },
  ];
  const workflows = Object.entries(config.workflows);
  if (workflows.length > 0) {
    options.push({
      id: "workflow",
      name: "Workflow",
      category: "_workflow",
      type: "select",
      currentValue: choices.workflow ?? "off",
      options: [{ value: "off", name: "off", description: "a plain turn of the root agent" }, ...workflows.map(([name, workflow]) => ({ value: name, name, ...(workflow.description ? { description: workflow.description } : {}) }))],
    });
  }
  return options;
}

/** Applies one `session/set_config_option` (or `/depth` …) to the choices; throws invalid params naming the allowed values. */
export function applyChoice(config: EffectiveConfig, choices: SessionChoices, defaults: SessionDefaults, configId: unknown, value: unknown): SessionChoices {
  const allowed = (values: readonly string[]) => {
    if (typeof value !== "string" || !values.includes(value)) {
      throw invalidParams(`${quoted(configId)}: ${quoted(value)} is not one of ${values.join(", ")}`);
    }
    return value;
  };
  switch (configId) {
    case "model": {
      const model = allowed(Object.keys(config.models));
      // An effort the new model does not take falls back to its own setting.
      const { reasoning, ...rest } = choices;
      return reasoning !== undefined && effortsOf(config, model).includes(reasoning) ? { ...choices, model } : { ...rest, model };
    }
    case "reasoning": {
      const effort = allowed(effortsOf(config, choices.model ?? defaults.model)) as ReasoningEffort;
      const { reasoning: _, ...rest } = choices;
      return effort === "default" ? rest : { ...choices, reasoning: effort };
    }
    case "depth":
      return { ...choices, depth: allowed(WORK_DEPTHS) as WorkDepth };
    case "workflow": {
      const name = allowed(["off", ...Object.keys(config.workflows)]);
      const { workflow: _, ...rest } = choices;
      return name === "off" ? rest : { ...choices, workflow: name };
    }
    default:
      throw invalidParams(`unknown config option ${quoted(configId)} (model, reasoning, depth${Object.keys(config.workflows).length > 0 ? ", workflow" : ""})`);
  }
}

/** The run overrides the choices make (only what the client chose: the rest stays the configuration's). */
export function overridesOf(choices: SessionChoices): RunOverrides {
  return {
    ...(choices.model !== undefined ? { model: choices.model } : {}),
    ...(choices.reasoning !== undefined ? { reasoningEffort: choices.reasoning } : {}),
    ...(choices.depth !== undefined ? { depth: choices.depth } : {}),
  };
}

/** Slash commands that make sense without a terminal: advertised with `available_commands_update`. */
export function availableCommands(config: EffectiveConfig): acp.AvailableCommand[] {
  const commands: acp.AvailableCommand[] = [
    { name: "compact", description: "Summarize the conversation so far before the next turn, to free context" },
    { name: "depth", description: "Set the work depth of the next turns", input: { hint: WORK_DEPTHS.join(" | ") } },
    { name: "model", description: "Set the model of the next turns", input: { hint: "a model alias" } },
    { name: "reasoning", description: "Set the reasoning effort of the next turns", input: { hint: REASONING_EFFORTS.join(" | ") } },
  ];
  if (Object.keys(config.workflows).length > 0) {
    commands.push({ name: "workflow", description: "Run the next turns as a workflow, or off", input: { hint: ["off", ...Object.keys(config.workflows)].join(" | ") } });
  }
  return commands;
}

/** `/name args` at the start of a prompt's text, when `name` is one of ours; undefined otherwise (ordinary text). */
export function slashCommand(text: string, config: EffectiveConfig): { name: string; argument: string } | undefined {
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]!;
  if (!availableCommands(config).some((command) => command.name === name)) return undefined;
  return { name, argument: (match[2] ?? "").trim() };
}
