/**
 * A child addressed by run id after a restart: rebuilt from its run row and the child meta its
 * checkpoints keep. Only children of this session qualify; isolated workspaces did not survive
 * the process that made them, so such children come back marked as not resumable.
 */
import * as z from "zod";
import { DELIVERABLES, PERMISSION_MODES, WORKSPACE_MODES, type WorkspaceMode } from "../../config/schema.ts";
import { agentResultSchema, type AgentResult } from "./result.ts";
import { DelegationRefusedError } from "./refused.ts";
import type { ChildMeta, ChildRecord, CoordinatorDeps, ParentPlace } from "./types.ts";
import { failedResult } from "./child-run.ts";
import { childScope, toolsOutsideScope } from "./contract.ts";

/** What a child's checkpoint keeps, checked when read back (the store is data, not trusted code). */
const childMetaSchema = z.object({
  taskId: z.string(),
  contract: z.object({
    taskId: z.string(),
    taskName: z.string(),
    goal: z.string(),
    deliverable: z.enum(DELIVERABLES),
    acceptanceCriteria: z.array(z.string()),
    scope: z.object({ paths: z.array(z.string()).optional(), components: z.array(z.string()).optional() }).optional(),
    context: z.array(z.string()).optional(),
    artifactRefs: z.array(z.string()).optional(),
  }),
  workspaceMode: z.enum(WORKSPACE_MODES),
  permissionMode: z.enum(PERMISSION_MODES),
  scopeGlobs: z.array(z.string()).optional(),
  retriesUsed: z.number().int().min(0),
  result: agentResultSchema.nullable(),
});

const TERMINAL: Record<string, AgentResult["status"]> = { completed: "completed", failed: "failed", limit: "failed", cancelled: "cancelled", interrupted: "failed" };

export function rehydrateChild(deps: CoordinatorDeps, place: ParentPlace, runId: string): ChildRecord {
  const store = deps.store();
  const unknown = () => new DelegationRefusedError(`no child run ${runId} in this session (children are addressed by the childRunId a spawn returned)`);
  if (!store) throw unknown();
  const row = store.getRun(runId);
  if (!row || row.parentId === null) throw unknown();
  const session = store.getSession(row.sessionId);
  if (!session || session.parentSessionId !== place.sessionId) throw unknown();
  const checkpoint = store.latestCheckpoint({ runId });
  const saved = (checkpoint?.meta as { child?: unknown } | undefined)?.child;
  if (saved === undefined) throw new DelegationRefusedError(`child run ${runId} cannot be continued: it left no checkpoint`);
  const parsed = childMetaSchema.safeParse(saved);
  if (!parsed.success) throw new DelegationRefusedError(`child run ${runId} cannot be continued: its saved state is malformed`);
  const meta: ChildMeta = parsed.data as ChildMeta;
  const agent = Object.hasOwn(deps.config.agents, row.agent) ? deps.config.agents[row.agent] : undefined;
  if (!agent) throw new DelegationRefusedError(`child run ${runId} cannot be continued: its profile ${row.agent} is no longer configured`);
  // The scope is part of the task: a child continued after a restart stays inside it.
  const scope = childScope(meta.scopeGlobs ?? meta.contract.scope?.paths, undefined);
  if (!scope.ok) throw new DelegationRefusedError(`child run ${runId} cannot be continued: ${scope.error}`);
  const events = store.eventsOf(runId);
  const lastSequence = events.reduce((max, event) => Math.max(max, typeof event.sequence === "number" ? event.sequence : 0), 0);
  // The envelope is saved when a turn ends; a run row without one ended with its process.
  const status: AgentResult["status"] = meta.result?.status ?? TERMINAL[row.status] ?? "failed";
  const result = meta.result ?? failedResult(status, `the child's result was not saved (its run ended as ${row.status})`);
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
    ...(scope.scope ? { scope: scope.scope } : {}),
    withoutTools: scope.scope ? toolsOutsideScope(agent.tools) : [],
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
    knownArtifacts: new Set([...(meta.contract.artifactRefs ?? []), ...result.artifacts].map((ref) => ref.slice("artifact://".length))),
    handedArtifacts: new Set((meta.contract.artifactRefs ?? []).map((ref) => ref.slice("artifact://".length))),
    rehydrated: true,
  };
}
