import { expect, test } from "bun:test";
import fc from "fast-check";
import { userMessage, type Message } from "../../protocol/messages.ts";
import { chooseCut, isTurnStart, type CutOptions } from "./cut.ts";
import { estimateMessageTokens } from "../../agent/estimate.ts";

// Where compaction cuts: at a user turn, never inside a call/result exchange, keeping the current turn (CTX-04).

let nextCall = 0;
/** One user turn: the request, a tool call, its result, the answer; `size` characters of output. */
function turn(request: string, size = 100, tool = "read"): Message[] {
  const callId = `call_${nextCall++}`;
  return [
    userMessage(request),
    { role: "assistant", parts: [{ type: "tool-call", callId, tool, input: { path: `src/${request}.ts` }, state: "completed" }] },
    { role: "tool", parts: [{ type: "tool-result", callId, tool, output: { type: "text", value: "o".repeat(size) } }] },
    { role: "assistant", parts: [{ type: "text", text: `done ${request}` }] },
  ];
}
const summary = (text: string, replacedMessages = 10): Message => ({ role: "user", parts: [{ type: "summary", text, replacedMessages }] });
const options = (overrides: Partial<CutOptions> = {}): CutOptions => ({
  budgetTokens: 1_000_000,
  recentFraction: 0.15,
  minimumRecentTurns: 2,
  keepRecentTurns: 6,
  estimate: estimateMessageTokens,
  ...overrides,
});

test("with room to spare the tail is the last keepRecentTurns turns", () => {
  const history = Array.from({ length: 8 }, (_, i) => turn(`t${i}`)).flat();
  const cut = chooseCut(history, options());
  expect(cut).toBe(8); // turns t2..t7 (four messages each)
  expect(history[cut!]).toEqual(userMessage("t2"));
  expect(chooseCut(history, options({ keepRecentTurns: 3 }))).toBe(20);
});

test("the tail grows only while it stays within recentFraction × budget", () => {
  const history = Array.from({ length: 8 }, (_, i) => turn(`t${i}`, 4_000)).flat();
  const perTurn = estimateMessageTokens(turn("tx", 4_000));
  // Room for three turns and a bit, not four.
  const budgetTokens = Math.ceil((perTurn * 3.5) / 0.15);
  const cut = chooseCut(history, options({ budgetTokens }));
  expect(cut).toBe(20); // t5, t6, t7
  const tail = history.slice(cut);
  expect(estimateMessageTokens(tail)).toBeLessThanOrEqual(0.15 * budgetTokens);
  expect(estimateMessageTokens(history.slice(cut! - 4))).toBeGreaterThan(0.15 * budgetTokens);
});

test("the minimum turns are kept even past the fraction, and past keepRecentTurns", () => {
  const history = Array.from({ length: 5 }, (_, i) => turn(`t${i}`, 50_000)).flat();
  expect(chooseCut(history, options({ budgetTokens: 1_000 }))).toBe(12); // t3, t4 although far over
  expect(chooseCut(history, options({ budgetTokens: 1_000, minimumRecentTurns: 3, keepRecentTurns: 1 }))).toBe(8);
});

test("nothing to cut: too few turns, one long turn, or the tail would be everything", () => {
  expect(chooseCut(turn("only"), options())).toBeUndefined();
  expect(chooseCut([...turn("a", 90_000), ...turn("b", 90_000)], options({ budgetTokens: 1_000 }))).toBeUndefined();
  // One turn with many steps: a turn is never split, so there is no cut point inside it.
  const long: Message[] = [userMessage("fix everything"), ...Array.from({ length: 20 }, (_, i) => turn(`s${i}`).slice(1)).flat()];
  expect(chooseCut(long, options({ budgetTokens: 100, minimumRecentTurns: 1 }))).toBeUndefined();
  // Three short turns all fit within keepRecentTurns and the fraction: the cut would be at 0.
  expect(chooseCut([...turn("a"), ...turn("b"), ...turn("c")], options())).toBeUndefined();
  expect(chooseCut([], options())).toBeUndefined();
});

test("a user message injected between a tool call and its result is not a cut point", () => {
  // A background child's report arrives while the parent's delegate call is still open.
  const history: Message[] = [
    ...turn("a", 10),
    userMessage("start the review"),
    { role: "assistant", parts: [{ type: "tool-call", callId: "del_1", tool: "delegate", input: { operation: "wait" }, state: "running" }] },
    userMessage("[delegate] Background child run_x finished: …"),
    { role: "tool", parts: [{ type: "tool-result", callId: "del_1", tool: "delegate", output: { type: "text", value: "{\"status\":\"completed\"}" } }] },
    { role: "assistant", parts: [{ type: "text", text: "reviewed" }] },
    ...turn("b", 10),
  ];
  expect(chooseCut(history, options({ minimumRecentTurns: 1, keepRecentTurns: 1 }))).toBe(9);
  // A naive two-turn cut would start at the injected message (index 6), splitting the delegate call:
  // the cut moves back to the turn that made the call.
  expect(chooseCut(history, options({ minimumRecentTurns: 2, keepRecentTurns: 2 }))).toBe(4);
});

test("an earlier compaction's summary is history: it goes into the head and is summarized again", () => {
  const history = [summary("earlier work"), ...turn("a"), ...turn("b"), ...turn("c")];
  expect(chooseCut(history, options({ keepRecentTurns: 2 }))).toBe(5); // b and c are the tail; the summary and a are summarized
  // All the head would hold is the earlier summary: nothing new to summarize.
  expect(chooseCut([summary("earlier work"), ...turn("a"), ...turn("b")], options({ keepRecentTurns: 2 }))).toBeUndefined();
  expect(chooseCut([summary("earlier work"), ...turn("a"), ...turn("b")], options({ keepRecentTurns: 1, minimumRecentTurns: 1 }))).toBe(5);
  expect(isTurnStart(summary("x"))).toBe(false);
  expect(isTurnStart(userMessage("x"))).toBe(true);
});

/** Random histories: turns of steps, each step an assistant message with calls and their results, sometimes a user message in between. */
const historyArbitrary = fc
  .array(
    fc.record({
      steps: fc.array(fc.record({ calls: fc.integer({ min: 0, max: 3 }), interjection: fc.boolean(), size: fc.integer({ min: 0, max: 3_000 }) }), { maxLength: 4 }),
      summaryFirst: fc.boolean(),
    }),
    { minLength: 1, maxLength: 10 },
  )
  .map((turns) => {
    const messages: Message[] = [];
    let id = 0;
    turns.forEach((spec, t) => {
      if (t === 0 && spec.summaryFirst) messages.push(summary("before"));
      messages.push(userMessage(`turn ${t}`));
      for (const step of spec.steps) {
        const ids = Array.from({ length: step.calls }, () => `c${id++}`);
        messages.push({ role: "assistant", parts: [{ type: "text", text: "x".repeat(step.size) }, ...ids.map((callId) => ({ type: "tool-call" as const, callId, tool: "run", input: { command: "ls" }, state: "completed" as const }))] });
        if (step.interjection) messages.push(userMessage("[gate] not verified"));
        if (ids.length > 0) messages.push({ role: "tool", parts: ids.map((callId) => ({ type: "tool-result" as const, callId, tool: "run", output: { type: "text" as const, value: "y".repeat(step.size) } })) });
      }
    });
    return messages;
  });

test("property: the cut is a turn start, splits no call from its result, keeps the current turn and the minimum", () => {
  fc.assert(
    fc.property(historyArbitrary, fc.integer({ min: 100, max: 200_000 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }), (history, budgetTokens, minimumRecentTurns, keepRecentTurns) => {
      const cut = chooseCut(history, options({ budgetTokens, minimumRecentTurns, keepRecentTurns }));
      if (cut === undefined) return;
      expect(cut).toBeGreaterThan(0);
      expect(isTurnStart(history[cut]!)).toBe(true);
      const head = history.slice(0, cut);
      const tail = history.slice(cut);
      const callIds = (ms: Message[]) => ms.flatMap((m) => (m.role === "assistant" ? m.parts.flatMap((p) => (p.type === "tool-call" ? [p.callId] : [])) : []));
      const resultIds = (ms: Message[]) => ms.flatMap((m) => (m.role === "tool" ? m.parts.map((p) => p.callId) : []));
      const headCalls = new Set(callIds(head));
      for (const id of resultIds(tail)) expect(headCalls.has(id)).toBe(false);
      const lastTurn = history.findLastIndex(isTurnStart);
      expect(cut).toBeLessThanOrEqual(lastTurn);
      const tailTurns = tail.filter(isTurnStart).length;
      expect(tailTurns).toBeGreaterThanOrEqual(Math.min(minimumRecentTurns, history.filter(isTurnStart).length));
      expect(head.some(isTurnStart) || head.some((m) => m.role !== "user")).toBe(true);
    }),
    { numRuns: 300 },
  );
});
