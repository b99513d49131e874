import { z } from "zod";
import { callCategories } from "../policy/rules.ts";
import type { CallCategory, Operation, Risk } from "../protocol/events.ts";
import type { Redaction, Redactor } from "../security/redact.ts";
import { stripTerminalSequences } from "../security/terminal.ts";
import { withVisibleRedaction } from "../security/visible-redaction.ts";
import type { Roots } from "../security/roots.ts";
import type { ArtifactStore } from "../store/artifacts.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { setSafeTimeout } from "../util/timers.ts";
import { compileJsonSchema, type InputValidator, type JsonSchema } from "./json-schema-input.ts";
import { sniffMedia } from "./media.ts";
import type { WebSearchAccess } from "./search.ts";
import type { NetworkAccess } from "./url-fetch.ts";
import type { DelegateInput } from "./delegate.ts";

/** Typed media for the model (an image, a PDF, audio), base64-encoded. */
export type MediaPart = { type: "file"; mediaType: string; data: string; filename?: string };

/** What a tool may use while it runs; everything it touches comes through here. */
export type ToolContext = {
  callId: string;
  roots: Roots;
  signal: AbortSignal;
  /** Milliseconds this call may take (limits.toolTimeoutMs). */
  timeoutMs: number;
  progress(message: string): void;
  /** zero's own environment; tools that start processes derive a reduced one from it. */
  env: Env;
  artifacts: ArtifactStore;
  /** Hashes of the artifact:// references the model has been given; only these may be opened. */
  knownArtifacts: ReadonlySet<string>;
  /** Records a reference zero itself handed out (put by a tool or the contract). */
  rememberArtifact?(sha256: string): void;
  /** limits.maxAttachmentBytes: the most media bytes one result may carry. */
  maxAttachmentBytes: number;
  /** Scrubs secrets from text; the contract applies it to output, diffs, progress and text artifacts. */
  redactor: Redactor;
  /** How URL reads reach the network; absent, a tool cannot reach it. */
  network?: NetworkAccess;
  /** The web search settings, key and endpoint; absent, `search` is unavailable. */
  webSearch?: WebSearchAccess;
  /** Asks the user a yes/no question through the session (headless sessions answer no). */
  ask?(question: AskRequest): Promise<boolean>;
  /** Child runs of this run (the delegate tool); present only where delegation is available. */
  delegation?: Delegation;
  /** Replaces the run's progress ledger (the todo tool); surfaces show it as a plan. */
  updatePlan?(items: PlanItem[]): void;
  /** `mcp://content/…` for the read tool: the MCP servers this agent may use; absent, there are none. */
  mcpContent?: McpContentAccess;
};

/**
 * Resources and prompts of the MCP servers an agent may use, opened through `read`. Asking a
 * server anything carries its transport's risk, as its tools do: execute for stdio, network for HTTP.
 */
export type McpContentAccess = {
  /** The risk of a request to this server; undefined when the agent may not use it. */
  risk(server: string): "execute" | "network" | undefined;
  /** Reads a catalog (`mcp://content/<server>`) or one of the references it handed out. */
  read(uri: string, ctx: ToolContext): Promise<ToolOutput>;
};

/** A question a tool puts to the user. */
export type AskRequest = { title: string; detail?: string };

/** One validated `delegate` call (the tool's input). */
export type DelegateCall = DelegateInput;
/** Capability handed to the delegate tool: carries out one call, answering with a JSON-able reply; throws a model-readable error. */
/** `callId` is the model's delegate tool call: the children it starts name it in their agent.spawned events. */
export type Delegation = (call: DelegateCall, signal: AbortSignal, callId?: string) => Promise<unknown>;
export type PlanItem = { content: string; status: "pending" | "in_progress" | "completed" };

export type ToolOutput = {
  /** The text the model receives. */
  output: string;
  /** Set when the output was cut to a bound. */
  truncated?: boolean;
  /** Typed media that accompanies the text (models without the capability get a note instead). */
  media?: MediaPart[];
  /** A unified diff of what the call changed, for surfaces to show. */
  diff?: string;
  /** What the tool already redacted itself (read redacts raw text before numbering lines). */
  redactions?: RedactionSummary;
};

/**
 * Declared by a tool for the policy: what this particular call would do, and to what.
 * `target` is what the call acts on, in a canonical form rules can match and "always"
 * approvals can be remembered by: for file tools the canonical path relative to the workspace
 * (absolute outside it; several paths one per line — see pathTarget), for `run` the command
 * with its whitespace normalized, for URL reads the URL's origin and path, for `search`
 * `web-search`, for MCP tools `mcp:<server>:<tool>`. `categories` say what makes the call risky
 * (the contract adds those its operation implies: `shell` for execute, `network` for network,
 * `secret` for read-secret/write-sensitive).
 */
export type Classification = { risk: Risk; operation: Operation; target: string; categories: readonly CallCategory[] };

/** What a tool's classify returns: categories beyond those of its operation are optional. */
export type ClassifyResult = Omit<Classification, "categories"> & { categories?: readonly CallCategory[] };

/** What classification may look at: the roots, to judge a path by where it really leads. */
export type ClassifyScope = {
  roots?: Roots;
  /**
   * Files the run's configuration reads as instructions or code (prompt files; later skills,
   * plugins, MCP commands), canonical: changing one is sensitive like changing the config itself.
   */
  sensitiveFiles?: readonly string[];
  /** The agent's MCP servers: a `read` of `mcp://content/…` is classified by their transport. */
  mcpContent?: McpContentAccess;
};

export type RedactionSummary = { count: number; kinds: Record<string, number> };

export type ToolResult = {
  status: "completed" | "failed" | "cancelled";
  output: string;
  truncated: boolean;
  media?: MediaPart[];
  diff?: string;
  /** What the redaction pass removed from this result, when anything. */
  redactions?: RedactionSummary;
};

export type ToolDefinition<Schema extends z.ZodType> = {
  name: string;
  description: string;
  input: Schema;
  classify(input: z.infer<Schema>, scope: ClassifyScope): ClassifyResult;
  execute(input: z.infer<Schema>, ctx: ToolContext): Promise<ToolOutput>;
  /** The tool bounds its own time (delegate: a child's deadline), so the per-call timeout does not apply. */
  selfTimed?: boolean;
  /** Trims the JSON schema the model is shown (every byte is paid on every request); validation still uses `input`. */
  modelSchema?(generated: Record<string, unknown>): Record<string, unknown>;
};

/** A JSON Schema document (draft-07, 2019-09 or 2020-12), as MCP servers and plugins declare their inputs. */
export type { JsonSchema } from "./json-schema-input.ts";

/**
 * A tool whose input is described by a JSON Schema rather than Zod (MCP and plugin tools). The
 * input reaches classify and execute as the validated JSON value; `Input` is the caller's word
 * for its shape.
 */
export type JsonSchemaToolDefinition<Input = Record<string, unknown>> = {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  classify(input: Input, scope: ClassifyScope): ClassifyResult;
  execute(input: Input, ctx: ToolContext): Promise<ToolOutput>;
};

export type Prepared = { ok: true; input: unknown; classification: Classification } | { ok: false; error: string };

export type Tool = {
  name: string;
  description: string;
  /** JSON schema for the model, computed once. */
  inputSchema: Record<string, unknown>;
  /** Validates raw model input and classifies the call; never throws. */
  prepare(raw: unknown, scope?: ClassifyScope): Prepared;
  /** Runs a prepared input; throws become failed results, output is bounded. */
  run(input: unknown, ctx: ToolContext): Promise<ToolResult>;
};

/** The most text one tool result may hand the model; the rest goes to the artifact store. */
export const MAX_OUTPUT_CHARS = 60_000;
/** After cancellation or timeout, how long a tool gets to clean up (kill its processes). */
const SETTLE_GRACE_MS = 5_000;

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
}

/**
 * Keeps head and tail of an oversized output so the model sees both ends; the
 * whole text goes to the artifact store and the result names its reference.
 */
export function boundOutput(text: string, artifacts?: ArtifactStore, max = MAX_OUTPUT_CHARS): { output: string; truncated: boolean } {
  if (text.length <= max) return { output: text, truncated: false };
  const head = text.slice(0, Math.floor(max * 0.7));
  const tail = text.slice(text.length - Math.floor(max * 0.25));
  const dropped = text.length - head.length - tail.length;
  let where = "";
  try {
    if (artifacts) where = `; the full output is ${artifacts.put(text).uri} (read it with offset/limit)`;
  } catch {
    // The store is best effort here: the model still gets head and tail.
  }
  return { output: `${head}\n… [${dropped} characters omitted${where}] …\n${tail}`, truncated: true };
}


const lenientUtf8 = new TextDecoder("utf-8");

/**
 * Everything but recognized media is stored as (redacted) text: bytes that are not
 * valid UTF-8 are decoded leniently rather than stored raw, so one stray byte can
 * never carry a secret past redaction onto the disk.
 */
function asText(content: string | Uint8Array): string | undefined {
  if (typeof content === "string") return content;
  if (sniffMedia(content.subarray(0, 16), "") !== undefined) return undefined;
  return lenientUtf8.decode(content);
}

/** The artifact store as a tool sees it: text is redacted before it is stored, and every reference handed out is remembered. */
function redactingStore(store: ArtifactStore, redactor: Redactor, remember: ((sha256: string) => void) | undefined): ArtifactStore {
  return {
    put(content) {
      const text = asText(content);
      const ref = store.put(text === undefined ? content : redactor.redact(text).text);
      remember?.(ref.sha256);
      return ref;
    },
    get: (sha256) => store.get(sha256),
  };
}

/** Appended to the model's copy of an output that had terminal escape sequences taken out. */
export const ESCAPES_REMOVED_NOTE = "(terminal escape sequences were removed from this output)";

/**
 * The model's copy of a tool's text: terminal escape sequences removed (colour codes are noise
 * to a model, and a title or link target hidden in one is text the user never sees), then
 * redacted as it reads — raw and with every control and invisible character taken out
 * (`redactVisible`), so a token split by colour codes or a zero-width space never reaches the
 * model whole. A note says when sequences went, so the model knows the text is not byte-exact.
 */
function forModel(redactor: Redactor, text: string): Redaction {
  const stripped = stripTerminalSequences(text);
  const redaction = redactor.redact(stripped);
  return stripped === text ? redaction : { ...redaction, text: `${redaction.text}\n${ESCAPES_REMOVED_NOTE}` };
}

/** Sums what a redaction pass removed across the parts of one result. */
function tally(into: RedactionSummary, redaction: { count: number; kinds: Record<string, number> }): void {
  into.count += redaction.count;
  for (const [kind, n] of Object.entries(redaction.kinds)) into.kinds[kind] = (into.kinds[kind] ?? 0) + n;
}

/** A sleep that can be called off, so a settled tool leaves no timer behind. */
function sleep(ms: number): { done: Promise<void>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { done, cancel: () => clearTimeout(timer) };
}

/**
 * The tool contract: validation, classification, timeouts and bounding live
 * here once, so each tool is only its own behavior.
 */
export function defineTool<Schema extends z.ZodType>(definition: ToolDefinition<Schema>): Tool {
  let inputSchema = z.toJSONSchema(definition.input, { target: "draft-7" }) as Record<string, unknown>;
  delete inputSchema.$schema;
  if (definition.modelSchema) inputSchema = definition.modelSchema(inputSchema);
  return assemble({
    name: definition.name,
    description: definition.description,
    inputSchema,
    validate(raw) {
      const parsed = definition.input.safeParse(raw);
      return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: formatIssues(parsed.error) };
    },
    classify: (input, scope) => definition.classify(input as z.infer<Schema>, scope),
    execute: (input, ctx) => definition.execute(input as z.infer<Schema>, ctx),
    selfTimed: definition.selfTimed === true,
  });
}

/**
 * A tool whose input is a JSON Schema (MCP and plugin tools), with the same contract as
 * `defineTool`: the input is validated (Ajv; the model gets an error naming the field), then
 * classified; the run gets its own timeout signal, its output is redacted and bounded (the whole
 * text to the artifact store), and a throw becomes a failed result. The schema must describe an
 * object; `$schema` picks the draft (2020-12 when absent, draft-07 as a fallback for older
 * schemas). Throws here, at definition, when the schema is not one Ajv can compile.
 */
export function defineJsonSchemaTool<Input = Record<string, unknown>>(definition: JsonSchemaToolDefinition<Input>): Tool {
  const { inputSchema, validate } = compileJsonSchema(definition.name, definition.inputSchema);
  return assemble({
    name: definition.name,
    description: definition.description,
    inputSchema,
    validate,
    classify: (input, scope) => definition.classify(input as Input, scope),
    execute: (input, ctx) => definition.execute(input as Input, ctx),
  });
}

/** What the contract needs from a definition; only validation differs between Zod and JSON Schema tools. */
type ToolSpec = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  validate: InputValidator;
  classify(input: unknown, scope: ClassifyScope): ClassifyResult;
  execute(input: unknown, ctx: ToolContext): Promise<ToolOutput>;
  selfTimed?: boolean;
};

/** The classification as policy gets it: exactly these fields, a string target, the operation's categories included. */
function completeClassification(result: ClassifyResult): Classification {
  return {
    risk: result.risk,
    operation: result.operation,
    target: typeof result.target === "string" ? result.target : "",
    categories: callCategories(result.operation, Array.isArray(result.categories) ? result.categories : []),
  };
}

function assemble(definition: ToolSpec): Tool {
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: definition.inputSchema,
    prepare(raw, scope = {}) {
      try {
        const validated = definition.validate(raw);
        if (!validated.ok) return { ok: false, error: `invalid input for ${definition.name}: ${validated.error}` };
        return { ok: true, input: validated.value, classification: completeClassification(definition.classify(validated.value, scope)) };
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
    },
    async run(input, ctx) {
      if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled before it started", truncated: false };
      // The call gets its own signal: the run's cancellation plus this call's timeout.
      const timeout = new AbortController();
      // The reason tells a tool that handles its own stopping (run) "timeout" from "cancelled".
      const timer = definition.selfTimed
        ? undefined
        : setSafeTimeout(() => timeout.abort(new DOMException(`${definition.name} timed out after ${ctx.timeoutMs} ms`, "TimeoutError")), ctx.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout.signal]);
      // Everything text-like that leaves the tool crosses the redactor: progress, artifacts, output, diff.
      // It redacts what a reader will see as well as the raw text (a token split by escapes or
      // invisible characters); the tool's own passes (read, find) get the same redactor.
      const redactor = withVisibleRedaction(ctx.redactor);
      const artifacts = redactingStore(ctx.artifacts, redactor, ctx.rememberArtifact);
      const progress = (message: string) => ctx.progress(redactor.redact(message).text);
      // A synchronous throw is a failed result like a rejected promise.
      const execution = (async () => definition.execute(input, { ...ctx, signal, artifacts, progress, redactor }))();
      execution.catch(() => undefined); // observed below; never an unhandled rejection
      const stopped = new Promise<"stopped">((resolve) => signal.addEventListener("abort", () => resolve("stopped"), { once: true }));
      const completed = (output: ToolOutput, status: ToolResult["status"]): ToolResult => {
        const summary: RedactionSummary = { count: 0, kinds: {} };
        if (output.redactions) tally(summary, output.redactions);
        const text = forModel(redactor, output.output);
        tally(summary, text);
        const bounded = boundOutput(text.text, artifacts);
        let diff = output.diff;
        if (diff !== undefined) {
          const scrubbed = redactor.redact(diff);
          tally(summary, scrubbed);
          diff = scrubbed.text;
        }
        return {
          status,
          output: bounded.output,
          truncated: bounded.truncated || output.truncated === true,
          ...(output.media ? { media: output.media } : {}),
          ...(diff !== undefined ? { diff } : {}),
          ...(summary.count > 0 ? { redactions: summary } : {}),
        };
      };
      try {
        const first = await Promise.race([execution, stopped]);
        if (first !== "stopped") return completed(first, "completed");
        // Stopped: give the tool a moment to clean up (a process group to kill). What it
        // reports then (e.g. the output so far) is kept; only the status says it was stopped.
        const grace = sleep(SETTLE_GRACE_MS);
        const settled = await Promise.race([execution.then((output) => output, () => undefined), grace.done.then(() => undefined)]);
        grace.cancel();
        const status = ctx.signal.aborted ? "cancelled" : "failed";
        if (settled !== undefined) return completed(settled, status);
        if (status === "cancelled") return { status, output: "cancelled", truncated: false };
        return { status, output: `${definition.name} timed out after ${ctx.timeoutMs} ms and was stopped`, truncated: false };
      } catch (error) {
        if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled", truncated: false };
        return { status: "failed", ...boundOutput(forModel(redactor, errorMessage(error)).text, artifacts) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
