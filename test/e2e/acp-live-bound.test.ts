import { expect, test } from "bun:test";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, type Sandbox } from "../support/cli.ts";
import { expectOnlyJsonRpc, initialize, newAcpSession, prompt, startAcpAgent } from "../support/acp-client.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

// Mirrors MAX_LIVE_SESSIONS in src/surface/acp/server.ts (the test opens one more than it).
const LIVE_BOUND = 16;

test("acp: beyond the live bound the least recently used session is parked; naming it again reopens it with its history and choices", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models: { one: { provider: "fake", model: "fake-one", capabilities: ["text", "tools"] }, two: { provider: "fake", model: "fake-two", capabilities: ["text", "tools"] } },
      agents: { build: { model: "one" } },
    }),
  );
  const a = await startAcpAgent(sandbox);
  try {
    await initialize(a);
    const first = (await newAcpSession(a, sandbox.workspace)).sessionId;
    fake.script([{ text: "remembered: 5511" }]);
    expect(await prompt(a, first, "remember 5511")).toMatchObject({ stopReason: "end_turn" });
    await a.agent.request("session/set_config_option", { sessionId: first, configId: "model", value: "two" });
    // 16 more sessions: the first (least recently used, idle) is parked.
    for (let i = 0; i < LIVE_BOUND; i++) await newAcpSession(a, sandbox.workspace);
    expect(a.stderr()).toContain(`session ${first} parked`);
    // Still listed, and a prompt to it just works: reopened, same conversation, same model choice.
    const listed = await a.agent.request("session/list", { cwd: sandbox.workspace });
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(first);
    fake.script([{ text: "still here" }]);
    expect(await prompt(a, first, "what did I say?")).toMatchObject({ stopReason: "end_turn" });
    const last = fake.requests.at(-1)!.body;
    expect(last.model).toBe("fake-two");
    expect(JSON.stringify(last.messages)).toContain("remember 5511");
    expect(JSON.stringify(last.messages)).toContain("remembered: 5511");
  } finally {
    expect(await a.stop()).toBe(0);
  }
  expectOnlyJsonRpc(a.raw());
}, 60_000);
