import { afterEach, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { userMessage, type Message, type ToolResultOutput } from "../../protocol/messages.ts";
import { createArtifactStore, parseArtifactUri, type ArtifactStore } from "../../store/artifacts.ts";
import { tempDirs } from "../../store/store-test-support.ts";
import { boundOutput } from "../../tool/define.ts";
import { pruneToolOutputs, PREVIEW_CHARS } from "./prune.ts";

// Large old tool payloads become notes with artifact:// references before the checkpoint model runs (CTX-05).

const dirs = tempDirs();
afterEach(() => dirs.cleanup());
const artifactsIn = (): ArtifactStore => createArtifactStore(dirs.make());

const result = (callId: string, output: ToolResultOutput, tool = "run"): Message => ({ role: "tool", parts: [{ type: "tool-result", callId, tool, output }] });
const call = (callId: string, tool: string, input: unknown): Message => ({ role: "assistant", parts: [{ type: "tool-call", callId, tool, input, state: "completed" }] });
const valueOf = (message: Message | undefined): string => {
  if (message?.role !== "tool") throw new Error("not a tool message");
  const output = message.parts[0]!.output;
  if (output.type !== "text" && output.type !== "error-text") throw new Error(`output is ${output.type}`);
  return output.value;
};
const referenceIn = (text: string): string => {
  const uri = /artifact:\/\/[0-9a-f]{64}/.exec(text)?.[0];
  if (uri === undefined) throw new Error(`no reference in: ${text}`);
  return parseArtifactUri(uri)!;
};

test("a long text output becomes a note: its opening, its size and a reference to the full text in the store", () => {
  const artifacts = artifactsIn();
  const long = Array.from({ length: 500 }, (_, i) => `line ${i}: ${"x".repeat(20)}`).join("\n");
  const head = [userMessage("run the tests"), call("c1", "run", { command: "bun test" }), result("c1", { type: "text", value: long })];
  const before = structuredClone(head);
  const remembered: string[] = [];
  const pruned = pruneToolOutputs(head, artifacts, { rememberArtifact: (sha) => remembered.push(sha) });

  expect(head).toEqual(before); // never mutated
  const note = valueOf(pruned[2]);
  expect(note.length).toBeLessThan(PREVIEW_CHARS + 200);
  expect(note).toContain(`${long.length.toLocaleString("en-US")} characters`);
  expect(note).toContain(long.slice(0, PREVIEW_CHARS));
  expect(note).not.toContain(long.slice(0, PREVIEW_CHARS + 20));
  const sha = referenceIn(note);
  expect(new TextDecoder().decode(artifacts.get(sha))).toBe(long);
  expect(remembered).toEqual([sha]);
  // Everything else is untouched (and shared, not copied).
  expect(pruned[0]).toBe(head[0]!);
  expect(pruned[1]).toBe(head[1]!);
});

test("short outputs and denials stay as they are; keepChars sets the bound", () => {
  const artifacts = artifactsIn();
  const head = [
    result("a", { type: "text", value: "y".repeat(2_000) }),
    result("b", { type: "execution-denied", reason: "the user said no" }),
    result("c", { type: "content", value: [{ type: "text", text: "short" }] }),
  ];
  const pruned = pruneToolOutputs(head, artifacts);
  expect(pruned).toEqual(head);
  pruned.forEach((message, i) => expect(message).toBe(head[i]!));
  expect(valueOf(pruneToolOutputs(head, artifacts, { keepChars: 500 })[0])).toContain("2,000 characters");
});

test("an error stays an error-text output", () => {
  const pruned = pruneToolOutputs([result("e", { type: "error-text", value: "E".repeat(9_000) })], artifactsIn());
  const message = pruned[0]!;
  expect(message.role === "tool" && message.parts[0]!.output.type).toBe("error-text");
  expect(valueOf(message)).toContain("9,000 characters");
});

test("an output that already spilled to an artifact keeps that reference in its note; pruning twice changes nothing", () => {
  const artifacts = artifactsIn();
  const full = "z".repeat(100_000);
  const bounded = boundOutput(full, artifacts, 10_000).output;
  const original = referenceIn(bounded);
  const once = pruneToolOutputs([result("r", { type: "text", value: bounded })], artifacts);
  const note = valueOf(once[0]);
  expect(note).toContain(`it referred to artifact://${original}`);
  expect(referenceIn(note)).not.toBe(original); // the note's own copy is the bounded text it replaced
  const twice = pruneToolOutputs(once, artifacts, { keepChars: 100 });
  expect(twice).toEqual(once);
});

test("media results become a note naming each attachment, stored so it can be reopened", () => {
  const artifacts = artifactsIn();
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
  const head = [
    result("m", {
      type: "content",
      value: [
        { type: "text", text: "screenshot.png (12 bytes)" },
        { type: "file", mediaType: "image/png", data: Buffer.from(png).toString("base64"), filename: "screenshot.png" },
      ],
    }, "read"),
  ];
  const pruned = pruneToolOutputs(head, artifacts);
  const message = pruned[0]!;
  expect(message.role === "tool" && message.parts[0]!.output.type).toBe("text");
  const note = valueOf(message);
  expect(note).toStartWith("screenshot.png (12 bytes)\n[image/png attachment screenshot.png, 12 bytes: artifact://");
  expect([...artifacts.get(referenceIn(note))]).toEqual([...png]);
});

test("large fields of old tool calls (a whole file to write) become notes; the path stays", () => {
  const artifacts = artifactsIn();
  const content = "export const big = 1;\n".repeat(500);
  const head = [call("w", "write", { operation: "write", path: "src/big.ts", content })];
  const pruned = pruneToolOutputs(head, artifacts);
  const part = pruned[0]!.role === "assistant" ? pruned[0]!.parts[0] : undefined;
  if (part?.type !== "tool-call") throw new Error("expected the call");
  const input = part.input as Record<string, string>;
  expect(input.operation).toBe("write");
  expect(input.path).toBe("src/big.ts");
  expect(input.content).toStartWith(`[write content pruned: ${content.length.toLocaleString("en-US")} characters; the full text is artifact://`);
  expect(new TextDecoder().decode(artifacts.get(referenceIn(input.content!)))).toBe(content);
});

test("when the store cannot take the text, the note says so instead of failing", () => {
  const file = join(dirs.make(), "..", "not-a-dir");
  writeFileSync(file, "");
  const broken = createArtifactStore(join(file, "artifacts"));
  const note = valueOf(pruneToolOutputs([result("x", { type: "text", value: "q".repeat(5_000) })], broken)[0]);
  expect(note).toContain("5,000 characters; the full text was not kept");
  expect(note).not.toContain("artifact://");
});
