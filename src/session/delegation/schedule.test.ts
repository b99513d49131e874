import { describe, expect, test } from "bun:test";
import { blockedBy, scheduleLayers, scheduleProblems, type ScheduledTask, type TaskOutcome } from "./schedule.ts";

function task(id: string, dependencies: string[] = [], access: "read" | "write" = "read", extra: Record<string, unknown> = {}): ScheduledTask {
  return { id, dependencies, access, ...extra };
}

const ids = (layers: ScheduledTask[][]) => layers.map((layer) => layer.map((t) => t.id));

describe("scheduleProblems", () => {
  test("a valid graph has none", () => {
    expect(scheduleProblems([task("explore-auth"), task("review-auth", ["explore-auth"])])).toEqual([]);
    expect(scheduleProblems([])).toEqual([]);
  });

  test("empty and blank ids", () => {
    expect(scheduleProblems([task(""), task("  ")])).toEqual(["task 1: id must not be empty", "task 2: id must not be empty"]);
  });

  test("duplicate ids", () => {
    expect(scheduleProblems([task("a"), task("b"), task("a")])).toEqual(['task 3: duplicate id "a"']);
  });

  test("unknown and self dependencies", () => {
    expect(scheduleProblems([task("a", ["nope"]), task("b", ["b", "a"])])).toEqual([
      'task 1 ("a"): unknown dependency "nope"',
      'task 2 ("b"): depends on itself',
    ]);
  });

  test("a dependency listed twice is reported once", () => {
    expect(scheduleProblems([task("a", ["x", "x"])])).toEqual(['task 1 ("a"): unknown dependency "x"']);
  });

  test("access other than read or write", () => {
    const bad = { id: "a", dependencies: [], access: "admin" } as unknown as ScheduledTask;
    expect(scheduleProblems([bad])).toEqual(['task 1 ("a"): access must be "read" or "write", not "admin"']);
  });

  test("a two-task cycle is named by its path", () => {
    expect(scheduleProblems([task("a", ["b"]), task("b", ["a"])])).toEqual(["dependency cycle: a → b → a"]);
  });

  test("a longer cycle behind a valid prefix", () => {
    const tasks = [task("root"), task("x", ["root", "z"]), task("y", ["x"]), task("z", ["y"]), task("leaf", ["z"])];
    expect(scheduleProblems(tasks)).toEqual(["dependency cycle: x → z → y → x"]);
  });

  test("two separate cycles are both reported", () => {
    const problems = scheduleProblems([task("a", ["b"]), task("b", ["a"]), task("c", ["d"]), task("d", ["c"])]);
    expect(problems).toEqual(["dependency cycle: a → b → a", "dependency cycle: c → d → c"]);
  });

  test("a diamond is not a cycle", () => {
    expect(scheduleProblems([task("a"), task("b", ["a"]), task("c", ["a"]), task("d", ["b", "c"])])).toEqual([]);
  });
});

describe("scheduleLayers", () => {
  test("independent tasks form one layer in input order", () => {
    expect(ids(scheduleLayers([task("c"), task("a"), task("b")]))).toEqual([["c", "a", "b"]]);
  });

  test("a diamond becomes three layers", () => {
    const layers = scheduleLayers([task("d", ["b", "c"]), task("c", ["a"]), task("b", ["a"]), task("a")]);
    expect(ids(layers)).toEqual([["a"], ["c", "b"], ["d"]]);
  });

  test("a chain is one task per layer, and a task never shares a layer with its dependency", () => {
    const layers = scheduleLayers([task("a"), task("b", ["a"]), task("c", ["b"]), task("free")]);
    expect(ids(layers)).toEqual([["a", "free"], ["b"], ["c"]]);
  });

  test("the contract fields travel with each task", () => {
    const layers = scheduleLayers([task("a", [], "write", { goal: "do it", deliverable: "patch" })]);
    expect(layers[0]![0]).toEqual({ id: "a", dependencies: [], access: "write", goal: "do it", deliverable: "patch" });
  });

  test("a cyclic graph throws rather than dropping tasks", () => {
    expect(() => scheduleLayers([task("a", ["b"]), task("b", ["a"])])).toThrow("cannot be layered");
  });
});

describe("blockedBy", () => {
  const outcomes = (entries: Array<[string, TaskOutcome]>) => new Map(entries);

  test("all dependencies completed → may run", () => {
    expect(blockedBy(task("c", ["a", "b"]), outcomes([["a", "completed"], ["b", "completed"]]))).toBeUndefined();
    expect(blockedBy(task("root"), outcomes([]))).toBeUndefined();
  });

  test("the first dependency that did not complete, in the task's order", () => {
    const done = outcomes([["a", "completed"], ["b", "failed"], ["c", "cancelled"]]);
    expect(blockedBy(task("x", ["a", "b", "c"]), done)).toBe("b");
    expect(blockedBy(task("x", ["c", "b"]), done)).toBe("c");
  });

  test("every non-completed outcome blocks, and so does a missing one", () => {
    for (const outcome of ["failed", "blocked", "cancelled", "skipped"] as const) {
      expect(blockedBy(task("x", ["a"]), outcomes([["a", outcome]]))).toBe("a");
    }
    expect(blockedBy(task("x", ["a"]), outcomes([]))).toBe("a");
  });

  test("blocking carries through a chain when each skip is recorded", () => {
    const tasks = [task("a"), task("b", ["a"]), task("c", ["b"]), task("side")];
    const results = new Map<string, TaskOutcome>();
    for (const layer of scheduleLayers(tasks)) {
      for (const t of layer) {
        const blocker = blockedBy(t, results);
        results.set(t.id, blocker !== undefined ? "skipped" : t.id === "a" ? "failed" : "completed");
      }
    }
    expect(Object.fromEntries(results)).toEqual({ a: "failed", side: "completed", b: "skipped", c: "skipped" });
  });
});
