import { expect, test } from "bun:test";
import { MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, schemaProblem } from "./tool-adapter.ts";

test("schemas too deep, too large or with a nested $id are refused before any compiling", () => {
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < MAX_SCHEMA_DEPTH + 2; i++) deep = { type: "object", properties: { x: deep } };
  expect(schemaProblem(deep)).toContain("nested deeper than");
  const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES }, (_, i) => [`p${i}`, { type: "string" }])) };
  expect(schemaProblem(wide)).toContain("nodes");
  expect(schemaProblem({ type: "object", properties: { a: { $id: "https://x/a", type: "string" } } })).toBe("its input schema has a nested $id");
  // A property that happens to be called $id is a name, not the keyword.
  expect(schemaProblem({ $id: "https://x/root", type: "object", properties: { $id: { type: "string" } } })).toBeUndefined();
  expect(schemaProblem({ type: "object", properties: { a: { type: "array", items: { type: "number" } } } })).toBeUndefined();
});
