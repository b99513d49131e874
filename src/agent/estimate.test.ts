import { expect, test } from "bun:test";
import { userMessage, type Message } from "../protocol/messages.ts";
import { contextBudget, createCalibration, estimateMessageTokens, MEDIA_PART_TOKENS } from "./estimate.ts";

// The request-size estimate, its calibration from reported usage, and the usable window (CTX-01).

test("text counts as the characters of the JSON form / 4, rounded up", () => {
  const messages = [userMessage("x".repeat(400))];
  const chars = JSON.stringify(messages).length;
  expect(estimateMessageTokens(messages)).toBe(Math.ceil(chars / 4));
  expect(estimateMessageTokens([])).toBe(1); // "[]"
  // Growing the text grows the estimate by a quarter of the growth.
  expect(estimateMessageTokens([userMessage("x".repeat(4_400))]) - estimateMessageTokens(messages)).toBe(1_000);
});

test("provider data is left out: a long signature does not change the estimate", () => {
  const plain: Message = { role: "assistant", parts: [{ type: "reasoning", text: "thinking" }, { type: "text", text: "done" }] };
  const signed: Message = {
    role: "assistant",
    parts: [
      { type: "reasoning", text: "thinking", provider: { anthropic: { signature: "s".repeat(50_000) } } },
      { type: "text", text: "done", provider: { openai: { itemId: "msg_" + "a".repeat(5_000) } } },
    ],
  };
  expect(estimateMessageTokens([signed])).toBe(estimateMessageTokens([plain]));
});

test("each media part counts a fixed 1,000 tokens whatever its base64 length, in user, assistant and tool results", () => {
  const image = (data: string): Message => ({ role: "user", parts: [{ type: "file", mediaType: "image/png", data }] });
  const small = estimateMessageTokens([image("AAAA")]);
  const large = estimateMessageTokens([image("A".repeat(2_000_000))]);
  expect(large).toBe(small);
  expect(small).toBe(Math.ceil(JSON.stringify([image("")]).length / 4) + MEDIA_PART_TOKENS);

  const toolResult: Message = {
    role: "tool",
    parts: [
      {
        type: "tool-result",
        callId: "c1",
        tool: "read",
        output: {
          type: "content",
          value: [
            { type: "text", text: "two images" },
            { type: "file", mediaType: "image/png", data: "B".repeat(90_000) },
            { type: "file", mediaType: "image/jpeg", data: "C".repeat(10) },
          ],
        },
      },
    ],
  };
  const emptied = JSON.stringify([toolResult]).replace(/"B+"/, '""').replace(/"C+"/, '""');
  expect(estimateMessageTokens([toolResult])).toBe(Math.ceil(emptied.length / 4) + 2 * MEDIA_PART_TOKENS);
});

test("a `data` field that is not a file part's counts as text", () => {
  const call: Message = { role: "assistant", parts: [{ type: "tool-call", callId: "c", tool: "x", input: { data: "d".repeat(8_000) }, state: "pending" }] };
  expect(estimateMessageTokens([call])).toBeGreaterThan(2_000);
});

test("calibration starts at 1 and moves toward the reported/estimated ratio, smoothed", () => {
  const calibration = createCalibration();
  expect(calibration.factor()).toBe(1);
  calibration.learn(10_000, 15_000);
  const afterOne = calibration.factor();
  expect(afterOne).toBeGreaterThan(1);
  expect(afterOne).toBeLessThan(1.5); // one request does not jump all the way
  for (let i = 0; i < 30; i++) calibration.learn(10_000, 15_000);
  expect(calibration.factor()).toBeCloseTo(1.5, 3);
  // A tokenizer that counts fewer tokens pulls it back down.
  for (let i = 0; i < 30; i++) calibration.learn(10_000, 8_000);
  expect(calibration.factor()).toBeCloseTo(0.8, 3);
});

test("calibration stays within [0.5, 3] and ignores meaningless samples", () => {
  const high = createCalibration();
  for (let i = 0; i < 50; i++) high.learn(1_000, 1_000_000);
  expect(high.factor()).toBeLessThanOrEqual(3);
  expect(high.factor()).toBeCloseTo(3, 3);
  const low = createCalibration();
  for (let i = 0; i < 50; i++) low.learn(100_000, 1);
  expect(low.factor()).toBeGreaterThanOrEqual(0.5);
  expect(low.factor()).toBeCloseTo(0.5, 3);

  const untouched = createCalibration();
  untouched.learn(0, 5_000);
  untouched.learn(50, 5_000); // mostly fixed overhead
  untouched.learn(10_000, 0); // a provider that reported no usage
  untouched.learn(Number.NaN, 5_000);
  untouched.learn(10_000, Number.POSITIVE_INFINITY);
  expect(untouched.factor()).toBe(1);
});

test("the budget is the window minus reserved output, safety buffer and tool schemas, never below 0", () => {
  // The documented defaults with a 20,000-token window and 1,500 tokens of tool schemas.
  expect(contextBudget({ window: 20_000, reservedOutputTokens: 8_192, safetyBufferTokens: 4_096, toolSchemaTokens: 1_500 })).toBe(6_212);
  expect(contextBudget({ window: 128_000, reservedOutputTokens: 8_192, safetyBufferTokens: 4_096, toolSchemaTokens: 0 })).toBe(115_712);
  expect(contextBudget({ window: 8_000, reservedOutputTokens: 8_192, safetyBufferTokens: 4_096, toolSchemaTokens: 0 })).toBe(0);
  expect(contextBudget({ window: Number.NaN, reservedOutputTokens: 0, safetyBufferTokens: 0, toolSchemaTokens: 0 })).toBe(0);
  // A negative reservation is a config mistake, not extra room.
  expect(contextBudget({ window: 1_000, reservedOutputTokens: -500, safetyBufferTokens: 0, toolSchemaTokens: 0 })).toBe(1_000);
});
