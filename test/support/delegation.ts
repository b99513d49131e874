import { afterEach } from "bun:test";
import { readFileSync } from "node:fs";
import type { Sandbox } from "./cli.ts";
import type { FakeProvider, FakeTurn, RecordedRequest } from "./fake-provider.ts";

/**
 * Helpers of the whole-program delegation tests (test/e2e/delegation*.test.ts): reading the
 * requests the fake provider was sent, scripting it per sender, building `delegate` calls, and
 * the processes and git state those tests check.
 *
 * Children run concurrently with their parent, so the fake is scripted per sender: every request
 * is answered from the queue of whoever sent it (the root, or the child whose first user message
 * is `# Delegated task: <name>`), never by arrival order.
 */

// ---- Reading requests -------------------------------------------------------------------------

/** The text of a message: its string content, or its parts' text joined. */
export const textOf = (message: any): string =>
  typeof message?.content === "string" ? message.content : Array.isArray(message?.content) ? message.content.map((p: any) => p.text ?? "").join("") : "";
/** The text of a request's first user message. */
export const firstUser = (req: RecordedRequest): string => textOf(req.body.messages.find((m: any) => m.role === "user"));
/** The task name of the child that sent `req`, or "root". */
export const senderOf = (req: RecordedRequest): string => /^# Delegated task: (\S+)/.exec(firstUser(req))?.[1] ?? "root";
/** The requests `fake` received from `who` (a child's task name, or "root"), in arrival order. */
export const requestsOf = (fake: FakeProvider, who: string): RecordedRequest[] => fake.requests.filter((req) => senderOf(req) === who);
/** The names of the tools a request offered. */
export const toolNames = (req: RecordedRequest): string[] => (req.body.tools ?? []).map((t: any) => t.function.name);
/** The text of all of a request's messages, one after the other. */
export const allText = (req: RecordedRequest): string => req.body.messages.map(textOf).join("\n");
/** The tool results a request carries, by call id. */
export const toolResults = (req: RecordedRequest): Record<string, string> =>
  Object.fromEntries(req.body.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, textOf(m)]));
/** A request's messages other than the system prompt, each as `role: text`. */
export const conversationOf = (req: RecordedRequest): string[] => req.body.messages.filter((m: any) => m.role !== "system").map((m: any) => `${m.role}: ${textOf(m)}`);
/** JSON.parse of a tool result; a missing one parses as null. */
export const parse = (text: string | undefined): any => JSON.parse(text ?? "null");
/** How the user message that injects a background child's completion starts. */
export const INJECTED = "[delegate] Background child";
/** User messages of a request that are injected background completions. */
export const injected = (req: RecordedRequest): string[] => req.body.messages.filter((m: any) => m.role === "user" && textOf(m).startsWith(INJECTED)).map(textOf);

// ---- Scripting the fake per sender ------------------------------------------------------------

/**
 * A scripted turn: a fixed reply, or one computed from the request it answers. A function may
 * return null, meaning "not needed any more": the sender's next turn answers instead.
 */
export type Turn = FakeTurn | ((req: RecordedRequest) => FakeTurn | null);

/**
 * Scripts `fake` to answer each request from its sender's queue in `turns` (keyed by task name,
 * "root" for the parent). A sender with no turn left gets a 400 naming it.
 */
export function scriptBySender(fake: FakeProvider, turns: Record<string, Turn[]>): void {
  const total = Object.values(turns).reduce((n, list) => n + list.length, 0);
  fake.script(
    Array.from({ length: total }, () => (req: RecordedRequest): FakeTurn => {
      const who = senderOf(req);
      for (let next = turns[who]?.shift(); next !== undefined; next = turns[who]?.shift()) {
        const turn = typeof next === "function" ? next(req) : next;
        if (turn !== null) return turn;
      }
      return { kind: "error", status: 400, message: `test: no turn scripted for ${who}` };
    }),
  );
}

// ---- Building turns ---------------------------------------------------------------------------

/** One assistant turn making the given `delegate` calls, each `[call id, arguments]`. */
export const calls = (...list: Array<[id: string, args: Record<string, unknown>]>): FakeTurn => ({
  toolCalls: list.map(([id, args]) => ({ name: "delegate", id, args })),
});
/** One assistant turn making a single `delegate` call. */
export const delegate = (id: string, args: Record<string, unknown>): FakeTurn => calls([id, args]);
/** A task contract for spawn: an analysis named `taskName` with one acceptance criterion; `extra` overrides. */
export const task = (taskName: string, extra: Record<string, unknown> = {}) => ({
  taskName,
  goal: `Carry out ${taskName}`,
  deliverable: "analysis",
  acceptanceCriteria: ["Report what you saw"],
  ...extra,
});
/** One assistant turn spawning a child with the task contract `contract`. */
export const spawn = (id: string, contract: Record<string, unknown>): FakeTurn => delegate(id, { operation: "spawn", ...contract });
/** A child's final answer: `value` as a fenced JSON result envelope. */
export const envelope = (value: unknown): FakeTurn => ({ text: "```json\n" + JSON.stringify(value) + "\n```" });
/** A reply that streams `pieces` chunks `delayMs` apart: a child that stays busy for a while. */
export const slowText = (text: string, pieces: number, delayMs: number): FakeTurn => ({ text: Array.from({ length: pieces }, (_, i) => (i === 0 ? text : ".")), chunkDelayMs: delayMs });
/** A provider error that fails the child it answers (a 400 is not retried). */
export const providerError: FakeTurn = { kind: "error", status: 400, message: "invalid request: the fake refuses this child", type: "invalid_request_error" };

// ---- Processes --------------------------------------------------------------------------------

/** Whether a process `pid` exists (signal 0 reaches it); a zombie counts as alive. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Whether a process `pid` still runs: it exists and is not a zombie its parent has yet to reap. */
export const isRunning = (pid: number): boolean => {
  if (!isAlive(pid)) return false;
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
};
/**
 * Registers an afterEach that SIGKILLs the process a test put in `pid` (a command the product
 * should have killed) if `alive` says it still is, so a failed test leaves no sleeper behind.
 */
export function killStrayAfterEach(alive: (pid: number) => boolean): { pid: number | undefined } {
  const stray: { pid: number | undefined } = { pid: undefined };
  afterEach(() => {
    if (stray.pid !== undefined && alive(stray.pid)) process.kill(stray.pid, "SIGKILL");
    stray.pid = undefined;
  });
  return stray;
}

// ---- Git --------------------------------------------------------------------------------------

/** Real git (in the sandbox workspace unless `cwd`), with the sandbox's HOME and no system configuration; throws on failure. */
export function git(sandbox: Sandbox, args: string[], cwd = sandbox.workspace): string {
  const result = Bun.spawnSync(["git", ...args], { cwd, env: { ...sandbox.env, GIT_CONFIG_NOSYSTEM: "1" }, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed (${result.exitCode}): ${result.stderr.toString()}`);
  return result.stdout.toString();
}
/** Commits everything in the sandbox workspace. */
export function commitAll(sandbox: Sandbox, message = "init"): void {
  git(sandbox, ["add", "-A"]);
  git(sandbox, ["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-qm", message]);
}
