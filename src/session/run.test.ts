import { afterEach, expect, test } from "bun:test";
import type { Sandbox } from "../../test/support/cli.ts";
import { useFakeProviderAndSandbox } from "../../test/support/e2e-hooks.ts";
import type { FakeProvider } from "../../test/support/fake-provider.ts";
import { loadConfig } from "../config/load.ts";
import { createApprovalBroker } from "../policy/approvals.ts";
import type { RuntimeEvent } from "../protocol/events.ts";
import { createRedactor } from "../security/redact.ts";
import { workspaceStateDir } from "../store/state.ts";
import { openStore, type Store } from "../store/store.ts";
import { createCampaign } from "./run-context.ts";
import { prepareRun } from "./run.ts";

// A run prepared as a child of another: the shape delegation builds on.

let fake: FakeProvider;
let sandbox: Sandbox;
let store: Store | undefined;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });
afterEach(() => store?.close());

test("a child run names its parent and root, sits one level deeper, and charges the root's campaign", async () => {
  const loaded = loadConfig({ workspace: sandbox.workspace, env: sandbox.env });
  store = openStore({ dir: workspaceStateDir(sandbox.env, sandbox.workspace) }).store;
  store.createSession({ id: "zero_20260101000000_abc", surface: "cli", workspace: sandbox.workspace, title: "t", createdAt: new Date().toISOString() });
  const campaign = createCampaign({ steps: null, toolCalls: null, tokens: 4_020, costMicroUsd: null, runs: null, deadline: new Date(Date.now() + 60_000) }, { tokens: 20 });
  store.createRun({
    id: "run_20260101_root", sessionId: "zero_20260101000000_abc", rootId: "run_20260101_root", parentId: null, task: "root", agent: "build",
    modelAlias: "fake", provider: "openai-compatible", apiModel: "fake-1", status: "running", reason: null, depth: 0, workspace: sandbox.workspace,
    permissionMode: "ask", workDepth: "medium", budgets: {}, usage: {}, steps: 0, toolCalls: 0, deadline: new Date().toISOString(),
    startedAt: new Date().toISOString(), endedAt: null, pid: process.pid,
  });
  fake.script([{ toolCalls: [{ name: "read", args: { path: "README.md" } }], usage: { input: 3_000, output: 500 } }, { text: "never" }]);
  const prepared = await prepareRun({
    config: loaded.config,
    env: sandbox.env,
    workspace: sandbox.workspace,
    task: "look around",
    surface: "cli",
    parent: { runId: "run_20260101_root", rootId: "run_20260101_root", depth: 0, campaign, sessionId: "zero_20260101000000_abc" },
  });
  const events: RuntimeEvent[] = [];
  const outcome = await prepared.execute({
    sessionId: "zero_20260101000000_abc",
    listeners: [(event) => events.push(event)],
    history: [],
    stored: [],
    store,
    approvals: createApprovalBroker(undefined),
    ask: async () => false,
    redactor: createRedactor(),
  });
  // The campaign had 4,000 tokens left; the child's first step spent 3,500: the next request (its
  // input alone estimated past the 500 left) is not admitted, for the whole campaign.
  expect(outcome).toMatchObject({ status: "limit", exitCode: 4 });
  expect(campaign.spent.tokens).toBe(3_520);
  expect(fake.requests).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: "run.started", parentRunId: "run_20260101_root", rootRunId: "run_20260101_root", depth: 1 });
  expect(events.every((e) => (e as { parentRunId?: string }).parentRunId === "run_20260101_root")).toBe(true);
  expect(store.getRun(prepared.runId)).toMatchObject({ parentId: "run_20260101_root", rootId: "run_20260101_root", depth: 1 });
});
