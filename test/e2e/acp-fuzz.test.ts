import { expect, test } from "bun:test";
import fc from "fast-check";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, type Sandbox } from "../support/cli.ts";
import { Agent, encoder, errorFor, FRAME_TIMEOUT_MS, GRACE_MS, line, rpc, shortBytes, type Ctx, type Phase } from "../support/acp-fuzz-harness.ts";
import {
  frames,
  jsonArrays,
  knownMethodsWithBadParams,
  MiB,
  notifications,
  oddButUsableIds,
  oddIds,
  randomBytes,
  randomObjects,
  randomText,
  responses,
  truncated,
  unknownMethods,
  wrongVersion,
} from "../support/acp-fuzz-frames.ts";

/*
 * Malformed frames against a real `zero acp`. Stdin is newline-delimited JSON-RPC: every frame
 * (test/support/acp-fuzz-frames.ts) is one line (JSON.stringify never emits a raw newline;
 * random bytes and strings leave 0x0a out), so one frame is exactly one message to the server.
 *
 * What must hold, frame after frame, on one process:
 * - every stdout line is a JSON-RPC 2.0 message, checked as it arrives;
 * - a request with a usable id (string or number) is answered once, with that id; an error has
 *   the right code and a message that says what is wrong (the method for -32601, the
 *   offending parameter for -32602, in the message or its data);
 * - what has no usable id is answered with id null: -32700 for what is not JSON, -32600 for JSON
 *   that is not a request (batches, scalars, objects whose id is not a JSON-RPC id);
 * - notifications and response-shaped frames are not answered;
 * - the process never exits or stops answering; after the garbage it serves a session
 *   (initialize → session/new → session/prompt against the fake provider, end_turn), and it
 *   exits 0 once stdin ends.
 * Violations are collected (rule → count and first examples) so one run reports every kind.
 * ZERO_ACP_FUZZ_SEED=<n> replays a run.
 */

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const SEED = Number(process.env.ZERO_ACP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** initialize → session/new → session/prompt (fake provider: end_turn) on a process that took garbage. */
async function wellFormedSession(agent: Agent, workspace: string, tag: string): Promise<string> {
  const init = await agent.call(`${tag}-init`, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(init.result?.protocolVersion).toBe(1);
  const created = await agent.call(`${tag}-new`, "session/new", { cwd: workspace, mcpServers: [] });
  expect(typeof created.result?.sessionId).toBe("string");
  const sessionId = created.result.sessionId as string;
  await promptEndTurn(agent, sessionId, `${tag}-prompt`, `answer for ${tag}`);
  return sessionId;
}

async function promptEndTurn(agent: Agent, sessionId: string, id: string, text: string): Promise<void> {
  fake.script([{ text: [text.slice(0, 4), text.slice(4)] }]);
  const answer = await agent.call(id, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hello after the noise" }] }, 30_000);
  expect(answer.error).toBeUndefined();
  expect(answer.result).toMatchObject({ stopReason: "end_turn" });
  // The turn's text streamed as session/update chunks, before the answer.
  const streamed = agent.messages
    .slice(0, agent.messages.indexOf(answer))
    .filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId && m.params.update?.sessionUpdate === "agent_message_chunk")
    .map((m) => m.params.update.content?.text ?? "")
    .join("");
  expect(streamed).toContain(text);
}

function ctxFor(phase: Phase, sessionId = "no-session-yet"): Ctx {
  return { workspace: sandbox.workspace, root: sandbox.root, sessionId, phase };
}

/** Feeds generated frames one at a time; stops early (and says so) if the process dies. */
async function fuzz(agent: Agent, ctx: Ctx, numRuns: number, seed: number, next: () => number): Promise<void> {
  try {
    await fc.assert(
      fc.asyncProperty(frames, async (build) => {
        await agent.exchange(build(next(), ctx), ctx.phase);
        if (!agent.alive) throw new Error("zero acp exited");
      }),
      { numRuns, seed, endOnFailure: true },
    );
  } catch (error) {
    agent.findings.note("the process exited in the middle of the frames", `${String(error).slice(0, 1500)}\n    stderr: ${agent.stderr.slice(-1500)}`);
  }
}

test("acp fuzz: malformed frames, one at a time, get the right JSON-RPC answers; the server keeps serving", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env, SEED);
  let n = 0;
  const next = () => ++n;
  try {
    // 1. Before initialize: anything goes in, nothing but initialize is served.
    await fuzz(agent, ctxFor("pre"), 60, SEED, next);

    // 2. Initialize and open the session the frames aim at, then the bulk of the garbage.
    if (agent.alive) {
      const init = await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
      expect(init.result?.protocolVersion).toBe(1);
      const created = await agent.call("new", "session/new", { cwd: sandbox.workspace, mcpServers: [] });
      const after = ctxFor("post", created.result?.sessionId);
      expect(typeof after.sessionId).toBe("string");
      await fuzz(agent, after, 300, SEED + 1, next);
      // An image far above limits.maxAttachmentBytes (10 MiB by default), once.
      const huge = "A".repeat(14 * MiB);
      const hugeImage = line(rpc("huge-image", "session/prompt", { sessionId: after.sessionId, prompt: [{ type: "image", data: huge, mimeType: "image/png" }] }));
      if (agent.alive) await agent.exchange({ label: "14 MiB image", bytes: hugeImage, expect: errorFor("huge-image", -32602, ["prompt", "larger", "bytes"]) }, "post");
      // None of the garbage ran a turn.
      if (fake.requests.length > 0) agent.findings.note("a malformed frame reached the model", JSON.stringify(fake.requests[0]!.body).slice(0, 400));

      // 3. Still serving: the fuzzed session and a fresh one both run a turn to end_turn.
      if (agent.alive) {
        await promptEndTurn(agent, after.sessionId, "fuzzed-prompt", "the fuzzed session still answers");
        await wellFormedSession(agent, sandbox.workspace, "final");
      }
    }
  } finally {
    const code = await agent.stop();
    if (code !== 0) agent.findings.note("exit status after stdin ended is not 0", `${code}; stderr: ${agent.stderr.slice(-1500)}`);
  }
  for (const frame of agent.unanswered()) agent.findings.note("never answered by the end", frame);
  expect(agent.findings.report()).toEqual([]);
}, 60_000);

test("acp fuzz: a burst of malformed frames in one write is answered in full, then a session works", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env, SEED);
  try {
    await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
    const created = await agent.call("new", "session/new", { cwd: sandbox.workspace, mcpServers: [] });
    const ctx = ctxFor("post", created.result?.sessionId);
    // No long lines here: the burst is about interleaving, and stays small.
    const builds = fc.sample(fc.oneof(randomBytes, randomText, jsonArrays, randomObjects, truncated, wrongVersion, oddIds, oddButUsableIds, unknownMethods, knownMethodsWithBadParams, notifications, responses), { numRuns: 300, seed: SEED });
    const burst = builds.map((build, i) => build(100_000 + i, ctx));
    for (const frame of burst) agent.expect(`${frame.label}: ${shortBytes(frame.bytes)}`, frame.expect, frame.bytes);
    const chunks: Uint8Array[] = burst.flatMap((frame) => [frame.bytes, encoder.encode("\n")]);
    agent.proc.stdin.write(Buffer.concat(chunks));
    await agent.proc.stdin.flush();
    // A last request after the burst: once it is answered, what is still owed gets a little longer.
    const last = await agent.call("after-the-burst", "zero_fuzz/sentinel", {}, FRAME_TIMEOUT_MS).catch(() => undefined);
    if (!last) agent.findings.note(agent.alive ? "no answer within the timeout after the burst (hang)" : "the process exited", agent.stderr.slice(-600));
    else if (!(await agent.until(() => agent.unanswered().length === 0, GRACE_MS))) for (const frame of agent.unanswered()) agent.findings.note(agent.alive ? "never answered after the burst" : "the process exited", frame);
    if (agent.alive) await wellFormedSession(agent, sandbox.workspace, "after-burst");
  } finally {
    const code = await agent.stop();
    if (code !== 0) agent.findings.note("exit status after stdin ended is not 0", `${code}; stderr: ${agent.stderr.slice(-1500)}`);
  }
  expect(agent.findings.report()).toEqual([]);
}, 60_000);

test("acp fuzz: a frame above the stream's size limit is refused with an error, and the server keeps serving", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env, SEED);
  try {
    await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
    // The SDK's ndJsonStream refuses lines over 32 MiB; three 10 MiB images (the attachment limit) are more.
    const oversized = line(rpc("oversized", "session/prompt", { sessionId: "x", prompt: [{ type: "text", text: "A".repeat(40 * MiB) }] }));
    try {
      await agent.write(oversized);
    } catch {
      // EPIPE: the server is gone; reported below.
    }
    await agent.until(() => agent.messages.some((m) => m.id === "oversized" || (m.id === null && m.error)), 5_000);
    expect({ alive: agent.alive, stderr: agent.stderr.slice(-500) }).toMatchObject({ alive: true });
    const answer = agent.messages.find((m) => m.id === "oversized" || (m.id === null && m.error));
    expect(answer?.error?.code).toBeOneOf([-32600, -32700]);
    expect(String(answer?.error?.message)).toMatch(/too large|limit|bytes|MiB/i);
    await wellFormedSession(agent, sandbox.workspace, "after-oversized");
  } finally {
    await agent.stop();
  }
}, 30_000);

test("acp fuzz: a request still in flight when stdin ends is answered before the process exits", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env, SEED);
  // The request and the end of input in one go, as `printf '…\n' | zero acp` does.
  agent.proc.stdin.write(line(rpc("last-words", "initialize", { protocolVersion: 1, clientCapabilities: {} })));
  agent.proc.stdin.write("\n");
  expect(await agent.stop()).toBe(0);
  expect(agent.messages.find((m) => m.id === "last-words")?.result?.protocolVersion).toBe(1);
}, 30_000);
