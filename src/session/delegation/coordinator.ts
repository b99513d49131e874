/**
 * The delegation coordinator of one session: every child run started from it (retained for
 * the life of the service), the admission gates of each campaign, and the completions waiting
 * for a parent's next step. Runs get a `RunDelegation` bound to their place in the run tree.
 */
import { campaignCeilings, childCeiling, WORK_DEPTH_PRESETS } from "../../config/work-depth.ts";
import { newRunId, newSessionId } from "../../protocol/ids.ts";
import { userMessage, type Message } from "../../protocol/messages.ts";
import type { DelegateCall, MediaPart } from "../../tool/define.ts";
import { failedResult, persistChildMeta, runChildTurn } from "./child-run.ts";
import { envelopeInstructions } from "./result.ts";
import { childScope, contextModeOf, parentContext, taskPrompt, toolsOutsideScope, type DependencyResult, type TaskContract } from "./contract.ts";
import type { AgentResult } from "./result.ts";
import { childPermission, chooseProfile, mostRestrictive } from "./routing.ts";
import { rehydrateChild } from "./rehydrate.ts";
import { runSchedule } from "./schedule-run.ts";
import { createGate, lendAll, type Gate } from "./slots.ts";
import type { ChildRecord, CoordinatorDeps, DelegationProvider, ParentPlace, RunDelegation } from "./types.ts";
import { WORK_DEPTHS, type AgentProfile, type Deliverable, type WorkDepth } from "../../config/schema.ts";
import type { Campaign } from "../run-context.ts";
import { DEFAULT_WAIT_MS, type ScheduleTaskInput } from "../../tool/delegate.ts";
import { DelegationRefusedError as DelegationRefused } from "./refused.ts";
import { ARTIFACT_REFERENCE_IN_TEXT } from "../../store/artifacts.ts";

const shaOf = (ref: string) => ref.slice("artifact://".length);

/** Runs held back from ordinary fan-out: one for a review; at depths with gates, one for verification too. */
function reservedRuns(depth: WorkDepth, deliverable: Deliverable): number {
  const gated = WORK_DEPTH_PRESETS[depth].gates.length > 0;
  if (deliverable === "review") return 0;
  if (deliverable === "test_result") return gated ? 1 : 0;
  return gated ? 2 : 1;
}
const shallower = (a: WorkDepth, b: WorkDepth): WorkDepth => (WORK_DEPTHS.indexOf(a) <= WORK_DEPTHS.indexOf(b) ? a : b);
/** Finished children kept in memory per session for `send`/`inspect`; older ones are dropped (shared ones can be rebuilt from the store). */
export const MAX_RETAINED_CHILDREN = 256;

type CampaignGates = { concurrency: Gate; writers: Map<string, Gate> };
type ContractInput = Pick<ScheduleTaskInput, "taskName" | "goal" | "deliverable" | "acceptanceCriteria" | "agent" | "scope" | "contextMode" | "context" | "artifactRefs">;


/** How long shutdown waits for cancelled children to wind down (kill their processes, record their end). */
const SHUTDOWN_GRACE_MS = 10_000;

export type DelegationCoordinator = DelegationProvider & {
  children: Map<string, ChildRecord>;
  /** Cancels every unfinished child (whatever cancelChildrenWithParent says: the process is ending) and waits for them, bounded. */
  shutdown(): Promise<void>;
  /** The same without waiting, for exit handlers. */
  cancelAll(): void;
};

export function createDelegationCoordinator(deps: CoordinatorDeps): DelegationCoordinator {
  const children = new Map<string, ChildRecord>();
  // Per campaign, keyed by the campaign object itself (shared by a root run and everything it
  // starts, follow-ups sent from it included), so nothing outlives the campaign.
  const gates = new WeakMap<Campaign, CampaignGates>();
  /** Children started per profile in each campaign (least-used routing) and per parent run (maxChildren). */
  const usedByCampaign = new WeakMap<Campaign, Map<string, number>>();
  const startedByParent = new Map<string, number>();
  /** Completions whose parent run ended before they could be handed over: the next root run gets them. */
  const carried: ChildRecord[] = [];
  const liveRuns = new Set<string>();

  function gatesOf(place: ParentPlace): CampaignGates {
    let found = gates.get(place.campaign);
    if (!found) {
      found = { concurrency: createGate(campaignCeilings(deps.config, place.workDepth).concurrentChildren), writers: new Map() };
      gates.set(place.campaign, found);
    }
    return found;
  }

  function writerGate(place: ParentPlace, record: ChildRecord): Gate | undefined {
    if (record.agent.workspaceMode !== "shared-write") return undefined;
    const campaign = gatesOf(place);
    const key = [record.cwd, ...record.extraDirs].join("\n");
    let gate = campaign.writers.get(key);
    if (!gate) campaign.writers.set(key, (gate = createGate(1)));
    return gate;
  }

  /**
   * Checks a contract and everything around it; throws DelegationRefused before anything starts.
   * A workflow phase names its agent itself (`phaseAgent`): the workflow, not the model, chose
   * it, so routing, the allowlist and the delegation limits do not apply; total runs still do.
   */
  function admit(place: ParentPlace, input: ContractInput, taskId: string, phaseAgent?: AgentProfile): ChildRecord {
    const { multiAgent } = deps.config;
    const ceilings = campaignCeilings(deps.config, place.workDepth);
    const depth = place.depth + 1;
    if (!phaseAgent && depth > ceilings.delegationDepth) {
      throw new DelegationRefused(`delegation depth exhausted: a child here would be at depth ${depth}, the limit is ${ceilings.delegationDepth} (work depth ${place.workDepth}, multiAgent.maxDepth ${multiAgent.maxDepth})`);
    }
    const started = startedByParent.get(place.runId) ?? 0;
    const limit = childCeiling(place.agent, multiAgent);
    if (!phaseAgent && started >= limit) throw new DelegationRefused(`agent ${place.agent.name} may start at most ${limit} children in one run (maxChildren / multiAgent.maxChildrenPerAgent); it started ${started}`);
    const used = usedByCampaign.get(place.campaign) ?? new Map<string, number>();
    const route = phaseAgent ? { ok: true as const, agent: phaseAgent } : chooseProfile({ requested: input.agent, deliverable: input.deliverable!, parent: place.agent, agents: deps.config.agents, used });
    if (!route.ok) throw new DelegationRefused(route.error);
    const agent = route.agent;
    const scope = childScope(input.scope?.paths, place.scope);
    if (!scope.ok) throw new DelegationRefused(scope.error);
    for (const ref of input.artifactRefs ?? []) {
      if (!place.knownArtifacts.has(shaOf(ref))) throw new DelegationRefused(`artifact ${ref} is not one this run has been given; a child can only receive references you hold`);
    }
    // Review capacity is reserved: ordinary fan-out cannot take the runs a review (and, where
    // the depth has gates, a verification) will need.
    const reserve = phaseAgent ? 0 : reservedRuns(place.workDepth, input.deliverable!);
    const { runs } = place.campaign.limits;
    if (reserve > 0 && runs !== null && place.campaign.spent.runs + 1 > runs - reserve) {
      throw new DelegationRefused(`run budget: ${runs - place.campaign.spent.runs} of ${runs} runs left, ${reserve} reserved for ${reserve > 1 ? "the verification and review gates" : "a review"} (work depth ${place.workDepth})`);
    }
    // Total runs counts the root, every child, retry and resumed child: checked last, so a refused call spends nothing.
    const admitted = place.campaign.admitRun();
    if (admitted !== undefined) throw new DelegationRefused(`run budget spent: ${admitted} (work depth ${place.workDepth})`);
    used.set(agent.name, (used.get(agent.name) ?? 0) + 1);
    usedByCampaign.set(place.campaign, used);
    startedByParent.set(place.runId, started + 1);
    const contract: TaskContract = {
      taskId,
      taskName: input.taskName!,
      goal: input.goal!,
      deliverable: input.deliverable!,
      acceptanceCriteria: input.acceptanceCriteria ?? [],
      ...(input.scope ? { scope: input.scope } : {}),
      ...(input.context ? { context: input.context } : {}),
      ...(input.artifactRefs ? { artifactRefs: input.artifactRefs } : {}),
    };
    // A workflow phase without a mode of its own runs at the coordinator's (the user's flag or default).
    const permissionMode = childPermission(agent, place.permissionMode, phaseAgent ? place.permissionMode : deps.config.permissionMode);
    const record: ChildRecord = {
      runId: newRunId(new Date()),
      taskId,
      contract,
      agent,
      parentRunId: place.runId,
      rootId: place.rootId,
      depth,
      permissionMode,
      workDepth: place.workDepth,
      childSessionId: newSessionId(),
      ...(scope.scope ? { scope: scope.scope } : {}),
      withoutTools: scope.scope ? toolsOutsideScope(agent.tools) : [],
      cwd: place.workspace,
      extraDirs: place.extraDirs,
      status: "queued",
      history: [],
      lastSequence: 0,
      retriesUsed: 0,
      startedAt: new Date().toISOString(),
      done: Promise.resolve(failedResult("failed", "not started")),
      cancel: () => {},
      delivered: false,
      parent: place,
      knownArtifacts: new Set(),
      handedArtifacts: new Set(),
      rehydrated: false,
    };
    return record;
  }

  /** Starts a turn of `record`; its `done` settles with the envelope. */
  function start(record: ChildRecord, place: ParentPlace, message: string, background: boolean, callId: string, followUp: boolean): void {
    const controller = new AbortController();
    record.cancel = () => controller.abort();
    record.status = "queued";
    record.delivered = false;
    record.parent = place;
    // Authority only narrows: a follow-up never has more than the run that sends it allows.
    record.permissionMode = mostRestrictive(record.permissionMode, childPermission(record.agent, place.permissionMode, record.phase ? place.permissionMode : deps.config.permissionMode));
    record.workDepth = shallower(record.workDepth, place.workDepth);
    place.emit({
      type: "agent.spawned",
      callId,
      childRunId: record.runId,
      taskId: record.taskId,
      taskName: record.contract.taskName,
      agent: record.agent.name,
      deliverable: record.contract.deliverable,
      workspaceMode: record.agent.workspaceMode,
      permissionMode: record.permissionMode,
      background,
      followUp,
    });
    const writer = writerGate(place, record);
    record.done = runChildTurn(deps, record, message, { concurrency: gatesOf(place).concurrency, ...(writer ? { writer } : {}) }, provider, controller.signal).then((result) => {
      record.result = result;
      record.status = result.status;
      record.endedAt = new Date().toISOString();
      // The envelope is known only now: the child's last checkpoint gets it (restarts see this turn's result).
      persistChildMeta(deps, record);
      if (liveRuns.has(record.parent.runId)) {
        record.parent.emit({ type: "agent.completed", childRunId: record.runId, taskId: record.taskId, status: result.status, result: result as unknown as Record<string, unknown> });
      } else if (!record.delivered) {
        carried.push(record);
      }
      return result;
    });
  }

  /** A result the parent receives: its artifacts (the patch too) become references the parent may open. */
  function reply(record: ChildRecord, result: AgentResult, place: ParentPlace) {
    for (const ref of result.artifacts) place.knownArtifacts.add(shaOf(ref));
    if (result.patch) place.knownArtifacts.add(shaOf(result.patch));
    return { childRunId: record.runId, taskId: record.taskId, agent: record.agent.name, ...result };
  }

  /**
   * A child by run id: in memory, or rebuilt from the store after a restart. A root run manages
   * every child of its session; a child manages only its own children, never a sibling.
   */
  function lookup(place: ParentPlace, runId: string): ChildRecord {
    const record = children.get(runId) ?? rehydrateChild(deps, place, runId);
    if (place.depth > 0 && record.parentRunId !== place.runId) throw new DelegationRefused(`run ${runId} is not a child of this run`);
    children.set(runId, record);
    return record;
  }

  async function waitFor(place: ParentPlace, promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
    // While this run waits for its children it lends its own slot back (nested delegation cannot deadlock).
    await lendAll(place.leases, () =>
      new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal.addEventListener("abort", onAbort, { once: true });
        promise.then(
          () => {
            signal.removeEventListener("abort", onAbort);
            resolve();
          },
          () => resolve(),
        );
      }),
    );
  }

  async function spawnOne(
    place: ParentPlace,
    input: ContractInput,
    options: { taskId: string; background: boolean; callId: string; dependencies?: DependencyResult[]; phase?: { agent: AgentProfile; modelOverride?: string; media?: MediaPart[] } },
  ): Promise<ChildRecord> {
    const record = admit(place, input, options.taskId, options.phase?.agent);
    if (options.phase) record.phase = true;
    if (options.phase?.modelOverride !== undefined) record.modelOverride = options.phase.modelOverride;
    if (options.phase?.media !== undefined) record.media = options.phase.media;
    const mode = contextModeOf(input.contextMode, deps.config.multiAgent.defaultContext);
    const context = parentContext(place.history(), mode, deps.redactor);
    const prompt = taskPrompt(record.contract, {
      ...(context ? { parentContext: context } : {}),
      ...(options.dependencies ? { dependencies: options.dependencies } : {}),
      envelope: envelopeInstructions(record.contract.deliverable),
    });
    // What the child may open: the references it was handed, and those of the parent context
    // and dependency results that the parent itself may open — never a reference merely mentioned.
    const handed = [...prompt.matchAll(ARTIFACT_REFERENCE_IN_TEXT)].map((match) => shaOf(match[0])).filter((sha) => place.knownArtifacts.has(sha));
    record.knownArtifacts = new Set(handed);
    record.handedArtifacts = new Set(handed);
    children.set(record.runId, record);
    start(record, place, prompt, options.background, options.callId, false);
    return record;
  }

  async function handle(place: ParentPlace, call: DelegateCall, signal: AbortSignal, toolCallId?: string): Promise<unknown> {
    const callId = toolCallId ?? `delegate-${crypto.randomUUID().slice(0, 8)}`;
    switch (call.operation) {
      case "spawn": {
        // The name is model text: redacted before a suffix is glued on (a token followed by "-…" would no longer match its rule).
        const taskId = `${deps.redactor.redact(call.taskName!).text}-${crypto.randomUUID().slice(0, 6)}`;
        const record = await spawnOne(place, call, { taskId, background: call.background === true, callId });
        if (call.background) {
          return { childRunId: record.runId, taskId: record.taskId, status: "queued", agent: record.agent.name, workspaceMode: record.agent.workspaceMode, permissionMode: record.permissionMode };
        }
        await waitFor(place, record.done, signal);
        if (signal.aborted) record.cancel();
        const result = await record.done;
        record.delivered = true;
        return reply(record, result, place);
      }
      case "schedule": {
        // Routing counts the graph's own tasks as it goes, like the spawns will.
        const simulated = new Map(usedByCampaign.get(place.campaign) ?? []);
        return runSchedule(call.tasks ?? [], {
          spawn: (task, dependencies) => spawnOne(place, { ...task, taskName: task.taskName ?? task.id }, { taskId: task.id, background: true, callId, dependencies }),
          wait: (promise) => waitFor(place, promise, signal),
          signal,
          deliver: (record) => {
            record.delivered = true;
            if (record.result) reply(record, record.result, place);
          },
          refuse: (message) => new DelegationRefused(message),
          budget: (count) => budgetProblem(place, count),
          preflight: (task) => preflight(place, task, simulated),
        });
      }
      case "wait": {
        const records = (call.runIds ?? []).map((id) => lookup(place, id));
        const timeout = AbortSignal.timeout(call.timeoutMs ?? DEFAULT_WAIT_MS);
        await waitFor(place, Promise.all(records.map((r) => r.done)), AbortSignal.any([signal, timeout]));
        const completed = [];
        const pending = [];
        for (const record of records) {
          if (record.result && record.status !== "queued" && record.status !== "running") {
            record.delivered = true;
            completed.push(reply(record, record.result, place));
          } else pending.push({ childRunId: record.runId, taskId: record.taskId, status: record.status });
        }
        return { completed, pending };
      }
      case "inspect": {
        const record = lookup(place, call.runId!);
        const store = deps.store();
        const messages = store ? store.messageCount(record.childSessionId) : record.history.length;
        return {
          run: {
            id: record.runId,
            parentRunId: record.parentRunId,
            rootRunId: record.rootId,
            agent: record.agent.name,
            model: record.agent.model,
            status: record.status,
            depth: record.depth,
            workspaceMode: record.agent.workspaceMode,
            workspace: record.cwd,
            permissionMode: record.permissionMode,
            startedAt: record.startedAt,
            endedAt: record.endedAt ?? null,
            retriesUsed: record.retriesUsed,
          },
          task: record.contract,
          result: record.result ?? null,
          retainedMessages: messages,
        };
      }
      case "cancel": {
        const record = lookup(place, call.runId!);
        if (record.status !== "queued" && record.status !== "running") return { childRunId: record.runId, status: record.status, note: "already finished" };
        record.cancel();
        const result = await record.done;
        record.delivered = true;
        return { childRunId: record.runId, status: result.status };
      }
      case "send": {
        const record = lookup(place, call.runId!);
        if (record.status === "queued" || record.status === "running") {
          throw new DelegationRefused(`child ${record.runId} is still ${record.status}; send continues a finished child (use wait, or cancel it first)`);
        }
        const isolated = record.agent.workspaceMode === "git-worktree" || record.agent.workspaceMode === "scratch";
        if (isolated && record.rehydrated) {
          throw new DelegationRefused(`child ${record.runId} worked in a ${record.agent.workspaceMode} workspace that only lived in the process that started it; it cannot be resumed after a restart (spawn a new child)`);
        }
        const retry = record.status === "failed" || record.status === "blocked";
        if (retry && record.retriesUsed >= deps.config.multiAgent.maxRetries) {
          throw new DelegationRefused(`child ${record.runId} failed and already used ${record.retriesUsed} of multiAgent.maxRetries ${deps.config.multiAgent.maxRetries} retries`);
        }
        const admitted = place.campaign.admitRun();
        if (admitted !== undefined) throw new DelegationRefused(`run budget spent: ${admitted}`);
        if (retry) record.retriesUsed += 1;
        record.delivered = true;
        start(record, place, call.message!, call.background === true, callId, true);
        if (call.background) return { childRunId: record.runId, taskId: record.taskId, status: "queued" };
        await waitFor(place, record.done, signal);
        if (signal.aborted) record.cancel();
        const result = await record.done;
        record.delivered = true;
        return reply(record, result, place);
      }
    }
  }

  /** Whether `count` more children fit the campaign's run budget, the parent's child ceiling and the depth limit. */
  function budgetProblem(place: ParentPlace, count: number): string | undefined {
    const ceilings = campaignCeilings(deps.config, place.workDepth);
    if (place.depth + 1 > ceilings.delegationDepth) return `delegation depth exhausted (limit ${ceilings.delegationDepth} at work depth ${place.workDepth})`;
    const { runs } = place.campaign.limits;
    const left = runs === null ? Number.POSITIVE_INFINITY : runs - place.campaign.spent.runs;
    if (count > left) return `the graph has ${count} tasks but the campaign may start only ${left} more runs (work depth ${place.workDepth})`;
    const childLeft = childCeiling(place.agent, deps.config.multiAgent) - (startedByParent.get(place.runId) ?? 0);
    if (count > childLeft) return `the graph has ${count} tasks but agent ${place.agent.name} may start only ${childLeft} more children`;
    return undefined;
  }

  /** Schedule checks every task before anything runs: profile (routed now, for good), access and scope. */
  function preflight(place: ParentPlace, task: ScheduleTaskInput, used: Map<string, number>): { agent: string } | { problem: string } {
    const route = chooseProfile({ requested: task.agent, deliverable: task.deliverable!, parent: place.agent, agents: deps.config.agents, used });
    if (!route.ok) return { problem: `task ${task.id}: ${route.error}` };
    if (task.access === "read" && route.agent.workspaceMode !== "shared-readonly" && childPermission(route.agent, place.permissionMode, deps.config.permissionMode) !== "read-only") {
      return { problem: `task ${task.id}: access "read" but profile ${route.agent.name} can write (${route.agent.workspaceMode}); pick a read-only profile or declare access "write"` };
    }
    const scope = childScope(task.scope?.paths, place.scope);
    if (!scope.ok) return { problem: `task ${task.id}: ${scope.error}` };
    used.set(route.agent.name, (used.get(route.agent.name) ?? 0) + 1);
    return { agent: route.agent.name };
  }

  const provider: DelegationProvider = {
    forRun(place): RunDelegation {
      liveRuns.add(place.runId);
      const isRoot = place.depth === 0;
      return {
        delegation: (call, signal, callId) => handle(place, call, signal, callId),
        async phase(spec, signal) {
          const input: ContractInput = { taskName: spec.id, goal: spec.goal, deliverable: spec.deliverable, acceptanceCriteria: spec.acceptanceCriteria, contextMode: "none" };
          const record = await spawnOne(place, input, {
            taskId: spec.id,
            background: true,
            callId: `workflow-${spec.id}`,
            ...(spec.dependencies.length > 0 ? { dependencies: spec.dependencies } : {}),
            phase: { agent: spec.agent, ...(spec.modelOverride !== undefined ? { modelOverride: spec.modelOverride } : {}), ...(spec.media ? { media: spec.media } : {}) },
          });
          const settled = async () => {
            await waitFor(place, record.done, signal);
            if (signal.aborted) record.cancel();
            const result = await record.done;
            record.delivered = true;
            return { childRunId: record.runId, result: reply(record, result, place), stopReason: record.stopReason ?? null };
          };
          return settled();
        },
        pendingInput(): Message[] {
          const ready = [...children.values()].filter((r) => r.parent.runId === place.runId && r.result && !r.delivered && r.status !== "queued" && r.status !== "running");
          if (isRoot) ready.push(...carried.splice(0).filter((r) => !r.delivered));
          return ready.map((record) => {
            record.delivered = true;
            const envelope = JSON.stringify(reply(record, record.result ?? failedResult("failed", "no result"), place));
            return userMessage(`[delegate] Background child ${record.runId} (task ${record.taskId}) finished:\n${envelope}`);
          });
        },
        async end() {
          const mine = [...children.values()].filter((r) => r.parent.runId === place.runId && (r.status === "queued" || r.status === "running"));
          if (deps.config.multiAgent.cancelChildrenWithParent) for (const record of mine) record.cancel();
          if (deps.config.multiAgent.cancelChildrenWithParent) await Promise.all(mine.map((r) => r.done));
          liveRuns.delete(place.runId);
          startedByParent.delete(place.runId);
          retainRecent();
          // What the model never saw goes to the next root run of the session.
          for (const record of children.values()) if (record.parent.runId === place.runId && record.result && !record.delivered && !carried.includes(record)) carried.push(record);
        },
      };
    },
  };
  /** Drops the oldest finished children past the cap, removing their isolated workspaces. */
  function retainRecent(): void {
    const finished = [...children.values()].filter((r) => r.status !== "queued" && r.status !== "running");
    for (const record of finished.slice(0, Math.max(0, finished.length - MAX_RETAINED_CHILDREN))) {
      children.delete(record.runId);
      if (record.workspace) {
        deps.workspaces.delete(record.workspace);
        void record.workspace.remove().catch(() => record.workspace?.removeSync());
      }
    }
  }

  const unfinished = () => [...children.values()].filter((r) => r.status === "queued" || r.status === "running");
  return {
    ...provider,
    children,
    async shutdown() {
      const live = unfinished();
      for (const record of live) record.cancel();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.all(live.map((r) => r.done)), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)))]);
      clearTimeout(timer);
    },
    cancelAll() {
      for (const record of unfinished()) record.cancel();
    },
  };
}
