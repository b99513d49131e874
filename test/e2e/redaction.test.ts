import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** Shape-correct fake tokens, built at run time so nothing secret-looking is committed. */
function randomChars(length: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}
const githubToken = () => `ghp_${randomChars(36)}`;
const openaiKey = () => `sk-proj-${randomChars(48)}`;

function toolAnswer(index: number): string {
  return fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool").at(-1).content;
}

test("a token printed by a command reaches the model redacted, with the count in the event", async () => {
  const token = githubToken();
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "run", args: { command: `echo "token: ${token}"; echo done` } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code).toBe(0);
  const answer = toolAnswer(1);
  expect(answer).not.toContain(token);
  expect(answer).toContain("[REDACTED:github-token]");
  expect(answer.split("\n")).toHaveLength(4); // exit line + two output lines + trailing
  // Not in what the tool reported either (progress, completion); the model's own command is its business.
  const events = jsonLines(result.stdout);
  for (const event of events.filter((e) => e.type === "tool.progress" || e.type === "tool.completed")) {
    expect(JSON.stringify(event)).not.toContain(token);
  }
  const completed = events.find((e) => e.type === "tool.completed")!;
  expect(completed.redactions).toEqual({ count: 1, kinds: { "github-token": 1 } });
});

test("file reads are redacted line by line, and so is the configured provider key", async () => {
  const key = openaiKey();
  const providerKey = `local-${randomChars(40)}`;
  const lines = [
    "const config = {",
    `  openai: "${key}",`,
    "  authHeader: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789ABCD',",
    "  db: 'postgres://admin:s3cr3tPa55w0rdXyZ@db.example.com:5432/app',",
    `  mine: "${providerKey}",`,
    "};",
  ];
  writeFileSync(join(sandbox.workspace, "config.ts"), `${lines.join("\n")}\n`);
  writeFileSync(join(sandbox.workspace, "key.txt"), "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC8\n");
  const config = fakeConfig(fake.url, "chat", {
    providers: { fake: { type: "openai-compatible", baseURL: fake.url, apiKeyEnv: "LOCAL_MODEL_KEY" } },
  });
  sandbox.writeUserConfig(config);
  fake.script([
    { toolCalls: [{ name: "read", args: { path: "config.ts" } }] },
    { toolCalls: [{ name: "read", args: { path: "key.txt" } }] },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "x"], { sandbox, env: { LOCAL_MODEL_KEY: providerKey } });
  expect(result.code).toBe(0);
  const read = toolAnswer(1);
  for (const secret of [key, "abcdefghijklmnopqrstuvwxyz0123456789ABCD", "s3cr3tPa55w0rdXyZ", providerKey]) expect(read).not.toContain(secret);
  expect(read.split("\n").filter((l) => /^\d+\t/.test(l))).toHaveLength(lines.length);
  expect(read).toContain("db.example.com");
  const pem = toolAnswer(2);
  expect(pem).toContain("BEGIN PRIVATE KEY");
  expect(pem).not.toContain("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7");
});

test("text artifacts are stored redacted and read back redacted", async () => {
  const token = githubToken();
  sandbox.writeUserConfig(fakeConfig(fake.url));
  let uri = "";
  fake.script([
    { toolCalls: [{ name: "run", args: { command: `seq 1 30000; echo "late ${token}"` } }] },
    (req) => {
      const answer = req.body.messages.filter((m: any) => m.role === "tool").at(-1).content as string;
      uri = /artifact:\/\/[0-9a-f]{64}/.exec(answer)?.[0] ?? "missing";
      return { toolCalls: [{ name: "read", args: { path: uri, offset: 30001 } }] };
    },
    { text: "ok" },
  ]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(uri).toMatch(/^artifact:\/\//);
  const back = toolAnswer(2);
  expect(back).toContain("late [REDACTED:github-token]");
  expect(back).not.toContain(token);
});

test("a token written in pieces never reaches progress events whole, and nothing raw lands on disk", async () => {
  const token = githubToken();
  sandbox.writeUserConfig(fakeConfig(fake.url));
  // Piecewise output, a stray non-UTF-8 byte, and enough lines to spill into an artifact.
  const command = `printf '${token.slice(0, 4)}'; sleep 0.3; printf '${token.slice(4)}\\n'; printf '\\377\\n'; seq 1 30000`;
  fake.script([{ toolCalls: [{ name: "run", args: { command } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code).toBe(0);
  for (const event of jsonLines(result.stdout).filter((e) => e.type === "tool.progress")) {
    expect(event.message).not.toContain(token.slice(4));
  }
  const artifacts = join(sandbox.stateHome, "zero-cli");
  const files = new Bun.Glob("**/artifacts/*/*").scanSync({ cwd: artifacts, absolute: true });
  let scanned = 0;
  for (const file of files) {
    scanned += 1;
    expect(await Bun.file(file).text()).not.toContain(token.slice(4));
  }
  expect(scanned).toBeGreaterThan(0);
});
