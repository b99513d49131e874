/**
 * One turn of a child run: admission (the campaign's concurrency gate, the writer gate of a
 * shared checkout), its workspace, the run itself through the same `prepareRun` as any root
 * run, then the evidence its tools left and the validated AgentResult envelope.
 */
import { posix } from "node:path";
import type { Message } from "../../protocol/messages.ts";
import type { RuntimeEvent } from "../../protocol/events.ts";
import { errorMessage } from "../../util/errors.ts";
import { loadHistory } from "../resume.ts";
import { prepareRun, type PreparedRun } from "../run.ts";
import { claimSession } from "../session-claim.ts";
import { createEvidenceCollector } from "./evidence.ts";
import { artifactUri } from "../../store/artifacts.ts";
import { normalizeResult, type AgentResult } from "./result.ts";
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
    ...(record.scope ? { scopeGlobs: record.scope.globs } : {}),
    retriesUsed: record.retriesUsed,
    result: record.result ?? null,
  };
}

/** Puts the child's changes into the artifact store as a patch: git's diff for a worktree, the write tool's diffs otherwise. */
async function patchOf(record: ChildRecord, diffs: string[], deps: CoordinatorDeps): Promise<{ patch?: string; redacted?: boolean; changedFiles?: string[] }> {
  // A secret-like text in the diff is redacted like every artifact; such a patch no longer applies, and says so.
  const put = (text: string) => {
    const redaction = deps.redactor.redact(text);
    return { patch: record.parent.artifacts.put(redaction.text).uri, ...(redaction.count > 0 ? { redacted: true } : {}) };
  };
  if (record.workspace?.mode === "git-worktree") {
    const { changedFiles, patch } = await record.workspace.collectChanges();
    // git names paths from the repository's top; results (and scopes) speak from the workspace.
    const prefix = record.workspace.repoPrefix;
    const fromWorkspace = prefix === "" ? changedFiles : changedFiles.map((file) => posix.relative(prefix, file));
    return { changedFiles: fromWorkspace, ...(patch !== "" ? put(patch) : {}) };
  }
  if (record.workspace?.mode === "scratch") return {};
  const joined = diffs.filter((d) => d.trim() !== "").join("\n");
  return joined === "" ? {} : put(joined);
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
    // The writer gate first: a writer queued behind another never sits on a concurrency slot
    // that unrelated (read-only, isolated) children could use meanwhile.
    if (gates.writer) leases.push(await gates.writer.acquire(signal));
    leases.push(await gates.concurrency.acquire(signal));
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
    const media = record.media;
    record.media = undefined;
    const prepared: PreparedRun = await prepareRun({
      config: deps.config,
      env: deps.env,
      workspace: record.cwd,
      extraDirs: record.extraDirs,
      task: message,
      surface: deps.surface,
      overrides: { permissionMode: record.permissionMode, depth: record.workDepth, ...(record.modelOverride !== undefined ? { model: record.modelOverride } : {}) },
      agentName: record.agent.name,
      ...(deps.toolSources ? { toolSources: deps.toolSources } : {}),
      ...(deps.runHooks ? { runHooks: deps.runHooks } : {}),
      // Routed attachments go with the first turn only.
      ...(media ? { media } : {}),
      parent: { runId: record.parentRunId, rootId: record.rootId, depth: record.depth - 1, campaign: record.parent.campaign, sessionId: record.parent.sessionId, ...(record.parent.info ? { info: record.parent.info } : {}) },
      child: {
        runId: record.runId,
        startSequence: record.lastSequence,
        withoutTools: record.withoutTools,
        ...(record.scope ? { scope: record.scope } : {}),
        meta: () => childMeta(record),
        leases,
        knownArtifacts: record.knownArtifacts,
      },
      delegation: provider,
    });
    const cancelRun = () => prepared.cancel();
    signal.addEventListener("abort", cancelRun, { once: true });
    // Cancelled while it was being prepared (a provider module loading): nothing runs.
    if (signal.aborted) return failedResult("cancelled", "cancelled before the child started");
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
    // A child compacts its own conversation independently (and continues from its own record).
    const recorded = store?.latestCompaction(record.childSessionId);
    const outcome = await prepared.execute({
      ...(recorded && recorded.cut <= history.length ? { compaction: { state: recorded } } : {}),
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
    // Artifacts are evidence only when the child's own tools made them, not when a text named them.
    const produced = [...record.knownArtifacts].filter((sha) => !record.handedArtifacts.has(sha)).map(artifactUri);
    const observed = { ...evidence.evidence(), artifacts: produced };
    record.stopReason = outcome.reason;
    const patch = await patchOf(record, observed.diffs, deps);
    const changedFiles = patch.changedFiles ?? observed.changedFiles;
    const readOnly = record.permissionMode === "read-only" || record.agent.workspaceMode === "shared-readonly";
    const result = normalizeResult({
      deliverable: record.contract.deliverable,
      run: { status: outcome.status, reason: outcome.reason, text: outcome.text },
      evidence: { ...observed, changedFiles, ...(patch.patch ? { patch: patch.patch, artifacts: [...observed.artifacts, patch.patch] } : {}) },
      readOnly,
      ...(record.scope ? { scopePaths: record.scope.globs } : {}),
    });
    if (patch.redacted) {
      // The artifact had secret-like text replaced: it documents the change but will not apply as is.
      result.problems = [...(result.problems ?? []), "the patch contained secret-like text that was redacted; it will not apply as is (the change itself is in the child's workspace)"];
      if (result.status === "completed" && record.contract.deliverable === "patch") result.status = "blocked";
    }
    return result;
  } catch (error) {
    if (error instanceof AdmissionCancelled || signal.aborted) return failedResult("cancelled", "cancelled before the child finished");
    if (error instanceof WorkspaceError) return failedResult("failed", `the child's workspace could not be set up: ${error.message}`);
    return failedResult("failed", `the child could not run: ${errorMessage(error)}`);
  } finally {
    release();
    for (const lease of leases) lease.release();
  }
}

/**
 * Writes the child's meta (its result included) onto its newest checkpoint, as a new marker of
 * the same history: the run saved its checkpoints before the envelope existed. Best effort: a
 * store that fails here only costs the result after a restart.
 */
export function persistChildMeta(deps: CoordinatorDeps, record: ChildRecord): void {
  try {
    const store = deps.store();
    const latest = store?.latestCheckpoint({ runId: record.runId });
    if (!store || !latest) return;
    store.saveCheckpoint({ ...latest, createdAt: new Date().toISOString(), meta: { ...latest.meta, child: childMeta(record) } });
  } catch {
    // see above
  }
}
