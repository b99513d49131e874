import { describe, expect, test } from "bun:test";
import type { PermissionMode } from "../config/schema.ts";
import type { Operation, Risk } from "../protocol/events.ts";
import { type ApprovalAnswer, type ApprovalRequest, createApprovalBroker } from "./approvals.ts";
import { type Decision, MODE_RULES, evaluate, mostRestrictive } from "./rules.ts";

const MODES: PermissionMode[] = ["read-only", "ask", "accept-edits", "full-access"];
const OPERATIONS: Operation[] = [
  "read",
  "read-secret",
  "write-edit",
  "write-delete",
  "write-move",
  "write-sensitive",
  "execute",
  "network",
  "delegate",
];

/** The matrix as the spec states it, written out independently of MODE_RULES. */
const EXPECTED: Record<PermissionMode, Record<Operation, Decision>> = {
  "read-only": {
    read: "allow",
    "read-secret": "deny",
    "write-edit": "deny",
    "write-delete": "deny",
    "write-move": "deny",
    "write-sensitive": "deny",
    execute: "deny",
    network: "deny",
    delegate: "allow",
  },
  ask: {
    read: "allow",
    "read-secret": "ask",
    "write-edit": "ask",
    "write-delete": "ask",
    "write-move": "ask",
    "write-sensitive": "ask",
    execute: "ask",
    network: "ask",
    delegate: "allow",
  },
  "accept-edits": {
    read: "allow",
    "read-secret": "ask",
    "write-edit": "allow",
    "write-delete": "allow",
    "write-move": "allow",
    "write-sensitive": "ask",
    execute: "ask",
    network: "ask",
    delegate: "allow",
  },
  "full-access": {
    read: "allow",
    "read-secret": "allow",
    "write-edit": "allow",
    "write-delete": "allow",
    "write-move": "allow",
    "write-sensitive": "allow",
    execute: "allow",
    network: "allow",
    delegate: "allow",
  },
};

const RISK_OF: Record<Operation, Risk> = {
  read: "read",
  "read-secret": "read",
  "write-edit": "write",
  "write-delete": "write",
  "write-move": "write",
  "write-sensitive": "write",
  execute: "execute",
  network: "network",
  delegate: "delegate",
};

describe("MODE_RULES × evaluate: the permission matrix", () => {
  for (const mode of MODES) {
    for (const operation of OPERATIONS) {
      const expected = EXPECTED[mode][operation];
      test(`${mode} / ${operation} → ${expected}`, () => {
        const verdict = evaluate(MODE_RULES[mode], { tool: "t", risk: RISK_OF[operation], operation }, mode);
        expect(verdict.decision).toBe(expected);
        expect(verdict.reason.length).toBeGreaterThan(0);
        expect(verdict.reason).toContain(mode);
      });
    }
  }

  test("the decision depends on the operation, not the declared risk", () => {
    // A write-risk tool that declares a read operation is judged as a read.
    expect(evaluate(MODE_RULES["read-only"], { tool: "t", risk: "write", operation: "read" }, "read-only").decision).toBe("allow");
    expect(evaluate(MODE_RULES.ask, { tool: "t", risk: "read", operation: "write-delete" }, "ask").decision).toBe("ask");
  });

  test("reasons differ by decision and describe the operation", () => {
    const allow = evaluate(MODE_RULES.ask, { tool: "t", risk: "read", operation: "read" }, "ask");
    const ask = evaluate(MODE_RULES.ask, { tool: "t", risk: "write", operation: "write-delete" }, "ask");
    const deny = evaluate(MODE_RULES["read-only"], { tool: "t", risk: "execute", operation: "execute" }, "read-only");
    expect(new Set([allow.reason, ask.reason, deny.reason]).size).toBe(3);
    expect(ask.reason).toContain("delet");
    expect(deny.reason).toContain("command");
  });

  test("an empty rule list fails closed", () => {
    for (const operation of OPERATIONS) {
      const verdict = evaluate([], { tool: "t", risk: RISK_OF[operation], operation }, "full-access");
      expect(verdict.decision).toBe("deny");
      expect(verdict.reason).toContain("full-access");
    }
  });

  test("the first matching rule wins", () => {
    const rules = [
      { operations: ["execute"] as Operation[], decision: "deny" as const },
      { operations: "*" as const, decision: "allow" as const },
    ];
    expect(evaluate(rules, { tool: "t", risk: "execute", operation: "execute" }, "full-access").decision).toBe("deny");
    expect(evaluate(rules, { tool: "t", risk: "network", operation: "network" }, "full-access").decision).toBe("allow");
  });
});

describe("mostRestrictive", () => {
  const EXPECTED_PAIRS: Record<PermissionMode, Record<PermissionMode, PermissionMode>> = {
    "read-only": { "read-only": "read-only", ask: "read-only", "accept-edits": "read-only", "full-access": "read-only" },
    ask: { "read-only": "read-only", ask: "ask", "accept-edits": "ask", "full-access": "ask" },
    "accept-edits": { "read-only": "read-only", ask: "ask", "accept-edits": "accept-edits", "full-access": "accept-edits" },
    "full-access": { "read-only": "read-only", ask: "ask", "accept-edits": "accept-edits", "full-access": "full-access" },
  };
  for (const a of MODES) {
    for (const b of MODES) {
      test(`${a} + ${b} → ${EXPECTED_PAIRS[a][b]}`, () => {
        expect(mostRestrictive(a, b)).toBe(EXPECTED_PAIRS[a][b]);
      });
    }
  }
});

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    callId: "call_1",
    tool: "edit",
    risk: "write",
    operation: "write-edit",
    reason: "ask mode requires approval for editing files",
    input: { path: "a.txt" },
    ...overrides,
  };
}

/** A responder that answers from a script and records every request it saw. */
function scripted(answers: ApprovalAnswer[]) {
  const seen: ApprovalRequest[] = [];
  const responder = async (req: ApprovalRequest): Promise<ApprovalAnswer> => {
    seen.push(req);
    const answer = answers.shift();
    if (answer === undefined) throw new Error(`responder asked more often than scripted (request for ${req.callId})`);
    return answer;
  };
  return { responder, seen };
}

describe("createApprovalBroker", () => {
  const signal = new AbortController().signal;

  test("with no responder, denies with source no-responder and tells the user what to change", async () => {
    const broker = createApprovalBroker(undefined);
    const result = await broker.request(request(), signal);
    expect(result.allowed).toBe(false);
    expect(result.source).toBe("no-responder");
    expect(result.reason).toContain("ask mode requires approval for editing files");
    expect(result.reason).toContain("non-interactive");
    expect(result.reason).toContain("--permission-mode");
  });

  test("with no responder, every request is denied (nothing is remembered)", async () => {
    const broker = createApprovalBroker(undefined);
    for (let i = 0; i < 3; i++) {
      const result = await broker.request(request({ callId: `c${i}` }), signal);
      expect(result).toMatchObject({ allowed: false, source: "no-responder" });
    }
  });

  test("the responder receives the request and the signal", async () => {
    const controller = new AbortController();
    let got: { req: ApprovalRequest; signal: AbortSignal } | undefined;
    const broker = createApprovalBroker(async (req, s) => {
      got = { req, signal: s };
      return "once";
    });
    const req = request({ callId: "call_x", input: { path: "b.txt" } });
    await broker.request(req, controller.signal);
    expect(got?.req).toEqual(req);
    expect(got?.signal).toBe(controller.signal);
  });

  test("'always' is remembered for the same tool, risk and operation without asking again", async () => {
    const { responder, seen } = scripted(["always"]);
    const broker = createApprovalBroker(responder);
    const first = await broker.request(request({ callId: "c1" }), signal);
    expect(first).toMatchObject({ allowed: true, source: "always" });
    const second = await broker.request(request({ callId: "c2", input: { path: "other.txt" } }), signal);
    expect(second.allowed).toBe(true);
    expect(second.source).toBe("session");
    expect(second.reason.length).toBeGreaterThan(0);
    expect(seen.map((r) => r.callId)).toEqual(["c1"]);
  });

  test("'always' for an edit does not cover a delete: the responder is asked again", async () => {
    const { responder, seen } = scripted(["always", "deny"]);
    const broker = createApprovalBroker(responder);
    expect((await broker.request(request({ callId: "c1", operation: "write-edit" }), signal)).allowed).toBe(true);
    const del = await broker.request(request({ callId: "c2", operation: "write-delete" }), signal);
    expect(del.allowed).toBe(false);
    expect(seen.map((r) => [r.callId, r.operation])).toEqual([
      ["c1", "write-edit"],
      ["c2", "write-delete"],
    ]);
  });

  test("'always' does not cover a different tool or a different risk", async () => {
    const { responder, seen } = scripted(["always", "once", "once"]);
    const broker = createApprovalBroker(responder);
    await broker.request(request({ callId: "c1" }), signal);
    await broker.request(request({ callId: "c2", tool: "write" }), signal);
    await broker.request(request({ callId: "c3", risk: "execute" }), signal);
    expect(seen.map((r) => r.callId)).toEqual(["c1", "c2", "c3"]);
  });

  test("'deny' is not allowed, and is not remembered", async () => {
    const { responder, seen } = scripted(["deny", "once"]);
    const broker = createApprovalBroker(responder);
    const denied = await broker.request(request({ callId: "c1" }), signal);
    expect(denied.allowed).toBe(false);
    expect(denied.reason).toContain("denied");
    const next = await broker.request(request({ callId: "c2" }), signal);
    expect(next).toMatchObject({ allowed: true, source: "once" });
    expect(seen).toHaveLength(2);
  });

  test("'once' allows this call only: the next identical request asks again", async () => {
    const { responder, seen } = scripted(["once", "deny"]);
    const broker = createApprovalBroker(responder);
    const first = await broker.request(request({ callId: "c1" }), signal);
    expect(first).toMatchObject({ allowed: true, source: "once" });
    const second = await broker.request(request({ callId: "c2" }), signal);
    expect(second.allowed).toBe(false);
    expect(seen.map((r) => r.callId)).toEqual(["c1", "c2"]);
  });

  test("two brokers do not share remembered approvals", async () => {
    const a = scripted(["always"]);
    const b = scripted(["deny"]);
    const brokerA = createApprovalBroker(a.responder);
    const brokerB = createApprovalBroker(b.responder);
    await brokerA.request(request(), signal);
    expect((await brokerB.request(request(), signal)).allowed).toBe(false);
    expect(b.seen).toHaveLength(1);
  });
});
