import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { outputEventSchema } from "../../src/protocol/stream-json.ts";
import type { FakeProvider, FakeTurn } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { runZero, type Sandbox } from "../support/cli.ts";

// Golden transcripts of `zero exec --output-format stream-json` through the fake provider,
// one per example of the protocol. Ids and paths are normalized; everything else must match
// byte for byte. Rewrite with UPDATE_GOLDEN=1 after an intended protocol change.

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

function normalize(stdout: string): string {
  return stdout
    .replace(/run_\d{8}_[0-9a-z]+/g, "RUN_ID")
    .replace(/zero_\d{14}_[0-9a-z]+/g, "SESSION_ID")
    .replace(/127\.0\.0\.1:\d+/g, "PROVIDER_HOST")
    .split(sandbox.workspace)
    .join("WORKSPACE");
}

async function transcript(name: string, turns: FakeTurn[], args: string[], exitCode: number): Promise<void> {
  fake.script(turns);
  const result = await runZero(["exec", "--output-format", "stream-json", ...args], { sandbox });
  expect(result.code).toBe(exitCode);
  for (const line of result.stdout.trimEnd().split("\n")) outputEventSchema.parse(JSON.parse(line));
  const actual = normalize(result.stdout);
  const file = join(import.meta.dir, "golden", `${name}.jsonl`);
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, "utf8"));
}

test("golden: text, reasoning and usage", async () => {
  await transcript("text-reasoning", [{ reasoning: ["Thinking ", "about it"], text: ["The answer ", "is ", "42."], usage: { input: 12, output: 8 } }], ["what is the answer?"], 0);
});

test("golden: a tool call and its result", async () => {
  await transcript(
    "tool-call",
    [{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_readme" }], usage: { input: 20, output: 5 } }, { text: "It is a sample project.", usage: { input: 40, output: 6 } }],
    ["summarize README.md"],
    0,
  );
});

test("golden: a permission request and its headless denial", async () => {
  await transcript(
    "permission-denied",
    [{ toolCalls: [{ name: "write", args: { operation: "write", path: "notes.txt", content: "x\n" }, id: "call_write" }] }, { text: "I could not write the file." }],
    ["write notes.txt"],
    0,
  );
  expect(existsSync(join(sandbox.workspace, "notes.txt"))).toBe(false);
});

test("golden: a provider error", async () => {
  const down: FakeTurn = { kind: "error", status: 500, message: "upstream exploded", headers: { "retry-after-ms": "0" } };
  await transcript("provider-error", [down, down, down], ["hello"], 3);
});
