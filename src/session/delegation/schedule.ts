// The graph checks of a `delegate` schedule, run before any child starts: a rejected schedule
// costs no runs. Profile, depth and budget checks need the campaign and live elsewhere; this
// module is only the shape of the graph, its layers, and which tasks a failure blocks.

/** One task of a schedule; the contract fields beyond the graph ride along untouched. */
export type ScheduledTask = { id: string; dependencies: string[]; access: "read" | "write" } & Record<string, unknown>;

export type TaskOutcome = "completed" | "failed" | "blocked" | "cancelled" | "skipped";

/**
 * Everything wrong with the graph, one readable line each; empty when it can run. Covers blank
 * and duplicate ids, access other than read/write, unknown and self dependencies, and cycles
 * (each named by its path, `a → b → a`, where every task depends on the next).
 */
export function scheduleProblems(tasks: readonly ScheduledTask[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  tasks.forEach((task, index) => {
    const where = `task ${index + 1}`;
    if (typeof task.id !== "string" || task.id.trim() === "") problems.push(`${where}: id must not be empty`);
    else if (ids.has(task.id)) problems.push(`${where}: duplicate id "${task.id}"`);
    else ids.add(task.id);
    if (task.access !== "read" && task.access !== "write") {
      problems.push(`${where}${named(task)}: access must be "read" or "write", not ${JSON.stringify(task.access)}`);
    }
  });
  for (const [index, task] of tasks.entries()) {
    for (const dependency of new Set(task.dependencies)) {
      if (dependency === task.id) problems.push(`task ${index + 1}${named(task)}: depends on itself`);
      else if (!ids.has(dependency)) problems.push(`task ${index + 1}${named(task)}: unknown dependency "${dependency}"`);
    }
  }
  for (const cycle of findCycles(tasks, ids)) problems.push(`dependency cycle: ${cycle.join(" → ")}`);
  return problems;
}

function named(task: ScheduledTask): string {
  return typeof task.id === "string" && task.id.trim() !== "" ? ` ("${task.id}")` : "";
}

/**
 * Cycles among known ids, by depth-first search in input order; each back edge yields one cycle
 * path that starts and ends at the same task. Self and unknown dependencies are reported on their
 * own, so they are left out here; a duplicate id is judged by its first task.
 */
function findCycles(tasks: readonly ScheduledTask[], ids: ReadonlySet<string>): string[][] {
  const edges = new Map<string, string[]>();
  for (const task of tasks) {
    if (!ids.has(task.id) || edges.has(task.id)) continue;
    edges.set(task.id, [...new Set(task.dependencies)].filter((dependency) => dependency !== task.id && ids.has(dependency)));
  }
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const cycles: string[][] = [];
  const visit = (id: string) => {
    state.set(id, "open");
    path.push(id);
    for (const next of edges.get(id) ?? []) {
      const seen = state.get(next);
      if (seen === "open") cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    path.pop();
    state.set(id, "done");
  };
  for (const id of edges.keys()) if (!state.has(id)) visit(id);
  return cycles;
}

/**
 * Dependency layers (Kahn's algorithm): each layer holds the tasks whose dependencies all sit in
 * earlier layers, in input order, so the tasks of one layer may run together. Call it only on a
 * schedule without problems; a graph that cannot be layered throws rather than losing tasks.
 */
export function scheduleLayers(tasks: readonly ScheduledTask[]): ScheduledTask[][] {
  const layers: ScheduledTask[][] = [];
  const placed = new Set<string>();
  let remaining = [...tasks];
  while (remaining.length > 0) {
    const ready = remaining.filter((task) => task.dependencies.every((dependency) => placed.has(dependency)));
    if (ready.length === 0) {
      throw new Error(`schedule cannot be layered: ${remaining.map((task) => task.id).join(", ")} wait on each other or on unknown tasks`);
    }
    // Placed after the filter, so a task never counts as ready through a sibling of its own layer.
    for (const task of ready) placed.add(task.id);
    layers.push(ready);
    remaining = remaining.filter((task) => !placed.has(task.id));
  }
  return layers;
}

/**
 * The first dependency (in the task's own order) that did not complete, or undefined when the
 * task may run. Blocking is transitive through the outcomes themselves: a task skipped for its
 * own failed dependency records "skipped", which blocks its dependents in turn. A dependency
 * with no outcome yet has not completed either.
 */
export function blockedBy(task: ScheduledTask, outcomes: ReadonlyMap<string, TaskOutcome>): string | undefined {
  return task.dependencies.find((dependency) => outcomes.get(dependency) !== "completed");
}
