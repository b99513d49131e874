import { join } from "node:path";
import fc from "fast-check";
import { encoder, errorFor, expectationOf, KNOWN_METHODS, line, request, rpc, type Ctx, type Expectation, type Frame } from "./acp-fuzz-harness.ts";

/*
 * The frame generators of test/e2e/acp-fuzz.test.ts: malformed (and a few odd but valid) JSON-RPC
 * frames for `zero acp`, each one line, each with what it must get back.
 */

export const MiB = 1024 * 1024;

// ---- frame generators ------------------------------------------------------------------------

/** A frame builder: the number makes its id unique; the context says what the server knows. */
export type Build = (n: number, ctx: Ctx) => Frame;

/** Modelled frames: bytes in, expectation from the reference model. */
const modelled = (label: string, bytes: (n: number, ctx: Ctx) => Uint8Array): Build => (n, ctx) => {
  const b = bytes(n, ctx);
  return { label, bytes: b, expect: expectationOf(b, ctx) };
};

const noNewline = (bytes: Uint8Array) => bytes.filter((b) => b !== 0x0a);
const notANewline = (text: string) => text.replace(/\n/g, " ");

export const randomBytes = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => modelled("random bytes", () => noNewline(bytes)));
export const randomText = fc.string({ unit: "binary", minLength: 1, maxLength: 200 }).map((text) => modelled("random text", () => encoder.encode(notANewline(text))));
const jsonishText = fc
  .string({ unit: fc.constantFrom(..."{}[]\":,0123456789.-+eEtrunlfas \\/\t\r"), minLength: 1, maxLength: 80 })
  .map((text) => modelled("JSON-like noise", () => encoder.encode(text)));
const jsonScalars = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.boolean(), fc.constant(null))
  .map((value) => modelled("a JSON scalar", () => line(value)));
export const jsonArrays = fc
  .oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }), fc.constant([]))
  .map((items) => modelled("a JSON array", () => line(items)));
/** A batch of real requests: refused as a whole, none of its entries run (their ids are never answered). */
const batchOfRequests = fc.integer({ min: 1, max: 3 }).map((count) =>
  modelled("a batch of requests", (n) => line(Array.from({ length: count }, (_, i) => rpc(`batch-${n}-${i}`, "initialize", { protocolVersion: 1 })))),
);
export const randomObjects = fc
  .dictionary(fc.constantFrom("jsonrpc", "id", "method", "params", "result", "error", "x"), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
  .map((object) => modelled("a random object", () => line(object)));

/** A well-formed request's text cut short. */
export const truncated = fc.tuple(fc.constantFrom("initialize", "session/new", "session/prompt", "zero/nothing"), fc.double({ min: 0, max: 1, noNaN: true })).map(([method, at]) =>
  modelled("truncated JSON", (n, ctx) => {
    const full = JSON.stringify(rpc(n, method, { sessionId: ctx.sessionId, cwd: ctx.workspace, mcpServers: [], protocolVersion: 1, prompt: [{ type: "text", text: "hi" }] }));
    return encoder.encode(full.slice(0, Math.max(1, Math.floor(at * (full.length - 1)))));
  }),
);

const anyMethod = fc.oneof(fc.constantFrom("initialize", "session/new", "session/prompt", "session/list"), fc.string({ maxLength: 20 }));
/** Envelopes that are not JSON-RPC 2.0 but carry a usable id. */
export const wrongVersion = fc
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
export const oddIds = fc
  .tuple(fc.oneof(fc.object({ maxDepth: 1 }), fc.array(fc.integer(), { maxLength: 3 }), fc.boolean()), anyMethod)
  .map(([id, method]) => modelled("an id that is an object, array or boolean", () => line(rpc(id, method, {}))));
/** Ids that are odd but usable: answered with that very id. */
export const oddButUsableIds = fc
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
export const unknownMethods = fc.tuple(unknownMethodName, fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })).map(
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
export const knownMethodsWithBadParams = paramCases.map(
  (c): Build =>
    (n, ctx) => {
      const id = `p-${n}`;
      return { label: `${c.method}: ${c.what}`, bytes: line(rpc(id, c.method, c.params(ctx, n))), expect: request(ctx, id, c.method, errorFor(id, c.code, c.mentions)) };
    },
);

/** Notifications (no id) with nonsense params, and responses to requests nobody sent: no answer. */
export const notifications = fc
  .tuple(fc.oneof(fc.constantFrom("session/cancel", "$/cancel_request", "session/update", "session/prompt", "initialize"), unknownMethodName), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }))
  .map(([method, params]): Build => () => ({ label: `notification ${method}`, bytes: line({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }), expect: { kind: "silent" } }));
const cancelOwnSession: Build = (_n, ctx) => ({ label: "session/cancel of an idle session", bytes: line({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: ctx.sessionId } }), expect: { kind: "silent" } });
export const responses = fc
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

export const frames: fc.Arbitrary<Build> = fc.oneof(
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
