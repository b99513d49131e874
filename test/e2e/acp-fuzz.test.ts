import { expect, test } from "bun:test";
import { join } from "node:path";
import fc from "fast-check";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, ZERO_BIN, type Sandbox } from "../support/cli.ts";

/*
 * Malformed frames against a real `zero acp`. Stdin is newline-delimited JSON-RPC: every frame
 * below is one line (JSON.stringify never emits a raw newline; random bytes and strings leave
 * 0x0a out), so one frame is exactly one message to the server.
 *
 * What must hold, frame after frame, on one process:
 * - every stdout line is a JSON-RPC 2.0 message, checked as it arrives;
 * - a request with a usable id (string or number) is answered once, with that id; an error has
 *   the right code and a message that says what is wrong (the method for -32601, the
 *   offending parameter for -32602, in the message or its data);
 * - what has no usable id is answered with id null: -32700 for what is not JSON, -32600 for JSON
 *   that is not a request (batches, scalars, objects whose id is not a JSON-RPC id);
 * - notifications and response-shaped frames are not answered;
 * - the process never exits or stops answering; after the garbage it serves a session
 *   (initialize → session/new → session/prompt against the fake provider, end_turn), and it
 *   exits 0 once stdin ends.
 * Violations are collected (rule → count and first examples) so one run reports every kind.
 * ZERO_ACP_FUZZ_SEED=<n> replays a run.
 */

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const SEED = Number(process.env.ZERO_ACP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MiB = 1024 * 1024;
/** After the sentinel that follows a frame is answered, how long the frame's own answer may still take. */
const GRACE_MS = 3_000;
/** How long one frame (and its sentinel) may go unanswered before the server counts as hung. */
const FRAME_TIMEOUT_MS = 10_000;

type Id = string | number | null;
type Message = Record<string, any>;
type Phase = "pre" | "post";

/** What one frame must get back. */
type Expectation =
  | { kind: "error"; id: Id; code: number; mentions: string[]; inMessage?: boolean }
  | { kind: "answer"; id: Id }
  | { kind: "silent" };

type Frame = { label: string; bytes: Uint8Array; expect: Expectation };

/** What the frames may point at: the sandbox's paths and one live session. */
type Ctx = { workspace: string; root: string; sessionId: string; phase: Phase };

const encoder = new TextEncoder();
const KNOWN_METHODS = new Set([
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
const shortBytes = (bytes: Uint8Array) => short(new TextDecoder().decode(bytes.subarray(0, 400)).replace(/\r/g, "\\r")) + (bytes.length > 400 ? ` (${bytes.length} bytes)` : "");

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

function errorFor(id: Id, code: number, words: string[], inMessage = false): Expectation {
  return { kind: "error", id, code, mentions: words, inMessage };
}

/** Before `initialize` every request but initialize is refused with -32600 naming initialize. */
function request(ctx: Ctx, id: Id, method: string, then: Expectation): Expectation {
  if (ctx.phase === "pre" && method !== "initialize") return errorFor(id, -32600, ["initializ"], true);
  return then;
}

/**
 * The reference model of the stream, for frames whose content is random: what the server must
 * answer to these exact bytes (one line). Mirrors the framing (decode, trim, blank lines skipped).
 */
function expectationOf(bytes: Uint8Array, ctx: Ctx): Expectation {
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

// ---- frame generators ------------------------------------------------------------------------

/** A frame builder: the number makes its id unique; the context says what the server knows. */
type Build = (n: number, ctx: Ctx) => Frame;

const line = (value: unknown) => encoder.encode(JSON.stringify(value));
const rpc = (id: unknown, method: unknown, params?: unknown) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

/** Modelled frames: bytes in, expectation from the reference model. */
const modelled = (label: string, bytes: (n: number, ctx: Ctx) => Uint8Array): Build => (n, ctx) => {
  const b = bytes(n, ctx);
  return { label, bytes: b, expect: expectationOf(b, ctx) };
};

const noNewline = (bytes: Uint8Array) => bytes.filter((b) => b !== 0x0a);
const notANewline = (text: string) => text.replace(/\n/g, " ");

const randomBytes = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => modelled("random bytes", () => noNewline(bytes)));
const randomText = fc.string({ unit: "binary", minLength: 1, maxLength: 200 }).map((text) => modelled("random text", () => encoder.encode(notANewline(text))));
const jsonishText = fc
  .string({ unit: fc.constantFrom(..."{}[]\":,0123456789.-+eEtrunlfas \\/\t\r"), minLength: 1, maxLength: 80 })
  .map((text) => modelled("JSON-like noise", () => encoder.encode(text)));
const jsonScalars = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.boolean(), fc.constant(null))
  .map((value) => modelled("a JSON scalar", () => line(value)));
const jsonArrays = fc
  .oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }), fc.constant([]))
  .map((items) => modelled("a JSON array", () => line(items)));
/** A batch of real requests: refused as a whole, none of its entries run (their ids are never answered). */
const batchOfRequests = fc.integer({ min: 1, max: 3 }).map((count) =>
  modelled("a batch of requests", (n) => line(Array.from({ length: count }, (_, i) => rpc(`batch-${n}-${i}`, "initialize", { protocolVersion: 1 })))),
);
const randomObjects = fc
  .dictionary(fc.constantFrom("jsonrpc", "id", "method", "params", "result", "error", "x"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
  .map((object) => modelled("a random object", () => line(object)));

/** A well-formed request's text cut short. */
const truncated = fc.tuple(fc.constantFrom("initialize", "session/new", "session/prompt", "zero/nothing"), fc.double({ min: 0, max: 1, noNaN: true })).map(([method, at]) =>
  modelled("truncated JSON", (n, ctx) => {
    const full = JSON.stringify(rpc(n, method, { sessionId: ctx.sessionId, cwd: ctx.workspace, mcpServers: [], protocolVersion: 1, prompt: [{ type: "text", text: "hi" }] }));
    return encoder.encode(full.slice(0, Math.max(1, Math.floor(at * (full.length - 1)))));
  }),
);

const anyMethod = fc.oneof(fc.constantFrom("initialize", "session/new", "session/prompt", "session/list"), fc.string({ maxLength: 20 }));
/** Envelopes that are not JSON-RPC 2.0 but carry a usable id. */
const wrongVersion = fc
  .tuple(fc.constantFrom<unknown>("1.0", "2", 2, "2.0 ", "", null, "3.0", undefined), anyMethod, fc.jsonValue({ maxDepth: 2 }))
  .map(([version, method, params]) =>
    modelled("wrong jsonrpc version", (n) => {
      const frame: Record<string, unknown> = { id: `v-${n}`, method, params };
      if (version !== undefined) frame.jsonrpc = version;
      return line(frame);
    }),
  );
const nonStringMethod = fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 })).map((method) =>
  modelled("a method that is not a string", (n) => line(rpc(n, method, {}))),
);
/** Ids JSON-RPC does not allow: answered with id null. */
const oddIds = fc
  .tuple(fc.oneof(fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 3 }), fc.boolean()), anyMethod)
  .map(([id, method]) => modelled("an id that is an object, array or boolean", () => line(rpc(id, method, {}))));
/** Ids that are odd but usable: answered with that very id. */
const oddButUsableIds = fc
  .tuple(
    fc.oneof(
      fc.integer({ min: 1, max: 999 }).map((milli) => (n: number) => n + milli / 1000 + 0.0001),
      fc.constant((n: number) => -n),
      fc.constant((n: number) => n * 1_000_000_007),
      fc.integer({ min: 1_000, max: 200_000 }).map((length) => (n: number) => `${"I".repeat(length)}-${n}`),
      fc.string({ unit: "binary", maxLength: 20 }).map((text) => (n: number) => `${text}\u0000${n}`),
    ),
    fc.string({ minLength: 1, maxLength: 12 }),
  )
  .map(([makeId, suffix]) => modelled("a float, negative, large or huge-string id", (n) => line(rpc(makeId(n), `zero_fuzz/${suffix}`, { a: 1 }))));
const nullId = fc.constantFrom("zero/none", "initialize").map((method) =>
  (n: number, ctx: Ctx): Frame => {
    // id null is a (discouraged) request id in ACP v1: answered, with id null.
    const params = method === "initialize" ? { protocolVersion: "one" } : {};
    const expectation: Expectation =
      ctx.phase === "pre" && method !== "initialize" ? errorFor(null, -32600, ["initializ"], true) : method === "initialize" ? errorFor(null, -32602, ["protocolVersion"]) : errorFor(null, -32601, [method], true);
    return { label: "id null", bytes: line(rpc(null, method, params)), expect: expectation };
  },
);

const unknownMethodName = fc
  .tuple(fc.constantFrom("", "session/", "_zed/", "fs/", "terminal/", "$/", "zero/", "session/prompt/"), fc.string({ unit: "binary", maxLength: 24 }))
  .map(([prefix, rest]) => notANewline(prefix + rest))
  .filter((method) => !KNOWN_METHODS.has(method));
const unknownMethods = fc.tuple(unknownMethodName, fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })).map(
  ([method, params]): Build =>
    (n, ctx) => ({ label: "an unknown method", bytes: line(rpc(`m-${n}`, method, params)), expect: request(ctx, `m-${n}`, method, errorFor(`m-${n}`, -32601, [method], true)) }),
);

/** Something that is not what a field wants. */
const junk = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null), fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 2 }));
const junkNotArray = junk.filter((value) => !Array.isArray(value));
const junkNotString = junk.filter((value) => typeof value !== "string");

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const TEXT = { type: "text", text: "look at this" };
/** Content blocks that make any prompt invalid (so none of them ever runs a turn). */
const badBlocks: fc.Arbitrary<{ blocks: readonly unknown[]; what: string }> = fc.oneof(
  fc.string({ unit: fc.constantFrom(..."!*%$#@~?^&-_.,"), minLength: 1, maxLength: 40 }).map((data) => ({ blocks: [TEXT, { type: "image", data, mimeType: "image/png" }], what: "image with invalid base64" })),
  fc.constantFrom("QUJD", "AAAAAAAA", "SGVsbG8gd29ybGQh").map((data) => ({ blocks: [{ type: "image", data, mimeType: "image/png" }, TEXT], what: "image whose bytes are not an image" })),
  fc.constant({ blocks: [{ type: "image", data: PNG_1x1, mimeType: "image/jpeg" }, TEXT], what: "image whose mimeType lies" }),
  fc.constant({ blocks: [{ type: "audio", data: PNG_1x1, mimeType: "audio/wav" }], what: "audio that is a PNG" }),
  fc.constant({ blocks: [{ type: "image", data: "", mimeType: "image/png" }], what: "empty image data" }),
  fc.constant({ blocks: Array.from({ length: 17 }, () => ({ type: "image", data: PNG_1x1, mimeType: "image/png" })), what: "too many images" }),
  fc.constant({ blocks: [{ type: "resource", resource: { uri: "file:///x.bin", blob: "!!not base64!!" } }], what: "resource blob with invalid base64" }),
  fc.constant({ blocks: [{ type: "resource", resource: { uri: "file:///x" } }], what: "resource with neither text nor blob" }),
  fc.constant({ blocks: [], what: "no content blocks" }),
  fc.constant({ blocks: [{ type: "text", text: " \t " }], what: "whitespace-only text" }),
  fc.constant({ blocks: [null], what: "a null block" }),
  fc.constant({ blocks: [{ type: "text" }], what: "text block without text" }),
  fc.string({ maxLength: 10 }).filter((type) => !["text", "image", "audio", "resource", "resource_link"].includes(type)).map((type) => ({ blocks: [{ type, text: "x" }], what: "unknown block type" })),
  fc.constant({ blocks: [{ type: "resource_link", uri: 42, name: "x" }], what: "resource_link with a numeric uri" }),
  fc.constant({ blocks: [{ type: "image", data: PNG_1x1 }], what: "image without mimeType" }),
);

type ParamCase = { method: string; params: (ctx: Ctx, n: number) => unknown; code: number; mentions: string[]; what: string };
const invalid = (method: string, what: string, mentions: string[], params: (ctx: Ctx, n: number) => unknown): ParamCase => ({ method, params, code: -32602, mentions, what });

const relativePath = fc.string({ minLength: 0, maxLength: 20 }).map((text) => notANewline(text).replace(/^\/+/, ""));
const missingDir = fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 }).map((name) => name.replace(/[/\0]/g, "_"));
/** A cwd that is relative, missing, a file, has a NUL byte, or is not a string (`orNull`: null too; session/list takes null for "the server's cwd"). */
const badCwdOf = (orNull: boolean): fc.Arbitrary<{ cwd: (ctx: Ctx) => unknown; what: string }> =>
  fc.oneof(
    relativePath.map((path) => ({ cwd: () => path, what: `relative cwd ${JSON.stringify(path)}` })),
    missingDir.map((name) => ({ cwd: (ctx: Ctx) => join(ctx.root, "does-not-exist", name), what: "cwd that does not exist" })),
    fc.constant({ cwd: (ctx: Ctx) => join(ctx.workspace, "README.md"), what: "cwd that is a file" }),
    fc.constant({ cwd: () => "/tmp/\u0000evil", what: "cwd with a NUL byte" }),
    junkNotString.filter((value) => orNull || value !== null).map((value) => ({ cwd: () => value, what: "cwd that is not a string" })),
  );
const badCwd = badCwdOf(true);
/** mcpServers values no schema accepts (null is not one: the SDK reads it as []). */
const badMcpServers = fc.oneof(
  junkNotArray.filter((value) => value !== null),
  fc.constant([null]),
  fc.constant([{}]),
  fc.constant([{ name: 42, command: "x", args: [], env: [] }]),
  fc.constant([{ name: "x", command: "x", args: "not-an-array", env: [] }]),
  fc.constant([{ type: "sse", name: "s", url: "http://127.0.0.1:9/sse", headers: [] }]),
  fc.constant([{ type: "http", name: "h", url: "ftp://x", headers: [] }]),
  fc.constant([{ type: "http", name: "h", url: "http://127.0.0.1:9/", headers: [{ name: "X", value: "a\nb" }] }]),
  fc.constant([{ name: "x", command: "relative/cmd", args: [], env: [] }]),
);

const unknownSession = fc.string({ unit: "binary", maxLength: 30 }).map((text) => `no-such-session-${text}`);

const paramCases: fc.Arbitrary<ParamCase> = fc.oneof(
  // session/prompt
  junkNotArray.map((prompt) => invalid("session/prompt", "prompt that is not an array", ["prompt"], (ctx) => ({ sessionId: ctx.sessionId, prompt }))),
  junkNotString.map((sessionId) => invalid("session/prompt", "sessionId that is not a string", ["sessionId"], () => ({ sessionId, prompt: [TEXT] }))),
  unknownSession.map((sessionId) => invalid("session/prompt", "unknown sessionId", ["session"], () => ({ sessionId, prompt: [TEXT] }))),
  badBlocks.map(({ blocks, what }) => invalid("session/prompt", what, ["prompt"], (ctx) => ({ sessionId: ctx.sessionId, prompt: blocks }))),
  junkNotArray.filter((v) => v !== null).map((params) => invalid("session/prompt", "params that are not an object", ["object", "sessionId", "prompt"], () => params)),
  // session/new
  fc.tuple(badCwd, fc.oneof(fc.constant([]), badMcpServers)).map(([{ cwd, what }, mcpServers]) => invalid("session/new", what, ["cwd", "mcpServers"], (ctx) => ({ cwd: cwd(ctx), mcpServers }))),
  badMcpServers.map((mcpServers) => invalid("session/new", "bad mcpServers", ["mcpServers"], (ctx) => ({ cwd: ctx.workspace, mcpServers }))),
  fc
    .oneof(junkNotArray.filter((v) => v !== null), relativePath.map((p) => [p]), fc.constant(["/tmp/\u0000x"]), missingDir.map((name) => [`/does-not-exist/${name}`]))
    .map((dirs) => invalid("session/new", "bad additionalDirectories", ["additionalDirectories"], (ctx) => ({ cwd: ctx.workspace, mcpServers: [], additionalDirectories: dirs }))),
  fc.constant(invalid("session/new", "no params", ["cwd", "mcpServers"], () => undefined)),
  // session/load, session/resume
  fc
    .tuple(fc.constantFrom("session/load", "session/resume"), unknownSession)
    .map(([method, sessionId]) => invalid(method, "unknown stored session", ["session"], (ctx) => ({ sessionId, cwd: ctx.workspace, mcpServers: [] }))),
  fc
    .tuple(fc.constantFrom("session/load", "session/resume"), badCwd)
    .map(([method, { cwd, what }]) => invalid(method, what, ["cwd", "session"], (ctx) => ({ sessionId: ctx.sessionId, cwd: cwd(ctx), mcpServers: [] }))),
  // session/list
  badCwdOf(false).map(({ cwd, what }) => invalid("session/list", what, ["cwd"], (ctx) => ({ cwd: cwd(ctx) }))),
  fc.constantFrom<unknown>("abc", "-1", "NaN", "x9", 42, {}, []).map((cursor) => invalid("session/list", "cursor the server never gave", ["cursor"], () => ({ cursor }))),
  // session/set_config_option, set_mode, set_model, close
  fc
    .string({ maxLength: 12 })
    .filter((id) => !["model", "reasoning", "depth", "workflow"].includes(id))
    .map((configId) => invalid("session/set_config_option", "unknown configId", ["config"], (ctx) => ({ sessionId: ctx.sessionId, configId, value: "x" }))),
  fc
    .tuple(fc.constantFrom("model", "reasoning", "depth", "workflow"), fc.string({ maxLength: 10 }))
    .map(([configId, value]) => invalid("session/set_config_option", `value not offered for ${configId}`, [configId, "value"], (ctx) => ({ sessionId: ctx.sessionId, configId, value: `no-such-${value}` }))),
  fc
    .tuple(junkNotString, junk)
    .map(([configId, value]) => invalid("session/set_config_option", "configId not a string", ["configId", "value"], (ctx) => ({ sessionId: ctx.sessionId, configId, value }))),
  fc
    .string({ maxLength: 12 })
    .filter((mode) => mode !== "zero")
    .map((modeId) => invalid("session/set_mode", "mode that does not exist", ["mode"], (ctx) => ({ sessionId: ctx.sessionId, modeId }))),
  unknownSession.map((sessionId) => invalid("session/set_mode", "unknown session", ["session"], () => ({ sessionId, modeId: "zero" }))),
  fc.oneof(junkNotString, fc.string({ maxLength: 8 }).map((m) => `no-such-model-${m}`)).map((modelId) => invalid("session/set_model", "bad modelId", ["model"], (ctx) => ({ sessionId: ctx.sessionId, modelId }))),
  fc.oneof(unknownSession, junkNotString).map((sessionId) => invalid("session/close", "unknown session", ["session"], () => ({ sessionId }))),
  // initialize, again
  fc.constantFrom<unknown>("1", -1, 70_000, 1.5, null, [], {}).map((protocolVersion) => invalid("initialize", "bad protocolVersion", ["protocolVersion"], () => ({ protocolVersion }))),
);
const knownMethodsWithBadParams = paramCases.map(
  (c): Build =>
    (n, ctx) => {
      const id = `p-${n}`;
      return { label: `${c.method}: ${c.what}`, bytes: line(rpc(id, c.method, c.params(ctx, n))), expect: request(ctx, id, c.method, errorFor(id, c.code, c.mentions)) };
    },
);

/** Notifications (no id) with nonsense params, and responses to requests nobody sent: no answer. */
const notifications = fc
  .tuple(fc.oneof(fc.constantFrom("session/cancel", "$/cancel_request", "session/update", "session/prompt", "initialize"), unknownMethodName), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }))
  .map(([method, params]): Build => () => ({ label: `notification ${method}`, bytes: line({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }), expect: { kind: "silent" } }));
const cancelOwnSession: Build = (_n, ctx) => ({ label: "session/cancel of an idle session", bytes: line({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: ctx.sessionId } }), expect: { kind: "silent" } });
const responses = fc
  .tuple(fc.oneof(fc.integer(), fc.string({ maxLength: 10 })), fc.oneof(fc.record({ result: fc.jsonValue({ maxDepth: 1 }) }), fc.record({ error: fc.record({ code: fc.integer(), message: fc.string() }) })))
  .map(([id, body]): Build => () => ({ label: "a response nobody asked for", bytes: line({ jsonrpc: "2.0", id, ...body }), expect: { kind: "silent" } }));

/** Lines of a few MiB. */
const longLines = fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 5 })).map(
  ([mib, kind]): Build =>
    (n, ctx) => {
      const big = "A".repeat(mib * MiB);
      const id = `big-${n}`;
      switch (kind) {
        case 0:
          return { label: `${mib} MiB of non-JSON`, bytes: encoder.encode(`{${big}`), expect: errorFor(null, -32700, ["parse"], true) };
        case 1:
          return { label: `${mib} MiB params of an unknown method`, bytes: line(rpc(id, "zero_fuzz/big", { big })), expect: request(ctx, id, "zero_fuzz/big", errorFor(id, -32601, ["zero_fuzz/big"], true)) };
        case 2:
          return { label: `${mib} MiB id`, bytes: line(rpc(`${big}-${n}`, "zero_fuzz/big-id", {})), expect: request(ctx, `${big}-${n}`, "zero_fuzz/big-id", errorFor(`${big}-${n}`, -32601, ["zero_fuzz/big-id"], true)) };
        case 3:
          return { label: `${mib} MiB prompt to an unknown session`, bytes: line(rpc(id, "session/prompt", { sessionId: "no-such-session", prompt: [{ type: "text", text: big }] })), expect: request(ctx, id, "session/prompt", errorFor(id, -32602, ["session"])) };
        case 4:
          return { label: `${mib} MiB image that is not an image`, bytes: line(rpc(id, "session/prompt", { sessionId: ctx.sessionId, prompt: [{ type: "image", data: big, mimeType: "image/png" }] })), expect: request(ctx, id, "session/prompt", errorFor(id, -32602, ["prompt"])) };
        default:
          return { label: `${mib} MiB frame with a wrong jsonrpc version`, bytes: line({ jsonrpc: "1.0", id, method: "initialize", params: { big } }), expect: errorFor(id, -32600, ["jsonrpc"], true) };
      }
    },
);

const frames: fc.Arbitrary<Build> = fc.oneof(
  { arbitrary: randomBytes, weight: 4 },
  { arbitrary: randomText, weight: 4 },
  { arbitrary: jsonishText, weight: 3 },
  { arbitrary: jsonScalars, weight: 2 },
  { arbitrary: jsonArrays, weight: 2 },
  { arbitrary: batchOfRequests, weight: 1 },
  { arbitrary: randomObjects, weight: 3 },
  { arbitrary: truncated, weight: 3 },
  { arbitrary: wrongVersion, weight: 3 },
  { arbitrary: nonStringMethod, weight: 1 },
  { arbitrary: oddIds, weight: 2 },
  { arbitrary: oddButUsableIds, weight: 2 },
  { arbitrary: nullId, weight: 1 },
  { arbitrary: unknownMethods, weight: 4 },
  { arbitrary: knownMethodsWithBadParams, weight: 14 },
  { arbitrary: notifications, weight: 3 },
  { arbitrary: fc.constant(cancelOwnSession), weight: 1 },
  { arbitrary: responses, weight: 2 },
  { arbitrary: longLines, weight: 1 },
);

// ---- the agent process and the rules ---------------------------------------------------------

type Pending = { frame: string; expect: Extract<Expectation, { id: Id }>; answered: boolean; /** The frame re-serialized, when it is JSON. */ json?: string };

/** Rule → how often it broke and the first examples. */
class Findings {
  private rules = new Map<string, { count: number; examples: string[] }>();
  note(rule: string, example: string): void {
    const entry = this.rules.get(rule) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(example);
    this.rules.set(rule, entry);
  }
  report(): string[] {
    return [...this.rules].map(([rule, { count, examples }]) => `${rule} (×${count}; seed ${SEED})\n    ${examples.join("\n    ")}`);
  }
}

/** `zero acp` on pipes; every stdout line is checked as it arrives and matched to what was sent. */
class Agent {
  readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  readonly findings = new Findings();
  readonly messages: Message[] = [];
  private byId = new Map<string, Pending>();
  private nullQueue: Pending[] = [];
  private stderrText = "";
  private current = "(before any frame)";
  private tail = "";
  private stdoutDone: Promise<void>;

  constructor(cwd: string, env: Record<string, string>) {
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

/** initialize → session/new → session/prompt (fake provider: end_turn) on a process that took garbage. */
async function wellFormedSession(agent: Agent, workspace: string, tag: string): Promise<string> {
  const init = await agent.call(`${tag}-init`, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  expect(init.result?.protocolVersion).toBe(1);
  const created = await agent.call(`${tag}-new`, "session/new", { cwd: workspace, mcpServers: [] });
  expect(typeof created.result?.sessionId).toBe("string");
  const sessionId = created.result.sessionId as string;
  await promptEndTurn(agent, sessionId, `${tag}-prompt`, `answer for ${tag}`);
  return sessionId;
}

async function promptEndTurn(agent: Agent, sessionId: string, id: string, text: string): Promise<void> {
  fake.script([{ text: [text.slice(0, 4), text.slice(4)] }]);
  const answer = await agent.call(id, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hello after the noise" }] }, 30_000);
  expect(answer.error).toBeUndefined();
  expect(answer.result).toMatchObject({ stopReason: "end_turn" });
  // The turn's text streamed as session/update chunks, before the answer.
  const streamed = agent.messages
    .slice(0, agent.messages.indexOf(answer))
    .filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId && m.params.update?.sessionUpdate === "agent_message_chunk")
    .map((m) => m.params.update.content?.text ?? "")
    .join("");
  expect(streamed).toContain(text);
}

function ctxFor(phase: Phase, sessionId = "no-session-yet"): Ctx {
  return { workspace: sandbox.workspace, root: sandbox.root, sessionId, phase };
}

/** Feeds generated frames one at a time; stops early (and says so) if the process dies. */
async function fuzz(agent: Agent, ctx: Ctx, numRuns: number, seed: number, next: () => number): Promise<void> {
  try {
    await fc.assert(
      fc.asyncProperty(frames, async (build) => {
        await agent.exchange(build(next(), ctx), ctx.phase);
        if (!agent.alive) throw new Error("zero acp exited");
      }),
      { numRuns, seed, endOnFailure: true },
    );
  } catch (error) {
    agent.findings.note("the process exited in the middle of the frames", `${String(error).slice(0, 1500)}\n    stderr: ${agent.stderr.slice(-1500)}`);
  }
}

test("acp fuzz: malformed frames, one at a time, get the right JSON-RPC answers; the server keeps serving", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env);
  let n = 0;
  const next = () => ++n;
  try {
    // 1. Before initialize: anything goes in, nothing but initialize is served.
    await fuzz(agent, ctxFor("pre"), 60, SEED, next);

    // 2. Initialize and open the session the frames aim at, then the bulk of the garbage.
    if (agent.alive) {
      const init = await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
      expect(init.result?.protocolVersion).toBe(1);
      const created = await agent.call("new", "session/new", { cwd: sandbox.workspace, mcpServers: [] });
      const after = ctxFor("post", created.result?.sessionId);
      expect(typeof after.sessionId).toBe("string");
      await fuzz(agent, after, 300, SEED + 1, next);
      // An image far above limits.maxAttachmentBytes (10 MiB by default), once.
      const huge = "A".repeat(14 * MiB);
      const hugeImage = line(rpc("huge-image", "session/prompt", { sessionId: after.sessionId, prompt: [{ type: "image", data: huge, mimeType: "image/png" }] }));
      if (agent.alive) await agent.exchange({ label: "14 MiB image", bytes: hugeImage, expect: errorFor("huge-image", -32602, ["prompt", "larger", "bytes"]) }, "post");
      // None of the garbage ran a turn.
      if (fake.requests.length > 0) agent.findings.note("a malformed frame reached the model", JSON.stringify(fake.requests[0]!.body).slice(0, 400));

      // 3. Still serving: the fuzzed session and a fresh one both run a turn to end_turn.
      if (agent.alive) {
        await promptEndTurn(agent, after.sessionId, "fuzzed-prompt", "the fuzzed session still answers");
        await wellFormedSession(agent, sandbox.workspace, "final");
      }
    }
  } finally {
    const code = await agent.stop();
    if (code !== 0) agent.findings.note("exit status after stdin ended is not 0", `${code}; stderr: ${agent.stderr.slice(-1500)}`);
  }
  for (const frame of agent.unanswered()) agent.findings.note("never answered by the end", frame);
  expect(agent.findings.report()).toEqual([]);
}, 60_000);

test("acp fuzz: a burst of malformed frames in one write is answered in full, then a session works", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env);
  try {
    await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
    const created = await agent.call("new", "session/new", { cwd: sandbox.workspace, mcpServers: [] });
    const ctx = ctxFor("post", created.result?.sessionId);
    // No long lines here: the burst is about interleaving, and stays small.
    const builds = fc.sample(fc.oneof(randomBytes, randomText, jsonArrays, randomObjects, truncated, wrongVersion, oddIds, oddButUsableIds, unknownMethods, knownMethodsWithBadParams, notifications, responses), { numRuns: 300, seed: SEED });
    const burst = builds.map((build, i) => build(100_000 + i, ctx));
    for (const frame of burst) agent.expect(`${frame.label}: ${shortBytes(frame.bytes)}`, frame.expect, frame.bytes);
    const chunks: Uint8Array[] = burst.flatMap((frame) => [frame.bytes, encoder.encode("\n")]);
    agent.proc.stdin.write(Buffer.concat(chunks));
    await agent.proc.stdin.flush();
    // A last request after the burst: once it is answered, what is still owed gets a little longer.
    const last = await agent.call("after-the-burst", "zero_fuzz/sentinel", {}, FRAME_TIMEOUT_MS).catch(() => undefined);
    if (!last) agent.findings.note(agent.alive ? "no answer within the timeout after the burst (hang)" : "the process exited", agent.stderr.slice(-600));
    else if (!(await agent.until(() => agent.unanswered().length === 0, GRACE_MS))) for (const frame of agent.unanswered()) agent.findings.note(agent.alive ? "never answered after the burst" : "the process exited", frame);
    if (agent.alive) await wellFormedSession(agent, sandbox.workspace, "after-burst");
  } finally {
    const code = await agent.stop();
    if (code !== 0) agent.findings.note("exit status after stdin ended is not 0", `${code}; stderr: ${agent.stderr.slice(-1500)}`);
  }
  expect(agent.findings.report()).toEqual([]);
}, 60_000);

test("acp fuzz: a frame above the stream's size limit is refused with an error, and the server keeps serving", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env);
  try {
    await agent.call("init", "initialize", { protocolVersion: 1, clientCapabilities: {} });
    // The SDK's ndJsonStream refuses lines over 32 MiB; three 10 MiB images (the attachment limit) are more.
    const oversized = line(rpc("oversized", "session/prompt", { sessionId: "x", prompt: [{ type: "text", text: "A".repeat(40 * MiB) }] }));
    try {
      await agent.write(oversized);
    } catch {
      // EPIPE: the server is gone; reported below.
    }
    await agent.until(() => agent.messages.some((m) => m.id === "oversized" || (m.id === null && m.error)), 5_000);
    expect({ alive: agent.alive, stderr: agent.stderr.slice(-500) }).toMatchObject({ alive: true });
    const answer = agent.messages.find((m) => m.id === "oversized" || (m.id === null && m.error));
    expect(answer?.error?.code).toBeOneOf([-32600, -32700]);
    expect(String(answer?.error?.message)).toMatch(/too large|limit|bytes|MiB/i);
    await wellFormedSession(agent, sandbox.workspace, "after-oversized");
  } finally {
    await agent.stop();
  }
}, 30_000);

test("acp fuzz: a request still in flight when stdin ends is answered before the process exits", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const agent = new Agent(sandbox.workspace, sandbox.env);
  // The request and the end of input in one go, as `printf '…\n' | zero acp` does.
  agent.proc.stdin.write(line(rpc("last-words", "initialize", { protocolVersion: 1, clientCapabilities: {} })));
  agent.proc.stdin.write("\n");
  expect(await agent.stop()).toBe(0);
  expect(agent.messages.find((m) => m.id === "last-words")?.result?.protocolVersion).toBe(1);
}, 30_000);
