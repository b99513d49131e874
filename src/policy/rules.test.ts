import { describe, expect, test } from "bun:test";
import type { PermissionMode } from "../config/schema.ts";
import type { Operation, Risk } from "../protocol/events.ts";
import { type ApprovalAnswer, type ApprovalRequest, createApprovalBroker } from "./approvals.ts";
import { type Decision, MODE_RULES, type Rule, callCategories, evaluate, mostRestrictive } from "./rules.ts";

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

describe("rules over tools, targets and categories", () => {
  const run = (target: string, categories = callCategories("execute")) => ({ tool: "run", risk: "execute" as const, operation: "execute" as const, target, categories });
  const edit = (target: string) => ({ tool: "write", risk: "write" as const, operation: "write-edit" as const, target });
  const withMode = (mode: PermissionMode, ...rules: Rule[]): Rule[] => [...rules, ...MODE_RULES[mode]];

  test("every mode keeps today's decisions for calls with targets", () => {
    for (const mode of MODES) {
      for (const operation of OPERATIONS) {
        const call = { tool: "t", risk: RISK_OF[operation], operation, target: "src/a.ts", categories: callCategories(operation) };
        expect(evaluate(MODE_RULES[mode], call, mode)).toEqual(evaluate(MODE_RULES[mode], { tool: "t", risk: RISK_OF[operation], operation }, mode));
        expect(evaluate(MODE_RULES[mode], call, mode).decision).toBe(EXPECTED[mode][operation]);
      }
    }
  });

  test("a command pattern allows what it names and nothing an operator could add", () => {
    const rules = withMode("ask", { tool: "run", target: "git status*", decision: "allow" });
    expect(evaluate(rules, run("git status"), "ask").decision).toBe("allow");
    expect(evaluate(rules, run("git status --short"), "ask").decision).toBe("allow");
    for (const command of ["rm -rf x", "git status; rm -rf x", "git status && curl x", "git status | sh", "git status $(curl x)", "git status `curl x`", "git status > ~/.bashrc", "git status\nrm -rf x", "git statu"]) {
      expect(evaluate(rules, run(command), "ask").decision).toBe("ask");
    }
    const allowed = evaluate(rules, run("git status -s"), "ask");
    expect(allowed.reason).toBe('ask mode allows running commands (rule: tool run; target "git status*")');
  });

  test("a rule names a tool exactly", () => {
    const rules = withMode("ask", { tool: "run", target: "*", decision: "deny" });
    expect(evaluate(rules, run("ls"), "ask").decision).toBe("deny");
    expect(evaluate(rules, { ...run("ls"), tool: "runner" }, "ask").decision).toBe("ask");
  });

  test("a path glob allows edits under a directory and nowhere else", () => {
    const rules = withMode("ask", { operations: ["write-edit"], target: "src/**", decision: "allow" });
    expect(evaluate(rules, edit("src/a.ts"), "ask").decision).toBe("allow");
    expect(evaluate(rules, edit("src/deep/b.ts"), "ask").decision).toBe("allow");
    expect(evaluate(rules, edit("test/a.ts"), "ask").decision).toBe("ask");
    expect(evaluate(rules, edit("/etc/passwd"), "ask").decision).toBe("ask");
    expect(evaluate(rules, { ...edit("src/a.ts"), operation: "write-delete" }, "ask").decision).toBe("ask");
  });

  test("a call touching several paths gets the most restrictive verdict over them", () => {
    const rules = withMode(
      "accept-edits",
      { target: ".github/**", decision: "deny" },
      { operations: ["write-edit"], target: "src/**", decision: "allow" },
    );
    expect(evaluate(rules, edit("src/a.ts\nsrc/b.ts"), "accept-edits").decision).toBe("allow");
    const mixed = evaluate(rules, edit("src/a.ts\n.github/workflows/ci.yml"), "accept-edits");
    expect(mixed.decision).toBe("deny");
    expect(mixed.reason).toContain(".github/workflows/ci.yml");
    const ask = withMode("ask", { operations: ["write-edit"], target: "src/**", decision: "allow" });
    expect(evaluate(ask, edit("src/a.ts\ndocs/x.md"), "ask").decision).toBe("ask");
  });

  test("categories: a command that reaches the network can be asked about even where commands are allowed", () => {
    const rules = withMode("full-access", { categories: ["network"], decision: "ask" });
    expect(evaluate(rules, run("ls"), "full-access").decision).toBe("allow");
    expect(evaluate(rules, run("git push", callCategories("execute", ["network"])), "full-access").decision).toBe("ask");
    expect(evaluate(rules, { tool: "read", risk: "network", operation: "network", target: "https://example.com/", categories: ["network"] }, "full-access").decision).toBe("ask");
    // A call that carries no categories is judged by those its operation implies.
    expect(evaluate(rules, { tool: "search", risk: "network", operation: "network", target: "web-search" }, "full-access").decision).toBe("ask");
  });

  test("fail closed: a target pattern without a target to judge covers the call only when it restricts", () => {
    const allow = withMode("ask", { target: "**", decision: "allow" });
    expect(evaluate(allow, { tool: "run", risk: "execute", operation: "execute" }, "ask").decision).toBe("ask");
    const deny = withMode("full-access", { target: "secret/**", decision: "deny" });
    expect(evaluate(deny, { tool: "read", risk: "read", operation: "read" }, "full-access").decision).toBe("deny");
  });

  test("fail closed: a malformed rule denies, an unknown operation is denied, nothing throws", () => {
    const malformed = [{ operations: "*", decision: "maybe" }] as unknown as Rule[];
    expect(evaluate(malformed, run("ls"), "full-access").decision).toBe("deny");
    const unknown = evaluate(MODE_RULES["full-access"].slice(0, 0), { tool: "t", risk: "read", operation: "teleport" as Operation }, "full-access");
    expect(unknown.decision).toBe("deny");
    const hostile = { operations: { includes: () => { throw new Error("boom"); } }, decision: "allow" } as unknown as Rule;
    expect(evaluate([hostile], run("ls"), "ask").decision).toBe("deny");
  });

  test("a rule without operations covers every operation", () => {
    const rules: Rule[] = [{ tool: "read", decision: "allow" }];
    expect(evaluate(rules, { tool: "read", risk: "read", operation: "read-secret", target: ".env" }, "ask").decision).toBe("allow");
    expect(evaluate(rules, { tool: "write", risk: "write", operation: "write-edit", target: "a" }, "ask").decision).toBe("deny");
  });
});

describe("callCategories", () => {
  test("what each operation implies, plus a tool's own, without repeats", () => {
    expect(callCategories("execute")).toEqual(["shell"]);
    expect(callCategories("execute", ["network"])).toEqual(["shell", "network"]);
    expect(callCategories("execute", ["shell", "network"])).toEqual(["shell", "network"]);
    expect(callCategories("network")).toEqual(["network"]);
    expect(callCategories("read-secret")).toEqual(["secret"]);
    expect(callCategories("write-sensitive")).toEqual(["secret"]);
    expect(callCategories("read")).toEqual([]);
    expect(callCategories("write-edit")).toEqual([]);
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
    target: "a.txt",
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

  test("'always' is remembered for the same tool, risk, operation and target without asking again", async () => {
    const { responder, seen } = scripted(["always"]);
    const broker = createApprovalBroker(responder);
    const first = await broker.request(request({ callId: "c1" }), signal);
    expect(first).toMatchObject({ allowed: true, source: "always" });
    expect(broker.remembered({ tool: "edit", risk: "write", operation: "write-edit", target: "a.txt" })).toBe(true);
    const second = await broker.request(request({ callId: "c2", input: { path: "./a.txt" } }), signal);
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

  test("'always' for one target does not cover another: an edit of a.ts is not one of b.ts", async () => {
    const { responder, seen } = scripted(["always", "deny"]);
    const broker = createApprovalBroker(responder);
    await broker.request(request({ callId: "c1", target: "src/a.ts" }), signal);
    expect(broker.remembered({ tool: "edit", risk: "write", operation: "write-edit", target: "src/a.ts" })).toBe(true);
    expect(broker.remembered({ tool: "edit", risk: "write", operation: "write-edit", target: "src/b.ts" })).toBe(false);
    expect((await broker.request(request({ callId: "c2", target: "src/b.ts" }), signal)).allowed).toBe(false);
    expect(seen.map((r) => r.target)).toEqual(["src/a.ts", "src/b.ts"]);
  });

  test("'always' for `git status` does not approve `rm -rf x`, nor `git status; rm -rf x`", async () => {
    const { responder, seen } = scripted(["always", "deny", "deny"]);
    const broker = createApprovalBroker(responder);
    const run = (callId: string, target: string) => request({ callId, tool: "run", risk: "execute", operation: "execute", target, input: { command: target } });
    expect((await broker.request(run("c1", "git status"), signal)).allowed).toBe(true);
    expect((await broker.request(run("c2", "git status"), signal)).source).toBe("session");
    expect((await broker.request(run("c3", "rm -rf x"), signal)).allowed).toBe(false);
    expect((await broker.request(run("c4", "git status; rm -rf x"), signal)).allowed).toBe(false);
    expect(seen.map((r) => r.callId)).toEqual(["c1", "c3", "c4"]);
  });

  test("remembered keys cannot collide through separators in the target", async () => {
    const { responder, seen } = scripted(["always", "deny"]);
    const broker = createApprovalBroker(responder);
    await broker.request(request({ callId: "c1", tool: "a", target: "b" }), signal);
    expect((await broker.request(request({ callId: "c2", tool: "a\u0000b", target: "" }), signal)).allowed).toBe(false);
    expect(seen).toHaveLength(2);
  });

  test("an untargeted 'always' (a question) never covers a request with a target", async () => {
    const { responder, seen } = scripted(["always", "deny"]);
    const broker = createApprovalBroker(responder);
    const { target: _, ...untargeted } = request({ callId: "c1" });
    await broker.request(untargeted, signal);
    expect((await broker.request(request({ callId: "c2", target: "" }), signal)).allowed).toBe(false);
    expect(seen).toHaveLength(2);
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
