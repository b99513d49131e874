import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "../../config/errors.ts";
import { loadConfig } from "../../config/load.ts";
import { isChildEvent, type RuntimeEvent, type Usage } from "../../protocol/events.ts";
import { newRunId } from "../../protocol/ids.ts";
import { STREAM_JSON_VERSION, type ErrorCode, type OutputEvent } from "../../protocol/stream-json.ts";
import { StoreError } from "../../store/errors.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { createStreamJsonMapper, failedBeforeStart } from "../stream-json/mapper.ts";
import { readInputEvents } from "../stream-json/input.ts";
import { enumFlag, parseCommandArgs, stringFlag } from "./args.ts";
import { EXEC_HELP } from "./help.ts";
import { createHumanPrinter } from "./human-output.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { RUN_OPTION_SPECS, resolveRunOptions } from "./run-options.ts";
import { cliSessionService } from "./session-access.ts";
import { RunCancelledBeforeStart } from "../../session/service.ts";
import { stdinMayHaveData } from "./stdio.ts";

const EXEC_OPTIONS = {
  ...RUN_OPTION_SPECS,
  "input-format": { type: "string" },
  "output-format": { type: "string" },
  file: { type: "string" },
} as const;

type OutputFormat = "text" | "json" | "stream-json";
const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;

/** The requested output format, read before full parsing so even a bad flag is answered in the protocol. */
function outputFormatIn(argv: string[]): OutputFormat {
  for (const [index, arg] of argv.entries()) {
    const value = arg === "--output-format" ? argv[index + 1] : arg.startsWith("--output-format=") ? arg.slice("--output-format=".length) : undefined;
    if (value !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  }
  return "text";
}

/** A failure before any run exists, reported in the chosen output format. */
class ExecFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function jsonResult(runId: string, sessionId: string | null, status: "success" | "error", exitCode: number, text: string, usage: Usage | null, error?: { code: ErrorCode; message: string }) {
  return {
    schemaVersion: STREAM_JSON_VERSION,
    type: "result",
    runId,
    sessionId,
    status,
    exitCode,
    text,
    usage: usage ? { promptTokens: usage.inputTokens, completionTokens: usage.outputTokens, totalTokens: usage.totalTokens } : null,
    ...(error ? { error } : {}),
  };
}

/**
 * The most input `exec` reads, in bytes (stdin or --file, either format; docs/stream-json.md).
 * With stream-json input each line is bounded too (MAX_LINE_BYTES, util/lines.ts).
 */
export const MAX_INPUT_BYTES = 8 * 1024 * 1024;

async function readTask(io: CliIo, inputFormat: string, positionals: string[], file: string | undefined): Promise<string> {
  if (inputFormat === "text") {
    const task = (file !== undefined ? await readAll(inputSource(io, file)) : positionals.join(" ").trim() || (await readAll(inputSource(io, undefined)))).trim();
    if (task === "") throw new ExecFailure("invalid_input", "a prompt is required (as an argument, on standard input, or with --file)", 2);
    return task;
  }
  if (positionals.length > 0) throw new ExecFailure("invalid_input", "with --input-format stream-json the input comes from standard input or --file, not arguments", 2);
  // Read as it arrives: the first bad line (too long, not UTF-8, not an event) ends the reading.
  const parsed = await readInputEvents(inputSource(io, file));
  if (!parsed.ok) throw new ExecFailure("invalid_input", parsed.message, 2);
  if (parsed.content.trim() === "") throw new ExecFailure("invalid_input", "the input events carry no text: the prompt is empty", 2);
  return parsed.content;
}

/**
 * The input's bytes — from --file, else from stdin (nothing when stdin is a terminal) —
 * bounded by MAX_INPUT_BYTES; a read failure or too much input is invalid input.
 */
async function* inputSource(io: CliIo, file: string | undefined): AsyncGenerator<Uint8Array> {
  const what = file !== undefined ? `--file ${file}` : "standard input";
  const source: AsyncIterable<Uint8Array> | undefined =
    file !== undefined ? (createReadStream(resolve(io.cwd, file)) as AsyncIterable<Uint8Array>) : stdinMayHaveData() ? Bun.stdin.stream() : undefined;
  if (source === undefined) return;
  let total = 0;
  try {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > MAX_INPUT_BYTES) throw new ExecFailure("invalid_input", `${what} is larger than the input limit of ${MAX_INPUT_BYTES / 1024 / 1024} MiB (${MAX_INPUT_BYTES} bytes)`, 2);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ExecFailure) throw error;
    throw new ExecFailure("invalid_input", `${what}: ${errorMessage(error)}`, 2);
  }
}

/** The whole (bounded) input as text. */
async function readAll(source: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  return new TextDecoder().decode(Buffer.concat(parts));
}

/**
 * `zero exec`: one run for editor extensions and wrappers. With
 * `--output-format stream-json`, stdout carries only schema-v2 lines and every
 * path — bad input, bad config, provider failure, limits, SIGINT — ends with
 * exactly one `run_end` whose exitCode is the process exit code.
 */
export async function execCommand(io: CliIo): Promise<number> {
  const fallbackRunId = newRunId();
  let output: OutputFormat = "text";
  const writeLine = (event: OutputEvent | Record<string, unknown>) => io.stdout(`${JSON.stringify(event)}\n`);
  const fail = (code: ErrorCode, message: string, exitCode: number): number => {
    if (output === "stream-json") for (const line of failedBeforeStart(fallbackRunId, code, message, exitCode)) writeLine(line);
    else if (output === "json") writeLine(jsonResult(fallbackRunId, null, "error", exitCode, "", null, { code, message }));
    else io.stderr(`zero exec: ${message}\n`);
    return exitCode;
  };

  let sessions: ReturnType<typeof cliSessionService> | undefined;
  output = outputFormatIn(io.argv);
  // A signal before the run exists still gets its protocol answer: error, then run_end.
  io.onInterrupt(() => {
    fail("cancelled", "cancelled before the run started", 130);
    void io.exit(130);
  });
  try {
    const { values, positionals } = parseCommandArgs("exec", io.argv, EXEC_OPTIONS, true);
    output = enumFlag("output-format", values["output-format"], OUTPUT_FORMATS) ?? "text";
    if (values.help) {
      io.stdout(EXEC_HELP);
      return 0;
    }
    const inputFormat = enumFlag("input-format", values["input-format"], ["text", "stream-json"] as const) ?? "text";
    const { workspace, extraDirs, overrides, attach } = resolveRunOptions(values, io.cwd);
    const task = await readTask(io, inputFormat, positionals, stringFlag(values.file));
    const loaded = loadConfig({ workspace, env: io.env });
    reportConfigNotices(io, loaded);
    sessions = cliSessionService(io, loaded, { workspace, extraDirs, overrides, surface: "exec" });
    const session = sessions.service.open({ kind: "new" });

    let listener: (event: RuntimeEvent) => void;
    let last: Extract<RuntimeEvent, { type: "run.completed" }> | undefined;
    let failure: { code: ErrorCode; message: string } | undefined;
    if (output === "stream-json") {
      const mapper = createStreamJsonMapper();
      listener = (event) => {
        // Notices (an MCP server that is unavailable) are diagnostics: stderr, never the protocol.
        if (event.type === "notice" && !isChildEvent(event)) io.stderr(`zero exec: ${event.message}\n`);
        for (const line of mapper.map(event)) writeLine(line);
      };
    } else if (output === "json") {
      listener = (event) => {
        if (event.type === "notice" && !isChildEvent(event)) io.stderr(`zero exec: ${event.message}\n`);
        if (event.type === "run.completed" && !isChildEvent(event)) last = event;
        if (event.type === "run.failed" && !isChildEvent(event)) failure = { code: event.error.kind === "provider" ? "provider_error" : "internal", message: event.error.message };
      };
    } else {
      listener = createHumanPrinter(io.stdout, io.stderr);
    }
    // Events arrive redacted by the session service.
    const run = session.send(task, { listeners: [listener], attach });
    io.onInterrupt(() => run.cancel());
    const outcome = await run.done;
    if (output === "json") {
      const redactor = sessions.service.redactor;
      const status = outcome.exitCode === 0 ? "success" : "error";
      const error = failure ?? (outcome.exitCode === 0 ? undefined : { code: (outcome.status === "cancelled" ? "cancelled" : last?.reason === "deadline" ? "timeout" : "limit_reached") as ErrorCode, message: `the run ended: ${outcome.status}` });
      const safeError = error ? { code: error.code, message: redactor.redact(error.message).text } : undefined;
      writeLine(jsonResult(outcome.runId, outcome.sessionId, status, outcome.exitCode, redactor.redact(outcome.text).text, last?.usage ?? null, safeError));
    }
    if (outcome.persistWarning) io.stderr(`zero: ${outcome.persistWarning}\n`);
    return outcome.exitCode;
  } catch (error) {
    if (error instanceof ExecFailure) return fail(error.code, error.message, error.exitCode);
    if (error instanceof RunCancelledBeforeStart) return fail("cancelled", error.message, 130);
    if (error instanceof ConfigError || error instanceof StoreError) return fail("config_error", error.message, 2);
    if (error instanceof UsageError) return fail(error.message.includes("--") ? "invalid_input" : "config_error", error.message, 2);
    return fail("internal", errorMessage(error), 1);
  } finally {
    await sessions?.close();
  }
}
