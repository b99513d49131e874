import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { jsonLines, runZero, type Sandbox } from "../support/cli.ts";

// Issue 12 #10: a secret in the model's own text never lands on disk or in an output stream.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

function randomChars(length: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(crypto.getRandomValues(new Uint8Array(length)), (b) => alphabet[b % alphabet.length]).join("");
}

/** Every byte zero keeps for this workspace: the database, its WAL, the artifacts. */
function stateBytes(): string {
  const base = join(sandbox.stateHome, "zero-cli");
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(readFileSync(path, "latin1"));
    }
  };
  walk(base);
  return out.join("\n");
}

test("a key the model repeats (answer, streamed in pieces, and a tool call's arguments) is redacted in --json, the database and the next turn", async () => {
  const token = `ghp_${randomChars(36)}`;
  fake.script([
    { text: ["I will use ", token.slice(0, 10), token.slice(10), " now"], toolCalls: [{ name: "run", args: { command: `echo ${token} > /dev/null` } }] },
    { text: `Done: the token was ${token}.` },
    { text: "next turn" },
  ]);
  const first = await runZero(["run", "-y", "--json", "use the token"], { sandbox });
  expect(first.code).toBe(0);
  expect(first.stdout).not.toContain(token);
  expect(first.stdout).toContain("[REDACTED:github-token]");
  const deltas = jsonLines(first.stdout).filter((e) => e.type === "message.delta").map((e) => e.text).join("");
  expect(deltas).toContain("[REDACTED:github-token]");
  expect(stateBytes()).not.toContain(token);

  const second = await runZero(["run", "--resume", "latest", "again"], { sandbox });
  expect(second.code).toBe(0);
  // The resumed history comes from the store: the model's earlier words come back redacted.
  const resumed = JSON.stringify(fake.requests.at(-1)!.body);
  expect(resumed).not.toContain(token);
  expect(resumed).toContain("[REDACTED:github-token]");
});
