/**
 * Context compaction through the real CLI: a small configured window, a model that keeps reading
 * a large file. Past the trigger the next request carries a summary and the recent tail instead of
 * everything; the current task stays verbatim; no tool result is orphaned; a failed checkpoint
 * call falls back to a deterministic summary; an overflow error compacts once and retries; a
 * compacted session resumes from its record.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider, FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { allText } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const isCheckpointCall = (req: RecordedRequest) => JSON.stringify(req.body.messages[0] ?? "").includes("checkpoint");
const CHECKPOINT = '{"task": "read the big file", "decisions": ["read it in parts"], "filesTouched": ["big.txt"], "openQuestions": [], "nextSteps": ["finish reading"]}';

function smallWindow(extra: Record<string, unknown> = {}): void {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      workDepth: "ultra",
      models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools"], contextWindow: 9_000 } },
      context: { compaction: { reservedOutputTokens: 1_000, safetyBufferTokens: 500, minimumRecentTurns: 1, recentFraction: 0.3 } },
      ...extra,
    }),
  );
  writeFileSync(join(sandbox.workspace, "big.txt"), Array.from({ length: 400 }, (_, i) => `line ${i} ${"x".repeat(60)}`).join("\n"));
}

/** What a real provider would report for the request: about four bytes per input token. */
const realistic = (req: RecordedRequest) => ({ input: Math.round(req.bodyBytes / 4), output: 20 });

/** Reads of big.txt in 60-line slices, then an answer; checkpoint calls answered by `checkpoint`. */
function script(reads: number, checkpoint: FakeTurn, answer = "read it all"): void {
  let read = 0;
  fake.script(
    Array.from({ length: reads + 4 }, () => (req: RecordedRequest): FakeTurn => {
      if (isCheckpointCall(req)) return "kind" in checkpoint ? checkpoint : { ...checkpoint, usage: realistic(req) };
      if (read < reads) {
        read += 1;
        return { toolCalls: [{ name: "read", id: `r${read}`, args: { path: "big.txt", offset: read * 60 - 59, limit: 60 } }], usage: realistic(req) };
      }
      return { text: answer, usage: realistic(req) };
    }),
  );
}

test("past the trigger the request holds the checkpoint and the recent tail, the task verbatim, no orphaned result", async () => {
  smallWindow();
  script(6, { text: CHECKPOINT });
  const result = await runZero(["run", "--json", "read big.txt slowly, in parts"], { sandbox });
  expect(result.code).toBe(0);
  const events = jsonLines(result.stdout);
  const compacted = events.filter((e) => e.type === "context.compacted");
  expect(compacted.length).toBeGreaterThanOrEqual(1);
  expect(compacted[0]).toMatchObject({ reason: "auto", fallback: false });
  expect(compacted[0]!.afterTokens).toBeLessThan(compacted[0]!.beforeTokens);
  expect(events.some((e) => e.type === "context.updated" && e.window === 9_000)).toBe(true);
  const last = fake.requests.filter((r) => !isCheckpointCall(r)).at(-1)!;
  const text = allText(last);
  expect(text).toContain("read the big file"); // the checkpoint
  expect(text).toContain("read big.txt slowly, in parts"); // the task, verbatim
  // Every tool result in the request answers a call the same request contains.
  const calls = new Set(last.body.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.id)));
  for (const m of last.body.messages.filter((m: any) => m.role === "tool")) expect(calls.has(m.tool_call_id)).toBe(true);
  // The request right after the checkpoint call is smaller than the one before it; every request fits the window.
  const k = fake.requests.findIndex(isCheckpointCall);
  expect(fake.requests[k + 1]!.bodyBytes).toBeLessThan(fake.requests[k - 1]!.bodyBytes);
  for (const request of fake.requests) expect(request.bodyBytes / 4).toBeLessThan(9_000);
});

test("a checkpoint call that fails leaves a deterministic summary; the task survives", async () => {
  smallWindow();
  script(6, { kind: "error", status: 400, message: "no checkpoint today" });
  const result = await runZero(["run", "--json", "read big.txt slowly, in parts"], { sandbox });
  expect(result.code).toBe(0);
  const compacted = jsonLines(result.stdout).filter((e) => e.type === "context.compacted");
  expect(compacted[0]).toMatchObject({ fallback: true });
  const last = fake.requests.filter((r) => !isCheckpointCall(r)).at(-1)!;
  expect(allText(last)).toContain("read big.txt slowly, in parts");
});

test("a provider overflow compacts once and retries the step", async () => {
  smallWindow({ context: { compaction: { enabled: true, triggerRatio: 0.99, reservedOutputTokens: 1_000, safetyBufferTokens: 500, minimumRecentTurns: 1, recentFraction: 0.3 } } });
  let overflowed = false;
  let read = 0;
  fake.script(
    Array.from({ length: 12 }, () => (req: RecordedRequest): FakeTurn => {
      if (isCheckpointCall(req)) return { text: CHECKPOINT, usage: realistic(req) };
      if (read < 4) {
        read += 1;
        return { toolCalls: [{ name: "read", id: `r${read}`, args: { path: "big.txt", offset: read * 60 - 59, limit: 60 } }], usage: realistic(req) };
      }
      if (!overflowed) {
        overflowed = true;
        return { kind: "error", status: 400, message: "This model's maximum context length is 9000 tokens. However, your messages resulted in 12000 tokens.", code: "context_length_exceeded" };
      }
      return { text: "done after all", usage: realistic(req) };
    }),
  );
  const result = await runZero(["run", "--json", "read big.txt in parts"], { sandbox });
  const events = jsonLines(result.stdout);
  expect(result.code).toBe(0);
  expect(events.filter((e) => e.type === "context.compacted").map((e) => e.reason)).toContain("overflow");
  expect(events.at(-1)).toMatchObject({ type: "run.completed", status: "completed", text: "done after all" });
});

test("a compacted session resumes from its record", async () => {
  smallWindow();
  script(6, { text: CHECKPOINT });
  expect((await runZero(["run", "--json", "read big.txt slowly, in parts"], { sandbox })).code).toBe(0);
  fake.reset();
  fake.script([{ text: "resumed" }]);
  const resumed = await runZero(["run", "--json", "--resume", "latest", "what did you read?"], { sandbox });
  expect(resumed.code).toBe(0);
  const request = fake.requests.at(-1)!;
  expect(allText(request)).toContain("read the big file");
  expect(allText(request)).toContain("what did you read?");
  expect(allText(request)).not.toContain("line 5 xxxxxxxx"); // the first slice is behind the summary now
});

test("an old tool output, pruned by compaction, is reopened through its artifact reference", async () => {
  smallWindow();
  let read = 0;
  let reopened: string | undefined;
  fake.script(
    Array.from({ length: 14 }, () => (req: RecordedRequest): FakeTurn => {
      // The checkpoint call fails: the deterministic summary lists the pruned outputs' references.
      if (isCheckpointCall(req)) return { kind: "error", status: 400, message: "no checkpoint" };
      const ref = /artifact:\/\/[0-9a-f]{64}/.exec(allText(req))?.[0];
      if (ref && reopened === undefined) {
        reopened = ref;
        return { toolCalls: [{ name: "read", id: "again", args: { path: ref, limit: 5 } }], usage: realistic(req) };
      }
      if (read < 6 && reopened === undefined) {
        read += 1;
        return { toolCalls: [{ name: "read", id: `r${read}`, args: { path: "big.txt", offset: read * 60 - 59, limit: 60 } }], usage: realistic(req) };
      }
      return { text: "done", usage: realistic(req) };
    }),
  );
  const result = await runZero(["run", "--json", "read big.txt slowly, in parts"], { sandbox });
  expect(result.code).toBe(0);
  expect(reopened).toBeDefined();
  const answer = jsonLines(result.stdout).find((e) => e.type === "tool.completed" && e.callId === "again")!;
  expect(answer.status).toBe("completed");
  // The pruned read's full text came back: lines of big.txt as the earlier read returned them.
  expect(answer.output).toMatch(/line \d+ x{60}/);
});
