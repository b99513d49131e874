import { join } from "node:path";
import type { WorkDepth, WorkflowStep } from "../config/schema.ts";
import { configDir, stateDir } from "../config/paths.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { workspaceStateDir } from "../store/state.ts";
import type { RunRow } from "../store/store.ts";
import type { RunInfo } from "../agent/run-hooks.ts";
import { CORE_TOOL_NAMES } from "../tool/registry.ts";
import { createModelRunner, type ModelRunner } from "../llm/step.ts";
import { exitCodeFor, type StopReason, type Usage } from "../protocol/events.ts";
import { newRunId } from "../protocol/ids.ts";
import type { Message } from "../protocol/messages.ts";
import { MODE_RULES } from "../policy/rules.ts";
import { createRoots, type Roots } from "../security/roots.ts";
import { runLoop, type LoopResult } from "../agent/loop.ts";
import { assembleSystemPrompt } from "../agent/prompt.ts";
import { UsageError, errorMessage } from "../util/errors.ts";
import { configuredFiles, coordinatorRunner, pickAgent, pickModel, pickWorkflow, runPermission, runTimeout, withCompaction, withGates, withPendingInput, workflowProfile } from "./run-inputs.ts";
import { runWorkflow, workflowLoopResult } from "./workflow-run.ts";
import { campaignCeilings, runCeilings, WORK_DEPTH_PRESETS } from "../config/work-depth.ts";
import { gatesFor } from "./gates.ts";
import { costMicroUsd, microToUsd } from "../agent/cost.ts";
import { estimateTokens } from "../agent/estimate.ts";
import { createCompactor } from "./compaction/compactor.ts";
import { createTodoTool } from "../tool/todo.ts";
import type { PlanItem } from "../tool/define.ts";
import { scopeGuard } from "./delegation/contract.ts";

export { knownSecretValues } from "./run-inputs.ts";
import { setSafeTimeout } from "../util/timers.ts";
import { createEmitter } from "./emitter.ts";
import { createEventRedaction } from "./event-redaction.ts";
import { createCampaign, eventStamp } from "./run-context.ts";
import { coreToolSource, toolsForAgent } from "./tool-sources.ts";
import { checkMediaRoute, missingCapabilities, mediaSpecialist, resolveAttachments } from "./attachments.ts";
import { attachmentMessage, routeAttachments } from "./attachment-routing.ts";
import { networkAccessFor, webSearchAccessFor } from "./network.ts";
import { createRunRecorder, titleFrom, type CheckpointMeta } from "./recorder.ts";
import { readPromptTexts } from "./prompt-inputs.ts";

/** How often (in model steps) the loop nudges the garbage collector: each step is fine for memory but costs ~1 ms. */
const GC_EVERY_STEPS = 3;

export type { Surface, RunOverrides, RunRequest, ChildSetup, ParentLink, RunExecution, RunOutcome, PreparedRun } from "./run-types.ts";
import type { RunRequest, RunExecution, RunOutcome, PreparedRun } from "./run-types.ts";

/**
 * Validates everything a run needs before any request or event: agent, model
 * alias, key, options, prompt file, tools, roots. Errors here are the user's to
 * fix (exit 2); after this, failures are run events.
 */
export async function prepareRun(request: RunRequest): Promise<PreparedRun> {
  const { config, overrides = {}, continuation } = request;
  const workflow = request.workflow !== undefined ? pickWorkflow(config, request.workflow) : undefined;
  const agent = workflow ? workflowProfile(config, workflow.name) : pickAgent(config, request.agentName);
  const child = request.child;
  // A workflow's checkpoint names no real model or depth of its own: a later turn starts fresh from the configuration.
  const saved = continuation?.meta.mode === "workflow" ? undefined : continuation?.meta;
  // A continuation keeps its saved model unless --model replaces it on purpose. A workflow's
  // --model goes to every phase; its coordinator calls no model.
  const model = pickModel(config, overrides.model ?? saved?.model.alias ?? (workflow ? config.agents[workflow.steps[0]!.agent]!.model : agent.model), overrides.model !== undefined);
  // Plugins are loaded (or refused, exit 2) before anything else of the run is decided.
  await request.runHooks?.ready();
  // A path-scoped child gets nothing of MCP servers (what they do cannot be confined to its
  // paths): it does not even wait for them to connect.
  const sources = request.toolSources ?? [coreToolSource()];
  const sourced = await toolsForAgent(agent, child?.scope ? sources.filter((source) => source.name !== "mcp") : sources);
  const tools = sourced.tools;
  for (const name of child?.withoutTools ?? []) tools.delete(name);
  // A path-scoped child gets nothing of MCP servers or plugins: what they do cannot be confined to its paths.
  if (child?.scope) {
    for (const name of tools.keys()) if (!(CORE_TOOL_NAMES as readonly string[]).includes(name)) tools.delete(name);
    delete sourced.content;
    sourced.instructions = [];
  }
  const permissionMode = runPermission(request, agent);
  const workDepth = overrides.depth ?? (saved?.workDepth as WorkDepth | undefined) ?? config.workDepth;
  // Non-trivial depths get the run-private progress ledger (not one of the six tools: it touches nothing).
  let plan: ((items: PlanItem[]) => void) | undefined;
  if (workDepth !== "flash") tools.set("todo", createTodoTool((items) => plan?.([...items])));
  const ceilings = runCeilings(agent, workDepth);
  // Where no child could start (flash, or the depth limit reached), delegate is not offered at all.
  const depth = request.parent ? request.parent.depth + 1 : 0;
  if (depth + 1 > campaignCeilings(config, workDepth).delegationDepth) tools.delete("delegate");
  const roots: Roots = createRoots({
    workspace: request.workspace,
    extraDirs: request.extraDirs ?? [],
    // Read-only roots from the tool sources (skill packages).
    readOnlyDirs: sourced.readRoots,
    // zero's own state and configuration (trust records!) are never tool-reachable.
    privateDirs: [stateDir(request.env), configDir(request.env)],
    // …except zero's own skills directory, where a skill package's read-only root may open.
    privateReadable: [join(configDir(request.env), "skills")],
  });
  // Files the prompt brings (only a root run reads mentions: a child's task is the model's text).
  const attachments = [
    ...resolveAttachments(roots, request.attach ?? [], request.parent || workflow ? "" : request.task, config.limits.maxAttachmentBytes),
    ...(request.media ?? []).map((media) => ({ shown: media.filename ?? "attachment", media })),
  ];
  if (workflow && attachments.length > 0) throw new UsageError("--attach and @file mentions cannot be combined with --workflow: attach them in the task of a plain run");
  const missing = missingCapabilities(attachments, model);
  // Media the model cannot read goes to a specialist first (checked now: no request before it).
  const specialist = missing.length > 0 ? mediaSpecialist(config, agent, model, missing) : undefined;
  if (specialist) checkMediaRoute(config, agent, specialist, model, { depth, workDepth, canDelegate: request.delegation !== undefined });
  const toolSpecs = [...tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  const toolSchemaChars = JSON.stringify(toolSpecs).length;
  // (A workflow's coordinator calls no model; its --model goes to every phase, so it must be priced.)
  if (config.limits.maxCostUsd !== undefined && !model.pricing && (!workflow || overrides.model !== undefined)) {
    throw new UsageError(`model '${model.alias}' has no pricing, and limits.maxCostUsd is set: a cost cap needs prices for every model a run uses`);
  }
  const runner: ModelRunner = workflow ? coordinatorRunner(workflow.name) : await createModelRunner({
    model,
    env: request.env,
    tools: toolSpecs,
    streamIdleTimeoutMs: config.limits.streamIdleTimeoutMs,
    ...(overrides.reasoningEffort ? { reasoningEffort: overrides.reasoningEffort } : {}),
    ...(overrides.speed ? { speed: overrides.speed } : {}),
  });
  const now = new Date();
  const instructions = assembleSystemPrompt(
    agent,
    {
      workspace: roots.workspace,
      // Read-only roots come from tool sources (skill packages), which name their own paths.
      roots: roots.roots.filter((r) => r.kind !== "read-only").map((r) => r.path),
      permissionMode,
      model: `${model.type}/${model.model}`,
      now,
      platform: process.platform,
    },
    readPromptTexts(agent, roots),
  ) + sourced.instructions.map((line) => `\n\n${line}`).join("");

  // Large outputs live in the workspace's private state directory, created on first use.
  const artifacts = createArtifactStore(join(workspaceStateDir(request.env, roots.workspace), "artifacts"));
  const runId = child?.runId ?? (continuation?.kind === "run" ? continuation.run.id : newRunId(now));
  const timeoutMs = runTimeout(request, agent, workDepth, now);
  const controller = new AbortController();
  // The checkpoint writer: the run's model without tools, made on the first compaction.
  let summarizer: Promise<ModelRunner> | undefined;
  let abortReason: StopReason = "cancelled";

  const runRow = (sessionId: string, deadline: Date): RunRow => ({
    id: runId,
    sessionId,
    rootId: request.parent?.rootId ?? runId,
    parentId: request.parent?.runId ?? null,
    task: request.task,
    agent: agent.name,
    modelAlias: model.alias,
    provider: model.type,
    apiModel: model.model,
    status: "running",
    reason: null,
    depth,
    workspace: roots.workspace,
    permissionMode,
    workDepth,
    budgets: { maxSteps: ceilings.maxSteps, maxToolCalls: ceilings.maxToolCalls, maxTokens: agent.maxTokens ?? null, timeoutMs },
    usage: continuation?.kind === "run" ? { ...continuation.meta.usage } : {},
    steps: continuation?.kind === "run" ? continuation.meta.steps : 0,
    toolCalls: continuation?.kind === "run" ? continuation.meta.toolCalls : 0,
    deadline: deadline.toISOString(),
    // When it really started: a turn may have waited for its session after it was prepared.
    startedAt: new Date().toISOString(),
    endedAt: null,
    pid: process.pid,
  });

  async function execute(execution: RunExecution): Promise<RunOutcome> {
    const { sessionId } = execution;
    const startedAt = performance.now();
    const deadline = continuation?.kind === "run" ? new Date(continuation.meta.deadline) : new Date(Date.now() + timeoutMs);
    const store = execution.store;
    const recorder = store ? createRunRecorder(store, runRow(sessionId, deadline), { surface: request.surface, title: execution.redactor.redact(titleFrom(request.task)).text }, execution.stored, execution.redactor) : undefined;
    const place = { parentId: request.parent?.runId ?? null, rootId: request.parent?.rootId ?? runId };
    const stamp = eventStamp(place);
    const emit = createEmitter(runId, execution.listeners, {
      startSequence: child?.startSequence ?? (continuation?.kind === "run" ? continuation.lastSequence : 0),
      // Written before any surface sees it: what a client saw is always in the store.
      persist: recorder ? (event) => recorder.event(event) : undefined,
      transform: createEventRedaction(execution.redactor).apply,
      ...(stamp ? { stamp } : {}),
    });
    // A root run opens its campaign; a child charges its root's (one object, shared).
    const campaign =
      request.parent?.campaign ??
      createCampaign(
        {
          steps: null,
          toolCalls: null,
          tokens: config.limits.maxCampaignTokens ?? null,
          costMicroUsd: config.limits.maxCostUsd !== undefined ? Math.round(config.limits.maxCostUsd * 1_000_000) : null,
          runs: campaignCeilings(config, workDepth).totalRuns,
          deadline,
        },
        // The root itself is the campaign's first run; a resumed run keeps what it spent.
        {
          runs: 1,
          ...(continuation?.kind === "run"
            ? {
                steps: continuation.meta.steps,
                toolCalls: continuation.meta.toolCalls,
                tokens: continuation.meta.campaign?.tokens ?? continuation.meta.usage.totalTokens,
                costMicroUsd: continuation.meta.campaign?.costMicroUsd ?? continuation.meta.costMicroUsd ?? 0,
                runs: Math.max(1, continuation.meta.campaign?.runs ?? 1),
              }
            : {}),
        },
      );
    const checkpointMeta = (snapshot: { usage: Usage; steps: number; toolCalls: number; costMicroUsd?: number }): CheckpointMeta => ({
      mode: workflow ? "workflow" : "agent",
      surface: request.surface,
      workspace: roots.workspace,
      agent: agent.name,
      model: runner.identity,
      workDepth,
      permissionMode,
      deadline: deadline.toISOString(),
      usage: snapshot.usage,
      steps: snapshot.steps,
      toolCalls: snapshot.toolCalls,
      ...(snapshot.costMicroUsd !== undefined ? { costMicroUsd: snapshot.costMicroUsd } : {}),
      // A root keeps its whole campaign's spending: a resumed run never renews the campaign's authority.
      ...(request.parent ? {} : { campaign: { runs: campaign.spent.runs, tokens: campaign.spent.tokens, costMicroUsd: campaign.spent.costMicroUsd } }),
      ...(child ? { child: child.meta() } : {}),
    });
    // Measured now, not when prepared: the turn may have waited for its session. A deadline
    // already passed stops the run before its first request.
    const remainingMs = deadline.getTime() - Date.now();
    if (remainingMs <= 0 && !controller.signal.aborted) {
      abortReason = "deadline";
      controller.abort();
    }
    const timer = setSafeTimeout(() => {
      abortReason = "deadline";
      controller.abort();
    }, Math.max(0, remainingMs));
    const limits = {
      maxSteps: ceilings.maxSteps,
      maxToolCalls: ceilings.maxToolCalls,
      toolTimeoutMs: config.limits.toolTimeoutMs,
      maxAttachmentBytes: config.limits.maxAttachmentBytes,
      maxTokens: agent.maxTokens ?? null,
    };
    // Lifecycle hooks (plugins) see the run as plain data; a child's names its parent too.
    const info: RunInfo = {
      runId,
      sessionId,
      rootRunId: place.rootId,
      parentRunId: place.parentId,
      depth,
      agent: agent.name,
      model: model.alias,
      task: request.task,
      workspace: roots.workspace,
      permissionMode,
      workDepth,
      surface: request.surface,
    };
    const lifecycle = request.runHooks?.attach(info, { emit, signal: controller.signal, ...(request.parent?.info ? { parent: request.parent.info } : {}) });
    // A continued run (--resume-run) carries on its own history; its new text joins as a user turn.
    const history = [...execution.history, attachmentMessage(request.task, attachments, execution.redactor)];
    let latest: readonly Message[] = history;
    const knownArtifacts = child?.knownArtifacts ?? new Set<string>();
    plan = (items) => emit({ type: "plan.updated", items });
    // Gates start their children through delegation too, whether or not the model may delegate.
    const gated = !request.parent && !workflow && WORK_DEPTH_PRESETS[workDepth].gates.length > 0;
    const delegation = (tools.has("delegate") || workflow || gated || specialist) && request.delegation
      ? request.delegation.forRun({
          runId,
          rootId: place.rootId,
          depth,
          sessionId: request.parent ? request.parent.sessionId : sessionId,
          agent,
          permissionMode,
          workDepth,
          roots,
          workspace: roots.workspace,
          extraDirs: request.extraDirs ?? [],
          campaign,
          ...(child?.scope ? { scope: child.scope } : {}),
          history: () => latest,
          emit,
          listeners: execution.listeners,
          artifacts,
          knownArtifacts,
          leases: child?.leases ?? [],
          info,
        })
      : undefined;
    // pro/ultra: a root run that changed the workspace finishes only verified and approved.
    const gates =
      !request.parent && !workflow && delegation
        ? gatesFor(workDepth, { config, root: agent, workspace: roots.workspace, env: request.env, task: request.task, delegation, say: (line) => emit({ type: "message.delta", step: 1, text: `\n${line}\n` }) })
        : undefined;
    // Long conversations are shown to the model compacted (a workflow coordinator sends no requests).
    const compactor =
      config.context.compaction.enabled && !workflow
        ? createCompactor({
            settings: config.context.compaction,
            window: model.contextWindow ?? config.context.fallbackWindowTokens,
            overheadTokens: estimateTokens(instructions.length + toolSchemaChars),
            summarizer: () => (summarizer ??= createModelRunner({ model, env: request.env, tools: [], streamIdleTimeoutMs: config.limits.streamIdleTimeoutMs })),
            artifacts,
            // Pruned tool outputs point at artifacts: the model may reopen them.
            rememberArtifact: (sha256) => knownArtifacts.add(sha256),
            ...(campaign.capped && campaign.admitModelCall
              ? { admit: (estimatedInputTokens: number) => campaign.admitModelCall!({ estimatedInputTokens, ...(model.pricing ? { pricing: model.pricing } : {}), signal: controller.signal }) }
              : {}),
            charge: (spent) => campaign.charge({ tokens: spent.totalTokens, ...(model.pricing ? { costMicroUsd: costMicroUsd(spent, model.pricing) } : {}) }),
            emit,
            signal: controller.signal,
            ...(execution.compaction?.state ? { initial: execution.compaction.state } : {}),
            ...(execution.compaction?.compactFirst ? { compactFirst: true } : {}),
          })
        : undefined;
    const hooks = withCompaction(withGates(withPendingInput(lifecycle ? { ...execution.hooks, ...lifecycle.loop } : execution.hooks, delegation?.pendingInput), gates), compactor);
    /** A workflow coordinator's "loop": its phases, run as children; it makes no model calls itself. */
    const coordinate = async (wf: { name: string; steps: WorkflowStep[] }, messages: Message[]): Promise<LoopResult> => {
      const outcome = await runWorkflow({
        name: wf.name,
        steps: wf.steps,
        task: request.task,
        config,
        delegation: delegation!,
        ...(overrides.model !== undefined ? { modelOverride: overrides.model } : {}),
        history: messages,
        signal: controller.signal,
        emit,
      });
      return workflowLoopResult(outcome, () => abortReason, emit);
    };
    try {
      emit({
        type: "run.started",
        sessionId,
        rootRunId: place.rootId,
        parentRunId: place.parentId,
        surface: request.surface,
        task: request.task,
        agent: agent.name,
        model: runner.identity,
        cwd: roots.workspace,
        roots: roots.roots.map((r) => r.path),
        permissionMode,
        workDepth,
        depth,
        reasoningEffort: overrides.reasoningEffort ?? model.reasoningEffort ?? null,
        speed: overrides.speed ?? model.speed ?? null,
        budgets: { ...limits, maxTokens: limits.maxTokens ?? null, timeoutMs, deadline: deadline.toISOString() },
      });
      for (const notice of sourced.notices) emit({ type: "notice", ...notice });
      await lifecycle?.start();
      // The specialist reads what the model cannot; its report stands in for the media.
      if (specialist) {
        try {
          history[history.length - 1] = await routeAttachments(history.at(-1)!, specialist, attachments, model, delegation!, controller.signal);
        } catch (error) {
          // Cancelled or out of time meanwhile: the loop ends the run as that (it makes no request).
          if (!controller.signal.aborted) throw error;
        }
      }
      const result = workflow
        ? await coordinate(workflow, history)
        : await runLoop({
        agent: agent.name,
        runner,
        instructions,
        history,
        tools,
        permissionMode,
        rules: MODE_RULES[permissionMode],
        approvals: execution.approvals,
        ask: execution.ask,
        ...(hooks ? { hooks } : {}),
        campaign,
        roots,
        ...(child?.scope ? { scope: scopeGuard(child.scope) } : {}),
        knownArtifacts,
        learnArtifactsFromHistory: child === undefined,
        sensitiveFiles: configuredFiles(config),
        services: {
          env: request.env,
          artifacts,
          redactor: execution.redactor,
          network: networkAccessFor(request.env),
          webSearch: webSearchAccessFor(config.webSearch, request.env),
          ...(delegation ? { delegation: delegation.delegation } : {}),
          updatePlan: (items) => plan?.(items),
          ...(sourced.content ? { mcpContent: sourced.content } : {}),
        },
        modelCapabilities: model.capabilities,
        ...(model.pricing ? { pricing: model.pricing } : {}),
        requestOverheadChars: toolSchemaChars,
        limits,
        signal: controller.signal,
        abortReason: () => abortReason,
        emit,
        ...(continuation?.kind === "run"
          ? { spent: { usage: continuation.meta.usage, steps: continuation.meta.steps, toolCalls: continuation.meta.toolCalls, costMicroUsd: continuation.meta.costMicroUsd ?? 0 } }
          : {}),
        onHistory: (snapshot) => {
          latest = snapshot;
          recorder?.messages(snapshot);
        },
        onCheckpoint: (snapshot) => {
          latest = snapshot.history;
          recorder?.checkpoint(snapshot.history, checkpointMeta(snapshot));
          // Each step leaves its request, stream and parse garbage behind; a non-blocking
          // collection every few steps keeps peak memory flat (loop-50: ~95 → ~80 MiB).
          if (snapshot.steps % GC_EVERY_STEPS === 0) Bun.gc(false);
        },
      });
      // Children end with their parent (cancelChildrenWithParent), before its own end is told.
      await delegation?.end();
      if (result.reason === "deadline") {
        emit({ type: "guard.triggered", guard: "deadline", message: `the run passed its deadline (${timeoutMs} ms)` });
      }
      const exitCode = exitCodeFor(result.status, result.reason);
      if (result.status === "failed") {
        await lifecycle?.failed(
          result.failure
            ? { kind: "provider", category: result.failure.category, message: result.failure.message, statusCode: result.failure.statusCode }
            : { kind: "internal", error: new Error(`the run failed (${result.reason ?? "no reason given"})`) },
        );
      }
      await lifecycle?.end({ status: result.status, reason: result.reason, exitCode, text: result.text, usage: result.usage, steps: result.steps, toolCalls: result.toolCalls });
      // The final history (the answer included) is what `--resume` continues from.
      recorder?.checkpoint(result.history, checkpointMeta(result));
      emit({
        type: "run.completed",
        status: result.status,
        reason: result.reason,
        exitCode,
        text: result.text,
        usage: result.usage,
        steps: result.steps,
        toolCalls: result.toolCalls,
        durationMs: Math.round(performance.now() - startedAt),
        ...(result.costMicroUsd !== undefined ? { costUsd: microToUsd(result.costMicroUsd) } : {}),
        // The root speaks for its campaign: every child's spending included.
        ...(request.parent
          ? {}
          : {
              campaign: {
                runs: campaign.spent.runs,
                tokens: campaign.spent.tokens,
                ...(campaign.limits.costMicroUsd !== null || model.pricing || campaign.spent.costMicroUsd > 0 ? { costUsd: microToUsd(campaign.spent.costMicroUsd) } : {}),
              },
            }),
      });
      recorder?.finish({
        status: result.status,
        reason: result.reason,
        // The run row keeps its cost too (priced models), so listings can sum a session's spending.
        usage: { ...result.usage, ...(result.costMicroUsd !== undefined ? { costMicroUsd: result.costMicroUsd } : {}) },
        steps: result.steps,
        toolCalls: result.toolCalls,
      });
      const persistWarning = recorder?.failure();
      return { runId, sessionId, status: result.status, reason: result.reason, exitCode, text: result.text, history: result.history, ...(persistWarning ? { persistWarning } : {}) };
    } catch (error) {
      await delegation?.end().catch(() => undefined);
      // A bug, not a provider problem: still one failure event and one terminal event.
      emit({
        type: "run.failed",
        error: { kind: "internal", category: null, message: errorMessage(error), statusCode: null, retryAfterMs: null, retryable: false },
      });
      const exitCode = exitCodeFor("failed", "internal_error");
      const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: 0, cachedInputTokens: 0 };
      await lifecycle?.failed({ kind: "internal", error });
      await lifecycle?.end({ status: "failed", reason: "internal_error", exitCode, text: "", usage, steps: 0, toolCalls: 0 });
      emit({
        type: "run.completed",
        status: "failed",
        reason: "internal_error",
        exitCode,
        text: "",
        usage,
        steps: 0,
        toolCalls: 0,
        durationMs: Math.round(performance.now() - startedAt),
      });
      recorder?.finish({ status: "failed", reason: "internal_error", usage: {}, steps: 0, toolCalls: 0 });
      const persistWarning = recorder?.failure();
      return { runId, sessionId, status: "failed", reason: "internal_error", exitCode, text: "", history, ...(persistWarning ? { persistWarning } : {}) };
    } finally {
      clearTimeout(timer);
      plan = undefined;
    }
  }

  return {
    runId,
    agent,
    model,
    execute,
    cancel() {
      if (!controller.signal.aborted) {
        abortReason = "cancelled";
        controller.abort();
      }
    },
  };
}

