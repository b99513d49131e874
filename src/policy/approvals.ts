import type { CallCategory, Operation, Risk } from "../protocol/events.ts";

export type ApprovalRequest = {
  callId: string;
  tool: string;
  risk: Risk;
  operation: Operation;
  /**
   * What the call acts on (see Classification): "always" covers this target only. Absent for a
   * request that acts on nothing in particular (a question); an "always" for one never covers a
   * request with a target.
   */
  target?: string;
  /** What makes the call risky, for the one who answers (e.g. a command that reaches the network). */
  categories?: readonly CallCategory[];
  reason: string;
  input: unknown;
};
export type ApprovalAnswer = "once" | "always" | "deny";

/** An interactive surface that can ask the user. Headless surfaces have none. */
export type ApprovalResponder = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;

export type ApprovalResult = { allowed: boolean; source: "once" | "always" | "session" | "no-responder" | "failed"; reason: string };

/** The calls one "always" covers: same tool, risk, operation and target. */
type Scope = Pick<ApprovalRequest, "tool" | "risk" | "operation" | "target">;

/**
 * Answers approval requests for one session. "Always" is remembered per tool,
 * risk, operation and target, so approving an edit never approves a delete,
 * approving an edit of a.ts never approves one of b.ts, and approving
 * `git status` never approves `rm -rf x`.
 */
export function createApprovalBroker(responder: ApprovalResponder | undefined) {
  const always = new Set<string>();
  const key = (r: Scope) => JSON.stringify([r.tool, r.risk, r.operation, r.target ?? null]);

  return {
    /** True when an earlier "always" already covers this call: nobody needs to be asked. */
    remembered(request: Scope): boolean {
      return always.has(key(request));
    },
    async request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalResult> {
      if (always.has(key(request))) return { allowed: true, source: "session", reason: "allowed earlier for this session" };
      if (!responder) {
        return {
          allowed: false,
          source: "no-responder",
          reason: `${request.reason}, and this run has no one to ask (non-interactive); choose a permission mode that allows it, e.g. --permission-mode`,
        };
      }
      let answer: ApprovalAnswer;
      try {
        answer = await responder(request, signal);
      } catch {
        // A responder that gives up (closed UI, cancelled run) is a denial, never a crash.
        return { allowed: false, source: "failed", reason: signal.aborted ? "the run was cancelled while asking" : "the approval request failed" };
      }
      if (answer === "always") always.add(key(request));
      if (answer === "deny") return { allowed: false, source: "once", reason: "denied by the user" };
      return { allowed: true, source: answer, reason: answer === "always" ? "allowed for this session" : "allowed once" };
    },
  };
}

export type ApprovalBroker = ReturnType<typeof createApprovalBroker>;
