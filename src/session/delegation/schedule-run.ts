/**
 * `delegate schedule`: a model-authored dependency graph, validated whole before anything runs
 * (ids, dependencies, cycles, access, profiles, scope, budgets), then run layer by layer. Tasks
 * of a layer start together (the campaign's gates bound how many really run at once); a task
 * whose dependency did not complete gets a structured `skipped` result instead of running.
 */
import type { ScheduleTaskInput } from "../../tool/delegate.ts";
import type { DependencyResult } from "./contract.ts";
import { skippedResult, type AgentResult } from "./result.ts";
import { blockedBy, scheduleLayers, scheduleProblems, type ScheduledTask, type TaskOutcome } from "./schedule.ts";
import type { ChildRecord } from "./types.ts";

export type ScheduleOps = {
  spawn(task: ScheduleTaskInput, dependencies: DependencyResult[]): Promise<ChildRecord>;
  wait(promise: Promise<unknown>): Promise<void>;
  signal: AbortSignal;
  deliver(record: ChildRecord): void;
  refuse(message: string): Error;
  /** Routes a task (in graph order) and checks its access and scope: the profile it will run, or the problem. */
  preflight(task: ScheduleTaskInput): { agent: string } | { problem: string };
  /** Why the graph does not fit the remaining run and child budgets, if it does not. */
  budget(tasks: number): string | undefined;
};

export type ScheduleReply = { results: Array<{ taskId: string; childRunId: string | null } & AgentResult> };

export async function runSchedule(tasks: readonly ScheduleTaskInput[], ops: ScheduleOps): Promise<ScheduleReply> {
  const graph: ScheduledTask[] = tasks.map((task) => ({ id: task.id, dependencies: task.dependencies ?? [], access: task.access }));
  const problems = scheduleProblems(graph);
  // Each task runs the profile checked here: routing is decided once, before anything starts.
  const inputOf = new Map<string, ScheduleTaskInput>();
  for (const task of tasks) {
    const checked = ops.preflight(task);
    if ("problem" in checked) problems.push(checked.problem);
    else inputOf.set(task.id, { ...task, agent: checked.agent });
  }
  const budget = ops.budget(tasks.length);
  if (budget !== undefined) problems.push(budget);
  if (problems.length > 0) throw ops.refuse(`schedule refused, nothing was started: ${problems.join("; ")}`);

  const outcomes = new Map<string, TaskOutcome>();
  const results = new Map<string, { childRunId: string | null; result: AgentResult }>();
  for (const layer of scheduleLayers(graph)) {
    const started: Array<{ id: string; record: ChildRecord }> = [];
    for (const task of layer) {
      const blocker = ops.signal.aborted ? "cancelled" : blockedBy(task, outcomes);
      if (blocker !== undefined) {
        const reason = blocker === "cancelled" ? "the schedule was cancelled" : `dependency ${blocker} did not complete (${outcomes.get(blocker) ?? "not run"})`;
        outcomes.set(task.id, "skipped");
        results.set(task.id, { childRunId: null, result: skippedResult(reason) });
        continue;
      }
      const dependencies: DependencyResult[] = task.dependencies.map((id) => {
        const done = results.get(id)!;
        return { taskId: id, status: done.result.status, summary: done.result.summary, artifacts: done.result.artifacts, changedFiles: done.result.changedFiles };
      });
      try {
        started.push({ id: task.id, record: await ops.spawn(inputOf.get(task.id)!, dependencies) });
      } catch (error) {
        // Refused at start (a budget spent meanwhile): this task fails, its dependants are skipped.
        outcomes.set(task.id, "failed");
        results.set(task.id, { childRunId: null, result: { ...skippedResult(error instanceof Error ? error.message : String(error)), status: "failed" } });
      }
    }
    await ops.wait(Promise.all(started.map(({ record }) => record.done)));
    for (const { id, record } of started) {
      if (ops.signal.aborted && (record.status === "queued" || record.status === "running")) record.cancel();
      const result = await record.done;
      ops.deliver(record);
      outcomes.set(id, result.status);
      results.set(id, { childRunId: record.runId, result });
    }
  }
  return {
    results: tasks.map((task) => {
      const done = results.get(task.id)!;
      return { taskId: task.id, childRunId: done.childRunId, ...done.result };
    }),
  };
}
