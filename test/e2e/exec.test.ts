import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_ID_PATTERN, SESSION_ID_PATTERN } from "../../src/protocol/ids.ts";
import { outputEventSchema } from "../../src/protocol/stream-json.ts";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { ZERO_BIN, fakeConfig, runZero, spawnZero, type Sandbox, type ZeroOptions, type ZeroResult } from "../support/cli.ts";

/**
 * `zero exec`, whole program against the fake provider: the acceptance signals of
 * PROTO-SJ-01..21 (stream-json-protocol-v2.md, decisions.md "zero exec").
 */

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

type Line = Record<string, any>;

/** Every stream-json line this file saw, re-checked by the last test. */
const seen: Array<{ transcript: number; line: string }> = [];
let transcripts = 0;

/** Every key in a JSON value, however deep. */
function keysDeep(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)]);
}

function checkLine(line: string): Line {
  const value = JSON.parse(line) as unknown;
  const parsed = outputEventSchema.safeParse(value);
  if (!parsed.success) throw new Error(`not a valid stream-json v2 event: ${line}\n${parsed.error.message}`);
  expect(keysDeep(value)).not.toContain("violation"); // PROTO-SJ-08
  return value as Line;
}

/**
 * A stream-json transcript, checked as a client would: nothing but JSON lines on stdout,
 * each valid against the public schema, one runId, exactly one run_end, last, whose
 * exitCode is the process exit code (PROTO-SJ-01, -08, -12, -20).
 */
function transcript(result: ZeroResult): Line[] {
  const index = ++transcripts;
  expect(result.stdout).not.toBe("");
  expect(result.stdout.endsWith("\n")).toBe(true);
  const raw = result.stdout.slice(0, -1).split("\n");
  for (const line of raw) seen.push({ transcript: index, line });
  const lines = raw.map(checkLine);
  for (const line of lines) expect(line.schemaVersion).toBe(2);
  expect(new Set(lines.map((l) => l.runId)).size).toBe(1);
  expect(lines.filter((l) => l.type === "run_end")).toHaveLength(1);
  const last = lines.at(-1)!;
  expect(last.type).toBe("run_end");
  expect(last.exitCode).toBe(result.code);
  expect(last.status).toBe(result.code === 0 ? "success" : "error");
  return lines;
}

const STREAM = ["exec", "--output-format", "stream-json"];
const STREAM_IN = [...STREAM, "--input-format", "stream-json"];

function exec(args: string[], options: Omit<ZeroOptions, "cwd"> = {}): Promise<ZeroResult> {
  return runZero(args, { sandbox, ...options });
}

const deltas = (lines: Line[], type: "text" | "reasoning") => lines.filter((l) => l.type === type).map((l) => l.delta as string);
const one = (lines: Line[], type: string) => {
  const found = lines.filter((l) => l.type === type);
  expect(found).toHaveLength(1);
  return found[0]!;
};

function userText(body: any): string {
  const user = (body.messages as any[]).filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : (user?.content ?? []).map((p: any) => p.text ?? "").join("");
}

function toolMessages(index: number): Array<{ tool_call_id: string; content: string }> {
  return fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool");
}

/** Shape-correct fake token, built at run time so nothing secret-looking is committed. */
function githubToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return `ghp_${Array.from(crypto.getRandomValues(new Uint8Array(36)), (b) => alphabet[b % alphabet.length]).join("")}`;
}

const ev = (fields: Record<string, unknown>) => JSON.stringify({ schemaVersion: 2, ...fields });

describe("a successful run", () => {
  test("run_start first with its fields and id shapes; text deltas, usage 12/8/20, final, run_end 0 (SJ-01/02/03/11/12/21)", async () => {
    fake.script([{ text: ["The answer ", "is ", "42."], usage: { input: 12, output: 8 } }]);
    const result = await exec([...STREAM, "what is the answer?"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = transcript(result);
    const start = lines[0]!;
    expect(start).toEqual({
      schemaVersion: 2,
      type: "run_start",
      runId: start.runId,
      sessionId: start.sessionId,
      cwd: sandbox.workspace,
      provider: "fake",
      model: "fake",
      apiModel: "fake-1",
    });
    expect(start.runId).toMatch(RUN_ID_PATTERN);
    expect(start.runId).toMatch(/^run_\d{8}_[0-9a-z]+$/);
    expect(start.sessionId).toMatch(SESSION_ID_PATTERN);
    expect(start.sessionId).toMatch(/^zero_\d{14}_[0-9a-z]+$/);
    expect(start.sessionId.slice(5, 13)).toBe(start.runId.slice(4, 12)); // same UTC day stamp

    expect(deltas(lines, "text")).toEqual(["The answer ", "is ", "42."]);
    expect(one(lines, "final").text).toBe("The answer is 42.");
    expect(one(lines, "usage")).toMatchObject({ promptTokens: 12, completionTokens: 8, totalTokens: 20 });
    expect(lines.at(-1)).toMatchObject({ type: "run_end", status: "success", exitCode: 0 });
    expect(lines.map((l) => l.type)).toEqual(["run_start", "text", "text", "text", "usage", "final", "run_end"]);
    expect(userText(fake.requests[0]!.body)).toBe("what is the answer?");
  });

  test("deltas without a word boundary are held for redaction but none of the text is lost (SJ-03)", async () => {
    fake.script([{ text: ["a", "b", "c"] }]);
    const lines = transcript(await exec([...STREAM, "x"]));
    expect(deltas(lines, "text").join("")).toBe("abc");
    expect(one(lines, "final").text).toBe("abc");
  });

  test("reasoning is streamed as reasoning and never folded into text or final (SJ-04)", async () => {
    fake.script([{ reasoning: "R", text: "T" }]);
    const lines = transcript(await exec([...STREAM, "x"]));
    expect(deltas(lines, "reasoning")).toEqual(["R"]);
    expect(deltas(lines, "text")).toEqual(["T"]);
    expect(one(lines, "final").text).toBe("T");
    const reasoningAt = lines.findIndex((l) => l.type === "reasoning");
    expect(reasoningAt).toBeLessThan(lines.findIndex((l) => l.type === "final"));
  });

  test("text output prints the answer; json output is exactly one result object", async () => {
    fake.script([{ text: "The answer." }]);
    const text = await exec(["exec", "--output-format", "text", "x"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("The answer.\n");

    fake.script([{ text: ["The ", "answer."], usage: { input: 12, output: 8 } }]);
    const json = await exec(["exec", "--output-format", "json", "x"]);
    expect(json.code).toBe(0);
    const stdoutLines = json.stdout.split("\n");
    expect(stdoutLines).toHaveLength(2);
    expect(stdoutLines[1]).toBe("");
    const result = JSON.parse(stdoutLines[0]!);
    expect(result).toMatchObject({
      schemaVersion: 2,
      type: "result",
      status: "success",
      exitCode: 0,
      text: "The answer.",
      usage: { promptTokens: 12, completionTokens: 8, totalTokens: 20 },
    });
    expect(result.runId).toMatch(RUN_ID_PATTERN);
    expect(result.sessionId).toMatch(SESSION_ID_PATTERN);
    expect(result).not.toHaveProperty("error");
  });

  test("text is the default output format", async () => {
    fake.script([{ text: "plain" }]);
    const result = await exec(["exec", "x"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("plain\n");
  });
});

describe("tools and permissions", () => {
  test("tool_call / tool_result pair up by id; a read has sideEffect read (SJ-05/06)", async () => {
    fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }] }, { text: "42" }]);
    const lines = transcript(await exec([...STREAM, "x"]));
    const call = one(lines, "tool_call");
    expect(call).toEqual({ schemaVersion: 2, runId: lines[0]!.runId, type: "tool_call", id: "call_read", name: "read", args: { path: "README.md" }, sideEffect: "read" });
    const result = one(lines, "tool_result");
    expect(result).toMatchObject({ id: "call_read", status: "ok", truncated: false });
    expect(result.output).toContain("The answer is 42.");
    expect(lines.indexOf(result)).toBeGreaterThan(lines.indexOf(call));
    expect(one(lines, "final").text).toBe("42");
  });

  test("a huge command output comes back bounded with truncated:true (SJ-06)", async () => {
    fake.script([{ toolCalls: [{ name: "run", args: { command: "seq 1 200000" }, id: "call_seq" }] }, { text: "done" }]);
    const lines = transcript(await exec([...STREAM, "-y", "count"]));
    expect(one(lines, "tool_call")).toMatchObject({ id: "call_seq", name: "run", sideEffect: "shell" });
    const result = one(lines, "tool_result");
    expect(result).toMatchObject({ id: "call_seq", status: "ok", truncated: true });
    expect(result.output.length).toBeLessThan(200_000);
  });

  test("ask mode, headless write: permission_request then a denied tool_result, no permission_decision, no file (SJ-07/09)", async () => {
    fake.script([{ toolCalls: [{ name: "write", args: { operation: "write", path: "new.txt", content: "x\n" }, id: "call_w" }] }, { text: "ok" }]);
    const result = await exec([...STREAM, "--permission-mode", "ask", "make a file"]);
    expect(result.code).toBe(0);
    const lines = transcript(result);
    expect(existsSync(join(sandbox.workspace, "new.txt"))).toBe(false);
    expect(lines.map((l) => l.type)).not.toContain("permission_decision");
    const types = lines.map((l) => l.type);
    const request = types.indexOf("permission_request");
    expect(types.slice(request - 1, request + 2)).toEqual(["tool_call", "permission_request", "tool_result"]);
    const asked = lines[request]!;
    expect(asked).toMatchObject({ id: "call_w", name: "write", action: "prompt", permission: "prompt", permissionMode: "ask", sideEffect: "write" });
    expect(asked.reason).not.toBe("");
    expect(asked).not.toHaveProperty("block"); // an ordinary edit carries no sandbox metadata
    expect(lines[request + 1]).toMatchObject({ id: "call_w", status: "denied" });
    // The model is told, and the run goes on to its answer.
    expect(toolMessages(1)[0]!.content).toContain("requires approval for editing files");
    expect(toolMessages(1)[0]!.content).toContain("no one to ask");
    expect(one(lines, "final").text).toBe("ok");
  });

  test("ask mode, a run call: permission_request with risk high/shell and a shell block (SJ-07)", async () => {
    fake.script([{ toolCalls: [{ name: "run", args: { command: "touch made-by-run" }, id: "call_run" }] }, { text: "ok" }]);
    const lines = transcript(await exec([...STREAM, "x"]));
    expect(existsSync(join(sandbox.workspace, "made-by-run"))).toBe(false);
    expect(one(lines, "tool_call")).toMatchObject({ id: "call_run", name: "run", args: { command: "touch made-by-run" }, sideEffect: "shell" });
    const asked = one(lines, "permission_request");
    const risk = { level: "high", categories: ["shell"] };
    expect(asked).toMatchObject({ id: "call_run", name: "run", action: "prompt", permission: "prompt", permissionMode: "ask", sideEffect: "shell", risk });
    expect(asked.block).toEqual({ code: "shell", toolName: "run", action: "prompt", risk, reason: asked.reason, recoverable: true });
    expect(asked.reason).toContain("running commands");
    expect(one(lines, "tool_result")).toMatchObject({ id: "call_run", status: "denied" });
    expect(lines.map((l) => l.type)).not.toContain("permission_decision");
  });
});

describe("failures end with error then run_end", () => {
  test("provider 500 (retried at once) → error provider_error, run_end 3, exit 3, no final (SJ-13)", async () => {
    const down = { kind: "error" as const, status: 500, message: "boom", headers: { "retry-after-ms": "0" } };
    fake.script([down, down, down]);
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(3);
    expect(fake.requests).toHaveLength(3);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "error", "run_end"]);
    expect(lines[1]).toMatchObject({ code: "provider_error", recoverable: false });
    expect(lines[1]!.message).toContain("500");
    expect(lines[2]).toMatchObject({ status: "error", exitCode: 3 });
  });

  test("provider auth failure (401) → provider_error, exit 3 (SJ-20)", async () => {
    fake.script([{ kind: "error", status: 401, message: "invalid api key" }]);
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(3);
    const lines = transcript(result);
    expect(one(lines, "error")).toMatchObject({ code: "provider_error", recoverable: false });
    expect(lines.map((l) => l.type)).not.toContain("final");
  });

  test("the run deadline → error timeout, run_end 4, exit 4 (SJ-20)", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { runTimeoutMs: 1500 } }));
    fake.script([{ kind: "stall" }]);
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(4);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["run_start", "error", "run_end"]);
    expect(lines[1]).toMatchObject({ code: "timeout", recoverable: false });
  });

  test("SIGINT mid-stream → streamed text, error cancelled, run_end 130 last, exit 130 (SJ-20)", async () => {
    fake.script([{ text: ["partial ", "answer"], stallAfterChunks: 1 }]);
    const { proc, result } = spawnZero([...STREAM, "x"], { sandbox });
    await fake.waitForRequests(1, 10_000);
    await Bun.sleep(300); // let the first chunk arrive
    proc.kill("SIGINT");
    const done = await result;
    expect(done.code).toBe(130);
    const lines = transcript(done);
    expect(deltas(lines, "text").join("")).toBe("partial ");
    expect(lines.map((l) => l.type).slice(-2)).toEqual(["error", "run_end"]);
    expect(lines.at(-2)).toMatchObject({ code: "cancelled" });
    expect(lines.at(-1)).toMatchObject({ status: "error", exitCode: 130 });
    expect(lines.map((l) => l.type)).not.toContain("final");
  });

  // 120 ms: usually while the runtime bundle is still loading (the signal is held for main());
  // 400 ms: while the command waits for its input.
  test.each([120, 400])("SIGINT %d ms after start, while waiting for stream-json input, still ends with run_end 130 (SJ-20)", async (delayMs) => {
    const proc = Bun.spawn([ZERO_BIN, ...STREAM_IN], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    await Bun.sleep(delayMs);
    proc.kill("SIGINT");
    const code = await proc.exited;
    const stdout = await new Response(proc.stdout).text();
    expect(code).toBe(130);
    expect(fake.requests).toHaveLength(0);
    const lines = transcript({ code, stdout, stderr: "", ms: 0 });
    expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
    expect(lines[0]).toMatchObject({ code: "cancelled" });
  });

  test("a bad enum in the user config → error config_error naming it, run_end 2, no request", async () => {
    sandbox.writeUserConfig({ ...fakeConfig(fake.url), permissionMode: "banana" });
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(2);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
    expect(lines[0]).toMatchObject({ code: "config_error", recoverable: false });
    expect(lines[0]!.message).toContain("permissionMode");
    expect(lines[0]!.message).toContain("banana");
    expect(lines[0]!.runId).toMatch(RUN_ID_PATTERN);
    expect(fake.requests).toHaveLength(0);
  });

  test("a missing API key → error config_error naming the variable, run_end 2, exit 2", async () => {
    sandbox.writeUserConfig(fakeConfig(fake.url, "responses"));
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(2);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
    expect(lines[0]).toMatchObject({ code: "config_error" });
    expect(lines[0]!.message).toContain("FAKE_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  test("a failed run in json output is one result object with the error", async () => {
    fake.script([{ kind: "error", status: 401, message: "invalid api key" }]);
    const result = await exec(["exec", "--output-format", "json", "x"]);
    expect(result.code).toBe(3);
    const [line, rest] = result.stdout.split("\n");
    expect(rest).toBe("");
    expect(JSON.parse(line!)).toMatchObject({ type: "result", status: "error", exitCode: 3, error: { code: "provider_error" } });
  });
});

describe("stream-json input", () => {
  const input = `${ev({ type: "message", role: "user", content: "Inspect this repo." })}\n${ev({ type: "prompt", content: "Return only blockers." })}\n`;

  test("message + prompt are combined with a blank line; stdin and --file send identical requests (SJ-15/16)", async () => {
    fake.script([{ text: "ok" }, { text: "ok" }]);
    const fromStdin = await exec(STREAM_IN, { stdin: input });
    expect(fromStdin.code).toBe(0);
    transcript(fromStdin);
    writeFileSync(join(sandbox.workspace, "in.jsonl"), input);
    const fromFile = await exec([...STREAM_IN, "--file", "in.jsonl"]);
    expect(fromFile.code).toBe(0);
    transcript(fromFile);
    expect(fake.requests).toHaveLength(2);
    expect(userText(fake.requests[0]!.body)).toBe("Inspect this repo.\n\nReturn only blockers.");
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
  });

  test("blank lines and CRLF endings change nothing (SJ-17)", async () => {
    fake.script([{ text: "ok" }, { text: "ok" }]);
    transcript(await exec(STREAM_IN, { stdin: input }));
    const spaced = `\n\n${input.replaceAll("\n", "\r\n\r\n")}\n  \n`;
    transcript(await exec(STREAM_IN, { stdin: spaced }));
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
  });

  test("a U+2028 inside a content string reaches the model intact", async () => {
    fake.script([{ text: "ok" }]);
    transcript(await exec(STREAM_IN, { stdin: `{"schemaVersion":2,"type":"prompt","content":"one\u2028two"}\n` }));
    expect(userText(fake.requests[0]!.body)).toBe("one\u2028two");
  });

  const invalid: Array<[string, string, string | RegExp]> = [
    ["an unknown field (SJ-18)", `${ev({ type: "prompt", content: "x", extra: 1 })}\n`, /^line 1: unknown field "extra"/],
    ["a missing schemaVersion (SJ-19)", `${JSON.stringify({ type: "prompt", content: "x" })}\n`, /^line 1: schemaVersion must be 2/],
    ["schemaVersion 1 (SJ-19)", `${ev({ type: "prompt", content: "ok" })}\n${JSON.stringify({ schemaVersion: 1, type: "prompt", content: "x" })}\n`, /^line 2: schemaVersion must be 2 \(got 1\)/],
    ["an unknown type (SJ-19)", `${ev({ type: "banana", content: "x" })}\n`, /^line 1: unknown type "banana"/],
    ["malformed JSON", `\n${ev({ type: "prompt", content: "ok" })}\n{"schemaVersion":2,\n`, /^line 3: malformed JSON/],
    ["a role other than user", `${ev({ type: "message", role: "assistant", content: "x" })}\n`, /^line 1: role must be "user"/],
    ["a non-string content", `${ev({ type: "prompt", content: 42 })}\n`, /^line 1: content must be a string/],
    ["a line that is not an object", "[1,2,3]\n", /^line 1: an input event must be a JSON object/],
    ["no events at all", "\n\n", /no input events/],
    ["a line over the 1 MiB line limit", `${ev({ type: "prompt", content: "ok" })}\n${ev({ type: "prompt", content: "x".repeat(2 * 1024 * 1024) })}\n`, /^line 2: longer than the maximum line size of 1 MiB \(1048576 bytes\)$/],
    ["a line of only U+00A0", `${ev({ type: "prompt", content: "ok" })}\n\u00a0\n`, /^line 2: only whitespace/],
    ["a line of only U+2028 then U+FEFF", `\n\u2028\n\ufeff\n${ev({ type: "prompt", content: "ok" })}\n`, /^line 2: only whitespace/],
  ];
  for (const [name, stdin, message] of invalid) {
    test(`invalid input: ${name} → error invalid_input naming the line, run_end 2, no model request`, async () => {
      const result = await exec(STREAM_IN, { stdin });
      expect(result.code).toBe(2);
      const lines = transcript(result);
      expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
      expect(lines[0]).toMatchObject({ code: "invalid_input", recoverable: false });
      expect(lines[0]!.message).toMatch(message);
      expect(lines[1]).toMatchObject({ status: "error", exitCode: 2 });
      expect(fake.requests).toHaveLength(0);
    });
  }

  test("invalid input from --file is rejected the same way; a missing --file too", async () => {
    writeFileSync(join(sandbox.workspace, "bad.jsonl"), `${ev({ type: "prompt", content: "x", extra: true })}\n`);
    const bad = await exec([...STREAM_IN, "--file", "bad.jsonl"]);
    expect(bad.code).toBe(2);
    expect(transcript(bad)[0]).toMatchObject({ type: "error", code: "invalid_input", message: expect.stringMatching(/^line 1: unknown field/) });
    const missing = await exec([...STREAM_IN, "--file", "nope.jsonl"]);
    expect(missing.code).toBe(2);
    expect(transcript(missing)[0]).toMatchObject({ type: "error", code: "invalid_input", message: expect.stringContaining("nope.jsonl") });
    expect(fake.requests).toHaveLength(0);
  });

  test("invalid UTF-8 in a line (from --file) is invalid input naming the line, not repaired", async () => {
    const enc = new TextEncoder();
    writeFileSync(join(sandbox.workspace, "latin1.jsonl"), new Uint8Array([...enc.encode(`${ev({ type: "prompt", content: "ok" })}\n{"schemaVersion":2,"type":"prompt","content":"caf`), 0xe9, ...enc.encode('"}\n')]));
    const result = await exec([...STREAM_IN, "--file", "latin1.jsonl"]);
    expect(result.code).toBe(2);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
    expect(lines[0]).toMatchObject({ code: "invalid_input", message: "line 2: not valid UTF-8" });
    expect(fake.requests).toHaveLength(0);
  });

  test("more than 8 MiB of input is invalid input, from stdin (either format) and from --file; no model request", async () => {
    const line = `${ev({ type: "prompt", content: "y".repeat(1000 * 1000) })}\n`;
    const many = line.repeat(9);
    const streamed = await exec(STREAM_IN, { stdin: many });
    expect(streamed.code).toBe(2);
    expect(transcript(streamed)[0]).toMatchObject({ type: "error", code: "invalid_input", message: expect.stringContaining("larger than the input limit of 8 MiB") });
    writeFileSync(join(sandbox.workspace, "many.jsonl"), many);
    const fromFile = await exec([...STREAM_IN, "--file", "many.jsonl"]);
    expect(fromFile.code).toBe(2);
    expect(transcript(fromFile)[0]).toMatchObject({ code: "invalid_input", message: expect.stringMatching(/^--file many\.jsonl is larger than the input limit of 8 MiB/) });
    const text = await exec([...STREAM, "--input-format", "text"], { stdin: "z".repeat(9 * 1024 * 1024) });
    expect(text.code).toBe(2);
    expect(transcript(text)[0]).toMatchObject({ code: "invalid_input", message: expect.stringMatching(/^standard input is larger than the input limit/) });
    expect(fake.requests).toHaveLength(0);
  }, 30_000);

  test("a prompt argument with stream-json input is invalid input", async () => {
    const result = await exec([...STREAM_IN, "an argument"], { stdin: input });
    expect(result.code).toBe(2);
    expect(transcript(result)[0]).toMatchObject({ type: "error", code: "invalid_input" });
    expect(fake.requests).toHaveLength(0);
  });

  test("input whose only content is blank is invalid input, like a blank text prompt (no model call)", async () => {
    // BUG: a blank text prompt is rejected (exit 2), but blank stream-json content runs the model with an empty task.
    const blankText = await exec([...STREAM, "--input-format", "text"], { stdin: "  \n" });
    expect(blankText.code).toBe(2);
    expect(transcript(blankText)[0]).toMatchObject({ type: "error", code: "invalid_input" });
    fake.script([{ text: "ok" }]);
    const result = await exec(STREAM_IN, { stdin: `${ev({ type: "prompt", content: "   " })}\n` });
    expect(fake.requests).toHaveLength(0);
    expect(result.code).toBe(2);
    expect(transcript(result)[0]).toMatchObject({ type: "error", code: "invalid_input" });
  });

  test("an unknown option with --output-format stream-json still answers in stream-json (SJ-20)", async () => {
    // BUG: argument parsing fails before the output format is known, so only stderr is written.
    const result = await exec([...STREAM, "--no-such-option", "x"]);
    expect(result.code).toBe(2);
    const lines = transcript(result);
    expect(lines.map((l) => l.type)).toEqual(["error", "run_end"]);
    expect(lines[0]).toMatchObject({ code: "invalid_input" });
    expect(lines[0]!.message).toContain("--no-such-option");
    expect(fake.requests).toHaveLength(0);
  });

  test("an invalid flag value with stream-json output → invalid_input, run_end 2", async () => {
    const result = await exec([...STREAM, "--permission-mode", "yolo", "x"]);
    expect(result.code).toBe(2);
    const lines = transcript(result);
    expect(lines[0]).toMatchObject({ type: "error", code: "invalid_input" });
    expect(lines[0]!.message).toContain("yolo");
  });
});

describe("text input", () => {
  test("--input-format text takes the prompt from the argument or from stdin", async () => {
    fake.script([{ text: "ok" }, { text: "ok" }]);
    transcript(await exec([...STREAM, "--input-format", "text", "summarize", "the", "repo"]));
    transcript(await exec([...STREAM, "--input-format", "text"], { stdin: "summarize the repo\n" }));
    expect(fake.requests).toHaveLength(2);
    expect(userText(fake.requests[0]!.body)).toBe("summarize the repo");
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
  });

  test("with text input, JSON on stdin is just the prompt text", async () => {
    fake.script([{ text: "ok" }]);
    const line = ev({ type: "prompt", content: "x" });
    transcript(await exec([...STREAM], { stdin: line }));
    expect(userText(fake.requests[0]!.body)).toBe(line);
  });
});

describe("redaction", () => {
  test("a GitHub token in the model's text, split across chunks, is redacted in text deltas and final (SJ-14)", async () => {
    const token = githubToken();
    fake.script([{ text: [`Your token is ${token.slice(0, 12)}`, `${token.slice(12)} so rotate `, "it."] }]);
    const result = await exec([...STREAM, "x"]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toContain(token.slice(4)); // not even the body without its prefix
    const lines = transcript(result);
    expect(deltas(lines, "text").join("")).toBe("Your token is [REDACTED:github-token] so rotate it.");
    expect(one(lines, "final").text).toBe("Your token is [REDACTED:github-token] so rotate it.");
  });

  test("a token in a tool's output and in reasoning is redacted too", async () => {
    const token = githubToken();
    fake.script([{ reasoning: `saw ${token} here`, toolCalls: [{ name: "run", args: { command: `echo ${token}` } }] }, { text: "done" }]);
    const result = await exec([...STREAM, "-y", "x"]);
    expect(result.code).toBe(0);
    const lines = transcript(result);
    expect(one(lines, "tool_result").output).toContain("[REDACTED:github-token]");
    expect(deltas(lines, "reasoning").join("")).toBe("saw [REDACTED:github-token] here");
    expect(result.stdout).not.toContain(token);
  });
  test("the configured provider key in the model's text is redacted (known secret)", async () => {
    const key = `local-${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => "abcdefghijkmnpqrstuvwxyz23456789"[b % 32]).join("")}`;
    sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { providers: { fake: { type: "openai-compatible", baseURL: fake.url, apiKeyEnv: "LOCAL_MODEL_KEY" } } }));
    fake.script([{ text: ["the key is ", key.slice(0, 9), `${key.slice(9)} ok`] }]);
    const result = await exec([...STREAM, "x"], { env: { LOCAL_MODEL_KEY: key } });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(key);
    const lines = transcript(result);
    expect(one(lines, "final").text).toBe("the key is [REDACTED:known-secret] ok");
  });
});

test("every stream-json line this file saw is valid v2 with no violation key", () => {
  // Runs last: re-checks the lines collected from every transcript above.
  expect(new Set(seen.map((s) => s.transcript)).size).toBeGreaterThanOrEqual(30);
  for (const { transcript: index, line } of seen) {
    const parsed = outputEventSchema.safeParse(JSON.parse(line));
    if (!parsed.success) throw new Error(`transcript ${index}: ${line}`);
    expect(line).not.toContain('"violation"');
  }
});
