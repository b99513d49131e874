/**
 * A child addressed by run id after a restart: rebuilt from its run row and the child meta its
 * checkpoints keep. Only children of this session qualify; isolated workspaces did not survive
 * the process that made them, so such children come back marked as not resumable.
 */
import type { WorkspaceMode } from "../../config/schema.ts";
import type { CheckpointMeta } from "../recorder.ts";
import { DelegationRefusedError } from "./refused.ts";
import type { ChildMeta, ChildRecord, ChildStatus, CoordinatorDeps, ParentPlace } from "./types.ts";
import { failedResult } from "./child-run.ts";

const TERMINAL: Record<string, ChildStatus> = { completed: "completed", failed: "failed", limit: "failed", cancelled: "cancelled", interrupted: "failed" };

export function rehydrateChild(deps: CoordinatorDeps, place: ParentPlace, runId: string): ChildRecord {
  const store = deps.store();
  const unknown = () => new DelegationRefusedError(`no child run ${runId} in this session (children are addressed by the childRunId a spawn returned)`);
  if (!store) throw unknown();
  const row = store.getRun(runId);
  if (!row || row.parentId === null) throw unknown();
  const session = store.getSession(row.sessionId);
  if (!session || session.parentSessionId !== place.sessionId) throw unknown();
  const checkpoint = store.latestCheckpoint({ runId });
  const meta = (checkpoint?.meta as unknown as (CheckpointMeta & { child?: ChildMeta }) | undefined)?.child;
  const agent = deps.config.agents[row.agent];
  if (!meta || !agent) throw new DelegationRefusedError(`child run ${runId} cannot be continued: ${!meta ? "it left no checkpoint" : `its profile ${row.agent} is no longer configured`}`);
  const events = store.eventsOf(runId);
  const lastSequence = events.reduce((max, event) => Math.max(max, typeof event.sequence === "number" ? event.sequence : 0), 0);
  const status = meta.result?.status && meta.result.status !== "cancelled" ? (meta.result.status as ChildStatus) : (TERMINAL[row.status] ?? "failed");
  const result = meta.result ?? failedResult(status === "completed" ? "completed" : "failed", `run ${runId} ended as ${row.status} before this process started`);
  return {
    runId,
    taskId: meta.taskId,
    contract: meta.contract,
    agent: { ...agent, workspaceMode: meta.workspaceMode as WorkspaceMode },
    parentRunId: row.parentId,
    rootId: row.rootId,
    depth: row.depth,
    permissionMode: meta.permissionMode,
    workDepth: place.workDepth,
    childSessionId: row.sessionId,
    withoutTools: [],
    cwd: row.workspace,
    extraDirs: place.extraDirs,
    status,
    result,
    history: [],
    lastSequence,
    retriesUsed: meta.retriesUsed,
    startedAt: row.startedAt,
    ...(row.endedAt ? { endedAt: row.endedAt } : {}),
    done: Promise.resolve(result),
    cancel: () => {},
    delivered: true,
    parent: place,
    rehydrated: true,
  };
}
