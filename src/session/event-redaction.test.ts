import { expect, test } from "bun:test";
import type { EventBody } from "../protocol/events.ts";
import { createRedactor } from "../security/redact.ts";
import { createEventRedaction } from "./event-redaction.ts";

const redactor = createRedactor({ knownSecrets: ["kn0wn-s3cret-value-42"] });

/** Streams deltas through the redaction and returns what the surfaces would see. */
function streamed(deltas: Array<{ kind?: "text" | "reasoning"; text: string }>) {
  const redaction = createEventRedaction(redactor);
  const out: EventBody[] = [];
  for (const delta of deltas) {
    out.push(...redaction.apply({ type: delta.kind === "reasoning" ? "reasoning.delta" : "message.delta", step: 1, text: delta.text }));
  }
  out.push(...redaction.apply({ type: "step.completed", step: 1, finishReason: "stop", toolCalls: 0 }));
  return out.filter((e): e is Extract<EventBody, { type: "message.delta" | "reasoning.delta" }> => e.type === "message.delta" || e.type === "reasoning.delta");
}
const joined = (events: ReturnType<typeof streamed>) => events.map((e) => e.text).join("");

test.each([
  ["an Authorization header split at its space", ['curl -H "Authorization: Bearer ', "a8F3kLq9ZxP0mN2vB7cR4tY6uW1eD5sG", '" https://x\n']],
  ["a password assignment split around the colon", ["password", ": ", '"Zk8qP2vLm9xWt4Rj7Hs"', " done\n"]],
  ["a private key streamed line by line", ["-----BEGIN RSA PRIVATE KEY-----\n", "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2wQ0pH1xZ\n", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEf\n", "-----END RSA PRIVATE KEY-----\n"]],
  ["URL credentials", ["postgres://app:", "S3cr3tPassw0rdXyZ", "@db:5432/x\n"]],
  ["a token in pieces", ["token ghp_", "abcdefghijklmnopqrstuvwxyz", "0123456789 end"]],
  ["a known secret in pieces", ["value kn0wn-s3", "cret-value-42 here"]],
])("what streams out is what the whole text redacts to: %s", (_name, deltas) => {
  const text = joined(streamed(deltas.map((text) => ({ text }))));
  expect(text).toBe(redactor.redact(deltas.join("")).text);
  expect(text).toContain("[REDACTED:");
});

test("a long run without whitespace is cut where no token continues, never inside one", () => {
  const token = `ghp_${"a".repeat(36)}`;
  const deltas = ["x".repeat(4000), "=", token.slice(0, 20), token.slice(20), " end"];
  const events = streamed(deltas.map((text) => ({ text })));
  expect(joined(events)).not.toContain(token.slice(0, 20));
  expect(joined(events)).toContain("[REDACTED:github-token]");
});

test("clean deltas keep the provider's boundaries", () => {
  const events = streamed([{ text: "The answer " }, { text: "is " }, { text: "42." }]);
  expect(events.map((e) => e.text)).toEqual(["The answer ", "is ", "42."]);
});

test("held text and reasoning keep their order, whichever came first", () => {
  const events = streamed([{ text: "Hello" }, { kind: "reasoning", text: "thinking more " }, { text: " world" }]);
  expect(events.map((e) => [e.type, e.text])).toEqual([
    ["message.delta", "Hello"],
    ["reasoning.delta", "thinking more "],
    ["message.delta", " world"],
  ]);
});

test("delegation events are redacted: a child's envelope, the task's names, the todo items", () => {
  const token = `ghp_${"Ab3".repeat(12)}`;
  const redaction = createEventRedaction(redactor);
  const [completed] = redaction.apply({
    type: "agent.completed",
    childRunId: "run_1",
    taskId: token,
    status: "completed",
    result: { summary: `found ${token}`, findings: [{ path: "a.ts", description: token }], followUps: [token] },
  });
  const [spawned] = redaction.apply({
    type: "agent.spawned",
    callId: "c",
    childRunId: "run_1",
    taskId: token,
    taskName: token,
    agent: "explore",
    deliverable: "analysis",
    workspaceMode: "shared-readonly",
    permissionMode: "read-only",
    background: false,
    followUp: false,
  });
  const [plan] = redaction.apply({ type: "plan.updated", items: [{ content: `rotate ${token}`, status: "pending" }] });
  const text = JSON.stringify([completed, spawned, plan]);
  expect(text).not.toContain(token);
  expect(text).toContain("[REDACTED");
  expect((completed as unknown as { result: { findings: Array<{ path: string }> } }).result.findings[0]!.path).toBe("a.ts");
});
