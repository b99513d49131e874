import { z } from "zod";
import type { Operation, Risk } from "../protocol/events.ts";
import type { Roots } from "../security/roots.ts";
import { errorMessage } from "../util/errors.ts";
import { setSafeTimeout } from "../util/timers.ts";

/** What a tool may use while it runs; everything it touches comes through here. */
export type ToolContext = {
  callId: string;
  roots: Roots;
  signal: AbortSignal;
  /** Milliseconds this call may take (limits.toolTimeoutMs). */
  timeoutMs: number;
  progress(message: string): void;
};

export type ToolOutput = {
  /** The text the model receives. */
  output: string;
  /** Set when the output was cut to a bound. */
  truncated?: boolean;
};

/** Declared by a tool for the policy: what this particular call would do. */
export type Classification = { risk: Risk; operation: Operation };

export type ToolResult =
  | { status: "completed"; output: string; truncated: boolean }
  | { status: "failed"; output: string; truncated: boolean }
  | { status: "cancelled"; output: string; truncated: false };

export type ToolDefinition<Schema extends z.ZodType> = {
  name: string;
  description: string;
  input: Schema;
  classify(input: z.infer<Schema>): Classification;
  execute(input: z.infer<Schema>, ctx: ToolContext): Promise<ToolOutput>;
};

export type Prepared = { ok: true; input: unknown; classification: Classification } | { ok: false; error: string };

export type Tool = {
  name: string;
  description: string;
  /** JSON schema for the model, computed once. */
  inputSchema: Record<string, unknown>;
  /** Validates raw model input and classifies the call; never throws. */
  prepare(raw: unknown): Prepared;
  /** Runs a prepared input; throws become failed results, output is bounded. */
  run(input: unknown, ctx: ToolContext): Promise<ToolResult>;
};

/** The most text one tool result may hand the model. */
export const MAX_OUTPUT_CHARS = 60_000;

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
}

/** Keeps head and tail of an oversized output so the model sees both ends. */
export function boundOutput(text: string, max = MAX_OUTPUT_CHARS): { output: string; truncated: boolean } {
  if (text.length <= max) return { output: text, truncated: false };
  const head = text.slice(0, Math.floor(max * 0.7));
  const tail = text.slice(text.length - Math.floor(max * 0.25));
  const dropped = text.length - head.length - tail.length;
  return { output: `${head}\n… [${dropped} characters omitted] …\n${tail}`, truncated: true };
}

/**
 * The tool contract: validation, classification and bounding live here once,
 * so each tool is only its own behavior.
 */
export function defineTool<Schema extends z.ZodType>(definition: ToolDefinition<Schema>): Tool {
  const inputSchema = z.toJSONSchema(definition.input, { target: "draft-7" }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    prepare(raw) {
      const parsed = definition.input.safeParse(raw);
      if (!parsed.success) return { ok: false, error: `invalid input for ${definition.name}: ${formatIssues(parsed.error)}` };
      try {
        return { ok: true, input: parsed.data, classification: definition.classify(parsed.data) };
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
    },
    async run(input, ctx) {
      if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled before it started", truncated: false };
      // The call gets its own signal: the run's cancellation plus this call's timeout.
      const timeout = new AbortController();
      const timer = setSafeTimeout(() => timeout.abort(), ctx.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout.signal]);
      const stopped = new Promise<never>((_, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      stopped.catch(() => undefined); // only observed through the race
      try {
        const result = await Promise.race([definition.execute(input as z.infer<Schema>, { ...ctx, signal }), stopped]);
        const bounded = boundOutput(result.output);
        return { status: "completed", output: bounded.output, truncated: bounded.truncated || result.truncated === true };
      } catch (error) {
        if (ctx.signal.aborted) return { status: "cancelled", output: "cancelled", truncated: false };
        if (timeout.signal.aborted) {
          return { status: "failed", output: `${definition.name} timed out after ${ctx.timeoutMs} ms and was stopped`, truncated: false };
        }
        return { status: "failed", ...boundOutput(errorMessage(error)) };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
