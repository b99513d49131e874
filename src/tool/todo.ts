import { z } from "zod";
import { defineTool, type Tool } from "./define.ts";

// The intrinsic progress ledger of one run. It is not one of the six capability tools: it holds
// a list in memory and touches nothing else (no files, processes or network), so it can neither
// change the workspace nor stand in for evidence. Each run gets its own instance, which is what
// keeps a child's ledger apart from its parent's.

export const TODO_MAX_ITEMS = 50;
export const TODO_MAX_CONTENT_CHARS = 500;

export type TodoStatus = "pending" | "in_progress" | "completed";
export type TodoItem = { content: string; status: TodoStatus };

const item = z
  .object({
    content: z.string().trim().min(1, "must not be empty").max(TODO_MAX_CONTENT_CHARS).describe("What the step is, in one line"),
    status: z.enum(["pending", "in_progress", "completed"]),
  })
  .strict();

const input = z
  .object({
    items: z
      .array(item)
      .max(TODO_MAX_ITEMS)
      .refine((items) => items.filter((entry) => entry.status === "in_progress").length <= 1, {
        error: "at most one item may be in_progress at a time",
      })
      .describe("The whole list; it replaces the previous one"),
  })
  .strict();

/** The reminder every result carries, so the ledger is never mistaken for proof. */
export const TODO_NOT_VERIFICATION =
  "This ledger only tracks progress; it is not verification, and marking an item completed proves nothing. Check real evidence (tests, command output, diffs).";

const MARK: Record<TodoStatus, string> = { completed: "[x]", in_progress: "[>]", pending: "[ ]" };

/** The ledger as the model reads it: one line per item, then the counts and the reminder. */
export function renderTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return `Todo list cleared (0 items).\n${TODO_NOT_VERIFICATION}`;
  const count = (status: TodoStatus) => items.filter((entry) => entry.status === status).length;
  const lines = items.map((entry) => `${MARK[entry.status]} ${entry.content}`);
  const counts = `${count("completed")}/${items.length} completed, ${count("in_progress")} in progress, ${count("pending")} pending`;
  return [...lines, counts, TODO_NOT_VERIFICATION].join("\n");
}

/**
 * A fresh ledger for one run. Each call replaces the whole list; `onUpdate` receives a copy of
 * the new list (for surfaces to show), never the ledger itself.
 */
export function createTodoTool(onUpdate?: (items: readonly TodoItem[]) => void): Tool {
  let ledger: TodoItem[] = [];
  return defineTool({
    name: "todo",
    description:
      "Keep a short progress list for a multi-step task: send the whole list each time (it replaces the previous one), with at most one item in_progress. It only records progress: it cannot read or change files, and marking an item completed is not verification.",
    input,
    // Nothing outside this closure is read or written, so there is no path or command to name.
    classify: () => ({ risk: "read", operation: "read", target: "todo" }),
    async execute({ items }) {
      ledger = items.map((entry) => ({ content: entry.content, status: entry.status }));
      onUpdate?.(ledger.map((entry) => ({ ...entry })));
      return { output: renderTodos(ledger) };
    },
  });
}
