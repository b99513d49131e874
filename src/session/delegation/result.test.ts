import { describe, expect, test } from "bun:test";
import type { Deliverable } from "../../config/effective.ts";
import type { ChildEvidence } from "./evidence.ts";
import { MAX_SUMMARY_CHARS, agentResultSchema, envelopeInstructions, locateEnvelope, normalizeResult, skippedResult, type AgentResult, type NormalizeInput } from "./result.ts";

const PATCH = `artifact://${"d".repeat(64)}`;
const LOG = `artifact://${"e".repeat(64)}`;
const none: ChildEvidence = { changedFiles: [], verification: [], artifacts: [], diffs: [] };

type Overrides = {
  deliverable?: Deliverable;
  status?: NormalizeInput["run"]["status"];
  reason?: string | null;
  text?: string;
  evidence?: Partial<NormalizeInput["evidence"]>;
  readOnly?: boolean;
  scopePaths?: string[];
};

/** Normalizes and checks the result against the public schema, so every case also proves the shape. */
function normalize(o: Overrides): AgentResult {
  const result = normalizeResult({
    deliverable: o.deliverable ?? "analysis",
    run: { status: o.status ?? "completed", reason: o.reason ?? null, text: o.text ?? "" },
    evidence: { ...none, ...o.evidence },
    readOnly: o.readOnly ?? false,
    ...(o.scopePaths ? { scopePaths: o.scopePaths } : {}),
  });
  expect(agentResultSchema.parse(result)).toEqual(result);
  return result;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
const problemsOf = (result: AgentResult) => (result.problems ?? []).join("\n");

describe("locating the envelope", () => {
  const envelope = { summary: "Callbacks enter in src/auth/callback.ts.", findings: [{ path: "src/auth/callback.ts", line: 42, description: "exchanges the code", confidence: 0.95 }], followUps: ["check refresh"] };

  test("the whole final text", () => {
    const result = normalize({ text: `  ${json(envelope)}\n` });
    expect(result).toEqual({ status: "completed", summary: envelope.summary, findings: envelope.findings, changedFiles: [], artifacts: [], verification: [], followUps: ["check refresh"] });
  });

  test("a ```json fenced block, after an example object in the prose", () => {
    const text = `I looked at {"summary": "not this one"} first.\n\n\`\`\`json\n${json(envelope)}\n\`\`\`\nDone.`;
    const result = normalize({ text });
    expect(result.summary).toBe(envelope.summary);
    expect(result.findings).toHaveLength(1);
  });

  test("the last top-level object in prose, past apostrophes, quotes and an unclosed brace", () => {
    const text = `Here's what I found (a "quick" look; the config uses { without closing).\n${json({ summary: "first" })}\nFinal: ${json({ ...envelope, summary: 'braces } and "quotes" inside strings' })}`;
    expect(normalize({ text }).summary).toBe('braces } and "quotes" inside strings');
  });

  test("without a summary in the envelope, the prose around it is the summary", () => {
    expect(normalize({ text: `Tokens are validated in jwt.ts.\n\`\`\`json\n{"findings": []}\n\`\`\`` }).summary).toBe("Tokens are validated in jwt.ts.");
  });

  test("JSON that is not an envelope (no envelope keys, invalid JSON) is prose", () => {
    expect(locateEnvelope('{"name": "zero", "version": 1}')).toBeUndefined();
    expect(locateEnvelope('"summary"')).toBeUndefined();
    expect(locateEnvelope('{"summary": "x",}')).toBeUndefined();
    const result = normalize({ text: 'package.json has {"name": "zero"}.' });
    expect(result.summary).toBe('package.json has {"name": "zero"}.');
  });
});

describe("free text and bounds", () => {
  test("a non-JSON final answer becomes the summary of the base envelope with empty findings", () => {
    const result = normalize({ text: "The OAuth callback lives in src/auth/callback.ts.\n" });
    expect(result).toEqual({ status: "completed", summary: "The OAuth callback lives in src/auth/callback.ts.", findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [] });
  });

  test("a long answer is cut to the bound with a marker, keeping its head", () => {
    const text = `HEAD ${"word ".repeat(3000)}TAIL`;
    const result = normalize({ text });
    expect(result.summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(result.summary.startsWith("HEAD word word")).toBe(true);
    expect(result.summary).not.toContain("TAIL");
    expect(result.summary).toContain(`cut: the full text had ${text.length} characters`);
    const long = normalize({ text: json({ summary: "x".repeat(MAX_SUMMARY_CHARS + 1) }) });
    expect(long.summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(long.summary).toContain("cut:");
  });

  test("an empty answer still has a summary that says why", () => {
    expect(normalize({ text: "" }).summary).toBe("(no final answer)");
    expect(normalize({ status: "limit", reason: "max_steps", text: "" }).summary).toBe("stopped: max_steps");
  });
});

describe("lenient envelope fields", () => {
  test("invalid entries are dropped one by one with a problem note; the rest is kept", () => {
    const text = json({
      summary: "ok",
      findings: [{ path: "a.ts", line: 3, description: "good" }, { path: "b.ts", line: "ten", description: "bad line" }, { description: "no path" }, { path: "c.ts", description: "too sure", confidence: 95 }],
      followUps: ["one", 7, ""],
    });
    const result = normalize({ text });
    expect(result.status).toBe("completed");
    expect(result.findings).toEqual([{ path: "a.ts", line: 3, description: "good" }]);
    expect(result.followUps).toEqual(["one"]);
    expect(problemsOf(result)).toContain("findings[1]: line");
    expect(problemsOf(result)).toContain("findings[2]: path");
    expect(problemsOf(result)).toContain("findings[3]: confidence");
    expect(problemsOf(result)).toContain("followUps[1]");
  });

  test("a field of the wrong type is ignored with a note, not the whole envelope", () => {
    const result = normalize({ text: json({ summary: "kept", findings: "none", followUps: ["still kept"] }) });
    expect(result.summary).toBe("kept");
    expect(result.followUps).toEqual(["still kept"]);
    expect(result.problems).toEqual(["findings ignored: not a list"]);
  });
});

describe("DEL-15/DEL-17: what the child did comes from evidence only", () => {
  const claims = json({
    status: "completed",
    summary: "done",
    changedFiles: ["src/x.ts"],
    artifacts: [LOG],
    verification: [{ command: "bun test", status: "passed" }],
  });

  test("claimed changed files, artifacts and verification are ignored; unobserved changes are noted", () => {
    const result = normalize({ text: claims, evidence: { changedFiles: ["src/y.ts"] } });
    expect(result.status).toBe("completed");
    expect(result.changedFiles).toEqual(["src/y.ts"]);
    expect(result.artifacts).toEqual([]);
    expect(result.verification).toEqual([]);
    expect(problemsOf(result)).toContain("changed files claimed but not observed (ignored): src/x.ts");
  });

  test("a claim that matches an observed change is no problem", () => {
    const result = normalize({ text: json({ summary: "s", changedFiles: ["./src/y.ts"] }), evidence: { changedFiles: ["src/y.ts"] } });
    expect(result.problems).toBeUndefined();
  });

  test("a read-only child that reports changed files is blocked", () => {
    const claimed = normalize({ text: claims, readOnly: true });
    expect(claimed.status).toBe("blocked");
    expect(claimed.changedFiles).toEqual([]);
    expect(problemsOf(claimed)).toContain("a read-only child reported changed files: src/x.ts");
    expect(normalize({ text: "done", readOnly: true, evidence: { changedFiles: ["src/z.ts"] } }).status).toBe("blocked");
    expect(normalize({ text: "done", readOnly: true }).status).toBe("completed");
  });

  test("observed changes outside the task scope make an unverifiable scoped patch", () => {
    const outside = normalize({ text: "done", scopePaths: ["src/auth/**"], evidence: { changedFiles: ["src/auth/a.ts", "README.md"] } });
    expect(outside.status).toBe("blocked");
    expect(problemsOf(outside)).toContain("unverifiable scoped patch");
    expect(problemsOf(outside)).toContain("README.md");
    expect(problemsOf(outside)).not.toContain("src/auth/a.ts,");
    expect(normalize({ text: "done", scopePaths: ["src/auth/**", "docs"], evidence: { changedFiles: ["src/auth/deep/a.ts", "docs/auth.md"] } }).status).toBe("completed");
    expect(normalize({ text: "done", scopePaths: ["src/auth/**"], evidence: { changedFiles: ["/tmp/outside.txt"] } }).status).toBe("blocked");
  });
});

describe("deliverable rules", () => {
  test("a completed patch needs observed changes and a produced patch artifact", () => {
    const ok = normalize({ deliverable: "patch", text: "patched", evidence: { changedFiles: ["a.ts"], patch: PATCH } });
    expect(ok.status).toBe("completed");
    expect(ok.patch).toBe(PATCH);
    expect(ok.artifacts).toEqual([PATCH]);
    const noChanges = normalize({ deliverable: "patch", text: json({ summary: "patched", changedFiles: ["a.ts"] }), evidence: { patch: PATCH } });
    expect(noChanges.status).toBe("failed");
    expect(problemsOf(noChanges)).toContain("none were observed");
    const noArtifact = normalize({ deliverable: "patch", text: "patched", evidence: { changedFiles: ["a.ts"] } });
    expect(noArtifact.status).toBe("failed");
    expect(noArtifact.patch).toBeUndefined();
    expect(normalize({ deliverable: "patch", text: "patched", evidence: { changedFiles: ["a.ts"], patch: "artifact://nope" } }).status).toBe("failed");
    // Only a patch deliverable carries a patch reference.
    expect(normalize({ deliverable: "analysis", text: "x", evidence: { patch: PATCH } }).patch).toBeUndefined();
  });

  test("a completed test_result needs verification whose last command passed", () => {
    const claimed = normalize({ deliverable: "test_result", text: json({ summary: "all green", verification: [{ command: "bun test", status: "passed" }] }) });
    expect(claimed.status).toBe("failed");
    expect(problemsOf(claimed)).toContain("none was observed");
    const lastFailed = normalize({ deliverable: "test_result", text: "ran", evidence: { verification: [{ command: "bun test", status: "passed" }, { command: "bun test e2e", status: "failed" }] } });
    expect(lastFailed.status).toBe("failed");
    expect(problemsOf(lastFailed)).toContain("the last verification command failed: bun test e2e");
    const fixed = normalize({ deliverable: "test_result", text: "ran", evidence: { verification: [{ command: "bun test", status: "failed" }, { command: "bun test", status: "passed" }] } });
    expect(fixed.status).toBe("completed");
  });

  test("plan steps are kept when ids are unique, dependencies exist and there is no cycle", () => {
    const steps = [
      { id: "a", description: "read", dependencies: [] },
      { id: "b", description: "write", dependencies: ["a"] },
      { id: "c", description: "test", dependencies: ["a", "b", "b"] },
    ];
    const result = normalize({ deliverable: "plan", text: json({ summary: "plan", steps }) });
    expect(result.status).toBe("completed");
    expect(result.steps).toEqual([steps[0]!, steps[1]!, { id: "c", description: "test", dependencies: ["a", "b"] }]);
    // Dependencies may be omitted; steps from another deliverable are not part of its result.
    expect(normalize({ deliverable: "plan", text: json({ summary: "p", steps: [{ id: "a", description: "x" }] }) }).steps).toEqual([{ id: "a", description: "x", dependencies: [] }]);
    expect(normalize({ deliverable: "analysis", text: json({ summary: "p", steps }) }).steps).toBeUndefined();
  });

  test("invalid plan steps are dropped and the plan is blocked", () => {
    const cases: Array<[unknown[], string]> = [
      [[{ id: "a", description: "x", dependencies: [] }, { id: "a", description: "y", dependencies: [] }], 'duplicate step id "a"'],
      [[{ id: "a", description: "x", dependencies: ["ghost"] }], 'depends on unknown step "ghost"'],
      [[{ id: "a", description: "x", dependencies: ["c"] }, { id: "b", description: "y", dependencies: ["a"] }, { id: "c", description: "z", dependencies: ["b"] }], "dependency cycle: a → c → b → a"],
      [[{ id: "a", description: "x", dependencies: ["a"] }], "dependency cycle: a → a"],
      // A dropped entry cannot leave a dangling dependency behind.
      [[{ id: 1, description: "x" }, { id: "b", description: "y", dependencies: ["1"] }], 'depends on unknown step "1"'],
    ];
    for (const [steps, problem] of cases) {
      const result = normalize({ deliverable: "plan", text: json({ summary: "plan", steps }) });
      expect(result.status).toBe("blocked");
      expect(result.steps).toBeUndefined();
      expect(problemsOf(result)).toContain(problem);
    }
    const free = normalize({ deliverable: "plan", text: "1. read 2. write" });
    expect(free.status).toBe("blocked");
    expect(problemsOf(free)).toContain("a plan result needs steps");
  });

  test("a review needs a verdict; issues are typed and invalid ones dropped", () => {
    const text = json({
      summary: "two problems",
      verdict: "Request changes",
      issues: [{ path: "a.ts", line: 4, severity: "high", description: "unchecked token" }, { severity: "urgent", description: "bad severity" }, { severity: "low", description: "no path is fine" }],
    });
    const result = normalize({ deliverable: "review", text });
    expect(result.status).toBe("completed");
    expect(result.verdict).toBe("request_changes");
    expect(result.issues).toEqual([{ path: "a.ts", line: 4, severity: "high", description: "unchecked token" }, { severity: "low", description: "no path is fine" }]);
    expect(problemsOf(result)).toContain("issues[1]: severity");
    const noVerdict = normalize({ deliverable: "review", text: json({ summary: "looks fine", verdict: "lgtm" }) });
    expect(noVerdict.status).toBe("blocked");
    expect(noVerdict.verdict).toBeUndefined();
    expect(problemsOf(noVerdict)).toContain("verdict ignored");
    expect(problemsOf(noVerdict)).toContain("a review result needs a verdict");
    expect(normalize({ deliverable: "review", text: "Looks good to me." }).status).toBe("blocked");
  });
});

describe("status: the runtime decides, the model can only lower it", () => {
  test("a failed or limited run stays failed whatever the model says, and says why", () => {
    const failed = normalize({ status: "failed", reason: "provider_error", text: json({ status: "completed", summary: "all done" }) });
    expect(failed.status).toBe("failed");
    expect(failed.summary).toBe("all done");
    expect(failed.problems).toEqual(["failed: provider_error"]);
    const limited = normalize({ status: "limit", reason: "max_steps", text: "I was halfway" });
    expect(limited.status).toBe("failed");
    expect(limited.problems).toEqual(["stopped: max_steps"]);
  });

  test("a cancelled run is cancelled, even if the model says it completed", () => {
    const result = normalize({ status: "cancelled", reason: "cancelled", text: json({ status: "completed", summary: "s" }) });
    expect(result.status).toBe("cancelled");
  });

  test("the model may report itself blocked or failed, never better than that", () => {
    const blocked = normalize({ text: json({ status: "blocked", summary: "need credentials" }) });
    expect(blocked.status).toBe("blocked");
    expect(problemsOf(blocked)).toContain('the child reported status "blocked"');
    expect(normalize({ text: json({ status: "failed", summary: "cannot" }) }).status).toBe("failed");
    expect(normalize({ status: "failed", reason: null, text: json({ status: "blocked", summary: "s" }) }).status).toBe("failed");
    // A model cannot pick statuses that belong to the runtime.
    expect(normalize({ text: json({ status: "skipped", summary: "s" }) }).status).toBe("completed");
  });

  test("when several rules apply, the worst status wins and every reason is listed", () => {
    const result = normalize({ deliverable: "patch", text: json({ status: "blocked", summary: "s" }), scopePaths: ["src/**"], evidence: { changedFiles: ["README.md"] } });
    expect(result.status).toBe("failed");
    expect(problemsOf(result)).toContain("unverifiable scoped patch");
    expect(problemsOf(result)).toContain("no patch artifact was produced");
  });
});

test("skippedResult is a structured result naming the reason", () => {
  const result = skippedResult('dependency "explore-auth" failed');
  expect(agentResultSchema.parse(result)).toEqual(result);
  expect(result).toMatchObject({ status: "skipped", summary: 'dependency "explore-auth" failed', findings: [], changedFiles: [], problems: ['dependency "explore-auth" failed'] });
});

test("envelope instructions ask for the fields of each deliverable", () => {
  for (const deliverable of ["analysis", "plan", "patch", "review", "test_result"] as const) {
    const text = envelopeInstructions(deliverable);
    expect(text).toContain('"summary"');
    expect(text).toContain('"findings"');
    expect(text).toContain('"followUps"');
    expect(text.includes('"steps"')).toBe(deliverable === "plan");
    expect(text.includes('"verdict"')).toBe(deliverable === "review");
    expect(text.includes('"issues"')).toBe(deliverable === "review");
  }
  expect(envelopeInstructions("test_result")).toContain("run tool");
  expect(envelopeInstructions("patch")).toContain("write tool");
});
