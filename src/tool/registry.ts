import type { Tool } from "./define.ts";
import { delegateTool } from "./delegate.ts";
import { findTool } from "./find.ts";
import { readTool } from "./read.ts";
import { runTool } from "./run.ts";
import { searchTool } from "./search.ts";
import { writeTool } from "./write.ts";

/** The six capability tools the model may be given. */
export const CORE_TOOL_NAMES = ["read", "write", "run", "find", "search", "delegate"] as const;

/** The tools this build provides, by name. */
export function createToolRegistry(): Map<string, Tool> {
  return new Map([readTool, writeTool, runTool, findTool, searchTool, delegateTool].map((tool) => [tool.name, tool]));
}
