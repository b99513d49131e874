import { afterEach, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, waitUntil, ZERO_BIN, type Sandbox } from "../support/cli.ts";

// `acpx` (npm, pinned in devDependencies) as an independent, real ACP client driving `zero acp`
// end to end: one-shot `exec`, and a persistent session (`sessions new`, `set model`, prompts,
// `sessions close`) served by acpx's queue-owner process. Linux only (processes are found in /proc).

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const ACPX = resolve(import.meta.dir, "../../node_modules/acpx/dist/cli.js");

/** Two model aliases on the fake provider, with different model ids. */
function twoModelConfig(): Record<string, unknown> {
  return fakeConfig(fake.url, "chat", { models: { other: { provider: "fake", model: "fake-2", capabilities: ["text", "tools"] } } });
}

type AcpxResult = { code: number; lines: Array<Record<string, any>>; stdout: string; stderr: string };

/**
 * Runs acpx under Bun (it needs Node >= 22; Bun serves it) in the sandbox: HOME is the sandbox's, so
 * acpx's own state (~/.acpx: session records, queue-owner sockets) is isolated per test. A short
 * --ttl makes a queue owner exit soon after its last prompt.
 */
async function acpx(agent: string, args: string[], format: "json" | "text" = "json"): Promise<AcpxResult> {
  const child = Bun.spawn([process.execPath, ACPX, "--agent", agent, "--ttl", "2", "--format", format, ...args], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  const lines = format === "json" ? stdout.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, any>) : [];
  return { code, lines, stdout, stderr };
}

const zeroAgent = () => `${ZERO_BIN} acp`;

/**
 * `zero acp` behind a tap that copies the wire to files: what acpx sent (client.ndjson) and what
 * zero answered (agent.ndjson), across every agent process acpx starts. Used where acpx's own
 * output does not show the JSON-RPC (`sessions new`, `set`).
 */
function tappedAgent(): { command: string; sent(): Array<Record<string, any>>; answered(): Array<Record<string, any>> } {
  const script = join(sandbox.root, "tap.sh");
  const sentPath = join(sandbox.root, "client.ndjson");
  const answeredPath = join(sandbox.root, "agent.ndjson");
  writeFileSync(script, `#!/usr/bin/env bash\ntee -a '${sentPath}' | '${ZERO_BIN}' acp | tee -a '${answeredPath}'\n`);
  chmodSync(script, 0o755);
  const read = (path: string) =>
    existsSync(path)
      ? readFileSync(path, "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
          .map((line) => JSON.parse(line) as Record<string, any>)
      : [];
  return { command: script, sent: () => read(sentPath), answered: () => read(answeredPath) };
}

/** Live processes of this sandbox (HOME is the sandbox's, or the cwd is inside it): acpx, its queue owner, zero. */
function sandboxProcesses(): Array<{ pid: number; args: string }> {
  const found: Array<{ pid: number; args: string }> = [];
  if (!existsSync("/proc")) return found;
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {}
      if (environ.includes(`HOME=${sandbox.home}`) || cwd === sandbox.root || cwd.startsWith(`${sandbox.root}/`)) {
        found.push({ pid, args: readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim() });
      }
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

/** Waits (bounded) for every process of the sandbox to exit; returns the ones still running. */
async function settled(timeoutMs = 10_000): Promise<Array<{ pid: number; args: string }>> {
  try {
    await waitUntil("the sandbox's processes to exit", () => sandboxProcesses().length === 0, timeoutMs, 100);
  } catch {}
  return sandboxProcesses();
}

// A failed test must not leave a queue owner or a zero behind.
afterEach(async () => {
  for (const { pid } of sandboxProcesses()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

/** The answer to `request` in a two-way JSON-RPC log (ids are per direction: the first answer after it). */
function answerTo(lines: Array<Record<string, any>>, request: Record<string, any> | undefined): Record<string, any> | undefined {
  const at = request === undefined ? -1 : lines.indexOf(request);
  if (at < 0) return undefined;
  return lines.slice(at + 1).find((line) => line.id === request!.id && line.method === undefined && (line.result !== undefined || line.error !== undefined));
}

function messageText(lines: Array<Record<string, any>>): string {
  return lines
    .filter((line) => line.method === "session/update" && line.params?.update?.sessionUpdate === "agent_message_chunk")
    .map((line) => line.params.update.content.text)
    .join("");
}

test("acpx exec: initialize, session/new and a streamed prompt against zero acp", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: ["hello ", "from ", "zero"] }]);
  const result = await acpx(zeroAgent(), ["--approve-all", "exec", "say hi"]);
  expect(result.code, result.stderr).toBe(0);

  // --format json prints the raw JSON-RPC both ways, in wire order.
  const init = answerTo(result.lines, result.lines.find((line) => line.method === "initialize"));
  expect(init?.result.agentInfo.name).toBe("zero-cli");
  const created = result.lines.find((line) => line.method === "session/new");
  expect(created?.params.cwd).toBe(sandbox.workspace);
  const sessionId = answerTo(result.lines, created)?.result.sessionId;
  expect(typeof sessionId).toBe("string");
  const prompt = result.lines.find((line) => line.method === "session/prompt");
  expect(prompt?.params).toEqual({ sessionId, prompt: [{ type: "text", text: "say hi" }] });
  expect(messageText(result.lines)).toBe("hello from zero");
  expect(answerTo(result.lines, prompt)?.result).toEqual({ stopReason: "end_turn" });

  // What the fake was sent: the configured model id and the prompt as the last user message.
  expect(fake.requests).toHaveLength(1);
  expect(fake.requests[0]!.body.model).toBe("fake-1");
  expect(fake.requests[0]!.body.messages.at(-1)).toEqual({ role: "user", content: "say hi" });

  // The text format shows the streamed answer to a person.
  fake.script([{ text: ["plain ", "text ", "answer"] }]);
  const text = await acpx(zeroAgent(), ["--approve-all", "exec", "say it plainly"], "text");
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout).toContain("plain text answer");
  expect(fake.requests[1]!.body.messages.at(-1)).toEqual({ role: "user", content: "say it plainly" });

  expect(await settled()).toEqual([]);
}, 60_000);

test("acpx exec --approve-all: a command that needs permission is asked for, approved by the client, and runs", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "touch made-by-acp" }, id: "call_run" }] }, { text: "made it" }]);
  const result = await acpx(zeroAgent(), ["--approve-all", "exec", "make the file"]);
  expect(result.code, result.stderr).toBe(0);
  const asked = result.lines.find((line) => line.method === "session/request_permission");
  expect(asked?.params.toolCall.toolCallId).toBe("call_run");
  // acpx answers with one of zero's allow options.
  const answer = answerTo(result.lines, asked);
  expect(answer?.result.outcome.outcome).toBe("selected");
  expect(String(answer?.result.outcome.optionId)).toStartWith("allow-");
  expect(existsSync(join(sandbox.workspace, "made-by-acp"))).toBe(true);
  const tool = fake.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  expect(tool.content).toContain("exit code 0");
  expect(messageText(result.lines)).toBe("made it");
  expect(await settled()).toEqual([]);
}, 60_000);

test("acpx persistent session: sessions new, set model (session/set_config_option), prompts with history in one process and after a resume, sessions close", async () => {
  sandbox.writeUserConfig(twoModelConfig());
  const tap = tappedAgent();

  // 1. sessions new: acpx starts zero, initialize + session/new, records the session under ~/.acpx.
  const created = await acpx(tap.command, ["sessions", "new"]);
  expect(created.code, created.stderr).toBe(0);
  expect(created.lines[0]).toMatchObject({ action: "session_ensured", created: true });
  const sessionId = created.lines[0]!.acpxSessionId as string;
  expect(tap.sent().find((m) => m.method === "session/new")?.params).toEqual({ cwd: sandbox.workspace, mcpServers: [] });
  const newAnswer = tap.answered().find((m) => m.result?.sessionId === sessionId)?.result;
  const modelOption = newAnswer?.configOptions?.find((o: any) => o.id === "model");
  expect(modelOption).toMatchObject({ category: "model", type: "select", currentValue: "fake" });
  expect(modelOption.options.map((o: any) => o.value)).toEqual(expect.arrayContaining(["fake", "other"]));
  expect(fake.requests).toHaveLength(0);

  // 2. set model other: acpx resumes the session and sends session/set_config_option (the server
  //    advertises a "model" option of category "model", so not the legacy session/set_model).
  const set = await acpx(tap.command, ["set", "model", "other"]);
  expect(set.code, set.stderr).toBe(0);
  expect(set.lines[0]).toMatchObject({ action: "model_set", modelId: "other", acpxSessionId: sessionId });
  const setRequest = tap.sent().find((m) => m.method === "session/set_config_option");
  expect(setRequest?.params).toEqual({ sessionId, configId: "model", value: "other" });
  expect(tap.sent().some((m) => m.method === "session/set_model")).toBe(false);
  const setAnswer = tap.answered().find((m) => m.id === setRequest?.id && m.result?.configOptions !== undefined && m.method === undefined);
  expect(setAnswer?.result.configOptions.find((o: any) => o.id === "model")?.currentValue).toBe("other");

  // 3. A prompt in the session reaches the fake with the new model's id.
  fake.script([{ text: ["first ", "answer"] }, { text: ["second ", "answer"] }]);
  const first = await acpx(tap.command, ["--approve-all", "prompt", "first question"]);
  expect(first.code, first.stderr).toBe(0);
  expect(messageText(first.lines)).toBe("first answer");
  expect(first.lines.find((line) => line.method === "session/prompt")?.params.sessionId).toBe(sessionId);
  expect(fake.requests).toHaveLength(1);
  expect(fake.requests[0]!.body.model).toBe("fake-2");
  expect(fake.requests[0]!.body.messages.at(-1)).toEqual({ role: "user", content: "first question" });

  // 4. A second prompt in the same session carries the first turn's history.
  const second = await acpx(tap.command, ["--approve-all", "prompt", "second question"]);
  expect(second.code, second.stderr).toBe(0);
  expect(messageText(second.lines)).toBe("second answer");
  expect(fake.requests).toHaveLength(2);
  expect(fake.requests[1]!.body.model).toBe("fake-2");
  const history = fake.requests[1]!.body.messages.filter((m: any) => m.role !== "system");
  expect(history).toEqual([
    { role: "user", content: "first question" },
    { role: "assistant", content: "first answer" },
    { role: "user", content: "second question" },
  ]);
  // Every request acpx sent named the one session.
  for (const message of tap.sent().filter((m) => typeof m.params?.sessionId === "string")) expect(message.params.sessionId).toBe(sessionId);

  // 5. Once the queue owner's --ttl has run out (it and its zero exit), a third prompt starts a new
  //    zero that restores the session with session/resume: the history still reaches the fake.
  expect(await settled()).toEqual([]);
  fake.script([{ text: "third answer" }]);
  const third = await acpx(tap.command, ["--approve-all", "prompt", "third question"]);
  expect(third.code, third.stderr).toBe(0);
  expect(messageText(third.lines)).toBe("third answer");
  expect(third.lines.find((line) => line.method === "session/resume")?.params).toMatchObject({ sessionId, cwd: sandbox.workspace });
  expect(fake.requests).toHaveLength(3);
  expect(fake.requests[2]!.body.model).toBe("fake-2");
  expect(fake.requests[2]!.body.messages.filter((m: any) => m.role !== "system")).toEqual([
    ...history,
    { role: "assistant", content: "second answer" },
    { role: "user", content: "third question" },
  ]);

  // 6. sessions close: session/close reaches zero, and the queue owner and zero exit.
  const closed = await acpx(tap.command, ["sessions", "close"]);
  expect(closed.code, closed.stderr).toBe(0);
  expect(closed.lines[0]).toMatchObject({ action: "session_closed", acpxSessionId: sessionId });
  expect(tap.sent().find((m) => m.method === "session/close")?.params).toEqual({ sessionId });
  expect(await settled()).toEqual([]);
}, 90_000);
