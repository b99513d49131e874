/**
 * Words the TUI shows, computed from state: the status line, a tool row's title, the approval
 * prompt. Pure (no renderer), so the text of every row is tested on its own. Everything that
 * came from a model or a repository passes `sanitizeForTerminal` before it is drawn.
 */
import type { EffectiveConfig } from "../../config/schema.ts";
import type { PendingApproval } from "../../session/service.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import type { Choices } from "./controller.ts";
import type { ContextGauge, ToolEntry } from "./timeline.ts";

/** The four choices a run is made with, each with the command (and picker) that changes it. */
export function controls(config: EffectiveConfig, choices: Choices): { command: "model" | "workflow" | "depth" | "reasoning" | "speed"; text: string }[] {
  const root = config.agents[config.defaultAgent];
  return [
    choices.workflow ? { command: "workflow", text: `workflow ${choices.workflow}` } : { command: "model", text: choices.model ?? root?.model ?? "auto" },
    { command: "depth", text: choices.depth ?? config.workDepth },
    { command: "reasoning", text: `reasoning ${choices.reasoning ?? "default"}` },
    { command: "speed", text: `speed ${choices.speed ?? "default"}` },
  ];
}

/** model · depth · reasoning · speed, then context use, cost and queue count when there are any. */
export function statusLine(config: EffectiveConfig, choices: Choices, extra: { context?: ContextGauge; costUsd: number; queued: number }): string {
  const parts = controls(config, choices).map((control) => control.text);
  if (extra.context) parts.push(`${formatTokens(extra.context.tokens)} ctx (${Math.round(extra.context.percent)}%)`);
  if (extra.costUsd > 0) parts.push(`$${extra.costUsd.toFixed(extra.costUsd < 1 ? 3 : 2)}`);
  if (extra.queued > 0) parts.push(`${extra.queued} queued`);
  return parts.join(" · ");
}

export function formatTokens(tokens: number): string {
  return tokens >= 1000 ? `${(tokens / 1000).toFixed(tokens >= 10_000 ? 0 : 1)}k` : String(tokens);
}

/** One line naming what a call does, by tool: a path, a command, a pattern, a query, a task. */
export function toolTitle(entry: Pick<ToolEntry, "tool" | "input" | "target">): string {
  const input = (typeof entry.input === "object" && entry.input !== null ? entry.input : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  let detail: string;
  switch (entry.tool) {
    case "read":
      detail = text(input.path) || text(input.url);
      break;
    case "write":
      detail = `${text(input.operation)} ${text(input.path)}${input.to ? ` → ${text(input.to)}` : ""}`.trim();
      break;
    case "run":
      detail = `$ ${text(input.command)}`;
      break;
    case "find":
      detail = text(input.pattern) || text(input.name);
      break;
    case "search":
      detail = text(input.query);
      break;
    case "delegate":
      detail = `${text(input.operation) || "spawn"} ${text(input.taskName) || text(input.agent)}`.trim();
      break;
    default:
      detail = entry.target ?? "";
  }
  return oneLine(`${entry.tool}${detail ? ` ${detail}` : ""}`);
}

/** The approval prompt: what would run, where, and the keys that answer. */
export function approvalLines(pending: PendingApproval, cwd: string): string[] {
  const input = (typeof pending.input === "object" && pending.input !== null ? pending.input : {}) as Record<string, unknown>;
  const lines = [`${pending.tool} wants to ${pending.operation} (risk: ${pending.risk}${pending.categories?.length ? `, ${pending.categories.join(", ")}` : ""})`];
  if (pending.tool === "run" && typeof input.command === "string") lines.push(`$ ${input.command}`);
  else if (pending.target) lines.push(pending.target);
  if (pending.tool === "write" && typeof input.operation === "string") {
    if (input.operation === "edit") lines.push(...diffPreview(String(input.oldText ?? ""), String(input.newText ?? "")));
    else if (input.operation === "write" && typeof input.content === "string") lines.push(...input.content.split("\n").slice(0, 12).map((line) => `+ ${line}`));
  }
  lines.push(`in ${cwd}`, pending.reason, "[Y] allow once   [A] allow for this session   [N/Esc] deny");
  return lines.map((line) => sanitizeForTerminal(line));
}

/** The replaced lines and their replacement, a few of each. */
function diffPreview(oldText: string, newText: string, max = 8): string[] {
  const take = (text: string, mark: string) => {
    const lines = text.split("\n");
    return [...lines.slice(0, max).map((line) => `${mark} ${line}`), ...(lines.length > max ? [`${mark} … ${lines.length - max} more lines`] : [])];
  };
  return [...take(oldText, "-"), ...take(newText, "+")];
}

function oneLine(text: string, max = 160): string {
  const line = sanitizeForTerminal(text).replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
