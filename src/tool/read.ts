import { lstat, open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { displayPath, resolveInRoots } from "../security/roots.ts";
import { defineTool } from "./define.ts";

const DEFAULT_LINE_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_TEXT_BYTES = 8 * 1024 * 1024;
const MAX_LIST_ENTRIES = 500;
/** Stay under the contract's output bound so a read is never cut in the middle. */
const MAX_READ_CHARS = 50_000;

const input = z
  .object({
    path: z.string().min(1).describe("File or directory path, relative to the workspace or absolute inside an allowed root"),
    offset: z.number().int().min(1).optional().describe("First line to read (1-based)"),
    limit: z.number().int().min(1).optional().describe(`Number of lines (default ${DEFAULT_LINE_LIMIT})`),
  })
  .strict();

async function listDirectory(path: string, shown: string): Promise<{ output: string; truncated: boolean }> {
  const entries = await readdir(path, { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  const lines: string[] = [];
  for (const entry of entries.slice(0, MAX_LIST_ENTRIES)) {
    if (entry.isSymbolicLink()) lines.push(`${entry.name} -> (symlink)`);
    else if (entry.isDirectory()) lines.push(`${entry.name}/`);
    else {
      const size = await stat(join(path, entry.name)).then((s) => s.size, () => 0);
      lines.push(`${entry.name} (${size} bytes)`);
    }
  }
  const more = entries.length - lines.length;
  const header = `directory ${shown} (${entries.length} entries)`;
  return { output: [header, ...lines, ...(more > 0 ? [`… ${more} more entries not shown`] : [])].join("\n"), truncated: more > 0 };
}

/** Reads up to MAX_TEXT_BYTES; larger files are read from their start only. */
async function readHead(path: string, size: number): Promise<{ bytes: Uint8Array; partial: boolean }> {
  const handle = await open(path, "r");
  try {
    const length = Math.min(size, MAX_TEXT_BYTES);
    const bytes = new Uint8Array(length);
    let offset = 0;
    while (offset < length) {
      const { bytesRead } = await handle.read(bytes, offset, length - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return { bytes: bytes.subarray(0, offset), partial: size > length };
  } finally {
    await handle.close();
  }
}

function looksBinary(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 8192);
  return sample.includes(0);
}

export const readTool = defineTool({
  name: "read",
  description:
    "Read a file (numbered lines; use offset/limit for ranges) or list a directory. Paths are relative to the workspace.",
  input,
  classify: () => ({ risk: "read", operation: "read" }),
  async execute({ path, offset, limit }, ctx) {
    const checked = resolveInRoots(ctx.roots, path, "read");
    if (!checked.ok) throw new Error(checked.error);
    const target = checked.value.path;
    const shown = displayPath(ctx.roots, target);
    const info = await lstat(target).catch(() => undefined);
    if (!info) throw new Error(`${shown} does not exist`);
    const real = info.isSymbolicLink() ? await stat(target) : info;
    if (real.isDirectory()) return listDirectory(target, shown);
    if (!real.isFile()) throw new Error(`${shown} is not a regular file`);

    const { bytes, partial } = await readHead(target, real.size);
    if (looksBinary(bytes)) return { output: `${shown} is a binary file (${real.size} bytes); its content is not shown as text` };
    const lines = new TextDecoder().decode(bytes).split("\n");
    if (lines.at(-1) === "") lines.pop();
    const first = offset ?? 1;
    const count = limit ?? DEFAULT_LINE_LIMIT;
    if (first > lines.length && lines.length > 0) throw new Error(`${shown} has ${lines.length} lines; offset ${first} is past the end`);
    const slice = lines.slice(first - 1, first - 1 + count);
    let clipped = false;
    let chars = 0;
    const numbered: string[] = [];
    for (const [index, line] of slice.entries()) {
      const text = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (text.length > MAX_LINE_CHARS) clipped = true;
      const shownText = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)} … [line clipped]` : text;
      const numberedLine = `${first + index}\t${shownText}`;
      if (numbered.length > 0 && chars + numberedLine.length > MAX_READ_CHARS) break;
      chars += numberedLine.length + 1;
      numbered.push(numberedLine);
    }
    const last = first + numbered.length - 1;
    const notes: string[] = [];
    if (last < lines.length) notes.push(`(lines ${first}-${last} of ${lines.length}; use offset=${last + 1} to continue)`);
    if (partial) notes.push(`(only the first ${MAX_TEXT_BYTES} bytes of ${real.size} were read)`);
    if (lines.length === 0) return { output: `${shown} is empty` };
    return { output: [...numbered, ...notes].join("\n"), truncated: clipped || partial || last < lines.length };
  },
});
