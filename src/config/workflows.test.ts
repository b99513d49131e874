import { describe, expect, test } from "bun:test";
import { normalizeWorkflowSteps, workflowGraphProblems } from "./workflows.ts";

describe("workflow steps", () => {
  test("a name list becomes a chain with unique ids", () => {
    expect(normalizeWorkflowSteps(["plan", "build", "review", "build"])).toEqual([
      { id: "plan", agent: "plan", dependsOn: [], maxRetries: 0 },
      { id: "build", agent: "build", dependsOn: ["plan"], maxRetries: 0 },
      { id: "review", agent: "review", dependsOn: ["build"], maxRetries: 0 },
      { id: "build-2", agent: "build", dependsOn: ["review"], maxRetries: 0 },
    ]);
  });

  test("graph steps keep their ids and default the optional fields", () => {
    expect(normalizeWorkflowSteps([{ id: "a", agent: "explore" }, { id: "b", agent: "build", dependsOn: ["a", "a"], maxRetries: 2 }])).toEqual([
      { id: "a", agent: "explore", dependsOn: [], maxRetries: 0 },
      { id: "b", agent: "build", dependsOn: ["a"], maxRetries: 2 },
    ]);
  });

  test("duplicates, unknown dependencies, cycles and mixed forms are problems", () => {
    expect(workflowGraphProblems([{ id: "a", agent: "x" }, { id: "a", agent: "y" }])).toEqual([
      { path: [1, "id"], message: 'duplicate step id "a"' },
    ]);
    expect(workflowGraphProblems([{ id: "a", agent: "x", dependsOn: ["ghost"] }])).toEqual([
      { path: [0, "dependsOn", 0], message: 'unknown step "ghost"' },
    ]);
    expect(
      workflowGraphProblems([
        { id: "a", agent: "x", dependsOn: ["c"] },
        { id: "b", agent: "x", dependsOn: ["a"] },
        { id: "c", agent: "x", dependsOn: ["b"] },
      ]),
    ).toEqual([{ path: [0, "dependsOn"], message: "dependency cycle: a → c → b → a" }]);
    expect(workflowGraphProblems([{ id: "a", agent: "x", dependsOn: ["a"] }])[0]?.message).toBe("dependency cycle: a → a");
    expect(workflowGraphProblems(["plan", { id: "b", agent: "x" }])[0]?.path).toEqual([1]);
    expect(workflowGraphProblems(["plan", "plan"])).toEqual([]);
  });
});
