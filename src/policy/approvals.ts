import type { Operation, Risk } from "../protocol/events.ts";

export type ApprovalRequest = { callId: string; tool: string; risk: Risk; operation: Operation; reason: string; input: unknown };
export type ApprovalAnswer = "once" | "always" | "deny";

/** An interactive surface that can ask the user. Headless surfaces have none. */
export type ApprovalResponder = (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer>;

export type ApprovalResult = { allowed: boolean; source: "once" | "always" | "session" | "no-responder" | "failed"; reason: string };

/**
 * Answers approval requests for one session. "Always" is remembered per tool,
 * risk and operation, so approving an edit never approves a delete.
 */
export function createApprovalBroker(responder: ApprovalResponder | undefined) {
  const always = new Set<string>();
  const key = (r: ApprovalRequest) => `${r.tool}\u0000${r.risk}\u0000${r.operation}`;

  return {
    /** True when an earlier "always" already covers this call: nobody needs to be asked. */
    remembered(request: Pick<ApprovalRequest, "tool" | "risk" | "operation">): boolean {
      return always.has(key(request as ApprovalRequest));
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
