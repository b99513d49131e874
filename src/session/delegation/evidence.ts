import type { EventOf, RuntimeEvent } from "../../protocol/events.ts";
import { ARTIFACT_REFERENCE_IN_TEXT } from "../../store/artifacts.ts";

/**
 * What a child run provably did, read from its own event stream. A child's result reports changed
 * files, verification and artifacts from here only: the model's final answer can claim anything,
 * the tool results it received cannot be made up.
 */

export type Verification = { command: string; status: "passed" | "failed" };

export type ChildEvidence = {
  /** Paths changed by successful `write` calls (workspace-relative, absolute outside), first change first. */
  changedFiles: string[];
  /** Every successful `run` call, in order; passed iff the command exited with code 0. */
  verification: Verification[];
  /** `artifact://<sha256>` references that appeared in successful tool results. */
  artifacts: string[];
  /** The unified diffs of successful `write` calls, in order. */
  diffs: string[];
};

export type EvidenceCollector = {
  observe(event: RuntimeEvent): void;
  evidence(): ChildEvidence;
};

type Requested = EventOf<"tool.requested">;

/**
 * A run result's first line says how the command ended (`exit code N`, possibly followed by
 * `; processes it left running…`); only a clean exit counts as passed, never a signal or a timeout.
 */
const EXIT_LINE = /^exit code (-?\d+)(?:;|\s*$)/;

/** `mkdir` only creates a directory: nothing a diff or a patch would carry. */
const NON_CHANGING_WRITE_OPERATIONS = new Set(["mkdir"]);

/**
 * Collects a child's evidence. Create one per child and feed it that child's events; events of
 * another run (a grandchild's, relayed through the same stream) are ignored once the child's own
 * `run.started` named its run id.
 */
export function createEvidenceCollector(): EvidenceCollector {
  let ownRunId: string | undefined;
  const requested = new Map<string, Requested>();
  const changedFiles = new Set<string>();
  const verification: Verification[] = [];
  const artifacts = new Set<string>();
  const diffs: string[] = [];

  function completed(event: EventOf<"tool.completed">): void {
    const request = requested.get(event.callId);
    requested.delete(event.callId);
    // Denied, failed or cancelled calls changed nothing the child can vouch for.
    if (event.status !== "completed") return;
    for (const reference of event.output.match(ARTIFACT_REFERENCE_IN_TEXT) ?? []) artifacts.add(reference);
    if (request === undefined || request.tool !== event.tool) return;
    if (event.tool === "write") {
      if (NON_CHANGING_WRITE_OPERATIONS.has(stringField(request.input, "operation") ?? "")) return;
      for (const path of writtenPaths(request)) changedFiles.add(path);
      if (event.diff !== undefined && event.diff !== "") diffs.push(event.diff);
    } else if (event.tool === "run") {
      const command = stringField(request.input, "command");
      if (command === undefined) return;
      verification.push({ command, status: exitedCleanly(event.output) ? "passed" : "failed" });
    }
  }

  return {
    observe(event) {
      if (event.type === "run.started" && ownRunId === undefined) ownRunId = event.runId;
      if (ownRunId !== undefined && event.runId !== ownRunId) return;
      if (event.type === "tool.requested") requested.set(event.callId, event);
      else if (event.type === "tool.completed") completed(event);
    },
    evidence() {
      return { changedFiles: [...changedFiles], verification: verification.map((entry) => ({ ...entry })), artifacts: [...artifacts], diffs: [...diffs] };
    },
  };
}

/**
 * The paths a write call changed. The policy target already names them canonically, one per line
 * (both ends of a move, every file of a patch); without a target, the input's own paths are the
 * best that is known.
 */
function writtenPaths(request: Requested): string[] {
  if (typeof request.target === "string" && request.target !== "") return request.target.split("\n").filter((line) => line !== "");
  return [stringField(request.input, "path"), stringField(request.input, "to")].filter((path): path is string => path !== undefined && path !== "");
}

function exitedCleanly(output: string): boolean {
  const firstLine = output.split("\n", 1)[0] ?? "";
  const match = EXIT_LINE.exec(firstLine);
  return match !== null && Number(match[1]) === 0;
}

function stringField(input: unknown, key: string): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === "string" ? value : undefined;
}
