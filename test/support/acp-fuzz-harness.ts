import { ZERO_BIN } from "./cli.ts";

/*
 * The harness of test/e2e/acp-fuzz.test.ts (which states the rules it checks): the reference model
 * of what `zero acp` must answer to one frame (`expectationOf`), and `Agent`, the process on pipes
 * whose stdout is checked line by line against what each frame is owed (`Findings`).
 * The frame generators are in ./acp-fuzz-frames.ts.
 */

/** After the sentinel that follows a frame is answered, how long the frame's own answer may still take. */
export const GRACE_MS = 3_000;
/** How long one frame (and its sentinel) may go unanswered before the server counts as hung. */
export const FRAME_TIMEOUT_MS = 10_000;

// ---- the reference model -------------------------------------------------------------------

export type Id = string | number | null;
export type Message = Record<string, any>;
export type Phase = "pre" | "post";

/** What one frame must get back. */
export type Expectation =
  | { kind: "error"; id: Id; code: number; mentions: string[]; inMessage?: boolean }
  | { kind: "answer"; id: Id }
  | { kind: "silent" };

export type Frame = { label: string; bytes: Uint8Array; expect: Expectation };

/** What the frames may point at: the sandbox's paths and one live session. */
export type Ctx = { workspace: string; root: string; sessionId: string; phase: Phase };

export const encoder = new TextEncoder();
export const KNOWN_METHODS = new Set([
  "initialize",
  "authenticate",
  "logout",
  "session/new",
  "session/load",
  "session/list",
  "session/delete",
  "session/resume",
  "session/close",
  "session/prompt",
  "session/cancel",
  "session/set_mode",
  "session/set_model",
  "session/set_config_option",
  "$/cancel_request",
]);

const idKey = (id: Id) => `${typeof id}:${String(id)}`;
const isUsableId = (id: unknown): id is Id => id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
const short = (text: string, max = 240) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);
export const shortBytes = (bytes: Uint8Array) => short(new TextDecoder().decode(bytes.subarray(0, 400)).replace(/\r/g, "\\r")) + (bytes.length > 400 ? ` (${bytes.length} bytes)` : "");

/** The frame as JSON.stringify writes it again (what an error's data echoes), if it is JSON. */
function reserialized(bytes: Uint8Array): string | undefined {
  if (bytes.length > 64 * 1024) return undefined;
  try {
    return JSON.stringify(JSON.parse(new TextDecoder().decode(bytes).trim()));
  } catch {
    return undefined;
  }
}

/** Whether a text names a word: a plain word must start a word there ("id" is not in "invalid"); anything else (a method name) is looked up as is. */
function mentions(text: string, word: string): boolean {
  if (!/^[A-Za-z]+$/.test(word)) return text.includes(word);
  return new RegExp(`(^|[^A-Za-z])${word}`, "i").test(text);
}

export function errorFor(id: Id, code: number, words: string[], inMessage = false): Expectation {
  return { kind: "error", id, code, mentions: words, inMessage };
}

/** Before `initialize` every request but initialize is refused with -32600 naming initialize. */
export function request(ctx: Ctx, id: Id, method: string, then: Expectation): Expectation {
  if (ctx.phase === "pre" && method !== "initialize") return errorFor(id, -32600, ["initializ"], true);
  return then;
}

/**
 * The reference model of the stream, for frames whose content is random: what the server must
 * answer to these exact bytes (one line). Mirrors the framing (decode, trim, blank lines skipped).
 */
export function expectationOf(bytes: Uint8Array, ctx: Ctx): Expectation {
  const text = new TextDecoder().decode(bytes).trim();
  if (text === "") return { kind: "silent" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return errorFor(null, -32700, ["parse"], true);
  }
  if (Array.isArray(value)) return errorFor(null, -32600, ["batch"], true);
  if (value === null || typeof value !== "object") return errorFor(null, -32600, ["object"], true);
  const message = value as Record<string, unknown>;
  const hasMethod = Object.hasOwn(message, "method");
  const hasId = Object.hasOwn(message, "id");
  if (!hasMethod) {
    // A response (or something response-shaped): never answered.
    if (hasId || Object.hasOwn(message, "result") || Object.hasOwn(message, "error")) return { kind: "silent" };
    return errorFor(null, -32600, ["method"], true);
  }
  // What the envelope gets wrong; the answer's message must name one of these.
  const wrong = [message.jsonrpc !== "2.0" && "jsonrpc", typeof message.method !== "string" && "method", hasId && !isUsableId(message.id) && "id"].filter((w): w is string => typeof w === "string");
  if (!hasId) return wrong.length === 0 ? { kind: "silent" } : errorFor(null, -32600, wrong, true);
  if (!isUsableId(message.id)) return errorFor(null, -32600, wrong, true);
  const id = message.id;
  // Request-shaped with a usable id: the answer carries that id, whatever else is wrong.
  const method = message.method;
  if (wrong.length > 0 || typeof method !== "string") return errorFor(id, -32600, wrong, true);
  if (KNOWN_METHODS.has(method)) return request(ctx, id, method, { kind: "answer", id });
  return request(ctx, id, method, errorFor(id, -32601, [method], true));
}

/** A JSON value as one frame's bytes, without the newline (`Agent.write` adds it). */
export const line = (value: unknown) => encoder.encode(JSON.stringify(value));
export const rpc = (id: unknown, method: unknown, params?: unknown) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

// ---- the agent process and the rules ---------------------------------------------------------

type Pending = { frame: string; expect: Extract<Expectation, { id: Id }>; answered: boolean; /** The frame re-serialized, when it is JSON. */ json?: string };

/** Rule → how often it broke and the first examples. */
class Findings {
  constructor(private readonly seed: number) {}
  private rules = new Map<string, { count: number; examples: string[] }>();
  note(rule: string, example: string): void {
    const entry = this.rules.get(rule) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(example);
    this.rules.set(rule, entry);
  }
  report(): string[] {
    return [...this.rules].map(([rule, { count, examples }]) => `${rule} (×${count}; seed ${this.seed})\n    ${examples.join("\n    ")}`);
  }
}

/** `zero acp` on pipes; every stdout line is checked as it arrives and matched to what was sent. */
export class Agent {
  readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  readonly findings: Findings;
  readonly messages: Message[] = [];
  private byId = new Map<string, Pending>();
  private nullQueue: Pending[] = [];
  private stderrText = "";
  private current = "(before any frame)";
  private tail = "";
  private stdoutDone: Promise<void>;

  /** `seed`: the run's fast-check seed, named in every finding so a failure can be replayed. */
  constructor(cwd: string, env: Record<string, string>, seed: number) {
    this.findings = new Findings(seed);
    const proc = Bun.spawn([ZERO_BIN, "acp"], { cwd, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    this.proc = proc;
    this.stdoutDone = this.readStdout();
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) this.stderrText += decoder.decode(chunk, { stream: true });
    })();
  }

  get stderr(): string {
    return this.stderrText;
  }

  get alive(): boolean {
    return this.proc.exitCode === null;
  }

  private async readStdout(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      this.tail += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = this.tail.indexOf("\n")) >= 0) {
        const text = this.tail.slice(0, newline);
        this.tail = this.tail.slice(newline + 1);
        this.onLine(text);
      }
    }
    this.tail += decoder.decode();
  }

  private onLine(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.findings.note("stdout line that is not JSON", `${short(text)} (after ${this.current})`);
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message) || (message as Message).jsonrpc !== "2.0") {
      this.findings.note('stdout line that is not a JSON-RPC 2.0 message (jsonrpc "2.0")', `${short(text)} (after ${this.current})`);
      return;
    }
    const m = message as Message;
    this.messages.push(m);
    if (typeof m.method === "string") return; // the server's own notifications and requests
    if (!("id" in m)) {
      this.findings.note("stdout message that is neither a request, a notification nor a response", short(text));
      return;
    }
    this.onReply(m, text);
  }

  private onReply(m: Message, text: string): void {
    if (m.id === null) {
      const pending = this.ownerOfNullAnswer(m);
      if (!pending) {
        this.findings.note("answer with id null that no frame called for", `${short(text)} (after ${this.current})`);
        return;
      }
      if (pending.expect.id !== null) {
        // A frame with a usable id, answered without it.
        pending.answered = true;
        this.findings.note("request with a usable id answered with id null (the client cannot match it and waits forever)", `${pending.frame} → ${short(text)}`);
        return;
      }
      this.nullQueue.splice(this.nullQueue.indexOf(pending), 1);
      return this.check(pending, m, text);
    }
    const pending = this.byId.get(idKey(m.id));
    if (!pending) {
      this.findings.note("answer to an id that was never sent (or is not answerable)", `${short(text)} (after ${this.current})`);
      return;
    }
    if (pending.answered) {
      this.findings.note("request answered twice, or late", `${pending.frame} → ${short(text)}`);
      return;
    }
    this.check(pending, m, text);
  }

  /**
   * Which frame an id-null answer belongs to (in a burst they come in any order). Among the
   * frames owed one with that code: the frame an error echoes as its data (the SDK's -32600),
   * else one whose expected words the message has, else one not owed an echo (parse errors,
   * batches), else the oldest; then any frame owed an id-null answer; then the frame in flight,
   * if it still waits for an answer with its own id.
   */
  private ownerOfNullAnswer(m: Message): Pending | undefined {
    const owed = this.nullQueue.filter((p) => p.expect.kind !== "error" || p.expect.code === m.error?.code);
    if (m.error && "data" in m.error) {
      const data = JSON.stringify(m.error.data);
      const echoed = [...owed, ...this.nullQueue, ...[...this.byId.values()].filter((p) => !p.answered)].find((p) => p.json === data);
      if (echoed) return echoed;
    }
    const message = typeof m.error?.message === "string" ? m.error.message : "";
    return (
      owed.find((p) => p.expect.kind === "error" && p.expect.mentions.some((word) => mentions(message, word))) ??
      owed.find((p) => p.json === undefined || p.json.startsWith("[")) ??
      owed[0] ??
      this.nullQueue[0] ??
      [...this.byId.values()].find((p) => !p.answered && p.frame === this.current)
    );
  }

  private check(pending: Pending, m: Message, text: string): void {
    pending.answered = true;
    const expectation = pending.expect;
    if (expectation.kind === "answer") return;
    const where = `${pending.frame} → ${short(text, 400)}`;
    if (!m.error) {
      this.findings.note(`expected error ${expectation.code}, got a result`, where);
      return;
    }
    const { code, message, data } = m.error as { code: unknown; message: unknown; data?: unknown };
    if (code !== expectation.code) this.findings.note(`expected error ${expectation.code}, got ${String(code)}`, where);
    if (typeof message !== "string" || message.trim() === "") {
      this.findings.note("error without a message", where);
      return;
    }
    // -32600/-32700 data echoes the frame, so only the message counts there.
    const said = expectation.inMessage ? message : `${message} ${JSON.stringify(data ?? "")}`;
    if (expectation.mentions.length > 0 && !expectation.mentions.some((word) => mentions(said, word))) {
      this.findings.note(`error ${String(code)} whose ${expectation.inMessage ? "message" : "message and data"} do not say what is wrong (want one of: ${expectation.mentions.join(", ")})`, where);
    }
  }

  /** Registers what a frame must get back; the answer may arrive any time after. */
  expect(frame: string, expectation: Expectation, bytes?: Uint8Array): Pending | undefined {
    if (expectation.kind === "silent") return undefined;
    const pending: Pending = { frame, expect: expectation, answered: false, json: bytes && reserialized(bytes) };
    if (expectation.id === null) this.nullQueue.push(pending);
    else this.byId.set(idKey(expectation.id), pending);
    return pending;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.proc.stdin.write(bytes);
    this.proc.stdin.write("\n");
    await this.proc.stdin.flush();
  }

  async until(condition: () => boolean, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!condition()) {
      if (!this.alive || performance.now() > deadline) return condition();
      await Bun.sleep(2);
    }
    return true;
  }

  private sentinels = 0;
  private dropped = 0;

  /** Sends one frame, then a sentinel request, and waits for both to be dealt with. */
  async exchange(frame: Frame, phase: Phase): Promise<void> {
    const label = `${frame.label}: ${shortBytes(frame.bytes)}`;
    this.current = label;
    const own = this.expect(label, frame.expect, frame.bytes);
    const sentinelId = `sentinel-${++this.sentinels}`;
    // Before initialize even the sentinel is refused (-32600); after, it is an unknown method.
    const sentinel = this.expect(`sentinel after ${label}`, phase === "pre" ? errorFor(sentinelId, -32600, ["initializ"], true) : errorFor(sentinelId, -32601, ["zero_fuzz/sentinel"], true))!;
    await this.write(frame.bytes);
    await this.write(line(rpc(sentinelId, "zero_fuzz/sentinel")));
    if (!(await this.until(() => sentinel.answered, FRAME_TIMEOUT_MS))) {
      this.findings.note(this.alive ? "no answer within the timeout (hang)" : "the process exited", `${label}; stderr: ${short(this.stderrText.slice(-600), 600)}`);
      return;
    }
    // After a few unanswered frames the grace shrinks, so a server that drops answers fails fast.
    if (own && !(await this.until(() => own.answered, this.dropped >= 3 ? 250 : GRACE_MS))) {
      this.dropped++;
      this.findings.note("no answer to the frame (after its sentinel was answered)", label);
      own.answered = true; // reported once
    }
  }

  /** Sends a request and returns its answer (for the well-formed session at the end). */
  async call(id: string, method: string, params: unknown, ms = 15_000): Promise<Message> {
    this.current = `${method} (well-formed)`;
    const pending = this.expect(`${method} (well-formed)`, { kind: "answer", id })!;
    await this.write(line(rpc(id, method, params)));
    if (!(await this.until(() => pending.answered, ms))) throw new Error(`no answer to the well-formed ${method}; stderr: ${this.stderrText.slice(-2000)}`);
    return this.messages.find((m) => m.id === id && !("method" in m))!;
  }

  unanswered(): string[] {
    return [...this.byId.values(), ...this.nullQueue].filter((p) => !p.answered).map((p) => p.frame);
  }

  async stop(ms = 10_000): Promise<number | "hung"> {
    this.proc.stdin.end();
    const code = await Promise.race([this.proc.exited, Bun.sleep(ms).then(() => "hung" as const)]);
    if (code === "hung") this.proc.kill("SIGKILL");
    await this.stdoutDone;
    if (this.tail !== "") this.findings.note("stdout ends with a partial line", short(this.tail));
    return code;
  }
}
