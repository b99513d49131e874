import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { makeToolContext } from "../../test/support/tool-context.ts";
import { createRedactor } from "../security/redact.ts";
import { createRoots } from "../security/roots.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { type ClassifyResult, MAX_OUTPUT_CHARS, type Tool, type ToolContext, type ToolOutput, defineJsonSchemaTool, defineTool } from "./define.ts";
import { pathTarget, urlTarget } from "./targets.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "zero-define-")));
const roots = createRoots({ workspace: base });
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A GitHub-token-shaped string built at run time, so nothing secret-looking is committed. */
function githubToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(36));
  return `ghp_${Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("")}`;
}

/** What the test tool does, by its `mode`. */
type Input = { mode: "echo" | "big" | "secret" | "throw" | "throw-sync" | "wait" | "progress"; text?: string; count?: number; options?: { level: "low" | "high" } };

function behave(input: Input, ctx: ToolContext): Promise<ToolOutput> {
  switch (input.mode) {
    case "echo":
      return Promise.resolve({ output: input.text ?? "" });
    case "big":
      return Promise.resolve({ output: `${"x".repeat(MAX_OUTPUT_CHARS)}${input.text ?? ""}${"y".repeat(MAX_OUTPUT_CHARS)}` });
    case "secret":
      return Promise.resolve({ output: `token ${input.text}`, diff: `+key ${input.text}\n` });
    case "throw":
      return Promise.reject(new Error(`boom ${input.text ?? ""}`));
    case "throw-sync":
      throw new Error(`sync boom ${input.text ?? ""}`);
    case "wait":
      // Cooperates: stops when its signal fires and says why.
      return new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => resolve({ output: `stopped: ${(ctx.signal.reason as Error).name}` }), { once: true });
      });
    case "progress":
      ctx.progress(`working with ${input.text}`);
      return Promise.resolve({ output: "done" });
  }
}

const classify = (input: Input): ClassifyResult => ({ risk: "read", operation: "read", target: `mode:${input.mode}`, ...(input.mode === "wait" ? { categories: ["network" as const] } : {}) });

const zodTool = defineTool({
  name: "probe",
  description: "a test tool",
  input: z
    .object({
      mode: z.enum(["echo", "big", "secret", "throw", "throw-sync", "wait", "progress"]),
      text: z.string().optional(),
      count: z.number().int().optional(),
      options: z.object({ level: z.enum(["low", "high"]) }).strict().optional(),
    })
    .strict(),
  classify,
  execute: behave,
});

const jsonTool = defineJsonSchemaTool<Input>({
  name: "probe",
  description: "a test tool",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      mode: { enum: ["echo", "big", "secret", "throw", "throw-sync", "wait", "progress"] },
      text: { type: "string" },
      count: { type: "integer" },
      options: { type: "object", properties: { level: { enum: ["low", "high"] } }, required: ["level"], additionalProperties: false },
    },
    required: ["mode"],
    additionalProperties: false,
  },
  classify,
  execute: behave,
});

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({ roots, artifactsDir: join(base, "artifacts"), ...overrides });
}

async function call(tool: Tool, raw: unknown, overrides: Partial<ToolContext> = {}) {
  const prepared = tool.prepare(raw);
  if (!prepared.ok) throw new Error(prepared.error);
  return tool.run(prepared.input, context(overrides));
}

for (const [kind, tool] of [
  ["Zod", zodTool],
  ["JSON Schema", jsonTool],
] as const) {
  describe(`the tool contract, ${kind} tool`, () => {
    test("valid input is accepted and classified; categories include the operation's own", () => {
      const prepared = tool.prepare({ mode: "echo", text: "hi" });
      expect(prepared).toEqual({ ok: true, input: { mode: "echo", text: "hi" }, classification: { risk: "read", operation: "read", target: "mode:echo", categories: [] } });
      const wait = tool.prepare({ mode: "wait" });
      expect(wait.ok && wait.classification.categories).toEqual(["network"]);
    });

    test("the schema for the model is an object without $schema", () => {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.inputSchema.$schema).toBeUndefined();
      expect(tool.inputSchema.required).toEqual(["mode"]);
    });

    const invalid: [string, unknown, string[]][] = [
      ["a missing required field", { text: "x" }, ["mode"]],
      ["a value outside the enum", { mode: "fly" }, ["mode"]],
      ["a wrong type", { mode: "echo", count: "three" }, ["count"]],
      ["a non-integer", { mode: "echo", count: 1.5 }, ["count"]],
      ["an unknown field", { mode: "echo", extra: 1 }, ["extra"]],
      ["a nested field", { mode: "echo", options: { level: "max" } }, ["options.level"]],
      ["a nested required field", { mode: "echo", options: {} }, ["options.level"]],
      ["not an object", "echo", ["input"]],
      ["null", null, ["input"]],
    ];
    for (const [what, raw, fields] of invalid) {
      test(`invalid input (${what}): a readable error naming the field`, () => {
        const prepared = tool.prepare(raw);
        expect(prepared.ok).toBe(false);
        if (prepared.ok) return;
        expect(prepared.error).toStartWith("invalid input for probe: ");
        // Zod puts an unknown key in its message (`input: Unrecognized key: "extra"`); Ajv's issue is the field's own.
        for (const field of fields) expect(prepared.error).toContain(field);
      });
    }

    test("a throwing classify is an error, not a throw", () => {
      const throwing = kind === "Zod"
        ? defineTool({ name: "t", description: "", input: z.object({}), classify: () => { throw new Error("cannot classify"); }, execute: async () => ({ output: "" }) })
        : defineJsonSchemaTool({ name: "t", description: "", inputSchema: { type: "object" }, classify: () => { throw new Error("cannot classify"); }, execute: async () => ({ output: "" }) });
      expect(throwing.prepare({})).toEqual({ ok: false, error: "cannot classify" });
    });

    test("timeout: the call's own signal fires after timeoutMs; the result is failed with what the tool reported", async () => {
      const result = await call(tool, { mode: "wait" }, { timeoutMs: 50 });
      expect(result.status).toBe("failed");
      expect(result.output).toBe("stopped: TimeoutError");
    });

    test("cancellation: a cancelled run cancels the call", async () => {
      const controller = new AbortController();
      const pending = call(tool, { mode: "wait" }, { signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      const result = await pending;
      expect(result.status).toBe("cancelled");
      const before = new AbortController();
      before.abort();
      expect((await call(tool, { mode: "echo" }, { signal: before.signal })).status).toBe("cancelled");
    });

    test("bounding: head and tail kept, the whole output in the artifact store", async () => {
      const dir = join(base, `artifacts-${kind.replace(" ", "-")}`);
      const remembered: string[] = [];
      const result = await call(tool, { mode: "big", text: "MIDDLE" }, { artifacts: createArtifactStore(dir), rememberArtifact: (sha) => remembered.push(sha) });
      expect(result.status).toBe("completed");
      expect(result.truncated).toBe(true);
      expect(result.output.length).toBeLessThan(MAX_OUTPUT_CHARS + 500);
      expect(result.output.startsWith("xxx")).toBe(true);
      expect(result.output.endsWith("yyy")).toBe(true);
      const reference = /artifact:\/\/([0-9a-f]{64})/.exec(result.output);
      expect(reference).not.toBeNull();
      expect(remembered).toEqual([reference![1]!]);
      const stored = readdirSync(dir, { recursive: true }).map(String).find((name) => name.includes(reference![1]!));
      expect(stored).toBeDefined();
      expect(readFileSync(join(dir, stored!), "utf8")).toContain("MIDDLE");
    });

    test("redaction: output, diff and progress lose their secrets; the result says how many", async () => {
      const token = githubToken();
      const result = await call(tool, { mode: "secret", text: token });
      expect(result.output).toBe("token [REDACTED:github-token]");
      expect(result.diff).toBe("+key [REDACTED:github-token]\n");
      expect(result.redactions).toEqual({ count: 2, kinds: { "github-token": 2 } });
      const progress: string[] = [];
      await call(tool, { mode: "progress", text: token }, { progress: (message) => progress.push(message) });
      expect(progress).toEqual(["working with [REDACTED:github-token]"]);
      const known = `k-${"q".repeat(10)}-${Date.now()}`;
      const scrubbed = await call(tool, { mode: "echo", text: `value ${known}` }, { redactor: createRedactor({ knownSecrets: [known] }) });
      expect(scrubbed.output).not.toContain(known);
    });

    test("a throw (rejected or synchronous) is a failed result, redacted", async () => {
      const token = githubToken();
      const rejected = await call(tool, { mode: "throw", text: token });
      expect(rejected).toEqual({ status: "failed", output: "boom [REDACTED:github-token]", truncated: false });
      const sync = await call(tool, { mode: "throw-sync", text: "x" });
      expect(sync).toEqual({ status: "failed", output: "sync boom x", truncated: false });
    });
  });
}

describe("defineJsonSchemaTool: schemas", () => {
  const make = (inputSchema: Record<string, unknown>) =>
    defineJsonSchemaTool({ name: "mcp_tool", description: "", inputSchema, classify: () => ({ risk: "execute", operation: "execute", target: "mcp:server:tool" }), execute: async (input) => ({ output: JSON.stringify(input) }) });

  test("draft-07 with definitions and $ref", () => {
    const tool = make({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { level: { type: "string", enum: ["a", "b"] } },
      properties: { level: { $ref: "#/definitions/level" } },
      required: ["level"],
    });
    expect(tool.prepare({ level: "a" }).ok).toBe(true);
    const bad = tool.prepare({ level: "c" });
    expect(!bad.ok && bad.error).toBe('invalid input for mcp_tool: level: must be one of "a", "b"');
  });

  test("2020-12 with $defs, prefixItems and dependentRequired", () => {
    const tool = make({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
      properties: { at: { $ref: "#/$defs/point" }, user: { type: "string" }, password: { type: "string" } },
      dependentRequired: { user: ["password"] },
    });
    expect(tool.prepare({ at: [1, 2] }).ok).toBe(true);
    expect(tool.prepare({ at: [1, 2, 3] }).ok).toBe(false);
    const missing = tool.prepare({ user: "u" });
    expect(!missing.ok && missing.error).toContain("input: must have property password when property user is present");
  });

  test("oneOf: exactly one branch; the combinator's error, not each branch's", () => {
    const tool = make({
      type: "object",
      properties: { value: { oneOf: [{ type: "string" }, { type: "integer" }, { type: "number", minimum: 10 }] } },
    });
    expect(tool.prepare({ value: "s" }).ok).toBe(true);
    expect(tool.prepare({ value: 1.5 }).ok).toBe(false);
    const several = tool.prepare({ value: 12 });
    expect(!several.ok && several.error).toBe("invalid input for mcp_tool: value: must match exactly one of the allowed shapes (it matches several)");
    const none = tool.prepare({ value: true });
    expect(!none.ok && none.error).toBe("invalid input for mcp_tool: value: must match exactly one of the allowed shapes");
  });

  test("without $schema: 2020-12 first, draft-07 for older tuple schemas", () => {
    const tuple = make({ type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false } } });
    expect(tuple.prepare({ pair: ["a", 1] }).ok).toBe(true);
    expect(tuple.prepare({ pair: ["a", "b"] }).ok).toBe(false);
  });

  test("unknown keywords and formats are tolerated; every issue is reported", () => {
    const tool = make({ type: "object", properties: { when: { type: "string", format: "made-up" }, n: { type: "number", "x-ui": "slider" } }, required: ["a", "b"] });
    const prepared = tool.prepare({ when: "whenever" });
    expect(!prepared.ok && prepared.error).toBe("invalid input for mcp_tool: a: required; b: required");
  });

  test("the validated input is a copy: a tool cannot change what the model sent", async () => {
    const tool = defineJsonSchemaTool<{ list: number[] }>({
      name: "mutator",
      description: "",
      inputSchema: { type: "object", properties: { list: { type: "array" } } },
      classify: () => ({ risk: "read", operation: "read", target: "" }),
      execute: async (input) => {
        input.list.push(4);
        return { output: String(input.list.length) };
      },
    });
    const raw = { list: [1, 2, 3] };
    const prepared = tool.prepare(raw);
    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    expect((await tool.run(prepared.input, context())).output).toBe("4");
    expect(raw.list).toEqual([1, 2, 3]);
  });

  test("the schema for the model keeps $defs and drops $schema; two tools may share an $id", () => {
    const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", $id: "urn:same", type: "object", $defs: { a: { type: "string" } }, properties: { a: { $ref: "#/$defs/a" } } };
    const first = make(schema);
    const second = make({ ...schema, properties: { b: { type: "number" } } });
    expect(first.inputSchema).toEqual({ $id: "urn:same", type: "object", $defs: { a: { type: "string" } }, properties: { a: { $ref: "#/$defs/a" } } });
    expect(schema.$schema).toBeDefined(); // the caller's object is not changed
    expect(first.prepare({ a: 1 }).ok).toBe(false);
    expect(second.prepare({ b: 1 }).ok).toBe(true);
  });

  test("schemas that cannot work are refused at definition, with the tool's name", () => {
    expect(() => make({ type: "array" })).toThrow(/mcp_tool.*object/);
    expect(() => make({ type: "object", properties: { a: { type: "strin" } } })).toThrow(/mcp_tool is invalid/);
    expect(() => make({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" })).toThrow(/draft-04.*not supported/);
    expect(() => make({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } })).toThrow(/mcp_tool is invalid/);
  });

  test("deep input is an error, not a crash", () => {
    const tool = make({ type: "object", $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } }, properties: { next: { $ref: "#/$defs/node" } } });
    let deep: Record<string, unknown> = {};
    for (let k = 0; k < 100_000; k++) deep = { next: deep };
    const prepared = tool.prepare(deep);
    expect(typeof prepared.ok).toBe("boolean");
  });
});

describe("targets", () => {
  test("paths: canonical, workspace-relative, absolute outside, escaped", () => {
    expect(pathTarget("src/../a.ts", roots)).toBe("a.ts");
    expect(pathTarget("./a.ts", roots)).toBe("a.ts");
    expect(pathTarget(join(base, "x", "y.ts"), roots)).toBe("x/y.ts");
    expect(pathTarget(".", roots)).toBe(".");
    expect(pathTarget("/etc/hosts", roots)).toBe("/etc/hosts");
    expect(pathTarget("a\nb", roots)).toBe("a\\nb");
    expect(pathTarget("a\\nb", roots)).toBe("a\\\\nb");
    expect(pathTarget("src//a.ts", undefined)).toBe("src/a.ts");
  });

  test("URLs: origin and path, without credentials, query or fragment", () => {
    expect(urlTarget("https://user:secret@Example.COM:443/a/b?token=x#frag")).toBe("https://example.com/a/b");
    expect(urlTarget("http://example.com")).toBe("http://example.com/");
    expect(urlTarget("not a url?q=secret")).toBe("not a url");
  });
});
