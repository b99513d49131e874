import { expect } from "bun:test";
import * as acp from "@agentclientprotocol/sdk";
import { fakeConfig, ZERO_BIN, waitUntil, type Sandbox } from "./cli.ts";

/**
 * The client side of the whole-program ACP tests (test/e2e/acp*.test.ts): `zero acp` spawned as an
 * editor runs it, driven by the SDK's client, with every JSON-RPC line both ways kept in wire order.
 *
 * The SDK client may run `session/update` handlers after the response that followed them resolved,
 * so ordering questions (what came before a response) are answered from the recorded lines
 * (`sent()`, `received()`), never from the order of `updates`.
 */
export type AcpAgent = Awaited<ReturnType<typeof startAcpAgent>>;
export type PermissionAnswer = (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;
export type WireMessage = Record<string, any>;

/** Answers every permission request with this option (allow-once, allow-always, reject-once). */
export const choose = (optionId: string): PermissionAnswer => () => ({ outcome: { outcome: "selected", optionId } });

export async function startAcpAgent(sandbox: Sandbox, answer: PermissionAnswer = choose("allow-once"), options: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([ZERO_BIN, "acp"], { cwd: options.cwd ?? sandbox.workspace, env: { ...sandbox.env, ...options.env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const [forClient, forRecord] = proc.stdout.tee();
  let raw = "";
  let sentRaw = "";
  const recorded = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of forRecord) raw += decoder.decode(chunk, { stream: true });
  })();
  let stderr = "";
  const stderrDone = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const outDecoder = new TextDecoder();
  const input = new WritableStream<Uint8Array>({
    write(chunk) {
      sentRaw += outDecoder.decode(chunk, { stream: true });
      proc.stdin.write(chunk);
      proc.stdin.flush();
    },
    close() {
      proc.stdin.end();
    },
  });
  const connection = acp
    .client({ name: "zero-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      return answer(params);
    })
    .connect(acp.ndJsonStream(input, forClient));
  const lines = (text: string): WireMessage[] =>
    text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as WireMessage];
        } catch {
          return [];
        }
      });
  let stopped: Promise<number> | undefined;
  return {
    proc,
    agent: connection.agent,
    updates,
    permissions,
    raw: () => raw,
    stderr: () => stderr,
    /** Every JSON-RPC message the client sent, in order. */
    sent: () => lines(sentRaw),
    /** Every JSON-RPC message the agent sent, in wire order. */
    received: () => lines(raw),
    /** Writes bytes straight to the agent's stdin (a malformed frame). */
    writeRaw(text: string) {
      proc.stdin.write(text);
      proc.stdin.flush();
    },
    stop(): Promise<number> {
      stopped ??= (async () => {
        connection.close();
        proc.stdin.end();
        const code = await proc.exited;
        await recorded;
        await stderrDone;
        return code;
      })();
      return stopped;
    },
  };
}

export function textOf(updates: acp.SessionNotification[], kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk"): string {
  return updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ((u as { content: { type: string; text?: string } }).content.text ?? ""))
    .join("");
}

export async function initialize(a: AcpAgent) {
  return a.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
}

export async function newAcpSession(a: AcpAgent, cwd: string, extra: Partial<acp.NewSessionRequest> = {}): Promise<acp.NewSessionResponse> {
  return a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [], ...extra });
}

export function prompt(a: AcpAgent, sessionId: string, text: string) {
  return a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

/** Every stdout line is one JSON-RPC 2.0 message: nothing else ever reaches the protocol stream. */
export function expectOnlyJsonRpc(raw: string): Array<Record<string, any>> {
  const lines = raw.split("\n").filter((line) => line !== "");
  expect(lines.length).toBeGreaterThan(0);
  return lines.map((line) => {
    const message = JSON.parse(line);
    expect(message.jsonrpc).toBe("2.0");
    return message;
  });
}

/** The id of the last request of `method` the client sent. */
export function lastRequestId(a: AcpAgent, method: string): number | string {
  const request = a.sent().filter((m) => m.method === method && m.id !== undefined).at(-1);
  if (!request) throw new Error(`no ${method} request was sent`);
  return request.id;
}

/** Waits until the agent's answer to request `id` is on the wire; returns its index among `received()`. */
export async function responseIndex(a: AcpAgent, id: number | string): Promise<number> {
  let index = -1;
  await waitUntil(`the response to request ${id}`, () => {
    index = a.received().findIndex((m) => m.id === id && m.method === undefined && ("result" in m || "error" in m));
    return index !== -1;
  }, 10_000);
  return index;
}

/** `session/update`s of `sessionId` among `messages` (wire order), as their update bodies. */
export function updatesIn(messages: WireMessage[], sessionId: string): acp.SessionUpdate[] {
  return messages.filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId).map((m) => m.params.update as acp.SessionUpdate);
}

/** Updates of one kind from the client's handler list (any order). */
export function updatesOfKind<K extends acp.SessionUpdate["sessionUpdate"]>(updates: acp.SessionNotification[], kind: K, sessionId?: string): Array<Extract<acp.SessionUpdate, { sessionUpdate: K }>> {
  return updates
    .filter((n) => sessionId === undefined || n.sessionId === sessionId)
    .map((n) => n.update)
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
}

/** The capabilities of the fake's model aliases in the session tests. */
export const MODEL_CAPABILITIES = ["text", "tools"];
/** Aliases on the one fake: the request's `model` says which one a turn used. */
export const ALIAS_MODELS = {
  other: { provider: "fake", model: "other-1", capabilities: MODEL_CAPABILITIES },
  picky: { provider: "fake", model: "picky-1", capabilities: MODEL_CAPABILITIES, supportedReasoningEfforts: ["low", "high"] },
  scout: { provider: "fake", model: "scout-1", capabilities: MODEL_CAPABILITIES },
  reviewer: { provider: "fake", model: "reviewer-1", capabilities: MODEL_CAPABILITIES },
};

/** The fake's config with the `ALIAS_MODELS` aliases too; `extra.models` adds to (or replaces) them, the rest of `extra` goes to the config. */
export function aliasConfig(fakeUrl: string, extra: Record<string, unknown> = {}) {
  const { models, ...rest } = extra as { models?: Record<string, unknown> };
  return fakeConfig(fakeUrl, "chat", { models: { ...ALIAS_MODELS, ...models }, ...rest });
}

/** `zero acp` started and initialized. */
export async function startInitialized(sandbox: Sandbox, answer: PermissionAnswer = choose("allow-once"), options: { cwd?: string } = {}): Promise<AcpAgent> {
  const a = await startAcpAgent(sandbox, answer, options);
  await initialize(a);
  return a;
}

/** What a JSON-RPC error says: its message and data. */
export const errorText = (error: unknown): string => `${(error as Error)?.message ?? ""} ${JSON.stringify((error as { data?: unknown })?.data ?? "")}`;
