import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, waitUntil, ZERO_BIN, type Sandbox } from "../support/cli.ts";
import { expectOnlyJsonRpc, initialize, newAcpSession, prompt, startAcpAgent, textOf, type AcpAgent, type PermissionAnswer } from "../support/acp-client.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

type Agent = AcpAgent;

/** `zero acp` as an editor runs it, in the sandbox's workspace (test/support/acp-client.ts). */
const startAgent = (answer: PermissionAnswer) => startAcpAgent(sandbox, answer);

async function newSession(a: Agent): Promise<string> {
  return (await newAcpSession(a, sandbox.workspace)).sessionId;
}

test("acp: initialize, stream a turn, run a tool with allow-always, reuse it, cancel mid-run", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await startAgent(() => ({ outcome: { outcome: "selected", optionId: "allow-always" } }));
  try {
    const init = await initialize(a);
    expect(init.agentInfo).toMatchObject({ name: "zero-cli" });
    expect(typeof init.agentInfo?.version).toBe("string");
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true, audio: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {}, additionalDirectories: {} },
    });
    expect(init.authMethods).toEqual([]);
    const sessionId = await newSession(a);

    // 1. Text and reasoning stream as message and thought chunks; the turn ends end_turn.
    fake.script([{ reasoning: ["Let me ", "think"], text: ["Hel", "lo ", "there"] }]);
    expect(await prompt(a, sessionId, "say hello")).toMatchObject({ stopReason: "end_turn" });
    await waitUntil("the streamed text", () => textOf(a.updates, "agent_message_chunk") === "Hello there");
    expect(textOf(a.updates, "agent_thought_chunk")).toBe("Let me think");
    expect(a.updates.every((n) => n.sessionId === sessionId)).toBe(true);

    // 2. A `run` call needs approval in ask mode: the client is asked, answers allow-always.
    const command = "echo hi > made-by-run && echo done";
    const runCall = { toolCalls: [{ name: "run", args: { command }, id: "call_run" }] };
    fake.script([runCall, { text: "ran it" }]);
    expect(await prompt(a, sessionId, "make a file")).toMatchObject({ stopReason: "end_turn" });
    expect(existsSync(join(sandbox.workspace, "made-by-run"))).toBe(true);
    expect(a.permissions).toHaveLength(1);
    expect(a.permissions[0]!.sessionId).toBe(sessionId);
    expect(a.permissions[0]!.toolCall.toolCallId).toBe("call_run");
    expect(a.permissions[0]!.options.map((o) => [o.optionId, o.kind])).toEqual([
      ["allow-once", "allow_once"],
      ["allow-always", "allow_always"],
      ["reject-once", "reject_once"],
    ]);
    await waitUntil("the tool call's result", () => a.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.status === "completed"));
    const call = a.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call")!;
    expect(call).toMatchObject({ toolCallId: "call_run", kind: "execute", status: "pending" });
    expect((call as { title: string }).title).toContain("echo hi");
    const done = a.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed") as acp.ToolCallUpdate;
    expect(JSON.stringify(done.content)).toContain("exit code 0");
    expect(JSON.stringify(done.content)).toContain("done");

    // 3. The same command again: the session's "always" covers it, nobody is asked.
    fake.script([{ ...runCall, toolCalls: [{ ...runCall.toolCalls[0]!, id: "call_run2" }] }, { text: "again" }]);
    expect(await prompt(a, sessionId, "again")).toMatchObject({ stopReason: "end_turn" });
    expect(a.permissions).toHaveLength(1);
    await waitUntil("the reused call's result", () => a.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.toolCallId === "call_run2" && n.update.status === "completed"));
    const toolAnswer = fake.requests.at(-1)!.body.messages.filter((m: any) => m.role === "tool").at(-1);
    expect(toolAnswer.content).toContain("exit code 0");

    // 3b. A read and an edit: kinds and locations from the call's target; the edit's diff is shown.
    const readme = join(sandbox.workspace, "README.md");
    const edit = { operation: "edit", path: "README.md", oldText: "The answer is 42.", newText: "The answer is 43." };
    fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }, { name: "write", args: edit, id: "call_edit" }] }, { text: "edited" }]);
    expect(await prompt(a, sessionId, "edit the readme")).toMatchObject({ stopReason: "end_turn" });
    expect(a.permissions.map((p) => p.toolCall.toolCallId)).toEqual(["call_run", "call_edit"]);
    await waitUntil("the edit's result", () => a.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.toolCallId === "call_edit" && n.update.status === "completed"));
    const calls = a.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call") as acp.ToolCall[];
    expect(calls.find((c) => c.toolCallId === "call_read")).toMatchObject({ kind: "read", locations: [{ path: readme }] });
    expect(calls.find((c) => c.toolCallId === "call_edit")).toMatchObject({ kind: "edit", locations: [{ path: readme }] });
    const edited = a.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_edit" && u.status === "completed");
    expect(JSON.stringify(edited)).toContain("+The answer is 43.");
    // …and as ACP diff content, which editors show as a diff of the file.
    expect((edited as acp.ToolCallUpdate).content?.[0]).toEqual({ type: "diff", path: readme, oldText: "The answer is 42.", newText: "The answer is 43." });

    // 4. session/cancel while the model stalls: the prompt answers cancelled promptly.
    fake.script([{ kind: "stall" }]);
    const before = fake.requests.length;
    const stalled = prompt(a, sessionId, "take forever");
    await fake.waitForRequests(before + 1);
    const cancelledAt = performance.now();
    await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect(await stalled).toMatchObject({ stopReason: "cancelled" });
    expect(performance.now() - cancelledAt).toBeLessThan(5_000);

    // 5. The session still serves after a cancel; a refusal is stopReason refusal.
    fake.script([{ refusal: "I will not do that" }]);
    expect(await prompt(a, sessionId, "do something bad")).toMatchObject({ stopReason: "refusal" });
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 60_000);

test("acp: a rejected permission denies the call; resource links and embedded text reach the model", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await startAgent(() => ({ outcome: { outcome: "selected", optionId: "reject-once" } }));
  try {
    await initialize(a);
    const sessionId = await newSession(a);
    const todo = { name: "todo", args: { items: [{ content: "write the file", status: "in_progress" }] }, id: "call_todo" };
    fake.script([{ toolCalls: [todo, { name: "run", args: { command: "touch denied-file" }, id: "call_x" }] }, { text: "ok" }]);
    const answer = await a.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "look at these" },
        { type: "resource_link", uri: "file:///tmp/linked.txt", name: "linked.txt" },
        { type: "resource", resource: { uri: "file:///tmp/embedded.md", text: "EMBEDDED BODY 7731" } },
      ],
    });
    expect(answer.stopReason).toBe("end_turn");
    expect(a.permissions).toHaveLength(1);
    expect(existsSync(join(sandbox.workspace, "denied-file"))).toBe(false);
    const task = JSON.stringify(fake.requests[0]!.body.messages.filter((m: any) => m.role === "user"));
    expect(task).toContain("look at these");
    expect(task).toContain("file:///tmp/linked.txt");
    expect(task).toContain("EMBEDDED BODY 7731");
    await waitUntil("the denied call's update", () => a.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.status === "failed"));
    // The todo ledger is the client's plan.
    const plan = a.updates.map((n) => n.update).find((u) => u.sessionUpdate === "plan");
    expect(plan).toMatchObject({ entries: [{ content: "write the file", status: "in_progress", priority: "medium" }] });
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 60_000);

test("acp: malformed frames, bad params, unknown sessions and methods get JSON-RPC errors; the server keeps serving", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await startAgent(() => ({ outcome: { outcome: "cancelled" } }));
  try {
    a.writeRaw("{this is not json\n");
    await waitUntil("the parse error", () => a.raw().includes("-32700"));
    // The next request is served as if nothing happened.
    expect((await initialize(a)).agentInfo?.name).toBe("zero-cli");

    const relative = a.agent.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] });
    await expect(relative).rejects.toMatchObject({ code: -32602 });
    await expect(a.agent.request(acp.methods.agent.session.new, { cwd: join(sandbox.root, "missing"), mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(prompt(a, "no-such-session", "hi")).rejects.toMatchObject({ code: -32602 });
    await expect(a.agent.request("session/load", { sessionId: "x", cwd: sandbox.workspace, mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(a.agent.request("session/delete", { sessionId: "x" })).rejects.toMatchObject({ code: -32601 });

    // session/close releases the session: prompting it afterwards is an unknown session.
    const sessionId = await newSession(a);
    await a.agent.request(acp.methods.agent.session.close, { sessionId });
    await expect(prompt(a, sessionId, "hi")).rejects.toMatchObject({ code: -32602 });

    // Content that is not advertised (images) is refused, naming what is supported.
    const image = a.agent.request(acp.methods.agent.session.prompt, { sessionId: await newSession(a), prompt: [{ type: "image", data: "AAAA", mimeType: "image/png" }] });
    await expect(image).rejects.toMatchObject({ code: -32602 });

    // Still serving: a fresh session runs a turn.
    fake.script([{ text: "still here" }]);
    expect(await prompt(a, await newSession(a), "hello?")).toMatchObject({ stopReason: "end_turn" });
  } finally {
    expect(await a.stop()).toBe(0);
  }
  const messages = expectOnlyJsonRpc(a.raw());
  expect(messages.some((m) => m.error?.code === -32700 && m.id === null)).toBe(true);
}, 60_000);

test("acp: session/new loads the config of its cwd; an untrusted project config is ignored, a trusted one used", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  // A project config that would send another model name to the same provider.
  const project = { version: 2, models: { proj: { provider: "fake", model: "project-model-1", capabilities: ["text", "tools"] } }, agents: { build: { model: "proj" } } };
  sandbox.writeProjectConfig(project);
  const turn = async () => {
    const a = await startAgent(() => ({ outcome: { outcome: "cancelled" } }));
    try {
      await initialize(a);
      fake.script([{ text: "answered" }]);
      expect(await prompt(a, await newSession(a), "hi")).toMatchObject({ stopReason: "end_turn" });
    } finally {
      expect(await a.stop()).toBe(0);
    }
    expectOnlyJsonRpc(a.raw());
    return { model: fake.requests.at(-1)!.body.model as string, stderr: a.stderr(), raw: a.raw() };
  };
  const untrusted = await turn();
  expect(untrusted.model).toBe("fake-1");
  expect(untrusted.stderr).toContain("ignoring untrusted project config");
  expect(untrusted.raw).not.toContain("untrusted");

  expect(Bun.spawnSync([ZERO_BIN, "trust"], { cwd: sandbox.workspace, env: sandbox.env }).exitCode).toBe(0);
  expect((await turn()).model).toBe("project-model-1");
}, 60_000);

/** Whether a process with exactly this command line runs (Linux: /proc). */
function running(commandLine: string): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") === commandLine) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

test("acp: session/cancel during a `run` kills its process: the prompt answers cancelled promptly and the sleep is gone", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await startAgent(() => ({ outcome: { outcome: "selected", optionId: "allow-once" } }));
  // An unusual duration so no other process matches.
  const sleep = "sleep 1237";
  try {
    await initialize(a);
    const sessionId = await newSession(a);
    fake.script([{ toolCalls: [{ name: "run", args: { command: sleep }, id: "call_sleep" }] }, { text: "never reached" }]);
    const pending = prompt(a, sessionId, "sleep a long time");
    await waitUntil("the sleep to run", () => running(sleep), 15_000);
    const cancelledAt = performance.now();
    await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect(await pending).toMatchObject({ stopReason: "cancelled" });
    expect(performance.now() - cancelledAt).toBeLessThan(5_000);
    await waitUntil("the sleep to be killed", () => !running(sleep), 5_000);
    // The session serves again.
    fake.script([{ text: "back" }]);
    expect(await prompt(a, sessionId, "still there?")).toMatchObject({ stopReason: "end_turn" });
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expect(running(sleep)).toBe(false);
}, 60_000);

test("acp: session/close during a prompt cancels the turn and lets it finish writing; the session resumes and takes prompts again", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const a = await startAgent(() => ({ outcome: { outcome: "selected", optionId: "allow-once" } }));
  try {
    await initialize(a);
    const sessionId = await newSession(a);
    fake.script([{ text: "first answer" }]);
    expect(await prompt(a, sessionId, "first")).toMatchObject({ stopReason: "end_turn" });
    fake.script([{ kind: "stall" }]);
    const before = fake.requests.length;
    const stalled = prompt(a, sessionId, "take forever");
    await fake.waitForRequests(before + 1);
    await a.agent.request(acp.methods.agent.session.close, { sessionId });
    expect(await stalled).toMatchObject({ stopReason: "cancelled" });
    // The closed session's claim was released with its records: resuming and prompting does not wait.
    await a.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: sandbox.workspace, mcpServers: [] });
    fake.script([{ text: "after the close" }]);
    const again = await Promise.race([prompt(a, sessionId, "are you there?"), Bun.sleep(10_000).then(() => "hung")]);
    expect(again).toMatchObject({ stopReason: "end_turn" });
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("first answer");
    expect(a.stderr()).not.toContain("waiting");
  } finally {
    expect(await a.stop()).toBe(0);
  }
}, 60_000);

test("acp: a known secret in a command is redacted in the permission request and every update; the raw stdout never carries it", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const secret = "sv-4f7a9c2e81b36d05aa77";
  const a = await startAcpAgent(sandbox, () => ({ outcome: { outcome: "selected", optionId: "reject-once" } }), { env: { MY_SERVICE_TOKEN: secret } });
  try {
    await initialize(a);
    const sessionId = await newSession(a);
    fake.script([{ toolCalls: [{ name: "run", args: { command: `curl -H 'X-Token: ${secret}' http://127.0.0.1:9/` }, id: "call_curl" }] }, { text: "ok" }]);
    expect(await prompt(a, sessionId, "call the service")).toMatchObject({ stopReason: "end_turn" });
    expect(a.permissions).toHaveLength(1);
    expect(JSON.stringify(a.permissions[0])).toContain("REDACTED");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expect(a.raw()).not.toContain(secret);
}, 60_000);
