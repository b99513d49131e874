import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createRoots } from "../security/roots.ts";
import { makeToolContext } from "../../test/support/tool-context.ts";
import type { Tool, ToolContext, ToolResult } from "./define.ts";
import { createTodoTool, TODO_NOT_VERIFICATION, type TodoItem } from "./todo.ts";

// base/ws/         the workspace, with a few files whose bytes and times must not change
// base/artifacts/  the artifact store, created only on a first write, so it must never appear
let base = "";
let ctx: ToolContext;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-todo-")));
  const ws = join(base, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, "README.md"), "hello\n");
  writeFileSync(join(ws, "src", "a.ts"), "export const a = 1;\n");
  ctx = makeToolContext({ roots: createRoots({ workspace: ws }), artifactsDir: join(base, "artifacts") });
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Every path under `dir` with its bytes and modification time. */
function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (current: string) => {
    for (const name of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, name.name);
      const stat = statSync(path);
      entries[relative(dir, path)] = name.isDirectory() ? `dir ${stat.mtimeMs}` : `${stat.mtimeMs} ${readFileSync(path, "base64")}`;
      if (name.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return entries;
}

async function call(tool: Tool, raw: unknown): Promise<ToolResult> {
  const prepared = tool.prepare(raw);
  if (!prepared.ok) throw new Error(prepared.error);
  return tool.run(prepared.input, ctx);
}

function invalid(tool: Tool, raw: unknown): string {
  const prepared = tool.prepare(raw);
  if (prepared.ok) throw new Error("expected the input to be refused");
  return prepared.error;
}

const items = (...entries: Array<[string, TodoItem["status"]]>) => ({ items: entries.map(([content, status]) => ({ content, status })) });

describe("todo ledger", () => {
  test("renders the list with marks, counts and the not-verification reminder", async () => {
    const result = await call(createTodoTool(), items(["read the code", "completed"], ["write the fix", "in_progress"], ["run the tests", "pending"]));
    expect(result.status).toBe("completed");
    expect(result.output).toBe(
      ["[x] read the code", "[>] write the fix", "[ ] run the tests", "1/3 completed, 1 in progress, 1 pending", TODO_NOT_VERIFICATION].join("\n"),
    );
    expect(result.output).toContain("not verification");
  });

  test("each call replaces the whole list", async () => {
    const updates: Array<readonly TodoItem[]> = [];
    const tool = createTodoTool((list) => updates.push(list));
    await call(tool, items(["one", "in_progress"], ["two", "pending"]));
    const second = await call(tool, items(["three", "pending"]));
    expect(second.output).not.toContain("one");
    expect(second.output).toContain("[ ] three");
    expect(updates).toEqual([
      [{ content: "one", status: "in_progress" }, { content: "two", status: "pending" }],
      [{ content: "three", status: "pending" }],
    ]);
    const cleared = await call(tool, { items: [] });
    expect(cleared.output).toContain("0 items");
    expect(updates.at(-1)).toEqual([]);
  });

  test("onUpdate gets a copy: changing it does not change the ledger", async () => {
    const tool = createTodoTool((list) => {
      (list as TodoItem[])[0]!.content = "tampered";
    });
    const result = await call(tool, items(["original", "pending"]));
    expect(result.output).toContain("[ ] original");
    expect(result.output).not.toContain("tampered");
  });

  test("separate instances are separate ledgers (a child's is not its parent's)", async () => {
    const parentUpdates: Array<readonly TodoItem[]> = [];
    const childUpdates: Array<readonly TodoItem[]> = [];
    const parent = createTodoTool((list) => parentUpdates.push(list));
    const child = createTodoTool((list) => childUpdates.push(list));
    await call(parent, items(["parent step", "in_progress"]));
    await call(child, items(["child step", "in_progress"]));
    expect(parentUpdates).toEqual([[{ content: "parent step", status: "in_progress" }]]);
    expect(childUpdates).toEqual([[{ content: "child step", status: "in_progress" }]]);
  });

  test("content is trimmed", async () => {
    expect((await call(createTodoTool(), items(["  padded  ", "pending"]))).output).toContain("[ ] padded\n");
  });
});

describe("validation", () => {
  const tool = createTodoTool();

  test("two items in progress are refused", () => {
    expect(invalid(tool, items(["a", "in_progress"], ["b", "in_progress"]))).toContain("at most one item may be in_progress");
  });

  test("empty or blank content is refused", () => {
    expect(invalid(tool, items(["", "pending"]))).toContain("items.0.content");
    expect(invalid(tool, items(["   ", "pending"]))).toContain("items.0.content");
  });

  test("content over 500 characters is refused; 500 is fine", () => {
    expect(invalid(tool, items(["x".repeat(501), "pending"]))).toContain("items.0.content");
    expect(tool.prepare(items(["x".repeat(500), "pending"])).ok).toBe(true);
  });

  test("more than 50 items are refused; 50 are fine", () => {
    const many = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ content: `step ${i}`, status: "pending" })) });
    expect(invalid(tool, many(51))).toContain("items");
    expect(tool.prepare(many(50)).ok).toBe(true);
  });

  test("unknown statuses and stray fields are refused", () => {
    expect(invalid(tool, items(["a", "done" as TodoItem["status"]]))).toContain("items.0.status");
    expect(invalid(tool, { items: [], path: "x" })).toContain("invalid input for todo");
    expect(invalid(tool, {})).toContain("items");
  });

  test("a refused call leaves the previous list in place", async () => {
    const updates: Array<readonly TodoItem[]> = [];
    const ledger = createTodoTool((list) => updates.push(list));
    await call(ledger, items(["kept", "pending"]));
    expect(ledger.prepare(items(["a", "in_progress"], ["b", "in_progress"])).ok).toBe(false);
    expect(updates).toHaveLength(1);
  });
});

describe("it touches nothing", () => {
  test("classified as a read of the ledger itself, whatever the content says", () => {
    const prepared = createTodoTool().prepare(items(["rm -rf / and edit /etc/passwd", "pending"]));
    if (!prepared.ok) throw new Error(prepared.error);
    expect(prepared.classification).toEqual({ risk: "read", operation: "read", target: "todo", categories: [] });
  });

  test("the workspace and the artifact store are unchanged after calls", async () => {
    // The whole temp base: the workspace, and no artifact directory appears.
    const before = snapshot(base);
    expect(Object.keys(before).some((path) => path.startsWith("artifacts"))).toBe(false);
    const tool = createTodoTool();
    await call(tool, items(["write src/a.ts", "in_progress"], ["delete README.md", "pending"]));
    await call(tool, items(["write src/a.ts", "completed"], ["delete README.md", "completed"]));
    expect(snapshot(base)).toEqual(before);
  });
});
