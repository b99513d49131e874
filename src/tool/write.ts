/**
 * The write tool: create, overwrite, edit, patch, move and delete files and directories inside the
 * writable roots. Every path goes through `resolveInRoots(…, "write")` and only the canonical result
 * is used. A final-component symlink is handled in one of two ways:
 * - write/edit follow it: the canonical path IS the link's target, which was itself checked to be
 *   inside a writable root, so editing through an in-workspace link edits the file it names (and a
 *   link leading outside is refused by the check);
 * - move/delete act on the link itself, like `mv`/`rm` (see `resolveEntry`).
 * File contents are replaced atomically (write-fs.ts), keeping the file's mode.
 */
import { dirname } from "node:path";
import { z } from "zod";
import type { Redactor } from "../security/redact.ts";
import { displayPath, type Roots } from "../security/roots.ts";
import { type ClassifyResult, type ClassifyScope, defineTool, type ToolOutput } from "./define.ts";
import { pathTarget, pathsTarget } from "./targets.ts";
import { countLines, diffName, diffTexts, withInlineDiff } from "./write-diff.ts";
import { applyEdit } from "./write-edit.ts";
import { confirmUnchanged, decodeText, ensureDirectory, inspectTarget, lstatOrUndefined, resolveForWrite, writeFileAtomic } from "./write-fs.ts";
import { deleteEntry, moveEntry } from "./write-move.ts";
import { applyPatch } from "./write-patch.ts";
import { inspectPatch } from "./write-patch-parse.ts";
import { markerInOldTextProblem, markerOverwriteProblem } from "./write-secrets.ts";
import { isSensitiveWrite, type WriteRequest } from "./write-sensitive.ts";

const OPERATIONS = ["write", "edit", "patch", "move", "delete", "mkdir"] as const;
type WriteOperation = (typeof OPERATIONS)[number];
type Field = "path" | "content" | "oldText" | "newText" | "replaceAll" | "patch" | "to" | "overwrite" | "recursive";
const ALL_FIELDS: Field[] = ["path", "content", "oldText", "newText", "replaceAll", "patch", "to", "overwrite", "recursive"];

/** Which fields each operation takes; anything else is an error, so a mixed-up call is not guessed at. */
const FIELDS: Record<WriteOperation, { required: Field[]; optional: Field[] }> = {
  write: { required: ["path", "content"], optional: [] },
  edit: { required: ["path", "oldText", "newText"], optional: ["replaceAll"] },
  patch: { required: ["patch"], optional: [] },
  move: { required: ["path", "to"], optional: ["overwrite"] },
  delete: { required: ["path"], optional: ["recursive"] },
  mkdir: { required: ["path"], optional: [] },
};

// One flat object, not a union: some providers reject a top-level anyOf in tool schemas.
const input = z
  .object({
    operation: z.enum(OPERATIONS).describe("What to do"),
    path: z.string().min(1).optional().describe("File or directory (move: the source)"),
    content: z.string().optional().describe("write: the complete file content"),
    oldText: z.string().optional().describe("edit: exact text to replace"),
    newText: z.string().optional().describe("edit: replacement text"),
    replaceAll: z.boolean().optional().describe("edit: replace every occurrence"),
    patch: z.string().optional().describe("patch: a unified diff"),
    to: z.string().min(1).optional().describe("move: the destination path"),
    overwrite: z.boolean().optional().describe("move: replace an existing destination"),
    recursive: z.boolean().optional().describe("delete: allow deleting a directory with its contents"),
  })
  .strict()
  .superRefine((value, ctx) => {
    const { required, optional } = FIELDS[value.operation];
    for (const field of required) {
      if (value[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `required for operation ${value.operation}` });
    }
    const takes = [...required, ...optional];
    for (const field of ALL_FIELDS) {
      if (value[field] !== undefined && !takes.includes(field)) {
        ctx.addIssue({ code: "custom", path: [field], message: `not used by operation ${value.operation} (it takes: ${takes.join(", ")})` });
      }
    }
  });

type WriteInput = z.infer<typeof input>;

const DESCRIPTION = [
  "Change files inside the writable roots (the workspace and added directories). Operations:",
  "write (path, content): create or overwrite a file; parent directories are created.",
  "edit (path, oldText, newText, replaceAll?): replace exact text; oldText must occur exactly once unless replaceAll.",
  "patch (patch): apply a unified diff (--- a/x +++ b/x, /dev/null to create or delete).",
  "move (path, to, overwrite?), delete (path, recursive? for directories), mkdir (path).",
].join("\n");

/** Fields the schema check already guaranteed; this only narrows the type. */
function field<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
}

const encoder = new TextEncoder();

function writeFile(roots: Roots, path: string, content: string, redactor: Redactor): ToolOutput {
  const target = resolveForWrite(roots, path);
  const shown = displayPath(roots, target);
  const existing = inspectTarget(target, shown);
  const bytes = encoder.encode(content);
  if (existing.kind === "file") {
    // A marker written where the file holds a secret the model was never shown would replace it.
    const current = existing.bytes === undefined ? "unexamined" : (decodeText(existing.bytes) ?? "unexamined");
    const problem = markerOverwriteProblem(current, content, redactor, shown);
    if (problem !== undefined) throw new Error(problem);
  }
  if (existing.kind === "missing") {
    ensureDirectory(dirname(target));
    writeFileAtomic(target, bytes);
    const diff = diffTexts("/dev/null", diffName(roots, target, "b"), "", content);
    // The model wrote the content itself: the summary does not echo it back.
    return { output: `created ${shown} (${countLines(content)} lines)`, ...(diff.diff ? { diff: diff.diff } : {}) };
  }
  if (existing.bytes !== undefined && Buffer.from(existing.bytes).equals(bytes)) {
    return { output: `unchanged ${shown} (the content is identical)` };
  }
  confirmUnchanged(target, existing.stat, shown);
  writeFileAtomic(target, bytes, { mode: existing.stat.mode, owner: { uid: existing.stat.uid, gid: existing.stat.gid } });
  const before = existing.bytes === undefined ? undefined : decodeText(existing.bytes);
  if (before === undefined) return { output: `overwrote ${shown} (${countLines(content)} lines; the previous content was binary or too large to diff)` };
  const diff = diffTexts(diffName(roots, target, "a"), diffName(roots, target, "b"), before, content);
  const summary = `overwrote ${shown} (+${diff.added} -${diff.removed})`;
  return { output: withInlineDiff(summary, diff.diff), ...(diff.diff !== undefined ? { diff: diff.diff } : {}) };
}

function editFile(roots: Roots, request: { path: string; oldText: string; newText: string; replaceAll: boolean }, redactor: Redactor): ToolOutput {
  const target = resolveForWrite(roots, request.path);
  const shown = displayPath(roots, target);
  const existing = inspectTarget(target, shown);
  if (existing.kind === "missing") throw new Error(`${shown} does not exist; use operation write to create it`);
  if (existing.bytes === undefined) throw new Error(`${shown} is too large to edit (${existing.stat.size} bytes); use operation patch or write`);
  const before = decodeText(existing.bytes);
  if (before === undefined) throw new Error(`${shown} is binary or not valid UTF-8; edit works on text files only`);
  const outcome = applyEdit(before, request, shown);
  if (!outcome.ok) throw new Error(markerInOldTextProblem(before, request.oldText, shown) ?? outcome.error);
  const problem = markerOverwriteProblem(before, outcome.text, redactor, shown);
  if (problem !== undefined) throw new Error(problem);
  confirmUnchanged(target, existing.stat, shown);
  writeFileAtomic(target, encoder.encode(outcome.text), { mode: existing.stat.mode, owner: { uid: existing.stat.uid, gid: existing.stat.gid } });
  const diff = diffTexts(diffName(roots, target, "a"), diffName(roots, target, "b"), before, outcome.text);
  const replaced = outcome.replacements > 1 ? `${outcome.replacements} replacements, ` : "";
  const summary = `edited ${shown} (${replaced}+${diff.added} -${diff.removed})`;
  return { output: withInlineDiff(summary, diff.diff), ...(diff.diff !== undefined ? { diff: diff.diff } : {}) };
}

function makeDirectory(roots: Roots, path: string): ToolOutput {
  const target = resolveForWrite(roots, path);
  const shown = displayPath(roots, target);
  const stat = lstatOrUndefined(target);
  if (stat?.isDirectory()) return { output: `directory ${shown} already exists` };
  if (stat !== undefined) throw new Error(`${shown} exists and is not a directory`);
  ensureDirectory(target);
  return { output: `created directory ${shown}` };
}

/**
 * Per operation, so an "always allow" for edits never covers deletes or moves.
 * Anything touching a secret-like file, a file that makes other programs run
 * code or instructs an agent (git hooks, CI, editor tasks, shell start-up files,
 * agent config, install scripts — see write-sensitive.ts), or zero's own
 * configuration is `write-sensitive`: asked even in accept-edits mode (moving
 * .env elsewhere would otherwise be a way around asking to read it).
 */
export function classifyWrite(value: WriteRequest, scope: ClassifyScope = {}): ClassifyResult {
  const target = writeTarget(value, scope.roots);
  if (isSensitiveWrite(value, scope.roots, scope.sensitiveFiles)) return { risk: "write", operation: "write-sensitive", target };
  if (value.operation === "delete") return { risk: "write", operation: "write-delete", target };
  if (value.operation === "move") return { risk: "write", operation: "write-move", target };
  return { risk: "write", operation: "write-edit", target };
}

/**
 * The canonical paths a call changes, one per line: move and delete act on the entry itself
 * (a link, not what it points to), like `resolveEntry`; a patch names every file in its diff.
 */
function writeTarget(value: Pick<WriteInput, "operation" | "path" | "to" | "patch">, roots: Roots | undefined): string {
  const entry = value.operation === "move" || value.operation === "delete";
  const paths: string[] = [];
  if (value.path !== undefined) paths.push(pathTarget(value.path, roots, entry ? "entry" : "path"));
  if (value.to !== undefined) paths.push(pathTarget(value.to, roots, "entry"));
  if (value.operation === "patch" && value.patch !== undefined) {
    const inspected = inspectPatch(value.patch);
    if (inspected.ok) paths.push(...inspected.value.paths.map((p) => pathTarget(p, roots)));
  }
  return pathsTarget(paths);
}

export const writeTool = defineTool({
  name: "write",
  description: DESCRIPTION,
  input,
  classify: classifyWrite,
  async execute(value, ctx) {
    const path = () => field(value.path, "path");
    switch (value.operation) {
      case "write":
        return writeFile(ctx.roots, path(), field(value.content, "content"), ctx.redactor);
      case "edit":
        return editFile(
          ctx.roots,
          {
            path: path(),
            oldText: field(value.oldText, "oldText"),
            newText: field(value.newText, "newText"),
            replaceAll: value.replaceAll === true,
          },
          ctx.redactor,
        );
      case "patch":
        return applyPatch(field(value.patch, "patch"), { roots: ctx.roots, env: ctx.env, signal: ctx.signal, redactor: ctx.redactor });
      case "move":
        return moveEntry(ctx.roots, { from: path(), to: field(value.to, "to"), overwrite: value.overwrite === true }, ctx.redactor);
      case "delete":
        return deleteEntry(ctx.roots, { path: path(), recursive: value.recursive === true });
      case "mkdir":
        return makeDirectory(ctx.roots, path());
    }
  },
});
