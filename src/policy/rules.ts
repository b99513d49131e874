import type { CallCategory, Operation, Risk } from "../protocol/events.ts";
import type { PermissionMode } from "../config/schema.ts";
import { matchTarget } from "./target-match.ts";

export type Decision = "allow" | "ask" | "deny";

/**
 * One line of a policy: which calls it covers and what it decides. Every field it names must
 * match; a field it leaves out matches anything.
 */
export type Rule = {
  /** The tool's name, exactly. */
  tool?: string;
  /**
   * A pattern over the call's target (see target-match.ts): a glob over paths and URLs
   * (`src/**`, `https://docs.example.com/**`), a command pattern whose `*` never crosses a
   * shell operator (`git status*` covers `git status -s`, never `git status; rm -rf x`).
   */
  target?: string;
  operations?: readonly Operation[] | "*";
  /** Covers calls carrying at least one of these categories (e.g. a command that reaches the network). */
  categories?: readonly CallCategory[];
  decision: Decision;
};

/**
 * A call as policy sees it. `target` is what the call acts on (see Classification in
 * tool/define.ts); a file call touching several paths lists one per line. A call without a
 * target is judged by rules without a target pattern, and by restrictive (ask/deny) ones with.
 */
export type PolicyCall = { tool: string; risk: Risk; operation: Operation; target?: string; categories?: readonly CallCategory[] };

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
  "write-sensitive": "changing a sensitive file (secrets, git hooks, CI, editor, shell or agent configuration, install scripts, zero's own configuration)",
  execute: "running commands",
  network: "network access",
  delegate: "delegating to a sub-agent",
};

/** The categories a call carries: those its operation implies, plus any its tool adds (in that order, no repeats). */
export function callCategories(operation: Operation, extra: readonly CallCategory[] = []): CallCategory[] {
  const implied: CallCategory[] =
    operation === "execute" ? ["shell"] : operation === "network" ? ["network"] : operation === "read-secret" || operation === "write-sensitive" ? ["secret"] : [];
  return [...new Set([...implied, ...extra])];
}

/** The parts of a target a pattern is matched against: a command is one; a file call's paths are one per line. */
export function targetParts(operation: Operation, target: string): string[] {
  return operation === "execute" ? [target] : target.split("\n");
}

const SEVERITY: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

function describe(operation: Operation): string {
  return DESCRIBE[operation] ?? `the operation ${String(operation)}`;
}

function verdictOf(decision: Decision, mode: PermissionMode, operation: Operation): Verdict {
  const what = describe(operation);
  const reason =
    decision === "allow"
      ? `${mode} mode allows ${what}`
      : decision === "ask"
        ? `${mode} mode requires approval for ${what}`
        : `${mode} mode does not allow ${what}`;
  return { decision, reason };
}

/**
 * Whether a rule covers a call (one target part). A rule whose target pattern cannot be judged
 * (the call has no target, the pattern is unusable) covers it only when the rule is
 * restrictive: fail closed.
 */
function covers(rule: Rule, call: PolicyCall, part: string | undefined): boolean {
  if (rule.tool !== undefined && rule.tool !== call.tool) return false;
  const operations = rule.operations ?? "*";
  if (operations !== "*" && !operations.includes(call.operation)) return false;
  if (rule.categories !== undefined) {
    // A call that does not say: at least the categories its operation implies.
    const carried = call.categories ?? callCategories(call.operation);
    if (!rule.categories.some((category) => carried.includes(category))) return false;
  }
  if (rule.target !== undefined) {
    const matched = part === undefined ? undefined : matchTarget(rule.target, part, call.operation === "execute" ? "command" : "path");
    return matched ?? rule.decision !== "allow";
  }
  return true;
}

/** `showPart`: name the part in the reason (a call with several paths), never a whole command (it may hold a secret). */
function evaluatePart(rules: readonly Rule[], call: PolicyCall, part: string | undefined, mode: PermissionMode, showPart: boolean): Verdict {
  for (const rule of rules) {
    if (!covers(rule, call, part)) continue;
    // A decision that is not one of the three (a malformed rule) denies.
    const decision: Decision = rule.decision === "allow" || rule.decision === "ask" ? rule.decision : "deny";
    const verdict = verdictOf(decision, mode, call.operation);
    const named = [
      rule.tool !== undefined ? `tool ${rule.tool}` : "",
      rule.target !== undefined ? `target ${JSON.stringify(rule.target)}${showPart && part !== undefined ? ` for ${part}` : ""}` : "",
      rule.categories !== undefined ? `categories ${rule.categories.join(", ")}` : "",
    ].filter((text) => text !== "");
    return named.length === 0 ? verdict : { decision, reason: `${verdict.reason} (rule: ${named.join("; ")})` };
  }
  return verdictOf("deny", mode, call.operation);
}

/**
 * Pure evaluation of one call against a rule list: the first rule that covers the call decides;
 * a call no rule covers is denied. A call with several target parts (a patch touching several
 * files) gets the most restrictive verdict over its parts. Never throws: anything unexpected
 * denies.
 */
export function evaluate(rules: readonly Rule[], call: PolicyCall, mode: PermissionMode): Verdict {
  try {
    const parts: (string | undefined)[] = typeof call.target === "string" ? targetParts(call.operation, call.target) : [undefined];
    let worst: Verdict | undefined;
    for (const part of parts) {
      const verdict = evaluatePart(rules, call, part, mode, parts.length > 1);
      if (worst === undefined || SEVERITY[verdict.decision] > SEVERITY[worst.decision]) worst = verdict;
      if (worst.decision === "deny") break;
    }
    return worst ?? verdictOf("deny", mode, call.operation);
  } catch {
    return { decision: "deny", reason: `${mode} mode does not allow this call (its policy could not be evaluated)` };
  }
}

const STRICTNESS: PermissionMode[] = ["read-only", "ask", "accept-edits", "full-access"];

/** A child never gets more than its parent: the more restrictive of the two modes. */
export function mostRestrictive(a: PermissionMode, b: PermissionMode): PermissionMode {
  return STRICTNESS.indexOf(a) <= STRICTNESS.indexOf(b) ? a : b;
}
