import { describe, expect, test } from "bun:test";
import { emptyUsage, runtimeEventSchema, type EventBody, type RuntimeEvent } from "../../protocol/events.ts";
import { cancelRequestSchema, pingRequestSchema, runRequestSchema } from "../../protocol/host.ts";
import { describeRequestProblem, hostEventFor } from "./messages.ts";

/** The spec's requests (host-protocol-v1.txt), verbatim. */
const PING = { protocol_version: 1, type: "ping", request_id: "ping-001", session_id: "s-user-1" };
const RUN = {
  protocol_version: 1,
  type: "run",
  request_id: "run-001",
  session_id: "s-user-1",
  ts_ms: 1773935000100,
  prompt: "Analyze project structure",
  metadata: { channel: "clawbridge", trace_id: "trace-001" },
  timeout_ms: 120000,
  idempotency_key: "idem-001",
  stream: true,
};
const CANCEL = { protocol_version: 1, type: "cancel", request_id: "cancel-001", session_id: "s-user-1", target_request_id: "run-001" };
const BAD_001 = { protocol_version: 1, type: "run", request_id: "bad-001", session_id: "s-user-1", prompt: "hello" };

/** A request with one field replaced (undefined removes it). */
function withField(base: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base };
  if (value === undefined) delete copy[field];
  else copy[field] = value;
  return copy;
}

describe("describeRequestProblem: accepted requests", () => {
  test("the spec's ping, run, cancel, timeout and replay requests are acceptable", () => {
    expect(describeRequestProblem(PING)).toBeUndefined();
    expect(describeRequestProblem(RUN)).toBeUndefined();
    expect(describeRequestProblem(CANCEL)).toBeUndefined();
    const timeout = { protocol_version: 1, type: "run", request_id: "run-timeout-001", session_id: "s-user-1", prompt: "Very long task", timeout_ms: 1000, idempotency_key: "idem-timeout-001", stream: false };
    expect(describeRequestProblem(timeout)).toBeUndefined();
    const replay = { protocol_version: 1, type: "run", request_id: "run-a", session_id: "s-user-1", prompt: "hello", timeout_ms: 120000, idempotency_key: "idem-replay-1", stream: false };
    expect(describeRequestProblem(replay)).toBeUndefined();
  });

  test("a run with only the required fields is acceptable (ts_ms, timeout_ms, stream, metadata are optional)", () => {
    const minimal = { protocol_version: 1, type: "run", request_id: "r", session_id: "s", prompt: "p", idempotency_key: "k" };
    expect(describeRequestProblem(minimal)).toBeUndefined();
    expect(runRequestSchema.safeParse(minimal).success).toBe(true);
  });

  test("unknown extra fields are accepted on every type (forward compatibility) and the schemas agree", () => {
    const extra = { future_field: { nested: [1, 2] }, x: null, priority: "high" };
    for (const [request, schema] of [
      [PING, pingRequestSchema],
      [RUN, runRequestSchema],
      [CANCEL, cancelRequestSchema],
    ] as const) {
      const record = { ...request, ...extra };
      expect(describeRequestProblem(record)).toBeUndefined();
      expect(schema.safeParse(record).success).toBe(true);
    }
    // Extra fields also on a ping that has run-only fields with odd types: they do not apply to ping.
    expect(describeRequestProblem({ ...PING, timeout_ms: "soon", stream: "yes", metadata: [], idempotency_key: "" })).toBeUndefined();
  });

  test("metadata may be an empty object or hold any JSON values; ts_ms may be any number", () => {
    expect(describeRequestProblem({ ...RUN, metadata: {} })).toBeUndefined();
    expect(describeRequestProblem({ ...RUN, metadata: { a: [1, { b: null }], c: true } })).toBeUndefined();
    expect(describeRequestProblem({ ...RUN, ts_ms: 0 })).toBeUndefined();
    expect(describeRequestProblem({ ...RUN, ts_ms: 1773935000100.5 })).toBeUndefined();
    expect(describeRequestProblem({ ...RUN, stream: false })).toBeUndefined();
    expect(describeRequestProblem({ ...RUN, timeout_ms: 1 })).toBeUndefined();
  });

  test("whatever describeRequestProblem accepts, the zod schemas of protocol/host.ts parse (no INVALID_REQUEST from a schema mismatch later)", () => {
    const samples = [
      PING,
      RUN,
      CANCEL,
      { ...RUN, metadata: {} },
      { ...RUN, ts_ms: 0 },
      { ...RUN, timeout_ms: 1 },
      { ...RUN, stream: false },
      { protocol_version: 1, type: "run", request_id: "r", session_id: "s", prompt: "p", idempotency_key: "k" },
    ];
    const schemas = { ping: pingRequestSchema, run: runRequestSchema, cancel: cancelRequestSchema } as const;
    for (const sample of samples) {
      expect(describeRequestProblem(sample)).toBeUndefined();
      expect(schemas[sample.type as keyof typeof schemas].safeParse(sample).success).toBe(true);
    }
  });
});

describe("describeRequestProblem: rejections", () => {
  test("protocol_version must be exactly the number 1", () => {
    expect(describeRequestProblem({ ...PING, protocol_version: 2 })).toBe("protocol_version must be 1 (got 2)");
    expect(describeRequestProblem({ ...PING, protocol_version: 0 })).toBe("protocol_version must be 1 (got 0)");
    expect(describeRequestProblem({ ...PING, protocol_version: "1" })).toBe('protocol_version must be 1 (got "1")');
    expect(describeRequestProblem({ ...PING, protocol_version: true })).toBe("protocol_version must be 1 (got true)");
    expect(describeRequestProblem({ ...PING, protocol_version: null })).toBe("protocol_version must be 1 (got null)");
    expect(describeRequestProblem({ ...PING, protocol_version: 1.5 })).toBe("protocol_version must be 1 (got 1.5)");
    expect(describeRequestProblem(withField(PING, "protocol_version", undefined))).toBe("protocol_version must be 1 (got none)");
    expect(describeRequestProblem({})).toBe("protocol_version must be 1 (got none)");
  });

  test("the protocol_version check comes before everything else", () => {
    expect(describeRequestProblem({ protocol_version: 2, type: "dance" })).toMatch(/^protocol_version must be 1/);
    expect(describeRequestProblem({ ...BAD_001, protocol_version: 2 })).toMatch(/^protocol_version must be 1/);
  });

  test("an unknown or missing type names the allowed types", () => {
    expect(describeRequestProblem({ ...PING, type: "dance" })).toBe('unknown type "dance" (allowed: ping, run, cancel)');
    expect(describeRequestProblem({ ...PING, type: "PING" })).toBe('unknown type "PING" (allowed: ping, run, cancel)');
    expect(describeRequestProblem({ ...PING, type: "" })).toBe('unknown type "" (allowed: ping, run, cancel)');
    expect(describeRequestProblem({ ...PING, type: 3 })).toBe("unknown type 3 (allowed: ping, run, cancel)");
    expect(describeRequestProblem(withField(PING, "type", undefined))).toBe("unknown type (missing) (allowed: ping, run, cancel)");
    // Response types are not request types.
    for (const type of ["ack", "event", "final", "error"]) {
      expect(describeRequestProblem({ ...PING, type })).toBe(`unknown type ${JSON.stringify(type)} (allowed: ping, run, cancel)`);
    }
  });

  test("names inherited from Object.prototype are unknown types too, not a crash", () => {
    // `type in REQUIRED` also sees inherited names: REQUIRED["toString"] is a function and
    // iterating it throws, and handleLine calls describeRequestProblem outside its try.
    for (const type of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
      let result: string | undefined;
      expect(() => {
        result = describeRequestProblem({ ...PING, type });
      }).not.toThrow();
      expect(result).toBe(`unknown type ${JSON.stringify(type)} (allowed: ping, run, cancel)`);
    }
  });

  test("missing, empty or non-string request_id / session_id on every type", () => {
    for (const request of [PING, RUN, CANCEL]) {
      const type = request.type;
      for (const field of ["request_id", "session_id"]) {
        const expected = `${type} request requires a non-empty ${field}`;
        expect(describeRequestProblem(withField(request, field, undefined))).toBe(expected);
        expect(describeRequestProblem(withField(request, field, ""))).toBe(expected);
        expect(describeRequestProblem(withField(request, field, 7))).toBe(expected);
        expect(describeRequestProblem(withField(request, field, null))).toBe(expected);
      }
    }
  });

  test("a run without a prompt, a cancel without a target_request_id", () => {
    expect(describeRequestProblem(withField(RUN, "prompt", undefined))).toBe("run request requires a non-empty prompt");
    expect(describeRequestProblem(withField(RUN, "prompt", ""))).toBe("run request requires a non-empty prompt");
    expect(describeRequestProblem(withField(RUN, "prompt", ["hello"]))).toBe("run request requires a non-empty prompt");
    expect(describeRequestProblem(withField(CANCEL, "target_request_id", undefined))).toBe("cancel request requires a non-empty target_request_id");
    expect(describeRequestProblem(withField(CANCEL, "target_request_id", ""))).toBe("cancel request requires a non-empty target_request_id");
    expect(describeRequestProblem(withField(CANCEL, "target_request_id", 1))).toBe("cancel request requires a non-empty target_request_id");
  });

  test("a run without a non-empty idempotency_key gets the spec's exact message", () => {
    const message = "run request requires non-empty idempotency_key";
    expect(describeRequestProblem(BAD_001)).toBe(message); // the spec's bad-001 request
    expect(describeRequestProblem(withField(RUN, "idempotency_key", undefined))).toBe(message);
    expect(describeRequestProblem(withField(RUN, "idempotency_key", ""))).toBe(message);
    expect(describeRequestProblem(withField(RUN, "idempotency_key", null))).toBe(message);
    expect(describeRequestProblem(withField(RUN, "idempotency_key", 42))).toBe(message);
    expect(describeRequestProblem(withField(RUN, "idempotency_key", { key: "a" }))).toBe(message);
  });

  test("timeout_ms must be a positive integer", () => {
    for (const bad of [0, -1, 1.5, "1000", null, true, [1000], {}]) {
      expect(describeRequestProblem({ ...RUN, timeout_ms: bad })).toBe("timeout_ms must be a positive integer");
    }
    expect(describeRequestProblem({ ...RUN, timeout_ms: Number.POSITIVE_INFINITY })).toBe("timeout_ms must be a positive integer");
    expect(describeRequestProblem({ ...RUN, timeout_ms: Number.NaN })).toBe("timeout_ms must be a positive integer");
  });

  test("stream must be a boolean", () => {
    for (const bad of ["true", 1, 0, null, {}, []]) {
      expect(describeRequestProblem({ ...RUN, stream: bad })).toBe("stream must be true or false");
    }
  });

  test("metadata must be a (non-array, non-null) object", () => {
    for (const bad of [null, [], ["a"], "channel", 1, true]) {
      expect(describeRequestProblem({ ...RUN, metadata: bad })).toBe("metadata must be an object");
    }
  });

  test("ts_ms must be a number", () => {
    for (const bad of ["1773935000100", null, true, {}, []]) {
      expect(describeRequestProblem({ ...RUN, ts_ms: bad })).toBe("ts_ms must be a number");
    }
  });

  test("whatever describeRequestProblem rejects, the zod schema rejects too (they must not disagree)", () => {
    const rejected = [
      withField(RUN, "idempotency_key", ""),
      { ...RUN, timeout_ms: 0 },
      { ...RUN, timeout_ms: 1.5 },
      { ...RUN, stream: "true" },
      { ...RUN, metadata: [] },
      { ...RUN, ts_ms: "1" },
      withField(RUN, "prompt", ""),
      withField(CANCEL, "target_request_id", ""),
    ];
    const schemas = { ping: pingRequestSchema, run: runRequestSchema, cancel: cancelRequestSchema } as const;
    for (const record of rejected) {
      expect(describeRequestProblem(record)).toBeString();
      expect(schemas[record.type as keyof typeof schemas].safeParse(record).success).toBe(false);
    }
  });
});

// ---- hostEventFor ----

let sequence = 0;
/** A runtime event with a valid envelope, checked against the runtime schema (so the mapping is tested on real shapes). */
function runtime(body: EventBody): RuntimeEvent {
  return runtimeEventSchema.parse({
    eventId: crypto.randomUUID(),
    sequence: ++sequence,
    timestamp: new Date().toISOString(),
    runId: "run_20260101_abc",
    ...body,
  });
}

describe("hostEventFor", () => {
  test("message.delta → TEXT_DELTA {text}", () => {
    expect(hostEventFor(runtime({ type: "message.delta", step: 1, text: "Project has " }))).toEqual({ type: "TEXT_DELTA", payload: { text: "Project has " } });
  });

  test("reasoning.delta → REASONING_DELTA {text}", () => {
    expect(hostEventFor(runtime({ type: "reasoning.delta", step: 2, text: "thinking" }))).toEqual({ type: "REASONING_DELTA", payload: { text: "thinking" } });
  });

  test("tool.requested → TOOL_CALL {id, name, args}", () => {
    const event = runtime({ type: "tool.requested", step: 1, callId: "call_1", tool: "read", input: { path: "README.md" }, risk: "read", operation: "read" });
    expect(hostEventFor(event)).toEqual({ type: "TOOL_CALL", payload: { id: "call_1", name: "read", args: { path: "README.md" } } });
  });

  test("tool.completed → TOOL_RESULT {id, status, output, truncated} without internal fields (diff, duration, redactions)", () => {
    const event = runtime({
      type: "tool.completed",
      callId: "call_1",
      tool: "write",
      status: "completed",
      output: "wrote a.txt",
      truncated: false,
      durationMs: 12,
      diff: "--- a\n+++ b\n",
      redactions: { count: 1, kinds: { github: 1 } },
    });
    const mapped = hostEventFor(event);
    expect(mapped).toEqual({ type: "TOOL_RESULT", payload: { id: "call_1", status: "completed", output: "wrote a.txt", truncated: false } });
    expect(Object.keys(mapped!.payload)).toEqual(["id", "status", "output", "truncated"]);
  });

  test("a denied or failed tool result keeps its status; truncated is passed through", () => {
    const denied = runtime({ type: "tool.completed", callId: "c2", tool: "run", status: "denied", output: "denied", truncated: false, durationMs: 0 });
    expect(hostEventFor(denied)?.payload).toMatchObject({ status: "denied" });
    const failed = runtime({ type: "tool.completed", callId: "c3", tool: "read", status: "failed", output: "x".repeat(10), truncated: true, durationMs: 1 });
    expect(hostEventFor(failed)?.payload).toMatchObject({ status: "failed", truncated: true });
  });

  test("usage.updated → USAGE with the run's cumulative usage in the final's token names", () => {
    const usage = { ...emptyUsage(), inputTokens: 120, outputTokens: 40, totalTokens: 160, reasoningTokens: 7, cachedInputTokens: 3 };
    const step = { ...emptyUsage(), inputTokens: 20, outputTokens: 4, totalTokens: 24 };
    const mapped = hostEventFor(runtime({ type: "usage.updated", step: 2, stepUsage: step, usage }));
    expect(mapped).toEqual({ type: "USAGE", payload: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 } });
    expect(Object.keys(mapped!.payload)).toEqual(["prompt_tokens", "completion_tokens", "total_tokens"]);
  });

  test("every other internal event has no host event (REQUEST_ACCEPTED and RUN_FINISHED come from the host itself)", () => {
    const usage = emptyUsage();
    const others: EventBody[] = [
      {
        type: "run.started",
        sessionId: "s-user-1",
        rootRunId: "run_20260101_abc",
        parentRunId: null,
        surface: "host",
        task: "t",
        agent: "build",
        model: { alias: "fake", provider: "fake", model: "fake-1" },
        cwd: "/tmp",
        roots: ["/tmp"],
        permissionMode: "ask",
        workDepth: "medium",
        depth: 0,
        reasoningEffort: null,
        speed: null,
        budgets: { maxSteps: 10, maxToolCalls: 10, toolTimeoutMs: 1000, maxTokens: null, timeoutMs: 1000, deadline: new Date().toISOString() },
      },
      { type: "step.started", step: 1 },
      { type: "permission.requested", callId: "c", tool: "run", risk: "execute", operation: "execute", permissionMode: "ask", reason: "r" },
      { type: "permission.decided", callId: "c", tool: "run", decision: "deny", source: "no-responder", reason: "r" },
      { type: "tool.started", callId: "c", tool: "run" },
      { type: "tool.progress", callId: "c", tool: "run", message: "m" },
      { type: "guard.triggered", guard: "max_steps", message: "m" },
      { type: "step.completed", step: 1, finishReason: "stop", toolCalls: 0 },
      { type: "provider.retry", step: 1, attempt: 2, maxAttempts: 3, delayMs: 0, error: { category: "rate_limit", message: "m", statusCode: 429 } },
      { type: "run.failed", error: { kind: "provider", category: "auth", message: "m", statusCode: 401, retryAfterMs: null, retryable: false } },
      { type: "run.completed", status: "completed", reason: null, exitCode: 0, text: "t", usage, steps: 1, toolCalls: 0, durationMs: 1 },
    ];
    for (const body of others) expect(hostEventFor(runtime(body))).toBeUndefined();
  });
});
