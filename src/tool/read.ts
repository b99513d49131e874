import { Buffer } from "node:buffer";
import { readdirSync, readSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { z } from "zod";
import { isSecretLikePath } from "../policy/secret-paths.ts";
import { openChecked, readHead, type OpenedPath } from "../security/files.ts";
import { displayPath, resolveInRoots } from "../security/roots.ts";
import { MAX_ARTIFACT_BYTES, parseArtifactUri } from "../store/artifacts.ts";
import { defineTool, type ToolContext, type ToolOutput } from "./define.ts";
import { escapeTarget, pathTarget, urlTarget } from "./targets.ts";
import { attachMedia, looksBinary, sniffMedia, type MediaKind } from "./media.ts";
import { isHttpUrl, isOtherUrl, readUrl } from "./read-url.ts";

const DEFAULT_LINE_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_LIST_ENTRIES = 500;
/** Stay under the contract's output bound so a read is never cut in the middle. */
const MAX_READ_CHARS = 50_000;
// 64 KiB: large enough that big files stream in few reads, small enough that a read of a
// small file does not allocate (and the GC later reclaim) a megabyte per call.
const CHUNK_BYTES = 64 * 1024;
/** Files up to this size get an exact line count in the continuation note. */
const COUNT_LINES_UP_TO_BYTES = 16 * 1024 * 1024;

/** Reads bytes at a position into a buffer; returns how many (0 at the end). */
type ChunkReader = (buffer: Uint8Array, position: number) => number;

export function fdReader(fd: number): ChunkReader {
  return (buffer, position) => readSync(fd, buffer, 0, buffer.length, position);
}

export function bytesReader(bytes: Uint8Array): ChunkReader {
  return (buffer, position) => {
    const slice = bytes.subarray(position, position + buffer.length);
    buffer.set(slice);
    return slice.length;
  };
}

/** Number of lines in the file (a last line without a newline counts). */
function countLines(readChunk: ChunkReader, size: number): number {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let lines = 0;
  let position = 0;
  let last = 10;
  while (position < size) {
    const read = readChunk(buffer, position);
    if (read === 0) break;
    for (let i = 0; i < read; i++) if (buffer[i] === 10) lines += 1;
    last = buffer[read - 1] ?? 10;
    position += read;
  }
  return last === 10 ? lines : lines + 1;
}

const input = z
  .object({
    path: z.string().min(1).describe("Path (relative to the workspace or absolute inside an allowed root), artifact://<sha256>, or a public http(s) URL"),
    offset: z.number().int().min(1).optional().describe("First line to read (1-based)"),
    limit: z.number().int().min(1).optional().describe(`Number of lines (default ${DEFAULT_LINE_LIMIT})`),
  })
  .strict();

function listDirectory(opened: OpenedPath, path: string, shown: string): { output: string; truncated: boolean } {
  // Through the descriptor (Linux: its /proc link), so a directory swapped after the check is not listed.
  const handle = `/proc/self/fd/${opened.fd}`;
  let entries;
  try {
    entries = readdirSync(handle, { withFileTypes: true });
  } catch {
    entries = readdirSync(path, { withFileTypes: true });
  }
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const lines: string[] = [];
  for (const entry of entries.slice(0, MAX_LIST_ENTRIES)) {
    if (entry.isSymbolicLink()) lines.push(`${entry.name} -> (symlink)`);
    else if (entry.isDirectory()) lines.push(`${entry.name}/`);
    else {
      let size = 0;
      try {
        size = statSync(join(path, entry.name)).size;
      } catch {
        // vanished meanwhile
      }
      lines.push(`${entry.name} (${size} bytes)`);
    }
  }
  const more = entries.length - lines.length;
  const header = `directory ${shown} (${entries.length} entries)`;
  return { output: [header, ...lines, ...(more > 0 ? [`… ${more} more entries not shown`] : [])].join("\n"), truncated: more > 0 };
}

/**
 * `lines` are the raw texts of lines `first`, `first + 1`, … (each kept to KEEP_LINE_CHARS,
 * a little past the clip, so a secret crossing the clip is still whole for the redactor);
 * numbering and clipping come after redaction.
 */
type LineWindow = { lines: string[]; reachedEnd: boolean; totalLines: number; binary: boolean };

const KEEP_LINE_CHARS = MAX_LINE_CHARS + 1024;

/** Lets timers and cancellation in between chunks: a huge file must not freeze the process. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Streams the file, skipping to `first` and collecting up to `count` lines within the
 * character budget. Memory stays bounded whatever the file: a very long line is kept only
 * up to KEEP_LINE_CHARS and the rest of it is skipped without being held.
 */
export async function readLines(readChunk: ChunkReader, first: number, count: number, signal?: AbortSignal): Promise<LineWindow> {
  const decoder = new TextDecoder();
  // Only the bytes each read filled are ever looked at: no need to zero the buffer.
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const lines: string[] = [];
  let chars = 0;
  let lineNumber = 0;
  let current = ""; // the line being read, up to KEEP_LINE_CHARS
  let position = 0;
  let done = false;

  const take = (line: string): boolean => {
    lineNumber += 1;
    if (lineNumber < first) return true;
    if (lines.length >= count) return false;
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    const cost = String(lineNumber).length + 1 + Math.min(text.length, MAX_LINE_CHARS + 16);
    if (lines.length > 0 && chars + cost > MAX_READ_CHARS) return false;
    chars += cost + 1;
    lines.push(text);
    return true;
  };
  const append = (piece: string) => {
    if (current.length < KEEP_LINE_CHARS) current += piece.slice(0, KEEP_LINE_CHARS - current.length);
  };

  while (!done) {
    const read = readChunk(buffer, position);
    if (position === 0 && buffer.subarray(0, Math.min(read, 8192)).includes(0)) {
      return { lines: [], reachedEnd: false, totalLines: 0, binary: true };
    }
    if (read === 0) break;
    position += read;
    const text = decoder.decode(buffer.subarray(0, read), { stream: true });
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      append(text.slice(start, newline));
      if (!take(current)) {
        lineNumber -= 1; // that line was not shown: the file goes on from it
        done = true;
        break;
      }
      current = "";
      start = newline + 1;
    }
    if (!done) append(text.slice(start));
    if (signal?.aborted) throw new Error("read was stopped");
    await yieldToEventLoop();
  }
  const rest = done ? "" : current + decoder.decode();
  if (!done && rest !== "" && !take(rest)) {
    lineNumber -= 1;
    done = true;
  }
  return { lines, reachedEnd: !done, totalLines: lineNumber, binary: false };
}

/** Clips a (redacted) line for display. */
function clipLine(line: string): { text: string; clipped: boolean } {
  if (line.length <= MAX_LINE_CHARS) return { text: line, clipped: false };
  let end = MAX_LINE_CHARS;
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // never split a surrogate pair
  return { text: `${line.slice(0, end)} … [line clipped]`, clipped: true };
}

const SPILL_UP_TO_BYTES = 8 * 1024 * 1024;

type Source = { shown: string; size: number; reader: ChunkReader; head: Uint8Array; whole(): Uint8Array };

/** Media as typed content, bounded by limits.maxAttachmentBytes. */
function mediaResult(source: Source, kind: MediaKind, ctx: ToolContext): ToolOutput {
  return attachMedia(source.shown, kind, source.size, source.whole, ctx.maxAttachmentBytes, basename(source.shown));
}

/** Numbered lines; when the default window cuts a file, its full text also goes to the artifact store. */
async function textResult(source: Source, offset: number | undefined, limit: number | undefined, ctx: ToolContext): Promise<ToolOutput> {
  if (source.size === 0) return { output: `${source.shown} is empty` };
  const first = offset ?? 1;
  const window = await readLines(source.reader, first, limit ?? DEFAULT_LINE_LIMIT, ctx.signal);
  if (window.lines.length === 0) throw new Error(`${source.shown} has ${window.totalLines} lines; offset ${first} is past the end`);
  const last = first + window.lines.length - 1;
  const notes: string[] = [];
  if (!window.reachedEnd) {
    const total = source.size <= COUNT_LINES_UP_TO_BYTES ? `${countLines(source.reader, source.size)} lines` : `a ${source.size}-byte file`;
    let spilled = "";
    if (limit === undefined && source.size <= SPILL_UP_TO_BYTES) {
      // A snapshot the model can page through even if the file changes meanwhile.
      spilled = `; the full text is ${ctx.artifacts.put(source.whole()).uri}`;
    }
    notes.push(`(lines ${first}-${last} of ${total}; use offset=${last + 1} to continue${spilled})`);
  }
  // Redact the raw text before numbering and clipping: multi-line secrets (a key block) are
  // only recognizable without line-number prefixes, and a clip must not cut a token in half
  // before the redactor saw it whole. The redactor keeps the line count.
  const redaction = ctx.redactor.redact(window.lines.join("\n"));
  let clipped = false;
  const numbered = redaction.text.split("\n").map((line, index) => {
    const shown = clipLine(line);
    clipped ||= shown.clipped;
    return `${first + index}\t${shown.text}`;
  });
  return {
    output: [...numbered, ...notes].join("\n"),
    truncated: clipped || !window.reachedEnd,
    ...(redaction.count > 0 ? { redactions: { count: redaction.count, kinds: redaction.kinds } } : {}),
  };
}

async function describeSource(source: Source, offset: number | undefined, limit: number | undefined, ctx: ToolContext): Promise<ToolOutput> {
  const kind = sniffMedia(source.head, source.shown);
  if (kind) return mediaResult(source, kind, ctx);
  if (looksBinary(source.head)) {
    const type = Bun.file(source.shown).type.split(";")[0] ?? "application/octet-stream";
    return { output: `${source.shown} is a binary file (${type}, ${source.size} bytes) of a type models cannot take; its content is not shown` };
  }
  return textResult(source, offset, limit, ctx);
}

const MCP_CONTENT_PREFIX = "mcp://content/";

/** The server id of an `mcp://content/<server>[/…]` reference. */
function mcpContentServer(uri: string): string {
  return uri.slice(MCP_CONTENT_PREFIX.length).split(/[/?#]/, 1)[0] ?? "";
}

async function readArtifact(path: string, offset: number | undefined, limit: number | undefined, ctx: ToolContext): Promise<ToolOutput> {
  const sha = parseArtifactUri(path);
  if (sha === undefined) throw new Error(`${path} is not a valid reference (expected artifact://<64 hex characters>)`);
  // Only references the model was actually given: the store is not a directory to browse.
  if (!ctx.knownArtifacts.has(sha)) throw new Error(`${path} is not a reference from this conversation`);
  const bytes = ctx.artifacts.get(sha);
  const source: Source = { shown: path, size: bytes.length, reader: bytesReader(bytes), head: bytes.subarray(0, 8192), whole: () => bytes };
  return describeSource(source, offset, limit, ctx);
}

export const readTool = defineTool({
  name: "read",
  description:
    "Read a file (numbered lines; use offset/limit for ranges), an image/PDF/audio file, an artifact://<sha256> reference, a public http(s) URL (HTML as Markdown), or list a directory.",
  input,
  // A direct read of a secret-like file (.env, keys, credentials) is its own operation, so
  // policy can ask first. Judged on the name asked for and on where it really leads.
  classify: ({ path }, { roots, mcpContent }) => {
    if (isHttpUrl(path)) return { risk: "network", operation: "network", target: urlTarget(path) };
    if (path.startsWith(MCP_CONTENT_PREFIX)) {
      // Asking a server anything carries its transport's risk; an unknown server fails when run.
      const server = mcpContentServer(path);
      const risk = mcpContent?.risk(server) ?? "network";
      return { risk, operation: risk, target: escapeTarget(`mcp:${server}:content`) };
    }
    if (path.startsWith("artifact://")) return { risk: "read", operation: "read", target: escapeTarget(path) };
    const resolved = roots ? resolveInRoots(roots, path, "read") : undefined;
    const secret = isSecretLikePath(path) || (resolved?.ok === true && isSecretLikePath(resolved.value.relative));
    return { risk: "read", operation: secret ? "read-secret" : "read", target: pathTarget(path, roots) };
  },
  async execute({ path, offset, limit }, ctx) {
    if (isHttpUrl(path)) return readUrl(path, ctx);
    if (path.startsWith(MCP_CONTENT_PREFIX)) {
      if (!ctx.mcpContent || ctx.mcpContent.risk(mcpContentServer(path)) === undefined) {
        throw new Error(`${path.slice(0, 200)}: no MCP server "${mcpContentServer(path).slice(0, 100)}" is available to this agent`);
      }
      return ctx.mcpContent.read(path, ctx);
    }
    if (isOtherUrl(path)) throw new Error(`${path.slice(0, 200)}: only http and https URLs can be read`);
    if (path.startsWith("artifact://")) return readArtifact(path, offset, limit, ctx);
    const checked = resolveInRoots(ctx.roots, path, "read");
    if (!checked.ok) throw new Error(checked.error);
    const target = checked.value.path;
    const shown = displayPath(ctx.roots, target);
    const opened = openChecked(target);
    try {
      const { stat } = opened;
      if (stat.isDirectory()) return listDirectory(opened, target, shown);
      if (!stat.isFile()) throw new Error(`${shown} is not a regular file (a device, FIFO or socket is never read)`);
      const reader = fdReader(opened.fd);
      const head = new Uint8Array(Math.min(stat.size, 8192));
      reader(head, 0);
      const whole = () => readHead(opened, Math.min(stat.size, MAX_ARTIFACT_BYTES)).bytes;
      return await describeSource({ shown, size: stat.size, reader, head, whole }, offset, limit, ctx);
    } finally {
      opened.close();
    }
  },
});
