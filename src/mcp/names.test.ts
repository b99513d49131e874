import { describe, expect, test } from "bun:test";
import { assignToolNames, escapeNamePart, MAX_TOOL_NAME, mcpToolName } from "./names.ts";

// What providers accept as a tool name.
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

describe("escapeNamePart", () => {
  test("keeps [A-Za-z0-9_] and turns everything else into _u<hex code point>_", () => {
    expect(escapeNamePart("create-issue")).toBe("create_u2d_issue");
    expect(escapeNamePart("read_file")).toBe("read_file");
    expect(escapeNamePart("a.b c/d")).toBe("a_u2e_b_u20_c_u2f_d");
    expect(escapeNamePart("café")).toBe("caf_ue9_");
    // A character outside the BMP is one code point, not two surrogates.
    expect(escapeNamePart("x😀")).toBe("x_u1f600_");
  });
});

test("mcpToolName is mcp__<server>__<tool>, both parts escaped (the spec's example)", () => {
  expect(mcpToolName("issues", "create-issue")).toBe("mcp__issues__create_u2d_issue");
  expect(mcpToolName("local-docs", "search")).toBe("mcp__local_u2d_docs__search");
});

describe("assignToolNames", () => {
  const entries = (list: Array<[string, string]>) => list.map(([server, tool]) => ({ server, tool }));

  test("unique, short names stay plain and map back to the server and tool", () => {
    const names = assignToolNames(entries([["issues", "create-issue"], ["everything", "get-sum"]]));
    expect([...names.keys()]).toEqual(["mcp__issues__create_u2d_issue", "mcp__everything__get_u2d_sum"]);
    expect(names.get("mcp__issues__create_u2d_issue")).toEqual({ server: "issues", tool: "create-issue" });
  });

  test("two tools whose escaped names collide get distinct hashed names, each mapping to its own tool", () => {
    const list = entries([["s", "a-b"], ["s", "a_u2d_b"], ["s", "other"]]);
    const names = assignToolNames(list);
    expect(names.size).toBe(3);
    expect(names.get("mcp__s__other")).toEqual({ server: "s", tool: "other" });
    const hashed = [...names.keys()].filter((name) => name !== "mcp__s__other");
    expect(hashed).toHaveLength(2);
    for (const name of hashed) expect(name).toMatch(/^mcp__s__a_u2d_b_h[0-9a-f]{8}$/);
    expect(new Set([...names.values()].map((entry) => entry.tool))).toEqual(new Set(["a-b", "a_u2d_b", "other"]));
  });

  test("the __ separator cannot be used to impersonate another server's tool", () => {
    // Server "a__b" tool "c" and server "a" tool "b__c" are both mcp__a__b__c when plain.
    const names = assignToolNames(entries([["a__b", "c"], ["a", "b__c"]]));
    expect(names.size).toBe(2);
    expect(names.has("mcp__a__b__c")).toBe(false);
    expect(new Set([...names.values()].map((entry) => entry.server))).toEqual(new Set(["a__b", "a"]));
  });

  test("the same name on two servers is two tools", () => {
    const names = assignToolNames(entries([["one", "search"], ["two", "search"]]));
    expect([...names.keys()]).toEqual(["mcp__one__search", "mcp__two__search"]);
  });

  test(`names are at most ${MAX_TOOL_NAME} characters; long ones that share a prefix stay distinct`, () => {
    const exact = "t".repeat(MAX_TOOL_NAME - "mcp__s__".length);
    const long1 = `${"x".repeat(80)}-one`;
    const long2 = `${"x".repeat(80)}-two`;
    const names = assignToolNames(entries([["s", exact], ["s", long1], ["s", long2], ["s", "é".repeat(40)]]));
    expect(names.size).toBe(4);
    expect(names.get(`mcp__s__${exact}`)).toEqual({ server: "s", tool: exact }); // exactly 64: plain
    for (const name of names.keys()) {
      expect(name).toMatch(PROVIDER_NAME);
      expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
    }
    const hashed = [...names.entries()].filter(([, entry]) => entry.tool !== exact);
    for (const [name] of hashed) expect(name).toMatch(/_h[0-9a-f]{8}$/);
  });

  test("the assignment is stable: the same tools get the same names in every process", () => {
    const list = entries([["s", "a-b"], ["s", "a_u2d_b"], ["s", "y".repeat(100)]]);
    expect([...assignToolNames(list).keys()]).toEqual([...assignToolNames(list).keys()]);
  });

  test("a tool a server lists twice is offered once", () => {
    const names = assignToolNames(entries([["s", "dup"], ["s", "dup"]]));
    expect([...names.values()]).toEqual([{ server: "s", tool: "dup" }]);
  });
});
