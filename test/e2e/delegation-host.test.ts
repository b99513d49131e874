/**
 * Delegation across turns of one long-lived session (`zero host`, one session_id): a background
 * child's completion that its parent turn did not see is handed to the next turn of the session,
 * once; with cancelChildrenWithParent (the default) the turn's end cancels the child first. The
 * host's stream shows only the root run: the child's text never appears as TEXT_DELTA.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { FakeTurn, RecordedRequest } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import type { FakeProvider } from "../support/fake-provider.ts";
import { fakeConfig, waitUntil, ZERO_BIN, type Sandbox } from "../support/cli.ts";
import { injected, senderOf } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const isChild = (req: RecordedRequest) => senderOf(req) === "slow-look";

/** The status of the (one) child run in the workspace's store, read-only. */
function childStatus(): string | undefined {
  const base = join(sandbox.stateHome, "zero-cli");
  if (!existsSync(base)) return undefined;
  const db = new Database(join(base, readdirSync(base)[0]!, "zero-cli.db"), { readonly: true });
  try {
    return (db.query("SELECT status FROM runs WHERE parent_id IS NOT NULL").get() as { status: string } | null)?.status;
  } finally {
    db.close();
  }
}

/** A host process and the JSON lines it wrote so far. */
function startHost() {
  const proc = Bun.spawn([ZERO_BIN, "host"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const lines: any[] = [];
  void (async () => {
    let pending = "";
    for await (const chunk of proc.stdout) {
      pending += new TextDecoder().decode(chunk);
      for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
        lines.push(JSON.parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
    }
  })();
  const run = (requestId: string, prompt: string) =>
    proc.stdin.write(`${JSON.stringify({ protocol_version: 1, type: "run", request_id: requestId, session_id: "s-1", prompt, idempotency_key: requestId, stream: true })}\n`);
  const final = async (requestId: string) => {
    await waitUntil(`the final of ${requestId}`, () => lines.some((l) => l.type === "final" && l.request_id === requestId), 20_000);
    return lines.find((l) => l.type === "final" && l.request_id === requestId);
  };
  return { proc, lines, run, final };
}

function scriptTurns(childDelayMs: number): void {
  const root: FakeTurn[] = [
    {
      toolCalls: [
        { name: "delegate", id: "bg", args: { operation: "spawn", taskName: "slow-look", goal: "Look slowly", deliverable: "analysis", acceptanceCriteria: ["Say something"], background: true } },
      ],
    },
    { text: "first turn done" },
    { text: "second turn done" },
  ];
  const child: FakeTurn[] = [{ text: ["CHILD ", "WORDS ", '{"summary": "looked"}'], chunkDelayMs: childDelayMs }];
  fake.script(Array.from({ length: 4 }, () => (req: RecordedRequest) => (isChild(req) ? child.shift()! : root.shift()!)));
}

test("a background completion the turn never saw goes to the next turn of the session, once (cancelChildrenWithParent false)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { multiAgent: { cancelChildrenWithParent: false } }));
  scriptTurns(150);
  const host = startHost();
  try {
    host.run("r1", "start something in the background");
    expect((await host.final("r1")).status).toBe("OK");
    // The child outlived its parent turn and finished on its own (its run row says so).
    await waitUntil("the child's run to finish", () => childStatus() === "completed", 10_000);
    host.run("r2", "anything new?");
    expect((await host.final("r2")).text).toBe("second turn done");
    const roots = fake.requests.filter((r) => !isChild(r));
    expect(roots).toHaveLength(3);
    expect(injected(roots[1]!)).toHaveLength(0);
    const carried = injected(roots[2]!);
    expect(carried).toHaveLength(1);
    expect(carried[0]).toContain('"status":"completed"');
    expect(carried[0]).toContain('"summary":"looked"');
    // The bridge sees the root run only: the child's words never stream as the answer.
    const deltas = host.lines.filter((l) => l.event_type === "TEXT_DELTA").map((l) => l.payload.text).join("");
    expect(deltas).not.toContain("CHILD");
  } finally {
    host.proc.kill("SIGTERM");
    await host.proc.exited;
  }
}, 40_000);

test("by default the turn's end cancels its background child, and the next turn is told so", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  scriptTurns(2_000);
  const host = startHost();
  try {
    host.run("r1", "start something in the background");
    expect((await host.final("r1")).status).toBe("OK");
    host.run("r2", "anything new?");
    await host.final("r2");
    const roots = fake.requests.filter((r) => !isChild(r));
    const carried = injected(roots[2]!);
    expect(carried).toHaveLength(1);
    expect(carried[0]).toContain('"status":"cancelled"');
  } finally {
    host.proc.kill("SIGTERM");
    await host.proc.exited;
  }
}, 40_000);
