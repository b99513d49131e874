/**
 * One turn of a child run: admission (the campaign's concurrency gate, the writer gate of a
 * shared checkout), its workspace, the run itself through the same `prepareRun` as any root
 * run, then the evidence its tools left and the validated AgentResult envelope.
 */
import type { Message } from "../../protocol/messages.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { errorMessage } from "../../util/errors.ts";
import { loadHistory } from "../resume.ts";
import { prepareRun, type PreparedRun } from "../run.ts";
import { claimSession } from "../session-claim.ts";
import { createEvidenceCollector } from "./evidence.ts";
import { envelopeInstructions, normalizeResult, type AgentResult } from "./result.ts";
import { AdmissionCancelled, type Gate, type Lease } from "./slots.ts";
import type { ChildMeta, ChildRecord, CoordinatorDeps, DelegationProvider } from "./types.ts";
import { createGitWorktree, createScratch, WorkspaceError } from "./workspaces.ts";

/** Gates a turn must pass: the campaign's concurrency, and the writer gate of its checkout when it writes there. */
export type TurnGates = { concurrency: Gate; writer?: Gate };

export function failedResult(status: AgentResult["status"], summary: string): AgentResult {
  return { status, summary, findings: [], changedFiles: [], artifacts: [], verification: [], followUps: [] };
}

export function childMeta(record: ChildRecord): ChildMeta {
  return {
    taskId: record.taskId,
    contract: record.contract,
    workspaceMode: record.agent.workspaceMode,
    permissionMode: record.permissionMode,
    retriesUsed: record.retriesUsed,
    result: record.result ?? null,
  };
}

/** Puts the child's changes into the artifact store as a patch: git's diff for a worktree, the write tool's diffs otherwise. */
async function patchOf(record: ChildRecord, diffs: string[], deps: CoordinatorDeps): Promise<{ patch?: string; changedFiles?: string[] }> {
  const put = (text: string) => record.parent.artifacts.put(deps.redactor.redact(text).text).uri;
  if (record.workspace?.mode === "git-worktree") {
    const { changedFiles, patch } = await record.workspace.collectChanges();
    return { changedFiles, ...(patch !== "" ? { patch: put(patch) } : {}) };
  }
  if (record.workspace?.mode === "scratch") return {};
  const joined = diffs.filter((d) => d.trim() !== "").join("\n");
  return joined === "" ? {} : { patch: put(joined) };
}

/**
 * Runs one turn of `record` with `message` as its user message. Never throws: every failure
 * (refused profile, workspace trouble, a bug) becomes the envelope it returns.
 */
export async function runChildTurn(
  deps: CoordinatorDeps,
  record: ChildRecord,
  message: string,
  gates: TurnGates,
  provider: DelegationProvider,
  signal: AbortSignal,
): Promise<AgentResult> {
  const leases: Lease[] = [];
  let release = () => {};
  try {
    leases.push(await gates.concurrency.acquire(signal));
    if (gates.writer) leases.push(await gates.writer.acquire(signal));
    record.status = "running";
    if (!record.workspace && !record.rehydrated && (record.agent.workspaceMode === "git-worktree" || record.agent.workspaceMode === "scratch")) {
      const workspace =
        record.agent.workspaceMode === "git-worktree"
          ? await createGitWorktree({ parentWorkspace: record.parent.workspace, tempRoot: deps.tempRoot, signal, env: deps.env })
          : await createScratch({ tempRoot: deps.tempRoot });
      deps.workspaces.add(workspace);
      record.workspace = workspace;
      record.cwd = workspace.path;
      // Other roots of the parent exist in the worktree only where they lie inside the repository.
      record.extraDirs = record.extraDirs.map((dir) => workspace.remap(dir)).filter((dir): dir is string => dir !== undefined);
    }
    const prepared: PreparedRun = await prepareRun({
      config: deps.config,
      env: deps.env,
      workspace: record.cwd,
      extraDirs: record.extraDirs,
      task: message,
      surface: deps.surface,
      overrides: { permissionMode: record.permissionMode, depth: record.workDepth },
      agentName: record.agent.name,
      parent: { runId: record.parentRunId, rootId: record.rootId, depth: record.depth - 1, campaign: record.parent.campaign, sessionId: record.parent.sessionId },
      child: {
        runId: record.runId,
        startSequence: record.lastSequence,
        withoutTools: record.withoutTools,
        ...(record.scope ? { scope: record.scope } : {}),
        meta: () => childMeta(record),
        leases,
      },
      delegation: provider,
    });
    const cancelRun = () => prepared.cancel();
    signal.addEventListener("abort", cancelRun, { once: true });
    const store = deps.store();
    let history: Message[] = record.history;
    let stored: Message[] = [];
    if (store) {
      if (!store.getSession(record.childSessionId)) {
        store.createSession({
          id: record.childSessionId,
          surface: deps.surface,
          workspace: record.parent.workspace,
          title: deps.redactor.redact(`${record.agent.name}: ${record.contract.taskName}`).text,
          createdAt: new Date().toISOString(),
          parentSessionId: record.parent.sessionId,
        });
      }
      // Claimed like any session: after a restart two processes never continue one child at once.
      release = await claimSession(store, record.childSessionId, {
        owner: { pid: process.pid, token: `${process.pid}:${crypto.randomUUID()}` },
        signal,
        pollMs: 100,
        log: deps.log,
      });
      ({ history, stored } = loadHistory(store, record.childSessionId, store.latestCheckpoint({ sessionId: record.childSessionId })));
    }
    const evidence = createEvidenceCollector();
    const outcome = await prepared.execute({
      sessionId: record.childSessionId,
      listeners: [
        ...record.parent.listeners,
        (event: RuntimeEvent) => {
          if (event.runId !== record.runId) return;
          record.lastSequence = event.sequence;
          evidence.observe(event);
        },
      ],
      history,
      stored,
      ...(store ? { store } : {}),
      approvals: deps.approvals,
      ask: deps.ask,
      redactor: deps.redactor,
    });
    signal.removeEventListener("abort", cancelRun);
    if (!store) record.history = outcome.history;
    const observed = evidence.evidence();
    const patch = await patchOf(record, observed.diffs, deps);
    const changedFiles = patch.changedFiles ?? observed.changedFiles;
    const readOnly = record.permissionMode === "read-only" || record.agent.workspaceMode === "shared-readonly";
    return normalizeResult({
      deliverable: record.contract.deliverable,
      run: { status: outcome.status, reason: outcome.reason, text: outcome.text },
      evidence: { ...observed, changedFiles, ...(patch.patch ? { patch: patch.patch, artifacts: [...observed.artifacts, patch.patch] } : {}) },
      readOnly,
      ...(record.scope ? { scopePaths: record.scope.globs } : {}),
    });
  } catch (error) {
    if (error instanceof AdmissionCancelled || signal.aborted) return failedResult("cancelled", "cancelled before the child finished");
    if (error instanceof WorkspaceError) return failedResult("failed", `the child's workspace could not be set up: ${error.message}`);
    return failedResult("failed", `the child could not run: ${errorMessage(error)}`);
  } finally {
    release();
    for (const lease of leases) lease.release();
  }
}

/** The task message of a first turn: the prompt plus the envelope instructions for its deliverable. */
export function withEnvelope(prompt: string, record: Pick<ChildRecord, "contract">): string {
  return prompt.includes(envelopeInstructions(record.contract.deliverable)) ? prompt : `${prompt}\n\n${envelopeInstructions(record.contract.deliverable)}`;
}
