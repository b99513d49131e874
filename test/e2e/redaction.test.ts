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

/** `printf` octal escapes for every character, so the command itself never holds the text. */
const octal = (text: string) => Array.from(text, (char) => `\\${char.charCodeAt(0).toString(8).padStart(3, "0")}`).join("");

test("a token split by colour codes or a zero-width space reaches neither the model nor the terminal", async () => {
  const colour = githubToken();
  const zeroWidth = githubToken();
  const written = githubToken();
  sandbox.writeUserConfig(fakeConfig(fake.url));
  // The command prints `ghp_XXXX<ESC>[0mYYYY…` and `ghp_XXXX<U+200B>YYYY…`; the model then echoes one
  // split by a colour code in its answer and writes one into a file (its diff is shown).
  const command = `printf '${octal(colour.slice(0, 8))}\\033[31m${octal(colour.slice(8))}\\033[0m\\n'; printf 'zw ${octal(zeroWidth.slice(0, 8))}\\342\\200\\213${octal(zeroWidth.slice(8))}\\n'`;
  fake.script([
    { toolCalls: [{ name: "run", args: { command } }] },
    { toolCalls: [{ name: "write", args: { operation: "write", path: "k.txt", content: `key=${written.slice(0, 10)}\x1b[0m${written.slice(10)}\n` } }] },
    { text: ["I saw ", `${colour.slice(0, 12)}\x1b[1`, `m${colour.slice(12)}`, " in the output"] },
  ]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  const answer = toolAnswer(1);
  for (const token of [colour, zeroWidth]) expect(answer).not.toContain(token.slice(8));
  expect(answer.match(/\[REDACTED:github-token\]/g)).toHaveLength(2);
  expect(answer).not.toContain("\x1b"); // the model's copy has no escape sequences…
  expect(answer).toContain("(terminal escape sequences were removed from this output)"); // …and says so
  for (const token of [colour, zeroWidth, written]) {
    for (const tail of [token.slice(8), token.slice(10), token.slice(12)]) {
      expect(result.stdout).not.toContain(tail);
      expect(result.stderr).not.toContain(tail);
    }
  }
  expect(result.stdout).toBe("I saw [REDACTED:github-token] in the output\n");
  expect(result.stderr).toContain("+key=[REDACTED:github-token]");
});

test("the same split tokens are redacted in the event stream, which otherwise keeps escapes", async () => {
  const colour = githubToken();
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const command = `printf '${octal(colour.slice(0, 8))}\\033[0m${octal(colour.slice(8))}\\n'`;
  fake.script([
    { toolCalls: [{ name: "run", args: { command } }] },
    { text: ["\x1b[32mgreen\x1b[0m ", `${colour.slice(0, 12)}\x1b[1`, `m${colour.slice(12)}`, " end"] },
  ]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code).toBe(0);
  for (const line of result.stdout.split("\n")) expect(line).not.toContain(colour.slice(12));
  const events = jsonLines(result.stdout);
  const completed = events.find((e) => e.type === "tool.completed")!;
  expect(completed.redactions).toEqual({ count: 1, kinds: { "github-token": 1 } });
  const text = events.filter((e) => e.type === "message.delta").map((e) => e.text).join("");
  expect(text).toStartWith("\x1b[32mgreen\x1b[0m "); // --json keeps model text, escapes included
  expect(text).toContain("[REDACTED:github-token]");
});

test("invisible characters reach the terminal escaped: the answer, command lines and diff previews", async () => {
  const hidden = "\u200b\u200d\ufeff\u2028\u{e0041}\u{e0042}\u00ad\u180e";
  const escaped = "\\u200b\\u200d\\ufeff\\u2028\\u{e0041}\\u{e0042}\\xad\\u180e";
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([
    { toolCalls: [{ name: "run", args: { command: `echo a${hidden}b` } }] },
    { toolCalls: [{ name: "write", args: { operation: "write", path: "i.txt", content: `x${hidden}y\n` } }] },
    { text: [`done${hidden.slice(0, 3)}`, `${hidden.slice(3)} 👨‍👩‍👧 ok`] },
  ]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(result.stdout).toBe(`done${escaped} 👨‍👩‍👧 ok\n`);
  expect(result.stderr).toContain(`• run echo a${escaped}b`);
  expect(result.stderr).toContain(`+x${escaped}y`);
  for (const char of hidden) {
    expect(result.stderr).not.toContain(char);
    expect(result.stdout.replace("👨‍👩‍👧", "")).not.toContain(char);
  }
});
