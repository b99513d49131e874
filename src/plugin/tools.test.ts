import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { createRedactor } from "../security/redact.ts";
import { createRoots } from "../security/roots.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { MAX_OUTPUT_CHARS, type ToolContext } from "../tool/define.ts";
import type { PluginToolContext, ToolDefinition } from "./define.ts";
import { pluginTool } from "./tools.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function context(): ToolContext {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "zero-plugin-tool-")));
  dirs.push(ws);
  return {
    callId: "c1",
    roots: createRoots({ workspace: ws }),
    signal: new AbortController().signal,
    timeoutMs: 5_000,
    progress: () => {},
    env: {},
    artifacts: createArtifactStore(join(ws, ".artifacts")),
    knownArtifacts: new Set(),
    maxAttachmentBytes: 1024,
    redactor: createRedactor(),
  };
}

const define = (overrides: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name: "lookup",
  description: "looks a word up",
  inputSchema: z.object({ word: z.string().min(1) }),
  risk: "network",
  kind: "fetch",
  execute: ({ word }) => `found ${word}`,
  ...overrides,
});

test("the declared risk decides the operation; the target is plugin:<name>", () => {
  const operations = (["read", "write", "execute", "network"] as const).map((risk) => {
    const prepared = pluginTool(define({ risk })).prepare({ word: "x" });
    if (!prepared.ok) throw new Error(prepared.error);
    return [risk, prepared.classification.operation, prepared.classification.target, [...prepared.classification.categories]];
  });
  expect(operations).toEqual([
    ["read", "read", "plugin:lookup", []],
    ["write", "write-edit", "plugin:lookup", []],
    ["execute", "execute", "plugin:lookup", ["shell"]],
    ["network", "network", "plugin:lookup", ["network"]],
  ]);
});

test("input is validated by the plugin's schema, with a readable error", () => {
  expect(pluginTool(define()).prepare({ word: "" })).toEqual({ ok: false, error: "invalid input for lookup: word: Too small: expected string to have >=1 characters" });
});

test("the executor gets a frozen context of five capabilities, and its answer is redacted like any tool's", async () => {
  let given: PluginToolContext | undefined;
  const secret = `sk-ant-api03-${"A".repeat(40)}`;
  const tool = pluginTool(define({ execute: (_input, ctx) => ((given = ctx), { output: `key ${secret}` }) }));
  const ctx = context();
  const result = await tool.run({ word: "x" }, ctx);
  expect(Object.keys(given!).sort()).toEqual(["callId", "progress", "signal", "timeoutMs", "workspace"]);
  expect(Object.isFrozen(given)).toBe(true);
  expect(given!.workspace).toBe(ctx.roots.workspace);
  expect(result.status).toBe("completed");
  expect(result.output).not.toContain(secret);
  expect(result.redactions?.count).toBe(1);
});

test("a throw or an answer of the wrong type becomes a failed result", async () => {
  const thrown = await pluginTool(define({ execute: () => { throw new Error("service down"); } })).run({ word: "x" }, context());
  expect(thrown).toMatchObject({ status: "failed", output: "service down" });
  const wrong = await pluginTool(define({ execute: () => 42 as never })).run({ word: "x" }, context());
  expect(wrong).toMatchObject({ status: "failed", output: "plugin tool lookup answered number, not a string or { output: string }" });
});

test("an oversized answer is bounded like a core tool's: head and tail kept, the whole text in the artifact store", async () => {
  const text = `first line\n${"word ".repeat(MAX_OUTPUT_CHARS / 2)}\nlast line`;
  const ctx = context();
  const result = await pluginTool(define({ execute: () => text })).run({ word: "x" }, ctx);
  expect(result.status).toBe("completed");
  expect(result.truncated).toBe(true);
  expect(result.output.length).toBeLessThan(MAX_OUTPUT_CHARS + 200);
  expect(result.output).toStartWith("first line\n");
  expect(result.output).toEndWith("\nlast line");
  const uri = /artifact:\/\/([0-9a-f]{64})/.exec(result.output);
  expect(uri).not.toBeNull();
  expect(new TextDecoder().decode(ctx.artifacts.get(uri![1]!))).toBe(text);
});
