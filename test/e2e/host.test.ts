import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeProvider, type FakeTurn, type RecordedRequest } from "../support/fake-provider.ts";
import { ZERO_BIN, fakeConfig, jsonLines, makeSandbox, runZero, type Sandbox, type ZeroResult } from "../support/cli.ts";

/**
 * `zero host`, whole program against the fake provider: every example of
 * host-protocol-v1.txt replayed and compared line by line with the spec's lines
 * (same keys in the same order, same fixed values), plus the decisions.md rules
 * (sessions, concurrency, idempotency, modes) and the acceptance signals of A18 (HOST-01..17).
 */

type Line = Record<string, any>;

let fake: FakeProvider;
let sandbox: Sandbox;

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  sandbox = makeSandbox();
  sandbox.writeUserConfig(fakeConfig(fake.url));
});
afterEach(() => {
  for (const host of live.splice(0)) if (host.proc.exitCode === null) host.proc.kill("SIGKILL");
  sandbox.cleanup();
});

/** Every stdout line of every host this file started, re-checked by the last test (HOST-01). */
const seenStdout: string[] = [];

// ---- The spec's lines, verbatim from host-protocol-v1.txt ----

const SPEC = {
  pingRequest: `{"protocol_version":1,"type":"ping","request_id":"ping-001","session_id":"s-user-1"}`,
  pingAck: `{"protocol_version":1,"type":"ack","request_id":"ping-001","session_id":"s-user-1","ts_ms":1773935000000,"status":"PONG"}`,
  runRequest: `{"protocol_version":1,"type":"run","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935000100,"prompt":"Analyze project structure","metadata":{"channel":"clawbridge","trace_id":"trace-001"},"timeout_ms":120000,"idempotency_key":"idem-001","stream":true}`,
  runAck: `{"protocol_version":1,"type":"ack","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935000101,"status":"ACCEPTED","request_ts_ms":1773935000100}`,
  runAccepted: `{"protocol_version":1,"type":"event","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935000102,"event_type":"REQUEST_ACCEPTED","seq":1,"payload":{"timeout_ms":120000,"metadata":{"channel":"clawbridge","trace_id":"trace-001"}}}`,
  runFinished: `{"protocol_version":1,"type":"event","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935002100,"event_type":"RUN_FINISHED","seq":2,"payload":{}}`,
  runFinal: `{"protocol_version":1,"type":"final","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935002101,"status":"OK","text":"Project has src, tests, and docs.","usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160},"error":null,"latency_ms":2000}`,
  timeoutRequest: `{"protocol_version":1,"type":"run","request_id":"run-timeout-001","session_id":"s-user-1","prompt":"Very long task","timeout_ms":1000,"idempotency_key":"idem-timeout-001","stream":false}`,
  timeoutFinal: `{"protocol_version":1,"type":"final","request_id":"run-timeout-001","session_id":"s-user-1","ts_ms":1773935005000,"status":"TIMEOUT","text":"Request timed out. Please retry with a simpler prompt or a higher timeout.","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"error":{"code":"TIMEOUT","message":"request exceeded timeout_ms","retryable":true},"latency_ms":1002}`,
  cancelRequest: `{"protocol_version":1,"type":"cancel","request_id":"cancel-001","session_id":"s-user-1","target_request_id":"run-001"}`,
  cancelAck: `{"protocol_version":1,"type":"ack","request_id":"cancel-001","session_id":"s-user-1","ts_ms":1773935002200,"status":"CANCEL_ACCEPTED","target_request_id":"run-001"}`,
  cancelFinal: `{"protocol_version":1,"type":"final","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935002201,"status":"CANCELED","text":"","usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"error":null,"latency_ms":0}`,
  badRequest: `{"protocol_version":1,"type":"run","request_id":"bad-001","session_id":"s-user-1","prompt":"hello"}`,
  badError: `{"protocol_version":1,"type":"error","request_id":"bad-001","session_id":"s-user-1","ts_ms":1773935003000,"error":{"code":"INVALID_REQUEST","message":"run request requires non-empty idempotency_key","retryable":false}}`,
  replayFirst: `{"protocol_version":1,"type":"run","request_id":"run-a","session_id":"s-user-1","prompt":"hello","timeout_ms":120000,"idempotency_key":"idem-replay-1","stream":false}`,
  replayRetry: `{"protocol_version":1,"type":"run","request_id":"run-b","session_id":"s-user-1","prompt":"hello","timeout_ms":120000,"idempotency_key":"idem-replay-1","stream":false}`,
  replayFinal: `{"protocol_version":1,"type":"final","request_id":"run-b","session_id":"s-user-1","ts_ms":1773935008000,"status":"OK","text":"...","usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17},"error":null,"latency_ms":321,"replayed":true}`,
  duplicateAck: `{"protocol_version":1,"type":"ack","request_id":"run-b","session_id":"s-user-1","ts_ms":1773935007000,"status":"DUPLICATE_IN_PROGRESS","existing_request_id":"run-a"}`,
} as const;

/** Fields whose value is the host's own clock: only their type and range are checked. */
const CLOCK_FIELDS = new Set(["ts_ms", "latency_ms"]);

/**
 * Differences between an output line and a spec line: key order at every object
 * level, and every value equal except the clock fields (real non-negative integers;
 * ts_ms within 5 s of now) and the paths in `vary` (same JSON type only).
 */
function shapeDiff(actual: unknown, spec: unknown, vary: string[] = [], path = ""): string[] {
  const leaf = path.split(".").at(-1)!;
  if (CLOCK_FIELDS.has(leaf) && path === leaf) {
    if (typeof actual !== "number" || !Number.isInteger(actual) || actual < 0) return [`${path}: ${JSON.stringify(actual)} is not a non-negative integer`];
    if (leaf === "ts_ms" && Math.abs(actual - Date.now()) > 5_000) return [`ts_ms ${actual} is not within 5 s of now (${Date.now()})`];
    return [];
  }
  if (vary.includes(path)) {
    const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
    return kind(actual) === kind(spec) ? [] : [`${path}: ${JSON.stringify(actual)} is not a ${kind(spec)}`];
  }
  if (spec !== null && typeof spec === "object" && !Array.isArray(spec)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${path || "(line)"}: ${JSON.stringify(actual)} is not an object`];
    const keysA = Object.keys(actual);
    const keysS = Object.keys(spec);
    const problems = JSON.stringify(keysA) === JSON.stringify(keysS) ? [] : [`${path || "(line)"}: keys ${JSON.stringify(keysA)}, spec has ${JSON.stringify(keysS)}`];
    for (const key of keysS) {
      if (key in actual) problems.push(...shapeDiff((actual as Line)[key], (spec as Line)[key], vary, path ? `${path}.${key}` : key));
    }
    return problems;
  }
  return JSON.stringify(actual) === JSON.stringify(spec) ? [] : [`${path}: ${JSON.stringify(actual)}, spec has ${JSON.stringify(spec)}`];
}

function expectShape(actual: Line | undefined, specLine: string, vary: string[] = [], overrides: Record<string, unknown> = {}) {
  expect(actual).toBeDefined();
  const spec = { ...JSON.parse(specLine), ...overrides };
  expect(shapeDiff(actual, spec, vary)).toEqual([]);
}

/** The common head of every response line (spec field order). */
const HEAD = ["protocol_version", "type", "request_id", "session_id", "ts_ms"];
const EVENT_KEYS = [...HEAD, "event_type", "seq", "payload"];
const FINAL_KEYS = [...HEAD, "status", "text", "usage", "error", "latency_ms"];

// ---- Driving the real CLI ----

/** A request line: the spec's fields, in the spec's order. */
function runLine(fields: { request_id: string; session_id?: string; prompt?: string; idempotency_key?: string; timeout_ms?: number; stream?: boolean; [k: string]: unknown }): string {
  const { request_id, session_id = "s-user-1", prompt = "hello", idempotency_key = `idem-${request_id}`, ...rest } = fields;
  return JSON.stringify({ protocol_version: 1, type: "run", request_id, session_id, prompt, idempotency_key, ...rest });
}
const pingLine = (request_id: string, session_id = "s-user-1") => JSON.stringify({ protocol_version: 1, type: "ping", request_id, session_id });
const cancelLine = (request_id: string, target_request_id: string, session_id = "s-user-1") =>
  JSON.stringify({ protocol_version: 1, type: "cancel", request_id, session_id, target_request_id });

const now = () => performance.timeOrigin + performance.now();

/** A long-lived `zero host` whose stdin the test writes over time; stdout lines are collected as they come. */
type LiveHost = {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  /** Every stdout line, parsed, with the time the test read it. */
  lines: Array<{ line: Line; at: number }>;
  send(...lines: Array<string | Uint8Array>): void;
  /** The first line (from `from` on) matching; waits up to timeoutMs. */
  waitFor(match: (line: Line) => boolean, timeoutMs?: number, from?: number): Promise<{ line: Line; at: number; index: number }>;
  /** Closes stdin and waits for the exit. */
  finish(timeoutMs?: number): Promise<{ code: number; stderr: string }>;
  of(requestId: string): Line[];
};
const live: LiveHost[] = [];

function startHost(args: string[] = [], env: Record<string, string> = {}): LiveHost {
  const proc = Bun.spawn([ZERO_BIN, "host", ...args], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: LiveHost["lines"] = [];
  const bad: string[] = [];
  let readDone = false;
  const stderr = new Response(proc.stderr).text();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of proc.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let nl = pending.indexOf("\n");
      while (nl !== -1) {
        const text = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        seenStdout.push(text);
        try {
          lines.push({ line: JSON.parse(text) as Line, at: now() });
        } catch {
          bad.push(text);
        }
        nl = pending.indexOf("\n");
      }
    }
    if (pending !== "") {
      seenStdout.push(pending);
      bad.push(`(no newline) ${pending}`);
    }
    readDone = true;
  })();
  const host: LiveHost = {
    proc,
    lines,
    send(...items) {
      for (const item of items) proc.stdin.write(typeof item === "string" ? `${item}\n` : item);
      proc.stdin.flush();
    },
    async waitFor(match, timeoutMs = 10_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (bad.length > 0) throw new Error(`stdout carried a non-JSON line: ${JSON.stringify(bad[0])}`);
        const done = readDone; // read before searching: a line read after this is searched next round
        const index = lines.findIndex((entry, i) => i >= from && match(entry.line));
        if (index !== -1) return { ...lines[index]!, index };
        if (done || Date.now() > deadline) {
          const why = done ? `stdout closed (exit ${await proc.exited}, stderr: ${await stderr})` : `nothing within ${timeoutMs} ms`;
          throw new Error(`no matching line: ${why}; saw:\n${lines.map((e) => JSON.stringify(e.line).slice(0, 300)).join("\n")}`);
        }
        await Bun.sleep(5);
      }
    },
    async finish(timeoutMs = 15_000) {
      try {
        proc.stdin.end();
      } catch {}
      const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      const code = await proc.exited;
      clearTimeout(timer);
      await reading;
      expect(bad).toEqual([]);
      return { code, stderr: await stderr };
    },
    of: (requestId) => lines.filter((e) => e.line.request_id === requestId).map((e) => e.line),
  };
  live.push(host);
  return host;
}

/** A one-shot host: all of stdin at once, the whole output afterwards. */
async function hostOnce(input: string[], args: string[] = [], timeoutMs = 20_000): Promise<ZeroResult & { lines: Line[] }> {
  const result = await runZero(["host", ...args], { sandbox, stdin: input.map((l) => `${l}\n`).join(""), timeoutMs });
  const raw = result.stdout === "" ? [] : result.stdout.replace(/\n$/, "").split("\n");
  seenStdout.push(...raw);
  expect(result.stdout === "" || result.stdout.endsWith("\n")).toBe(true);
  return { ...result, lines: raw.map((l) => JSON.parse(l) as Line) };
}

function userText(req: RecordedRequest): string {
  const user = (req.body.messages as any[]).filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : (user?.content ?? []).map((p: any) => p.text ?? "").join("");
}

/** The conversation a model request carried, system prompt left out, as "role: text". */
function conversation(req: RecordedRequest): string[] {
  return (req.body.messages as any[])
    .filter((m) => m.role !== "system")
    .map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : (m.content ?? []).map((p: any) => p.text ?? "").join("")}`);
}

const modelRequests = () => fake.requests.filter((r) => r.protocol !== "other");

// ---- The spec examples ----

describe("1) ping", () => {
  test("ping → ack PONG, the spec line's shape (HOST-02)", async () => {
    const result = await hostOnce([SPEC.pingRequest]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(1);
    expectShape(result.lines[0], SPEC.pingAck);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("2) run, stream:true", () => {
  test("the spec request → ack ACCEPTED, REQUEST_ACCEPTED seq 1, progress events, RUN_FINISHED, final OK 120/40/160 (HOST-03/04/05/16)", async () => {
    fake.script([{ reasoning: ["Look", "ing"], text: ["Project has ", "src, tests, ", "and docs."], usage: { input: 120, output: 40 } }]);
    const result = await hostOnce([SPEC.runRequest]);
    expect(result.code).toBe(0);
    const lines = result.lines;
    for (const line of lines) expect(line.request_id).toBe("run-001");

    expectShape(lines[0], SPEC.runAck);
    expectShape(lines[1], SPEC.runAccepted);
    const final = lines.at(-1)!;
    expectShape(final, SPEC.runFinal);
    const events = lines.slice(1, -1);
    expect(events.length).toBeGreaterThanOrEqual(3);
    // RUN_FINISHED: the spec line's shape, with the seq that follows the progress events.
    expectShape(events.at(-1), SPEC.runFinished, [], { seq: events.length });
    // Every event: the event shape; seq 1, 2, … without gaps; ts_ms never goes back.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    for (const event of events) expect(Object.keys(event)).toEqual(EVENT_KEYS);
    for (let i = 1; i < lines.length; i++) expect(lines[i]!.ts_ms).toBeGreaterThanOrEqual(lines[i - 1]!.ts_ms);
    const progress = events.slice(1, -1);
    for (const event of progress) expect(["TEXT_DELTA", "REASONING_DELTA", "TOOL_CALL", "TOOL_RESULT", "USAGE"]).toContain(event.event_type);
    expect(progress.filter((e) => e.event_type === "TEXT_DELTA").map((e) => e.payload.text).join("")).toBe("Project has src, tests, and docs.");
    expect(progress.filter((e) => e.event_type === "REASONING_DELTA").map((e) => e.payload.text).join("")).toBe("Looking");
    const usage = progress.filter((e) => e.event_type === "USAGE");
    expect(usage.length).toBeGreaterThanOrEqual(1);
    expect(usage.at(-1)!.payload).toMatchObject({ prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 });
    // Our addition: the estimated request size against the model's context window.
    expect(usage.at(-1)!.payload.context_window).toBe(128_000);
    expect(usage.at(-1)!.payload.context_tokens).toBeGreaterThan(0);
    // Reasoning is not the answer.
    expect(final.text).toBe("Project has src, tests, and docs.");
    // One model request, carrying the prompt.
    expect(modelRequests()).toHaveLength(1);
    expect(userText(modelRequests()[0]!)).toBe("Analyze project structure");
  });

  test("tool calls stream as TOOL_CALL / TOOL_RESULT events, paired by id, before RUN_FINISHED", async () => {
    fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" }, id: "call_read" }], usage: { input: 10, output: 2 } }, { text: "The answer is 42.", usage: { input: 20, output: 4 } }]);
    const result = await hostOnce([runLine({ request_id: "tools-1", stream: true, prompt: "what is the answer?" })]);
    expect(result.code).toBe(0);
    const events = result.lines.filter((l) => l.type === "event");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const call = events.find((e) => e.event_type === "TOOL_CALL")!;
    const toolResult = events.find((e) => e.event_type === "TOOL_RESULT")!;
    expect(call.payload).toEqual({ id: "call_read", name: "read", args: { path: "README.md" } });
    expect(toolResult.payload).toMatchObject({ id: "call_read", status: "completed", truncated: false });
    expect(toolResult.payload.output).toContain("The answer is 42.");
    expect(toolResult.seq).toBeGreaterThan(call.seq);
    expect(events.at(-1)!.event_type).toBe("RUN_FINISHED");
    const final = result.lines.at(-1)!;
    expect(final).toMatchObject({ type: "final", status: "OK", text: "The answer is 42.", usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 } });
  });

  test("metadata absent → REQUEST_ACCEPTED payload {timeout_ms: 120000 (the default), metadata: {}}; no ts_ms → no request_ts_ms", async () => {
    fake.script([{ text: "ok" }]);
    const result = await hostOnce([runLine({ request_id: "r-defaults", stream: true })]);
    expect(result.lines[0]).toMatchObject({ type: "ack", status: "ACCEPTED" });
    expect(Object.keys(result.lines[0]!)).toEqual([...HEAD, "status"]);
    expect(result.lines[1]).toMatchObject({ event_type: "REQUEST_ACCEPTED", seq: 1, payload: { timeout_ms: 120000, metadata: {} } });
  });
});

describe("run, stream:false", () => {
  test("ack ACCEPTED then the final only: no event lines (HOST-06)", async () => {
    fake.script([{ reasoning: "hm", text: ["The ", "answer."], usage: { input: 12, output: 5 } }]);
    const result = await hostOnce([SPEC.replayFirst]);
    expect(result.code).toBe(0);
    expect(result.lines.map((l) => l.type)).toEqual(["ack", "final"]);
    expectShape(result.lines[0], `{"protocol_version":1,"type":"ack","request_id":"run-a","session_id":"s-user-1","ts_ms":0,"status":"ACCEPTED"}`);
    expectShape(result.lines[1], SPEC.runFinal, [], { request_id: "run-a", text: "The answer.", usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
  });

  test("stream absent behaves as stream:false", async () => {
    fake.script([{ text: "x" }]);
    const result = await hostOnce([runLine({ request_id: "no-stream" })]);
    expect(result.lines.map((l) => l.type)).toEqual(["ack", "final"]);
  });

  test("latency_ms measures acceptance to final: a reply slowed to ~600 ms → latency_ms in [500, 2000] (HOST-17)", async () => {
    fake.script([{ text: ["a", "b", "c", "d"], chunkDelayMs: 150 }]);
    const result = await hostOnce([runLine({ request_id: "slow" })]);
    const final = result.lines.at(-1)!;
    expect(final.status).toBe("OK");
    expect(final.latency_ms).toBeGreaterThanOrEqual(500);
    expect(final.latency_ms).toBeLessThanOrEqual(2000);
  });
});

describe("3) timeout", () => {
  test("timeout_ms 1000 with a stalled provider → the spec's TIMEOUT final within ~1–2.5 s; the model call is aborted; the host keeps serving (HOST-07)", async () => {
    fake.script([{ kind: "stall" }, { text: "after the timeout" }]);
    const host = startHost();
    const sent = now();
    host.send(SPEC.timeoutRequest);
    const ack = await host.waitFor((l) => l.request_id === "run-timeout-001" && l.type === "ack");
    expect(ack.line.status).toBe("ACCEPTED");
    const final = await host.waitFor((l) => l.request_id === "run-timeout-001" && l.type === "final", 5_000);
    const elapsed = final.at - sent;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2_500);
    expectShape(final.line, SPEC.timeoutFinal);
    expect(final.line.latency_ms).toBeGreaterThanOrEqual(1000);
    expect(final.line.latency_ms).toBeLessThan(2_500);
    expect(host.of("run-timeout-001").map((l) => l.type)).toEqual(["ack", "final"]); // stream:false
    // Still serving: a ping and a new run are answered.
    host.send(pingLine("after-timeout"));
    expect((await host.waitFor((l) => l.request_id === "after-timeout")).line.status).toBe("PONG");
    host.send(runLine({ request_id: "after-run" }));
    const next = await host.waitFor((l) => l.request_id === "after-run" && l.type === "final");
    expect(next.line).toMatchObject({ status: "OK", text: "after the timeout" });
    const { code } = await host.finish();
    expect(code).toBe(0);
  });

  test("a streamed run that times out mid-answer ends with the TIMEOUT final; seq stays gapless", async () => {
    fake.script([{ text: ["partial ", "answer ", "never ", "finished"], stallAfterChunks: 1 }]);
    const result = await hostOnce([runLine({ request_id: "t-stream", stream: true, timeout_ms: 1000 })]);
    const lines = result.lines;
    const events = lines.filter((l) => l.type === "event");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.some((e) => e.event_type === "TEXT_DELTA")).toBe(true);
    expectShape(lines.at(-1), SPEC.timeoutFinal, [], { request_id: "t-stream" });
  });

  test("a run that timed out after a tool step still reports zero usage, as the spec's TIMEOUT line (HOST-07 'zero usage')", async () => {
    fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 50, output: 7 } }, { kind: "stall" }]);
    const result = await hostOnce([runLine({ request_id: "t-after-tool", timeout_ms: 1500 })]);
    expect(modelRequests()).toHaveLength(2);
    expectShape(result.lines.at(-1), SPEC.timeoutFinal, [], { request_id: "t-after-tool" });
  });

  test("a run waiting behind another run of its session still times out at its own timeout_ms", async () => {
    fake.script([{ kind: "stall" }]);
    const host = startHost();
    host.send(runLine({ request_id: "long", timeout_ms: 8_000 }));
    await fake.waitForRequests(1);
    const sent = now();
    host.send(runLine({ request_id: "queued", timeout_ms: 1000 }));
    const final = await host.waitFor((l) => l.request_id === "queued" && l.type === "final", 9_000);
    expect(final.line.status).toBe("TIMEOUT");
    expect(final.at - sent).toBeLessThan(2_500); // not when "long" ends 8 s later
    host.send(cancelLine("c-long", "long"));
    await host.waitFor((l) => l.request_id === "long" && l.type === "final");
    expect((await host.finish()).code).toBe(0);
  }, 20_000);

  test("a valid large timeout_ms (2^31 ms, ~25 days) does not time out at once", async () => {
    fake.script([{ text: ["slow ", "answer"], chunkDelayMs: 200 }]);
    const result = await hostOnce([runLine({ request_id: "big-timeout", timeout_ms: 2_147_483_648 })]);
    expect(result.lines.at(-1)).toMatchObject({ type: "final", status: "OK", text: "slow answer" });
  });
});

describe("4) cancel", () => {
  test("cancel of a running request → the spec's ack CANCEL_ACCEPTED, then the target's final CANCELED; the model call is closed (HOST-08)", async () => {
    fake.script([{ kind: "stall" }]);
    const host = startHost();
    host.send(SPEC.runRequest);
    await fake.waitForRequests(1);
    const cancelFrom = host.lines.length;
    host.send(SPEC.cancelRequest);
    const ack = await host.waitFor((l) => l.request_id === "cancel-001");
    expectShape(ack.line, SPEC.cancelAck);
    const final = await host.waitFor((l) => l.request_id === "run-001" && l.type === "final", 5_000);
    expect(final.index).toBeGreaterThan(ack.index);
    expectShape(final.line, SPEC.cancelFinal);
    expect(final.line.latency_ms).toBeLessThan(5_000);
    // After the cancel: the ack, maybe RUN_FINISHED, the final: nothing else.
    const after = host.lines.slice(cancelFrom).map((e) => e.line);
    expect(after.filter((l) => l.type !== "event").map((l) => `${l.type}:${l.request_id}`)).toEqual(["ack:cancel-001", "final:run-001"]);
    // The run's events before the final stayed gapless.
    const events = host.of("run-001").filter((l) => l.type === "event");
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // No other model call, and the host still serves.
    host.send(SPEC.pingRequest);
    await host.waitFor((l) => l.request_id === "ping-001");
    expect(modelRequests()).toHaveLength(1);
    expect((await host.finish()).code).toBe(0);
  });

  test("cancel of an unknown request → error INVALID_REQUEST with the cancel's ids; the host keeps serving", async () => {
    const result = await hostOnce([SPEC.cancelRequest, SPEC.pingRequest]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(2);
    expectShape(result.lines[0], SPEC.badError, ["error.message"], { request_id: "cancel-001" });
    expect(result.lines[0]!.error.message).toContain("run-001");
    expectShape(result.lines[1], SPEC.pingAck);
  });

  test("cancel of a finished request → error INVALID_REQUEST", async () => {
    fake.script([{ text: "done" }]);
    const host = startHost();
    host.send(runLine({ request_id: "run-done" }));
    await host.waitFor((l) => l.request_id === "run-done" && l.type === "final");
    host.send(cancelLine("cancel-late", "run-done"));
    const error = await host.waitFor((l) => l.request_id === "cancel-late");
    expect(error.line).toMatchObject({ type: "error", error: { code: "INVALID_REQUEST", retryable: false } });
    expect((await host.finish()).code).toBe(0);
  });

  test("cancel of a run queued behind another run of its session → its final CANCELED comes at once, not when the first run ends", async () => {
    fake.script([{ kind: "stall" }, { text: "second" }]);
    const host = startHost();
    host.send(runLine({ request_id: "first", timeout_ms: 8_000 }));
    await fake.waitForRequests(1);
    host.send(runLine({ request_id: "second" }));
    await host.waitFor((l) => l.request_id === "second" && l.type === "ack");
    const sent = now();
    host.send(cancelLine("cancel-second", "second"));
    await host.waitFor((l) => l.request_id === "cancel-second" && l.status === "CANCEL_ACCEPTED");
    const final = await host.waitFor((l) => l.request_id === "second" && l.type === "final", 10_000);
    expect(final.line.status).toBe("CANCELED");
    expect(final.at - sent).toBeLessThan(2_000);
    host.send(cancelLine("cancel-first", "first"));
    await host.waitFor((l) => l.request_id === "first" && l.type === "final");
    expect(modelRequests()).toHaveLength(1); // the canceled run never reached the model
    expect((await host.finish()).code).toBe(0);
  }, 20_000);
});

describe("5) invalid requests", () => {
  test("the spec's bad-001 (no idempotency_key) → exactly the spec's error line; no provider request (HOST-09)", async () => {
    const result = await hostOnce([SPEC.badRequest]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(1);
    expectShape(result.lines[0], SPEC.badError);
    expect(fake.requests).toHaveLength(0);
  });

  test("an empty idempotency_key gets the same message", async () => {
    const result = await hostOnce([runLine({ request_id: "bad-002", idempotency_key: "" })]);
    expectShape(result.lines[0], SPEC.badError, [], { request_id: "bad-002" });
  });

  test("protocol_version 2, malformed JSON, type dance, missing fields → INVALID_REQUEST each; ids null when unreadable; the host keeps serving (HOST-14)", async () => {
    const result = await hostOnce([
      JSON.stringify({ protocol_version: 2, type: "ping", request_id: "v2", session_id: "s" }),
      `{bad json`,
      JSON.stringify({ protocol_version: 1, type: "dance", request_id: "d1", session_id: "s" }),
      JSON.stringify({ protocol_version: 1, type: "run", request_id: "np", session_id: "s", idempotency_key: "k" }),
      JSON.stringify({ protocol_version: 1, type: "cancel", request_id: "nt", session_id: "s" }),
      JSON.stringify({ protocol_version: 1, type: "ping", session_id: "s" }),
      JSON.stringify({ protocol_version: 1, type: "run", request_id: "bt", session_id: "s", prompt: "p", idempotency_key: "k", timeout_ms: -5 }),
      SPEC.pingRequest,
    ]);
    expect(result.code).toBe(0);
    const lines = result.lines;
    expect(lines).toHaveLength(8);
    const errors = lines.slice(0, 7);
    const errorShape = SPEC.badError;
    expect(errors.map((l) => [l.request_id, l.session_id])).toEqual([
      ["v2", "s"],
      [null, null],
      ["d1", "s"],
      ["np", "s"],
      ["nt", "s"],
      [null, "s"],
      ["bt", "s"],
    ]);
    for (const error of errors) {
      expectShape(error, errorShape, ["error.message"], { request_id: error.request_id, session_id: error.session_id });
      expect(error.error.message.length).toBeGreaterThan(0);
    }
    expect(errors[0]!.error.message).toContain("protocol_version");
    // A malformed line says where it stopped being JSON, and shows what was there.
    expect(errors[1]!.error.message).toBe('input line 2: malformed JSON: InvalidSymbol at character 2 (near "{bad json"); each line must be one JSON object');
    expect(errors[2]!.error.message).toContain("dance");
    expect(errors[3]!.error.message).toContain("prompt");
    expect(errors[4]!.error.message).toContain("target_request_id");
    expect(errors[6]!.error.message).toContain("timeout_ms");
    expectShape(lines[7], SPEC.pingAck);
    expect(fake.requests).toHaveLength(0);
  });

  test("unknown extra fields are ignored (forward compatibility)", async () => {
    fake.script([{ text: "fine" }]);
    const result = await hostOnce([
      JSON.stringify({ ...JSON.parse(SPEC.pingRequest), future: { a: 1 }, priority: "high" }),
      JSON.stringify({ ...JSON.parse(runLine({ request_id: "extra-run" })), attachments: [], user: { id: 7 } }),
    ]);
    expectShape(result.lines[0], SPEC.pingAck);
    expect(result.lines.at(-1)).toMatchObject({ request_id: "extra-run", type: "final", status: "OK", text: "fine" });
  });

  test("a type named like an Object.prototype member ('toString', '__proto__') is INVALID_REQUEST and the host keeps serving", async () => {
    const result = await hostOnce([
      JSON.stringify({ protocol_version: 1, type: "toString", request_id: "proto-1", session_id: "s" }),
      JSON.stringify({ protocol_version: 1, type: "__proto__", request_id: "proto-2", session_id: "s" }),
      SPEC.pingRequest,
    ]);
    expect(result.code).toBe(0);
    expect(result.lines.map((l) => [l.type, l.request_id])).toEqual([
      ["error", "proto-1"],
      ["error", "proto-2"],
      ["ack", "ping-001"],
    ]);
  });

  test("a flood of 200 garbage lines (invalid UTF-8, U+2028, NUL, non-objects, a 100 KB line), split at odd byte boundaries → 200 INVALID_REQUEST errors, then a ping is answered", async () => {
    const enc = new TextEncoder();
    const kinds: Uint8Array[] = [
      enc.encode("{bad json"),
      new Uint8Array([0xff, 0xfe, 0x80, 0x7b, 0xc3]), // invalid UTF-8
      enc.encode("\u2028garbage\u2028"),
      enc.encode('\u2028{"protocol_version":1,"type":"ping","request_id":"x","session_id":"y"}'), // U+2028 is not JSON whitespace
      enc.encode('{"protocol_version":1,"type":"ping","request_id":"x",\u2028"session_id":"y"}'),
      enc.encode("\u0000"),
      enc.encode("[]"),
      enc.encode("null"),
      enc.encode("42"),
      enc.encode('"a string"'),
      enc.encode('{"protocol_version":1}'),
      enc.encode('{"a":1}\r'),
      enc.encode('{"protocol_version":"1","type":"ping","request_id":"x","session_id":"y"}'),
      enc.encode('{"protocol_version":1,"type":"run","request_id":"r","session_id":"s","prompt":"p"}'),
      new Uint8Array([0x7b, 0x22, 0xe2, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // {"<truncated 3-byte sequence>":1}
      enc.encode("}{"),
      enc.encode(`{${"x".repeat(100_000)}`),
      enc.encode("\ud800".normalize()), // a lone surrogate, encoded as U+FFFD
      enc.encode("{\"protocol_version\":1,\"type\":\"ping\"}garbage"),
      enc.encode("undefined"),
    ];
    const lines: Uint8Array[] = [];
    for (let i = 0; i < 200; i++) lines.push(kinds[i % kinds.length]!);
    const total = lines.reduce((n, l) => n + l.length + 1, 0);
    const all = new Uint8Array(total);
    let at = 0;
    for (const line of lines) {
      all.set(line, at);
      all[at + line.length] = 0x0a;
      at += line.length + 1;
    }
    const host = startHost();
    // Odd chunk sizes split multi-byte sequences and lines across writes.
    for (let offset = 0, size = 1; offset < all.length; offset += size, size = (size * 7 + 3) % 4093 || 1) host.send(all.subarray(offset, offset + size));
    host.send(SPEC.pingRequest);
    const pong = await host.waitFor((l) => l.request_id === "ping-001", 15_000);
    expectShape(pong.line, SPEC.pingAck);
    const errors = host.lines.slice(0, pong.index).map((e) => e.line);
    expect(errors).toHaveLength(200);
    for (const error of errors) {
      expect(Object.keys(error)).toEqual([...HEAD, "error"]);
      expect(error.type).toBe("error");
      expect(error.error).toMatchObject({ code: "INVALID_REQUEST", retryable: false });
    }
    expect(fake.requests).toHaveLength(0);
    expect((await host.finish()).code).toBe(0);
  });

  test("a valid request whose strings carry U+2028 is answered, echoing the ids; one with invalid UTF-8 is INVALID_REQUEST (never silently repaired)", async () => {
    const host = startHost();
    const enc = new TextEncoder();
    host.send(`{"protocol_version":1,"type":"ping","request_id":"p\u2028q","session_id":"s\u2029t"}`);
    host.send(new Uint8Array([...enc.encode('{"protocol_version":1,"type":"ping","request_id":"bad'), 0xff, ...enc.encode('","session_id":"s"}\n')]));
    host.send(pingLine("after-bad"));
    const first = await host.waitFor((l) => l.request_id === "p\u2028q");
    expect(first.line).toMatchObject({ type: "ack", status: "PONG", session_id: "s\u2029t" });
    const after = await host.waitFor((l) => l.request_id === "after-bad");
    expect(after.line).toMatchObject({ type: "ack", status: "PONG" });
    const between = host.lines.slice(first.index + 1, after.index).map((e) => e.line);
    expect(between).toHaveLength(1);
    expectShape(between[0], SPEC.badError, ["error.message"], { request_id: null, session_id: null });
    expect(between[0]!.error.message).toContain("UTF-8");
    expect((await host.finish()).code).toBe(0);
  });
});

describe("input hygiene (decisions.md: protocol input is bounded)", () => {
  /** The host's peak resident memory so far, in KiB (bin/zero execs Bun, so the pid is the host's). */
  const peakKiB = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);

  test("a 10 MiB line → INVALID_REQUEST naming the 1 MiB limit (ids null), then the next ping is answered; the line is never held whole", async () => {
    const host = startHost();
    host.send(pingLine("before"));
    await host.waitFor((l) => l.request_id === "before");
    const baseline = peakKiB(host.proc.pid);
    // Three 10 MiB lines, the first a real request with a huge prompt: each is refused, none is buffered.
    const huge = new TextEncoder().encode(runLine({ request_id: "huge", prompt: "x".repeat(10 * 1024 * 1024) }));
    const big = new Uint8Array(10 * 1024 * 1024).fill(0x61);
    for (const line of [huge, big, big]) {
      for (let at = 0; at < line.length; at += 256 * 1024) host.send(line.subarray(at, at + 256 * 1024));
      host.send(new Uint8Array([0x0a]));
    }
    host.send(pingLine("after"));
    const pong = await host.waitFor((l) => l.request_id === "after", 30_000);
    expect(pong.line).toMatchObject({ type: "ack", status: "PONG" });
    const errors = host.lines.slice(1, pong.index).map((e) => e.line);
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expectShape(error, SPEC.badError, ["error.message"], { request_id: null, session_id: null });
      expect(error.error.message).toContain("1 MiB");
      expect(error.error.message).toContain("1048576 bytes");
    }
    expect(errors.map((e) => e.error.message.match(/line (\d+)/)?.[1])).toEqual(["2", "3", "4"]);
    // 30 MiB went in; the peak grew by read chunks awaiting GC only (about 15 MiB here; the
    // unbounded reader held each line whole, as a string, and grew by 90–130 MiB).
    const grownKiB = peakKiB(host.proc.pid) - baseline;
    expect(grownKiB).toBeLessThan(48 * 1024);
    expect(fake.requests).toHaveLength(0);
    expect((await host.finish()).code).toBe(0);
  }, 60_000);

  test("--single-request: an over-long first line is the request: INVALID_REQUEST, exit 2", async () => {
    const result = await runZero(["host", "--single-request"], { sandbox, stdin: `${"z".repeat(2 * 1024 * 1024)}\n${SPEC.pingRequest}\n` });
    seenStdout.push(...result.stdout.replace(/\n$/, "").split("\n"));
    expect(result.code).toBe(2);
    const lines = jsonLines(result.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ type: "error", request_id: null, session_id: null, error: { code: "INVALID_REQUEST" } });
  });

  test("a line of only Unicode whitespace (U+00A0, U+2028, U+2029, U+FEFF, U+3000, VT) is INVALID_REQUEST; empty lines and ASCII spaces/tabs/CR are skipped", async () => {
    const result = await hostOnce([pingLine("first"), "\u00a0", "", "  \t \r", "\u2028", "\u2029", "\ufeff", "\u3000", " \u00a0 ", "\u000b", "\r", pingLine("last")]);
    expect(result.code).toBe(0);
    expect(result.lines.map((l) => `${l.type}:${l.request_id}`)).toEqual(["ack:first", ...Array(7).fill("error:null"), "ack:last"]);
    for (const error of result.lines.slice(1, -1)) {
      expectShape(error, SPEC.badError, ["error.message"], { request_id: null, session_id: null });
      expect(error.error.message).toContain("whitespace");
    }
  });

  test("a cancel naming another session's run → INVALID_REQUEST (as for an unknown run), and that run still completes", async () => {
    fake.script([{ text: ["room ", "a ", "answer"], chunkDelayMs: 300 }]);
    const host = startHost();
    host.send(runLine({ request_id: "room-a-run", session_id: "room-a" }));
    await fake.waitForRequests(1);
    host.send(cancelLine("room-b-cancel", "room-a-run", "room-b"));
    const refused = await host.waitFor((l) => l.request_id === "room-b-cancel");
    expectShape(refused.line, SPEC.badError, ["error.message"], { request_id: "room-b-cancel", session_id: "room-b" });
    expect(refused.line.error.message).toContain("room-a-run");
    const final = await host.waitFor((l) => l.request_id === "room-a-run" && l.type === "final", 10_000);
    expect(final.line).toMatchObject({ status: "OK", text: "room a answer", session_id: "room-a" });
    expect(host.lines.some((e) => e.line.status === "CANCEL_ACCEPTED")).toBe(false);
    expect((await host.finish()).code).toBe(0);
  });

  test("held reasoning is written before held text (decisions.md: reasoning first)", async () => {
    // Neither has a word boundary, so redaction may hold both and flush them together at the step's end.
    fake.script([{ reasoning: "Pondering", text: "Answer", usage: { input: 3, output: 2 } }]);
    const result = await hostOnce([runLine({ request_id: "order", stream: true })]);
    const deltas = result.lines.filter((l) => l.event_type === "TEXT_DELTA" || l.event_type === "REASONING_DELTA");
    const types = deltas.map((l) => l.event_type as string);
    expect(types.lastIndexOf("REASONING_DELTA")).toBeLessThan(types.indexOf("TEXT_DELTA"));
    expect(deltas.filter((l) => l.event_type === "REASONING_DELTA").map((l) => l.payload.text).join("")).toBe("Pondering");
    expect(deltas.filter((l) => l.event_type === "TEXT_DELTA").map((l) => l.payload.text).join("")).toBe("Answer");
  });
});

describe("6) idempotency replay", () => {
  test("run-a then run-b with the same (session, key) → the spec's replay final: the NEW request_id, replayed:true, the original text/usage, no model call (HOST-10)", async () => {
    fake.script([{ text: "...", usage: { input: 12, output: 5 } }]);
    const host = startHost();
    host.send(SPEC.replayFirst);
    const first = await host.waitFor((l) => l.request_id === "run-a" && l.type === "final");
    expect(first.line).toMatchObject({ status: "OK", text: "..." });
    host.send(SPEC.replayRetry);
    const replay = await host.waitFor((l) => l.request_id === "run-b");
    expectShape(replay.line, SPEC.replayFinal);
    expect(replay.line.usage).toEqual(first.line.usage);
    expect(replay.line.text).toBe(first.line.text);
    expect(replay.line.latency_ms).toBe(first.line.latency_ms);
    expect(replay.line.ts_ms).toBeGreaterThanOrEqual(first.line.ts_ms);
    expect(host.of("run-b")).toHaveLength(1); // no ack, no events: just the final
    expect(modelRequests()).toHaveLength(1);
    expect((await host.finish()).code).toBe(0);
  });

  test("the replay also works after a host restart (two processes sharing the sandbox)", async () => {
    fake.script([{ text: "...", usage: { input: 12, output: 5 } }]);
    const first = await hostOnce([SPEC.replayFirst]);
    expect(first.lines.at(-1)).toMatchObject({ request_id: "run-a", status: "OK" });
    const second = await hostOnce([SPEC.replayRetry]);
    expect(second.code).toBe(0);
    expect(second.lines).toHaveLength(1);
    expectShape(second.lines[0], SPEC.replayFinal);
    expect(modelRequests()).toHaveLength(1);
  });

  test("the same key with another prompt → INVALID_REQUEST, no model call", async () => {
    fake.script([{ text: "..." }]);
    const result = await hostOnce([SPEC.replayFirst, runLine({ request_id: "run-c", prompt: "something else", idempotency_key: "idem-replay-1", stream: false })]);
    const error = result.lines.find((l) => l.request_id === "run-c")!;
    expectShape(error, SPEC.badError, ["error.message"], { request_id: "run-c" });
    expect(result.lines.filter((l) => l.request_id === "run-c")).toHaveLength(1);
    expect(modelRequests()).toHaveLength(1);
  });

  test("the idempotency scope is (session_id, key): the same key in another session is a fresh run (HOST-12)", async () => {
    fake.script([{ text: "one" }, { text: "two" }]);
    const result = await hostOnce([SPEC.replayFirst, runLine({ request_id: "run-other", session_id: "s-user-2", prompt: "hello", idempotency_key: "idem-replay-1" })]);
    // The two sessions run concurrently: either may reach the model first, but each gets its own answer.
    const first = result.lines.find((l) => l.request_id === "run-a" && l.type === "final")!;
    const other = result.lines.find((l) => l.request_id === "run-other" && l.type === "final")!;
    expect(other).toMatchObject({ status: "OK" });
    expect([first.text, other.text].sort()).toEqual(["one", "two"]);
    expect(other).not.toHaveProperty("replayed");
    expect(modelRequests()).toHaveLength(2);
  });

  test("a failed run is not replayed: the same key runs again", async () => {
    fake.script([{ kind: "error", status: 401 }, { text: "now it works" }]);
    const host = startHost();
    host.send(SPEC.replayFirst);
    const failed = await host.waitFor((l) => l.request_id === "run-a" && l.type === "final");
    expect(failed.line.status).toBe("ERROR");
    host.send(SPEC.replayRetry);
    const retried = await host.waitFor((l) => l.request_id === "run-b" && l.type === "final");
    expect(retried.line).toMatchObject({ status: "OK", text: "now it works" });
    expect(retried.line).not.toHaveProperty("replayed");
    expect((await host.finish()).code).toBe(0);
  });
});

describe("7) in-flight duplicate", () => {
  test("a duplicate while the first run is running → the spec's ack DUPLICATE_IN_PROGRESS, and nothing else for it (HOST-11)", async () => {
    fake.script([{ kind: "stall" }]);
    const host = startHost();
    host.send(SPEC.replayFirst);
    await fake.waitForRequests(1);
    host.send(SPEC.replayRetry);
    const dup = await host.waitFor((l) => l.request_id === "run-b");
    expectShape(dup.line, SPEC.duplicateAck);
    // The same key with another prompt while running is INVALID_REQUEST.
    host.send(runLine({ request_id: "run-x", prompt: "not hello", idempotency_key: "idem-replay-1" }));
    const invalid = await host.waitFor((l) => l.request_id === "run-x");
    expect(invalid.line).toMatchObject({ type: "error", error: { code: "INVALID_REQUEST" } });
    host.send(cancelLine("cancel-a", "run-a"));
    await host.waitFor((l) => l.request_id === "run-a" && l.type === "final");
    expect((await host.finish()).code).toBe(0);
    expect(host.of("run-b")).toHaveLength(1);
    expect(modelRequests()).toHaveLength(1);
  });
});

describe("provider errors", () => {
  const cases: Array<[number, string, boolean]> = [
    [401, "PROVIDER_AUTH", false],
    [403, "PROVIDER_AUTH", false],
    [429, "PROVIDER_RATE_LIMIT", true],
    [503, "PROVIDER_DOWN", true],
    [500, "PROVIDER_DOWN", true],
  ];
  for (const [status, code, retryable] of cases) {
    test(`HTTP ${status} → final ERROR ${code} retryable ${retryable}; --single-request exits 3 (HOST-13)`, async () => {
      const turn: FakeTurn = { kind: "error", status, message: `fake ${status}`, headers: { "retry-after-ms": "0" } };
      fake.script([turn, turn, turn]);
      const result = await hostOnce([runLine({ request_id: `err-${status}`, stream: true })], ["--single-request"]);
      expect(result.code).toBe(3);
      const final = result.lines.at(-1)!;
      expect(Object.keys(final)).toEqual(FINAL_KEYS);
      expect(final).toMatchObject({ type: "final", request_id: `err-${status}`, status: "ERROR", error: { code, retryable } });
      expect(Object.keys(final.error)).toEqual(["code", "message", "retryable"]);
      expect(typeof final.error.message).toBe("string");
      expect(final.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(modelRequests()).toHaveLength(retryable ? 3 : 1);
      // Streamed: the events before the final stay gapless and end with RUN_FINISHED.
      const events = result.lines.filter((l) => l.type === "event");
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events[0]!.event_type).toBe("REQUEST_ACCEPTED");
      expect(events.at(-1)!.event_type).toBe("RUN_FINISHED");
    });
  }

  test("a refused connection → PROVIDER_DOWN retryable", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    await closed.stop(true);
    sandbox.writeUserConfig(fakeConfig(`http://127.0.0.1:${port}/v1`));
    const result = await hostOnce([runLine({ request_id: "refused" })], ["--single-request"], 25_000);
    expect(result.code).toBe(3);
    expect(result.lines.at(-1)).toMatchObject({ type: "final", status: "ERROR", error: { code: "PROVIDER_DOWN", retryable: true } });
  }, 30_000);
});

describe("sessions and concurrency", () => {
  const slowTurn = (text: string): FakeTurn => ({ text: text.split(""), chunkDelayMs: 150 }); // ~1 s per run

  test("runs of two sessions run concurrently: both model requests are in flight at the same time", async () => {
    fake.script([slowTurn("aaaaaa"), slowTurn("bbbbbb")]);
    const host = startHost();
    host.send(runLine({ request_id: "sa", session_id: "session-a", prompt: "A" }), runLine({ request_id: "sb", session_id: "session-b", prompt: "B" }));
    const fa = await host.waitFor((l) => l.request_id === "sa" && l.type === "final");
    const fb = await host.waitFor((l) => l.request_id === "sb" && l.type === "final");
    expect(fa.line.status).toBe("OK");
    expect(fb.line.status).toBe("OK");
    const [r1, r2] = modelRequests();
    // The second request arrived before the first run had answered.
    expect(Math.abs(r2!.receivedAt - r1!.receivedAt)).toBeLessThan(600);
    expect(Math.max(r1!.receivedAt, r2!.receivedAt)).toBeLessThan(Math.min(fa.at, fb.at));
    expect(new Set(modelRequests().map(userText))).toEqual(new Set(["A", "B"]));
    expect((await host.finish()).code).toBe(0);
  });

  test("at most 4 sessions run at once: a fifth session's model request waits for a free slot", async () => {
    fake.script(["1", "2", "3", "4", "5"].map((n) => slowTurn(n.repeat(6))));
    const host = startHost();
    host.send(...["s1", "s2", "s3", "s4", "s5"].map((id) => runLine({ request_id: id, session_id: `bound-${id}`, prompt: id })));
    const finals = [];
    for (const id of ["s1", "s2", "s3", "s4", "s5"]) finals.push(await host.waitFor((l) => l.request_id === id && l.type === "final"));
    for (const final of finals) expect(final.line.status).toBe("OK");
    const times = modelRequests().map((r) => r.receivedAt);
    expect(times).toHaveLength(5);
    expect(times[3]! - times[0]!).toBeLessThan(600); // four at once
    expect(times[4]! - times[0]!).toBeGreaterThanOrEqual(800); // the fifth after one of them (~900 ms each)
    expect((await host.finish()).code).toBe(0);
  });

  test("two runs of ONE session run one after another: the second model request starts only after the first's final", async () => {
    fake.script([slowTurn("111111"), slowTurn("222222")]);
    const host = startHost();
    host.send(runLine({ request_id: "q1", prompt: "first", stream: true }), runLine({ request_id: "q2", prompt: "second", stream: true }));
    const f1 = await host.waitFor((l) => l.request_id === "q1" && l.type === "final");
    const f2 = await host.waitFor((l) => l.request_id === "q2" && l.type === "final");
    expect(f1.line.text).toBe("111111");
    expect(f2.line.text).toBe("222222");
    // Both acks come at once; q2's run (REQUEST_ACCEPTED) begins after q1's final.
    const acks = host.lines.filter((e) => e.line.type === "ack");
    expect(acks.map((e) => e.line.request_id)).toEqual(["q1", "q2"]);
    expect(acks[1]!.at).toBeLessThan(f1.at);
    const q2Start = await host.waitFor((l) => l.request_id === "q2" && l.event_type === "REQUEST_ACCEPTED");
    expect(q2Start.index).toBeGreaterThan(f1.index);
    const [r1, r2] = modelRequests();
    expect(userText(r1!)).toBe("first");
    expect(userText(r2!)).toBe("second");
    expect(r2!.receivedAt - r1!.receivedAt).toBeGreaterThanOrEqual(800); // the first reply took ~900 ms
    expect(r2!.receivedAt).toBeGreaterThanOrEqual(f1.at - 100);
    expect((await host.finish()).code).toBe(0);
  });

  test("a session is a durable conversation: its second run sends the first run's messages; another session does not", async () => {
    fake.script([{ text: "ONE" }, { text: "TWO" }, { text: "OTHER" }]);
    const host = startHost();
    host.send(runLine({ request_id: "c1", session_id: "conv", prompt: "first question" }));
    await host.waitFor((l) => l.request_id === "c1" && l.type === "final");
    host.send(runLine({ request_id: "c2", session_id: "conv", prompt: "second question" }));
    await host.waitFor((l) => l.request_id === "c2" && l.type === "final");
    host.send(runLine({ request_id: "c3", session_id: "elsewhere", prompt: "unrelated" }));
    await host.waitFor((l) => l.request_id === "c3" && l.type === "final");
    const [r1, r2, r3] = modelRequests();
    expect(conversation(r1!)).toEqual(["user: first question"]);
    expect(conversation(r2!)).toEqual(["user: first question", "assistant: ONE", "user: second question"]);
    expect(conversation(r3!)).toEqual(["user: unrelated"]);
    expect((await host.finish()).code).toBe(0);
  });

  test("the conversation survives a host restart (one-shot bridge: one process per request)", async () => {
    fake.script([{ text: "ONE" }, { text: "TWO" }]);
    const first = await hostOnce([runLine({ request_id: "d1", session_id: "durable", prompt: "first question" })], ["--bridge-compat", "--single-request"]);
    expect(first.code).toBe(0);
    const second = await hostOnce([runLine({ request_id: "d2", session_id: "durable", prompt: "second question" })], ["--bridge-compat", "--single-request"]);
    expect(second.code).toBe(0);
    expect(second.lines.at(-1)).toMatchObject({ status: "OK", text: "TWO" });
    expect(conversation(modelRequests()[1]!)).toEqual(["user: first question", "assistant: ONE", "user: second question"]);
  });
});

describe("review regressions", () => {
  test("a session_id that names a `zero run` session is refused as INVALID_REQUEST; that session is left untouched", async () => {
    fake.script([{ text: "from the cli" }]);
    const cli = await runZero(["run", "--json", "cli task"], { sandbox });
    expect(cli.code).toBe(0);
    const sessionId = jsonLines(cli.stdout)[0]!.sessionId as string;
    expect(sessionId).toMatch(/^zero_/);
    const result = await hostOnce([runLine({ request_id: "steal", session_id: sessionId })]);
    const last = result.lines.at(-1)!;
    expect(last.error).toMatchObject({ code: "INVALID_REQUEST", retryable: false });
    expect(JSON.stringify(last)).toContain("belongs to a cli session");
    expect(modelRequests()).toHaveLength(1); // only the cli run reached the model
    fake.script([{ text: "still mine" }]);
    const resumed = await runZero(["run", "--resume", sessionId, "again"], { sandbox });
    expect(resumed.code).toBe(0);
    expect(conversation(modelRequests()[1]!)).toEqual(["user: cli task", "assistant: from the cli", "user: again"]);
  });

  test("a secret in the model's answer never reaches a host line: streamed TEXT deltas and the final text are redacted", async () => {
    const token = `ghp_${Array.from(crypto.getRandomValues(new Uint8Array(36)), (b) => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[b % 62]).join("")}`;
    // Split mid-token: a per-delta redactor alone would let the pieces through.
    fake.script([{ text: ["the token is ", token.slice(0, 10), token.slice(10, 25), `${token.slice(25)} keep`, " it safe"] }]);
    const result = await hostOnce([runLine({ request_id: "leak", stream: true })]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(token);
    expect(result.stdout).not.toContain(token.slice(8));
    const streamed = result.lines.filter((l) => l.event_type === "TEXT_DELTA").map((l) => l.payload.text).join("");
    expect(streamed).toBe("the token is [REDACTED:github-token] keep it safe");
    const final = result.lines.find((l) => l.type === "final")!;
    expect(final.status).toBe("OK");
    expect(final.text).toContain("[REDACTED:github-token]");
    expect(final.text).toContain("keep it safe");
  });
});

describe("--single-request", () => {
  test("ping → one ack PONG, exit 0", async () => {
    const result = await hostOnce([SPEC.pingRequest], ["--single-request"]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(1);
    expectShape(result.lines[0], SPEC.pingAck);
  });

  test("run OK → ack and final, exit 0", async () => {
    fake.script([{ text: "ok" }]);
    const result = await hostOnce([runLine({ request_id: "one" })], ["--single-request"]);
    expect(result.code).toBe(0);
    expect(result.lines.map((l) => `${l.type}:${l.status}`)).toEqual(["ack:ACCEPTED", "final:OK"]);
  });

  test("timeout → the TIMEOUT final, exit 4", async () => {
    fake.script([{ kind: "stall" }]);
    const result = await hostOnce([SPEC.timeoutRequest], ["--single-request"]);
    expect(result.code).toBe(4);
    expectShape(result.lines.at(-1), SPEC.timeoutFinal);
    expect(result.ms).toBeLessThan(5_000);
  });

  test("invalid request → the error line, exit 2", async () => {
    const result = await hostOnce([SPEC.badRequest], ["--single-request"]);
    expect(result.code).toBe(2);
    expect(result.lines).toHaveLength(1);
    expectShape(result.lines[0], SPEC.badError);
  });

  test("exits after its one request even while stdin stays open", async () => {
    const host = startHost(["--single-request"]);
    host.send(SPEC.pingRequest);
    const timer = setTimeout(() => host.proc.kill("SIGKILL"), 5_000);
    const code = await host.proc.exited;
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(host.lines.map((e) => e.line.status)).toEqual(["PONG"]);
  });

  test("only the first request is answered: a second stdin line is ignored, even one that arrives while the run is going (HOST-15)", async () => {
    fake.script([{ text: ["first ", "answer"], chunkDelayMs: 150 }]);
    const result = await hostOnce([runLine({ request_id: "only" }), pingLine("ignored-ping")], ["--bridge-compat", "--single-request"]);
    expect(result.lines.map((l) => `${l.type}:${l.request_id}`)).toEqual(["final:only"]);
    expect(result.lines[0]).toMatchObject({ status: "OK", text: "first answer" });
    expect(result.code).toBe(0);
  });

  test("replay in one-shot mode → the replayed final, exit 0", async () => {
    fake.script([{ text: "...", usage: { input: 12, output: 5 } }]);
    expect((await hostOnce([SPEC.replayFirst], ["--bridge-compat", "--single-request"])).code).toBe(0);
    const replay = await hostOnce([SPEC.replayRetry], ["--bridge-compat", "--single-request"]);
    expect(replay.code).toBe(0);
    expectShape(replay.lines[0], SPEC.replayFinal);
  });
});

describe("--bridge-compat", () => {
  test("a streamed run emits only its terminal final (no ack, no events); ping still acks (HOST-15)", async () => {
    fake.script([{ text: ["Project has ", "src, tests, ", "and docs."], usage: { input: 120, output: 40 } }]);
    const result = await hostOnce([SPEC.pingRequest, SPEC.runRequest], ["--bridge-compat"]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(2);
    expectShape(result.lines[0], SPEC.pingAck);
    expectShape(result.lines[1], SPEC.runFinal);
  });

  test("one-shot --bridge-compat --single-request run → just the final, exit 0 (the clawbridge default path)", async () => {
    fake.script([{ text: "Project has src, tests, and docs.", usage: { input: 120, output: 40 } }]);
    const result = await hostOnce([SPEC.runRequest], ["--bridge-compat", "--single-request"]);
    expect(result.code).toBe(0);
    expect(result.lines).toHaveLength(1);
    expectShape(result.lines[0], SPEC.runFinal);
  });

  test("errors stay terminal lines: invalid request → error; provider 401 → final ERROR; timeout → final TIMEOUT", async () => {
    fake.script([{ kind: "error", status: 401 }, { kind: "stall" }]);
    const host = startHost(["--bridge-compat"]);
    host.send(SPEC.badRequest);
    expectShape((await host.waitFor((l) => l.request_id === "bad-001")).line, SPEC.badError);
    host.send(runLine({ request_id: "auth", stream: true }));
    expect((await host.waitFor((l) => l.request_id === "auth")).line).toMatchObject({ type: "final", status: "ERROR", error: { code: "PROVIDER_AUTH" } });
    host.send(SPEC.timeoutRequest);
    expectShape((await host.waitFor((l) => l.request_id === "run-timeout-001", 5_000)).line, SPEC.timeoutFinal);
    expect((await host.finish()).code).toBe(0);
    for (const id of ["bad-001", "auth", "run-timeout-001"]) expect(host.of(id)).toHaveLength(1);
  });
});

describe("signals and transport", () => {
  test("SIGINT cancels the running runs, answers them CANCELED, then exits 130 (docs/host-protocol.md), with stdin still open", async () => {
    fake.script([{ kind: "stall" }]);
    const host = startHost();
    host.send(runLine({ request_id: "interrupted" }));
    await fake.waitForRequests(1);
    host.proc.kill("SIGINT");
    const final = await host.waitFor((l) => l.request_id === "interrupted" && l.type === "final", 5_000);
    expect(final.line.status).toBe("CANCELED");
    const timer = setTimeout(() => host.proc.kill("SIGKILL"), 5_000);
    const code = await host.proc.exited;
    clearTimeout(timer);
    expect(code).toBe(130);
  });

  test("pings never touch the store (docs/host-protocol.md: 'The store is opened on the first run')", async () => {
    const result = await hostOnce([SPEC.pingRequest, pingLine("ping-002")]);
    expect(result.code).toBe(0);
    const found = existsSync(sandbox.stateHome) ? [...new Bun.Glob("**/*.db*").scanSync({ cwd: sandbox.stateHome, onlyFiles: true })] : [];
    expect(found).toEqual([]);
    // A run does open it (the check above can fail).
    fake.script([{ text: "ok" }]);
    await hostOnce([runLine({ request_id: "opens-store" })]);
    expect([...new Bun.Glob("**/zero-cli.db").scanSync({ cwd: sandbox.stateHome, onlyFiles: true })]).toHaveLength(1);
  });

  test("a store that cannot be opened is an INTERNAL failure of the run, not an INVALID_REQUEST of a valid request", async () => {
    const blocker = join(sandbox.root, "not-a-dir");
    writeFileSync(blocker, "a file where the state directory should be\n");
    fake.script([{ text: "ok" }, { text: "ok" }]);
    const result = await runZero(["host", "--single-request"], {
      sandbox,
      env: { XDG_STATE_HOME: blocker },
      stdin: `${runLine({ request_id: "no-store" })}\n`,
    });
    seenStdout.push(...result.stdout.replace(/\n$/, "").split("\n").filter((l) => l !== ""));
    const lines = jsonLines(result.stdout);
    const last = lines.at(-1)!;
    expect(last.request_id).toBe("no-store");
    expect(last.error?.code).toBe("INTERNAL");
    expect(result.code).toBe(1);
  });

  test("stderr takes the logs, stdout only protocol lines: a failing provider and a config notice leave stdout clean (HOST-01)", async () => {
    sandbox.writeProjectConfig({ version: 2 }, "devout.jsonc"); // an untrusted / deprecated project file → a stderr notice
    fake.script([{ kind: "error", status: 401 }]);
    const result = await hostOnce([SPEC.pingRequest, runLine({ request_id: "log-1" })]);
    expect(result.stderr.length).toBeGreaterThan(0);
    for (const line of result.stdout.replace(/\n$/, "").split("\n")) expect(JSON.parse(line).protocol_version).toBe(1);
  });

  test("every stdout line of every host in this file was one JSON object with protocol_version 1 and the common head (HOST-01/16)", () => {
    expect(seenStdout.length).toBeGreaterThan(300);
    for (const text of seenStdout) {
      let line: Line;
      try {
        line = JSON.parse(text);
      } catch {
        throw new Error(`not JSON: ${JSON.stringify(text.slice(0, 200))}`);
      }
      expect(Object.keys(line).slice(0, 5)).toEqual(HEAD);
      expect(line.protocol_version).toBe(1);
      expect(["ack", "event", "final", "error"]).toContain(line.type);
      expect(Number.isInteger(line.ts_ms)).toBe(true);
    }
  });
});
