import type { Operation, Risk } from "../protocol/events.ts";
import type { PermissionMode } from "../config/schema.ts";

export type Decision = "allow" | "ask" | "deny";

/** One line of a policy: which operations it covers and what it decides. */
export type Rule = { operations: readonly Operation[] | "*"; decision: Decision };

export type PolicyCall = { tool: string; risk: Risk; operation: Operation };

export type Verdict = { decision: Decision; reason: string };

const WRITES: Operation[] = ["write-edit", "write-delete", "write-move"];
const LOCAL: Operation[] = ["read", "delegate"];
const OUTSIDE: Operation[] = ["execute", "network"];
/** Touching secrets or what runs later (git hooks, zero's own config): always asked below full-access. */
const SENSITIVE: Operation[] = ["read-secret", "write-sensitive"];

/**
 * The permission modes as data. First matching rule wins; a call no rule
 * covers is denied (the policy is total and fails closed).
 */
export const MODE_RULES: Record<PermissionMode, readonly Rule[]> = {
  "read-only": [{ operations: LOCAL, decision: "allow" }],
  ask: [
    { operations: LOCAL, decision: "allow" },
    { operations: [...WRITES, ...OUTSIDE, ...SENSITIVE], decision: "ask" },
  ],
  "accept-edits": [
    { operations: [...LOCAL, ...WRITES], decision: "allow" },
    { operations: [...OUTSIDE, ...SENSITIVE], decision: "ask" },
  ],
  "full-access": [{ operations: "*", decision: "allow" }],
};

const DESCRIBE: Record<Operation, string> = {
  read: "reading workspace files",
  "read-secret": "reading a secret-like file",
  "write-edit": "editing files",
  "write-delete": "deleting files",
  "write-move": "moving files",
  "write-sensitive": "changing a secret-like file, a git control file or zero's own configuration",
  execute: "running commands",
  network: "network access",
  delegate: "delegating to a sub-agent",
};

/** Pure evaluation of one call against a rule list. */
export function evaluate(rules: readonly Rule[], call: PolicyCall, mode: PermissionMode): Verdict {
  for (const rule of rules) {
    if (rule.operations === "*" || rule.operations.includes(call.operation)) {
      const what = DESCRIBE[call.operation];
      const reason =
        rule.decision === "allow"
          ? `${mode} mode allows ${what}`
          : rule.decision === "ask"
            ? `${mode} mode requires approval for ${what}`
            : `${mode} mode does not allow ${what}`;
      return { decision: rule.decision, reason };
    }
  }
  return { decision: "deny", reason: `${mode} mode does not allow ${DESCRIBE[call.operation]}` };
}

const STRICTNESS: PermissionMode[] = ["read-only", "ask", "accept-edits", "full-access"];

/** A child never gets more than its parent: the more restrictive of the two modes. */
export function mostRestrictive(a: PermissionMode, b: PermissionMode): PermissionMode {
  return STRICTNESS.indexOf(a) <= STRICTNESS.indexOf(b) ? a : b;
}
