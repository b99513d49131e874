/**
 * A workflow run (`zero run --workflow <name>`): the application, not a model, decides which agent
 * runs each phase. The coordinator is a root run without model calls; every phase is a child run
 * of it (one campaign: one deadline, shared run, token and cost budgets), started in dependency
 * order. Independent shared-readonly phases overlap; any other phase runs alone. Each phase gets
 * bounded handoffs (the result envelopes) of its direct dependencies; a phase that does not
 * complete is retried up to its step's `maxRetries`, then its dependants are skipped with the reason.
 */
import type { AgentProfile, Deliverable, EffectiveConfig, WorkflowStep } from "../config/schema.ts";
import { emptyUsage, type EventBody, type RunStatus, type StopReason } from "../protocol/events.ts";
import type { LoopResult } from "../agent/loop.ts";
import type { Message } from "../protocol/messages.ts";
import type { DependencyResult } from "./delegation/contract.ts";
import type { AgentResult } from "./delegation/result.ts";
import type { RunDelegation } from "./delegation/types.ts";

export type WorkflowRequest = {
  name: string;
  steps: readonly WorkflowStep[];
  task: string;
  config: EffectiveConfig;
  delegation: RunDelegation;
  /** `--model`, passed to every phase. */
  modelOverride?: string;
  history: Message[];
  signal: AbortSignal;
  emit(body: EventBody): void;
};

export type WorkflowOutcome = {
  status: RunStatus;
  text: string;
  history: Message[];
  phases: Map<string, AgentResult>;
  /** A phase stopped by the campaign's token or cost budget: the workflow stops by that limit. */
  budgetStop?: "max_tokens" | "max_cost";
};

/** A phase's deliverable: what its profile says it is for (its first `accepts`), else an analysis. */
function deliverableOf(agent: AgentProfile): Deliverable {
  return agent.accepts[0] ?? "analysis";
}

/** Dependency layers in declaration order (the config check already refused cycles). */
function layersOf(steps: readonly WorkflowStep[]): WorkflowStep[][] {
  const done = new Set<string>();
  const layers: WorkflowStep[][] = [];
  let left = [...steps];
  while (left.length > 0) {
    const ready = left.filter((step) => step.dependsOn.every((id) => done.has(id)));
    if (ready.length === 0) throw new Error("workflow steps form a cycle"); // refused by the config check
    layers.push(ready);
    for (const step of ready) done.add(step.id);
    left = left.filter((step) => !ready.includes(step));
  }
  return layers;
}

export async function runWorkflow(request: WorkflowRequest): Promise<WorkflowOutcome> {
  const { steps, config, signal } = request;
  const results = new Map<string, AgentResult>();
  let budgetStop: "max_tokens" | "max_cost" | undefined;
  let step = 0;
  // The coordinator narrates the phases as its own text: every surface shows which phase runs.
  const say = (line: string) => request.emit({ type: "message.delta", step: Math.max(1, step), text: `${line}\n` });

  async function runPhase(phase: WorkflowStep): Promise<void> {
    const blocker = phase.dependsOn.find((id) => results.get(id)?.status !== "completed");
    if (blocker !== undefined || signal.aborted) {
      const reason = signal.aborted ? "the workflow was cancelled" : `dependency ${blocker} did not complete (${results.get(blocker!)?.status ?? "not run"})`;
      results.set(phase.id, { status: signal.aborted ? "cancelled" : "skipped", summary: `skipped: ${reason}`, findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [] });
      say(`- ${phase.id}: skipped (${reason})`);
      return;
    }
    const agent = config.agents[phase.agent]!;
    const dependencies: DependencyResult[] = phase.dependsOn.map((id) => {
      const done = results.get(id)!;
      return { taskId: id, status: done.status, summary: done.summary, artifacts: done.artifacts, changedFiles: done.changedFiles };
    });
    for (let attempt = 0; attempt <= phase.maxRetries; attempt++) {
      step += 1;
      say(`▸ ${phase.id} (${agent.name})${attempt > 0 ? `, retry ${attempt} of ${phase.maxRetries}` : ""}`);
      let result: AgentResult;
      try {
        let stopReason: string | null;
        ({ result, stopReason } = await request.delegation.phase(
          {
            id: attempt === 0 ? phase.id : `${phase.id}-retry-${attempt}`,
            agent,
            goal: request.task,
            deliverable: deliverableOf(agent),
            acceptanceCriteria: [`Complete the ${phase.id} phase of the ${request.name} workflow for this goal`],
            dependencies,
            ...(request.modelOverride !== undefined ? { modelOverride: request.modelOverride } : {}),
          },
          signal,
        ));
        if (stopReason === "max_tokens" || stopReason === "max_cost") budgetStop ??= stopReason;
      } catch (error) {
        // Refused before it started (the campaign's run budget): a failed phase, its dependants skipped.
        result = { status: "failed", summary: error instanceof Error ? error.message : String(error), findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [] };
        results.set(phase.id, result);
        say(`- ${phase.id}: failed (${result.summary})`);
        return;
      }
      results.set(phase.id, result);
      say(`${result.status === "completed" ? "✓" : "✗"} ${phase.id}: ${result.status} — ${firstLine(result.summary)}`);
      if (result.status === "completed" || result.status === "cancelled" || signal.aborted || budgetStop) return;
    }
  }

  for (const layer of layersOf(steps)) {
    // Read-only phases of a layer overlap; a phase that can write runs alone, after them.
    const readOnly = layer.filter((phase) => config.agents[phase.agent]?.workspaceMode === "shared-readonly");
    await Promise.all(readOnly.map(runPhase));
    for (const phase of layer.filter((p) => !readOnly.includes(p))) await runPhase(phase);
  }

  const statuses = steps.map((phase) => results.get(phase.id)?.status ?? "skipped");
  const status: RunStatus = signal.aborted || statuses.includes("cancelled") ? "cancelled" : statuses.every((s) => s === "completed") ? "completed" : "failed";
  const last = results.get(steps[steps.length - 1]!.id);
  const text = [`workflow ${request.name}: ${steps.map((p) => `${p.id} ${results.get(p.id)?.status ?? "skipped"}`).join(", ")}`, last?.summary ?? ""].filter((t) => t !== "").join("\n\n");
  return { status, text, history: [...request.history, { role: "assistant", parts: [{ type: "text", text }] }], phases: results, ...(budgetStop ? { budgetStop } : {}) };
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** A workflow's outcome as its coordinator run ends: cancelled, past its deadline, stopped by the campaign's budget (exit 4), or as its phases ended. */
export function workflowLoopResult(outcome: WorkflowOutcome, abortReason: () => StopReason, emit: (body: EventBody) => void): LoopResult {
  const base = { text: outcome.text, usage: emptyUsage(), steps: 0, toolCalls: 0, history: outcome.history };
  if (outcome.status === "cancelled") {
    const reason: StopReason = abortReason() === "deadline" ? "deadline" : "cancelled";
    return { ...base, status: reason === "deadline" ? "limit" : "cancelled", reason };
  }
  const budget = outcome.status === "failed" ? outcome.budgetStop : undefined;
  if (budget) emit({ type: "guard.triggered", guard: budget, message: `a phase was stopped by the campaign's ${budget === "max_cost" ? "cost (limits.maxCostUsd)" : "token (limits.maxCampaignTokens)"} budget` });
  return { ...base, status: budget ? "limit" : outcome.status, reason: budget ?? null };
}
