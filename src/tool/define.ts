import { z } from "zod";
import type { Operation, Risk } from "../protocol/events.ts";
import type { Redactor } from "../security/redact.ts";
import type { Roots } from "../security/roots.ts";
import type { ArtifactStore } from "../store/artifacts.ts";
import type { Env } from "../util/env.ts";
import { errorMessage } from "../util/errors.ts";
import { setSafeTimeout } from "../util/timers.ts";

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
  /** limits.maxAttachmentBytes: the most media bytes one result may carry. */
  maxAttachmentBytes: number;
  /** Scrubs secrets from text; the contract applies it to output, diffs, progress and text artifacts. */
  redactor: Redactor;
};

export type ToolOutput = {
  /** The text the model receives. */
  output: string;
  /** Set when the output was cut to a bound. */
  truncated?: boolean;
  /** Typed media that accompanies the text (models without the capability get a note instead). */
  media?: MediaPart[];
  /** A unified diff of what the call changed, for surfaces to show. */
  diff?: string;
};

/** Declared by a tool for the policy: what this particular call would do. */
export type Classification = { risk: Risk; operation: Operation };

/** What classification may look at: the roots, to judge a path by where it really leads. */
export type ClassifyScope = { roots?: Roots };

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
  classify(input: z.infer<Schema>, scope: ClassifyScope): Classification;
  execute(input: z.infer<Schema>, ctx: ToolContext): Promise<ToolOutput>;
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

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Text content as a string; undefined for bytes that are not text (media, binaries). */
function asText(content: string | Uint8Array): string | undefined {
  if (typeof content === "string") return content;
  if (content.subarray(0, 8192).includes(0)) return undefined;
  try {
    return strictUtf8.decode(content);
  } catch {
    return undefined;
  }
}

/** The artifact store as a tool sees it: text is redacted before it is stored. */
function redactingStore(store: ArtifactStore, redactor: Redactor): ArtifactStore {
  return {
    put(content) {
      const text = asText(content);
      return store.put(text === undefined ? content : redactor.redact(text).text);
    },
    get: (sha256) => store.get(sha256),
  };
}

/** Sums what a redaction pass removed across the parts of one result. */
function tally(into: RedactionSummary, redaction: { count: number; kinds: Record<string, number> }): void {
  into.count += redaction.count;
  for (const [kind, n] of Object.entries(redaction.kinds)) into.kinds[kind] = (into.kinds[kind] ?? 0) + n;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The tool contract: validation, classification, timeouts and bounding live
 * here once, so each tool is only its own behavior.
 */
export function defineTool<Schema extends z.ZodType>(definition: ToolDefinition<Schema>): Tool {
  const inputSchema = z.toJSONSchema(definition.input, { target: "draft-7" }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    prepare(raw, scope = {}) {
      const parsed = definition.input.safeParse(raw);
      if (!parsed.success) return { ok: false, error: `invalid input for ${definition.name}: ${formatIssues(parsed.error)}` };
      try {
        return { ok: true, input: parsed.data, classification: definition.classify(parsed.data, scope) };
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
    },
    async run(input, ctx) {
      if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled before it started", truncated: false };
      // The call gets its own signal: the run's cancellation plus this call's timeout.
      const timeout = new AbortController();
      // The reason tells a tool that handles its own stopping (run) "timeout" from "cancelled".
      const timer = setSafeTimeout(() => timeout.abort(new DOMException(`${definition.name} timed out after ${ctx.timeoutMs} ms`, "TimeoutError")), ctx.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout.signal]);
      // Everything text-like that leaves the tool crosses the redactor: progress, artifacts, output, diff.
      const { redactor } = ctx;
      const artifacts = redactingStore(ctx.artifacts, redactor);
      const progress = (message: string) => ctx.progress(redactor.redact(message).text);
      const execution = definition.execute(input as z.infer<Schema>, { ...ctx, signal, artifacts, progress });
      execution.catch(() => undefined); // observed below; never an unhandled rejection
      const stopped = new Promise<"stopped">((resolve) => signal.addEventListener("abort", () => resolve("stopped"), { once: true }));
      const completed = (output: ToolOutput, status: ToolResult["status"]): ToolResult => {
        const summary: RedactionSummary = { count: 0, kinds: {} };
        const text = redactor.redact(output.output);
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
        const settled = await Promise.race([execution.then((output) => output, () => undefined), sleep(SETTLE_GRACE_MS).then(() => undefined)]);
        const status = ctx.signal.aborted ? "cancelled" : "failed";
        if (settled !== undefined) return completed(settled, status);
        if (status === "cancelled") return { status, output: "cancelled", truncated: false };
        return { status, output: `${definition.name} timed out after ${ctx.timeoutMs} ms and was stopped`, truncated: false };
      } catch (error) {
        if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled", truncated: false };
        return { status: "failed", ...boundOutput(redactor.redact(errorMessage(error)).text, artifacts) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
