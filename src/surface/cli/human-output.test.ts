import { createRedactor } from "../../security/redact.ts";
import { describe, expect, test } from "bun:test";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { createHumanPrinter } from "./human-output.ts";

// The printer reads only the fields of each event type; envelopes are left out.
type Body = Record<string, unknown> & { type: RuntimeEvent["type"] };

function render(events: Body[]): { stdout: string; stderr: string[] } {
  let stdout = "";
  let stderr = "";
  const print = createHumanPrinter(
    (text) => (stdout += text),
    (text) => (stderr += text),
    createRedactor(),
  );
  for (const event of events) print(event as unknown as RuntimeEvent);
  return { stdout, stderr: stderr.split("\n").filter((line) => line !== "") };
}

const started = (permissionMode: string): Body => ({ type: "run.started", permissionMode });
const completedRun: Body = { type: "run.completed", status: "completed", reason: null };

function call(callId: string, tool: string, input: unknown, operation: string, risk: string, categories: string[] = []): Body {
  return { type: "tool.requested", callId, tool, input, operation, risk, categories };
}
function askedAndDenied(callId: string, tool: string, operation: string, risk: string, mode: string, reason: string): Body[] {
  return [
    { type: "permission.requested", callId, tool, operation, risk, permissionMode: mode, reason },
    { type: "permission.decided", callId, tool, decision: "deny", source: "no-responder", reason },
    { type: "tool.completed", callId, tool, status: "denied", output: `denied: ${reason}` },
  ];
}

describe("human output: tool lines", () => {
  test("a denied call says 'denied' once", () => {
    const reason = "ask mode requires approval for editing files (no one to ask: headless run)";
    const { stderr } = render([
      started("ask"),
      call("c1", "write", { operation: "write", path: "new.txt", content: "x" }, "write-edit", "write"),
      ...askedAndDenied("c1", "write", "write-edit", "write", "ask", reason),
      completedRun,
    ]);
    expect(stderr[0]).toBe(`• write new.txt (denied: ${reason})`);
  });

  test("a cancelled command says 'cancelled' once", () => {
    const { stderr } = render([
      started("full-access"),
      call("c1", "run", { command: "sleep 100" }, "execute", "execute"),
      { type: "tool.completed", callId: "c1", tool: "run", status: "cancelled", output: "cancelled; the process group was terminated\n" },
      { type: "run.completed", status: "cancelled", reason: "cancelled" },
    ]);
    expect(stderr).toEqual(["• run sleep 100 (cancelled: the process group was terminated)", "zero: cancelled"]);
  });

  test("other texts are kept whole, and a failed call still names its status", () => {
    const { stderr } = render([
      started("ask"),
      call("c1", "read", { path: "x" }, "read", "read"),
      { type: "tool.completed", callId: "c1", tool: "read", status: "failed", output: "x does not exist" },
      call("c2", "read", { path: "y" }, "read", "read"),
      { type: "tool.completed", callId: "c2", tool: "read", status: "cancelled", output: "not executed: the run was stopped" },
      call("c3", "read", { path: "z" }, "read", "read"),
      { type: "tool.completed", callId: "c3", tool: "read", status: "failed", output: "failedover: a word that only starts like the status" },
    ]);
    expect(stderr).toEqual([
      "• read x (failed: x does not exist)",
      "• read y (cancelled: not executed: the run was stopped)",
      "• read z (failed: failedover: a word that only starts like the status)",
    ]);
  });

  test("a symbol search is summarized by its name", () => {
    const { stderr } = render([call("c1", "find", { name: "loadConfig" }, "read", "read"), { type: "tool.completed", callId: "c1", tool: "find", status: "completed", output: "" }]);
    expect(stderr).toEqual(["• find loadConfig"]);
  });
});

describe("human output: the closing line about denied calls", () => {
  test("denied edits point at accept-edits", () => {
    const { stderr } = render([
      started("ask"),
      call("c1", "write", { path: "a.txt" }, "write-edit", "write"),
      ...askedAndDenied("c1", "write", "write-edit", "write", "ask", "ask mode requires approval for editing files"),
      { type: "message.delta", step: 2, text: "done" },
      completedRun,
    ]);
    expect(stderr.at(-1)).toBe("zero: 1 tool call was denied (edits); rerun with --permission-mode accept-edits to allow it");
    expect(stderr.filter((line) => line.startsWith("zero:"))).toHaveLength(1);
  });

  test("a denied command (or network access) needs full-access; the flag covers every denied call", () => {
    const { stderr } = render([
      started("ask"),
      call("c1", "write", { path: "a.txt" }, "write-edit", "write"),
      ...askedAndDenied("c1", "write", "write-edit", "write", "ask", "r"),
      call("c2", "run", { command: "npm test" }, "execute", "execute", ["shell"]),
      ...askedAndDenied("c2", "run", "execute", "execute", "ask", "r"),
      call("c3", "write", { path: "b.txt" }, "write-edit", "write"),
      ...askedAndDenied("c3", "write", "write-edit", "write", "ask", "r"),
      completedRun,
    ]);
    expect(stderr.at(-1)).toBe("zero: 3 tool calls were denied (edits, commands); rerun with --permission-mode full-access (or --yes) to allow them");
  });

  test("in accept-edits, a denied URL read needs full-access", () => {
    const { stderr } = render([
      started("accept-edits"),
      call("c1", "read", { path: "https://example.com" }, "network", "network", ["network"]),
      ...askedAndDenied("c1", "read", "network", "network", "accept-edits", "r"),
      completedRun,
    ]);
    expect(stderr.at(-1)).toBe("zero: 1 tool call was denied (network access); rerun with --permission-mode full-access (or --yes) to allow it");
  });

  test("read-only denies by mode without asking: the operation comes from tool.requested", () => {
    const { stderr } = render([
      started("read-only"),
      call("c1", "write", { path: "a.txt" }, "write-delete", "write"),
      { type: "permission.decided", callId: "c1", tool: "write", decision: "deny", source: "mode", reason: "read-only mode does not allow deleting files" },
      { type: "tool.completed", callId: "c1", tool: "write", status: "denied", output: "denied: read-only mode does not allow deleting files" },
      completedRun,
    ]);
    expect(stderr).toEqual([
      "• write a.txt (denied: read-only mode does not allow deleting files)",
      "zero: 1 tool call was denied (deletes); rerun with --permission-mode accept-edits to allow it",
    ]);
  });

  test("it comes after the other closing lines, and not at all without denials", () => {
    const limited = render([
      started("ask"),
      call("c1", "run", { command: "ls" }, "execute", "execute"),
      ...askedAndDenied("c1", "run", "execute", "execute", "ask", "r"),
      { type: "guard.triggered", guard: "max_steps", message: "reached the step limit (1)" },
      { type: "run.completed", status: "limit", reason: "max_steps" },
    ]);
    expect(limited.stderr.slice(-2)).toEqual(["zero: stopped: reached the step limit (1)", "zero: 1 tool call was denied (commands); rerun with --permission-mode full-access (or --yes) to allow it"]);
    const clean = render([started("ask"), call("c1", "read", { path: "a" }, "read", "read"), { type: "tool.completed", callId: "c1", tool: "read", status: "completed", output: "x" }, completedRun]);
    expect(clean.stderr).toEqual(["• read a"]);
  });

  test("when no mode would allow them, it says the rules denied them", () => {
    const { stderr } = render([
      started("full-access"),
      call("c1", "run", { command: "rm -rf /" }, "execute", "execute"),
      { type: "permission.decided", callId: "c1", tool: "run", decision: "deny", source: "mode", reason: "denied by a rule" },
      { type: "tool.completed", callId: "c1", tool: "run", status: "denied", output: "denied: denied by a rule" },
      completedRun,
    ]);
    expect(stderr.at(-1)).toBe("zero: 1 tool call was denied (commands) by the permission rules");
  });
});

/** A deterministic token body (nothing secret-looking is committed). */
function tokenBody(length: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length }, (_, index) => alphabet[(index * 37 + 11) % alphabet.length]).join("");
}

describe("human output: secrets are redacted as printed", () => {
  const token = `ghp_${tokenBody(36)}`;
  const MARKER = "[REDACTED:github-token]";

  test("a token split by colour codes in the answer is redacted, however the deltas are cut", () => {
    const text = `key ${token.slice(0, 9)}\x1b[31m${token.slice(9)}\x1b[0m done`;
    for (let cut = 0; cut <= text.length; cut++) {
      const { stdout } = render([
        { type: "message.delta", step: 1, text: text.slice(0, cut) },
        { type: "message.delta", step: 1, text: text.slice(cut) },
        completedRun,
      ]);
      expect(stdout).toBe(`key ${MARKER} done\n`);
    }
  });

  test("a split token in a failed tool's output, its tool line and its diff is redacted", () => {
    const split = `${token.slice(0, 6)}\x1b[0m${token.slice(6)}`;
    const { stderr } = render([
      call("c1", "run", { command: `echo ${split}` }, "execute", "execute"),
      { type: "tool.completed", callId: "c1", tool: "run", status: "failed", output: `boom ${split}`, diff: `+++ b/x\n+const key = "${split}";\n` },
      completedRun,
    ]);
    expect(stderr.join("\n")).not.toContain(token.slice(6));
    expect(stderr[0]).toBe(`• run echo ${MARKER} (failed: boom ${MARKER})`);
    expect(stderr[2]).toBe(`    +const key = "${MARKER}";`);
  });

  test("markers survive sanitizing again (the CLI's stderr does)", () => {
    const { stdout } = render([{ type: "message.delta", step: 1, text: `a ${token.slice(0, 5)}\u009b0m${token.slice(5)} b` }, completedRun]);
    expect(stdout).toBe(`a ${MARKER} b\n`);
    expect(sanitizeForTerminal(stdout)).toBe(stdout);
  });
});

describe("human output: invisible characters are shown escaped", () => {
  test("in the answer, tool lines and diff previews; emoji sequences stay readable", () => {
    const hidden = "\u200b\u200d\u2060\ufeff\u2028\u2029\u{e0041}\u00ad\u180e\u061c\ufe00";
    const escaped = "\\u200b\\u200d\\u2060\\ufeff\\u2028\\u2029\\u{e0041}\\xad\\u180e\\u061c\\ufe00";
    const { stdout, stderr } = render([
      { type: "message.delta", step: 1, text: `an${hidden}swer 👨‍👩‍👧 ❤️` },
      call("c1", "run", { command: `rm${hidden} -rf x` }, "execute", "execute"),
      { type: "tool.completed", callId: "c1", tool: "run", status: "completed", output: "", diff: `+++ b/x\n+a${hidden}b\n` },
      completedRun,
    ]);
    expect(stdout).toBe(`an${escaped}swer 👨‍👩‍👧 ❤️\n`);
    expect(stderr).toEqual([`• run rm${escaped} -rf x`, "    +++ b/x", `    +a${escaped}b`]);
  });
});

describe("human output: delegated children", () => {
  test("a child shows as one line when it starts and one when it ends; its own events stay quiet", () => {
    const child = { parentRunId: "run_20260101_root", rootRunId: "run_20260101_root" };
    const { stdout, stderr } = render([
      started("ask"),
      { type: "agent.spawned", callId: "c1", childRunId: "run_20260101_kid", taskId: "find-x-1", taskName: "find-x", agent: "explore", deliverable: "analysis", workspaceMode: "shared-readonly", permissionMode: "read-only", background: true, followUp: false },
      { type: "run.started", permissionMode: "read-only", ...child },
      { type: "message.delta", step: 1, text: "CHILD TEXT", ...child },
      { type: "tool.requested", callId: "k1", tool: "read", input: { path: "a" }, operation: "read", risk: "read", categories: [], ...child },
      { type: "tool.completed", callId: "k1", tool: "read", status: "completed", output: "x", ...child },
      { type: "run.completed", status: "completed", reason: null, ...child },
      { type: "agent.completed", childRunId: "run_20260101_kid", taskId: "find-x-1", status: "completed", result: {} },
      { type: "message.delta", step: 2, text: "root answer" },
      completedRun,
    ]);
    expect(stdout).toBe("root answer\n");
    expect(stderr).toEqual(["↳ explore find-x in the background", "↲ find-x-1: completed"]);
  });
});
