// Workflow step lists: the legacy sequential string form and the graph form, checked and normalized
// into one shape. Kept free of schema imports so the schema can use the checks in a refinement.

type GraphStep = { id: string; agent: string; dependsOn?: string[] | undefined; maxRetries?: number | undefined };
type RawStep = string | GraphStep;

export type NormalizedStep = { id: string; agent: string; dependsOn: string[]; maxRetries: number };
export type StepProblem = { path: Array<string | number>; message: string };

/** Structural problems of one step list; paths are relative to `steps`. */
export function workflowGraphProblems(steps: readonly RawStep[]): StepProblem[] {
  const firstIsName = typeof steps[0] === "string";
  const mixed = steps.findIndex((step) => (typeof step === "string") !== firstIsName);
  if (mixed !== -1) {
    return [{ path: [mixed], message: "steps mix agent names and step objects; use one form for every step" }];
  }
  if (firstIsName) return [];
  const graph = steps as readonly GraphStep[];
  const problems: StepProblem[] = [];
  const indexById = new Map<string, number>();
  graph.forEach((step, index) => {
    if (indexById.has(step.id)) problems.push({ path: [index, "id"], message: `duplicate step id "${step.id}"` });
    else indexById.set(step.id, index);
  });
  graph.forEach((step, index) => {
    (step.dependsOn ?? []).forEach((dependency, position) => {
      if (!indexById.has(dependency)) {
        problems.push({ path: [index, "dependsOn", position], message: `unknown step "${dependency}"` });
      }
    });
  });
  if (problems.length > 0) return problems;
  const cycle = findCycle(graph);
  if (cycle !== undefined) {
    const at = indexById.get(cycle[0] ?? "") ?? 0;
    problems.push({ path: [at, "dependsOn"], message: `dependency cycle: ${cycle.join(" → ")}` });
  }
  return problems;
}

/** Depth-first search; returns the ids along the first cycle found, first id repeated at the end. */
function findCycle(steps: readonly GraphStep[]): string[] | undefined {
  const dependsOn = new Map(steps.map((step) => [step.id, step.dependsOn ?? []]));
  const state = new Map<string, "visiting" | "done">();
  const trail: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === "done") return undefined;
    if (state.get(id) === "visiting") return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, "visiting");
    trail.push(id);
    for (const next of dependsOn.get(id) ?? []) {
      const cycle = visit(next);
      if (cycle !== undefined) return cycle;
    }
    trail.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

/**
 * One shape for both forms. A name list becomes a chain: the id is the agent name, or
 * `<agent>-<n>` for its n-th appearance, and each step depends on the one before it.
 * Assumes `workflowGraphProblems` found nothing.
 */
export function normalizeWorkflowSteps(steps: readonly RawStep[]): NormalizedStep[] {
  if (steps.length === 0 || typeof steps[0] !== "string") {
    return (steps as readonly GraphStep[]).map((step) => ({
      id: step.id,
      agent: step.agent,
      dependsOn: [...new Set(step.dependsOn ?? [])],
      maxRetries: step.maxRetries ?? 0,
    }));
  }
  const used = new Set<string>();
  const result: NormalizedStep[] = [];
  for (const agent of steps as readonly string[]) {
    let id = agent;
    for (let n = 2; used.has(id); n++) id = `${agent}-${n}`;
    used.add(id);
    const previous = result.at(-1);
    result.push({ id, agent, dependsOn: previous === undefined ? [] : [previous.id], maxRetries: 0 });
  }
  return result;
}
