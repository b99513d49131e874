import { expect, test } from "bun:test";
import { userMessage, type Message, type ToolResultOutput } from "../../protocol/messages.ts";
import { checkpointInstructions, checkpointSchema, fallbackSummary, parseCheckpoint, renderCheckpoint, type Checkpoint } from "./checkpoint.ts";

// The structured checkpoint: asked for, parsed and validated, rendered, and the deterministic fallback (CTX-03, CTX-08).

const checkpoint: Checkpoint = {
  task: "Add retry with backoff to src/net/client.ts",
  decisions: ["Use exponential backoff capped at 30s; jitter avoids thundering herds"],
  filesTouched: ["src/net/client.ts", "src/net/client.test.ts"],
  openQuestions: [],
  nextSteps: ["Run bun test src/net"],
};
const json = JSON.stringify(checkpoint);

test("the checkpoint is read from the whole answer, a fenced block, or the last object in prose", () => {
  expect(parseCheckpoint(json)).toEqual(checkpoint);
  expect(parseCheckpoint(`  ${JSON.stringify(checkpoint, null, 2)}\n`)).toEqual(checkpoint);
  expect(parseCheckpoint(`Here is the checkpoint:\n\`\`\`json\n${json}\n\`\`\`\nDone.`)).toEqual(checkpoint);
  // Two fences: the last valid one wins.
  const older = { ...checkpoint, task: "older" };
  expect(parseCheckpoint(`\`\`\`json\n${JSON.stringify(older)}\n\`\`\`\nrevised:\n\`\`\`\n${json}\n\`\`\``)).toEqual(checkpoint);
  // Prose with braces and quotes around it; a string holding "}" inside the object.
  const tricky = { ...checkpoint, decisions: ['Keep the "}" in the template literal'] };
  expect(parseCheckpoint(`I'll use {braces} here. "Quoted" text. ${JSON.stringify(tricky)} That's it.`)).toEqual(tricky);
  expect(parseCheckpoint(`first ${JSON.stringify(older)} then ${json}`)).toEqual(checkpoint);
});

test("answers that hold no valid checkpoint are rejected", () => {
  expect(parseCheckpoint("I could not summarize this.")).toBeUndefined();
  expect(parseCheckpoint("")).toBeUndefined();
  expect(parseCheckpoint(`{"task": "x", "decisions": [`)).toBeUndefined(); // cut off
  expect(parseCheckpoint(JSON.stringify({ ...checkpoint, task: "  " }))).toBeUndefined();
  expect(parseCheckpoint(JSON.stringify({ ...checkpoint, decisions: "one string" }))).toBeUndefined();
  expect(parseCheckpoint(JSON.stringify({ ...checkpoint, task: "t".repeat(4_001) }))).toBeUndefined();
  expect(parseCheckpoint(JSON.stringify({ ...checkpoint, nextSteps: Array.from({ length: 21 }, (_, i) => `step ${i}`) }))).toBeUndefined();
  expect(parseCheckpoint(JSON.stringify({ summary: "prose" }))).toBeUndefined();
});

test("lists the model left out default to empty; unknown keys are dropped", () => {
  expect(parseCheckpoint(`{"task": "Fix the build", "extra": 1}`)).toEqual({ task: "Fix the build", decisions: [], filesTouched: [], openQuestions: [], nextSteps: [] });
  expect(checkpointSchema.safeParse({ decisions: [] }).success).toBe(false); // the task never is optional
});

test("the rendered checkpoint is labelled sections, without the empty ones", () => {
  expect(renderCheckpoint(checkpoint)).toBe(
    [
      "Checkpoint of the conversation so far.",
      "Task: Add retry with backoff to src/net/client.ts",
      "Decisions:",
      "- Use exponential backoff capped at 30s; jitter avoids thundering herds",
      "Files touched:",
      "- src/net/client.ts",
      "- src/net/client.test.ts",
      "Next steps:",
      "- Run bun test src/net",
    ].join("\n"),
  );
});

test("the instructions ask for JSON only, name every field and carry the budget and bounds", () => {
  const text = checkpointInstructions(4096);
  for (const field of ["task", "decisions", "filesTouched", "openQuestions", "nextSteps"]) expect(text).toContain(`"${field}"`);
  expect(text).toContain("4096 tokens");
  expect(text).toContain("16384 characters");
  expect(text).toContain("at most 40 items");
  expect(text).toContain("exact paths");
  expect(text).toContain("nothing else");
  expect(text).not.toContain("{{");
  expect(checkpointInstructions(1000)).toContain("1000 tokens");
});

let nextId = 0;
function exchange(tool: string, input: unknown, output: ToolResultOutput = { type: "text", value: "ok" }): Message[] {
  const callId = `call_${nextId++}`;
  return [
    { role: "assistant", parts: [{ type: "tool-call", callId, tool, input, state: "completed" }] },
    { role: "tool", parts: [{ type: "tool-result", callId, tool, output }] },
  ];
}
const say = (text: string): Message => ({ role: "assistant", parts: [{ type: "reasoning", text: "hmm" }, { type: "text", text }] });

test("the fallback lists every request, the tools and their targets, the files changed and the last answer", () => {
  const patch = "--- a/src/b.ts\n+++ b/src/b.ts\n@@ -1 +1 @@\n-old\n+new\n";
  const head: Message[] = [
    userMessage("Refactor the parser in src/parse.ts and keep the public API"),
    ...exchange("read", { path: "src/parse.ts" }),
    ...exchange("run", { command: "bun test\n  src/parse" }, { type: "error-text", value: "1 failing" }),
    ...exchange("run", { command: "bun test\n  src/parse" }, { type: "error-text", value: "1 failing" }),
    ...exchange("write", { operation: "edit", path: "src/parse.ts", oldText: "a", newText: "b" }),
    ...exchange("write", { operation: "patch", patch }),
    ...exchange("write", { operation: "move", path: "src/old.ts", to: "src/new.ts" }),
    ...exchange("write", { operation: "write", path: ".env", content: "x" }, { type: "execution-denied", reason: "no" }),
    ...exchange("read", { path: "log.txt" }, { type: "text", value: `[tool output pruned: 9,000 characters; the full text is artifact://${"a".repeat(64)} (open it with read)]` }),
    say("The parser now uses a table."),
    userMessage("Also add a test"),
    say("Added the test; all green."),
  ];
  const summary = fallbackSummary(head);
  expect(summary).toContain("- Refactor the parser in src/parse.ts and keep the public API\n- Also add a test");
  expect(summary).toContain("- read src/parse.ts\n");
  expect(summary).toContain("- run bun test src/parse (failed) ×2\n");
  expect(summary).toContain("- write edit src/parse.ts\n");
  expect(summary).toContain("- write write .env (denied)");
  expect(summary).toContain(`- read log.txt → artifact://${"a".repeat(64)}`);
  expect(summary).toContain(
    "Files changed:\n- src/parse.ts (edited)\n- src/b.ts (patched)\n- src/old.ts (moved to src/new.ts)\n- src/new.ts (moved from src/old.ts)\n\n",
  );
  expect(summary).not.toContain("- .env ("); // denied: nothing was written
  expect(summary).toEndWith("Last assistant message:\nAdded the test; all green.");
  expect(fallbackSummary(head)).toBe(summary); // deterministic
});

test("the fallback bounds each request and the total, keeping the original task and the newest", () => {
  const requests = Array.from({ length: 40 }, (_, i) => `request ${i} ${"r".repeat(600)}`);
  const summary = fallbackSummary(requests.map((text) => userMessage(text)));
  const lines = summary.split("\n").filter((line) => line.startsWith("- request"));
  expect(lines.every((line) => line.length <= 502)).toBe(true);
  expect(lines[0]).toStartWith("- request 0 ");
  expect(lines.at(-1)).toStartWith("- request 39 ");
  expect(lines.length).toBeLessThan(40);
  expect(summary).toContain(`more requests left out)`);
  expect(lines.join("\n").length).toBeLessThanOrEqual(8_000);
  // The newest are kept contiguous: the kept tail ends with 39 and has no gaps.
  const numbers = lines.slice(1).map((line) => Number(/request (\d+)/.exec(line)![1]));
  expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => 40 - numbers.length + i));
});

test("the fallback carries an earlier compaction's summary forward and notes attachments", () => {
  const head: Message[] = [
    { role: "user", parts: [{ type: "summary", text: "Checkpoint of the conversation so far.\nTask: migrate to zod 4", replacedMessages: 30 }] },
    { role: "user", parts: [{ type: "text", text: "What is in this screenshot?" }, { type: "file", mediaType: "image/png", data: "AAAA", filename: "s.png" }] },
  ];
  const summary = fallbackSummary(head);
  expect(summary).toContain("Earlier summary:\nCheckpoint of the conversation so far.\nTask: migrate to zod 4");
  expect(summary).toContain("- What is in this screenshot? [image/png attachment s.png]");
  expect(summary).not.toContain("AAAA");
  expect(summary).not.toContain("Tools called");
});

test("the fallback keeps the newest 30 distinct calls", () => {
  const head = Array.from({ length: 45 }, (_, i) => exchange("read", { path: `src/f${i}.ts` })).flat();
  const summary = fallbackSummary(head);
  expect(summary).toContain("- (15 earlier calls left out)\n- read src/f15.ts\n");
  expect(summary).toContain("- read src/f44.ts");
  expect(summary).not.toContain("src/f14.ts");
});
