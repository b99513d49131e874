/**
 * A write call's diff inside the timeline: the first lines of the unified diff the tool returned,
 * drawn by OpenTUI's DiffRenderable (line numbers, +/- signs, added and removed rows coloured,
 * code highlighted when a bundled parser knows the file type), then "… N more lines".
 *
 * The diff is file content, so hostile: every line is sanitized, and the diff is re-assembled
 * from what parsed (hunk headers recounted after a cut) so the renderer never sees text it would
 * reject or misread.
 */
import { For, Show } from "solid-js";
import { sanitizeForTerminal } from "../../security/terminal.ts";
import { codeHighlighter, filetypeOf } from "./highlight.ts";
import { ATTRS, COLORS, syntaxStyle } from "./theme.ts";

export type DiffHunk = { oldStart: number; newStart: number; lines: string[] };
export type DiffFile = { oldName: string; newName: string; hunks: DiffHunk[] };

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The files and hunks of a unified diff; lines that fit no hunk (git headers, notes) are skipped.
 * Not the `diff` package's `parsePatch`: it throws on a hunk shorter than its header says, which is
 * what a tool output cut at its size bound looks like, and the start of such a diff is still
 * worth showing.
 */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const lines = text.split("\n");
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      file = { oldName: line.slice(4).split("\t")[0]!, newName: lines[i + 1]!.slice(4).split("\t")[0]!, hunks: [] };
      files.push(file);
      i++;
      continue;
    }
    const header = HUNK.exec(line);
    if (!header) continue;
    if (!file) files.push((file = { oldName: "", newName: "", hunks: [] }));
    let oldLeft = header[2] === undefined ? 1 : Number(header[2]);
    let newLeft = header[4] === undefined ? 1 : Number(header[4]);
    const hunk: DiffHunk = { oldStart: Number(header[1]), newStart: Number(header[3]), lines: [] };
    while (i + 1 < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i + 1]!.startsWith("\\"))) {
      const next = lines[i + 1]!;
      const mark = next === "" ? " " : next[0];
      if (mark === " " && oldLeft > 0 && newLeft > 0) (oldLeft--, newLeft--);
      else if (mark === "-" && oldLeft > 0) oldLeft--;
      else if (mark === "+" && newLeft > 0) newLeft--;
      else if (mark !== "\\") break;
      hunk.lines.push(next === "" ? " " : next);
      i++;
    }
    if (hunk.lines.length > 0) file.hunks.push(hunk);
  }
  return files;
}

/** The name a file is shown under: the new path (the old one for a deletion), without a/ b/. */
export function diffFileName(file: DiffFile): string {
  const name = file.newName === "/dev/null" || file.newName === "" ? file.oldName : file.newName;
  return name.replace(/^[ab]\//, "");
}

export type BoundedDiff = {
  /** Per file: its shown name and a valid unified diff of its first lines. */
  files: { name: string; diff: string }[];
  /** Diff lines (added, removed, context) left out. */
  hidden: number;
};

/** The first `maxLines` lines of a diff, per file re-assembled as a valid, sanitized unified diff. */
export function boundDiff(text: string, maxLines: number): BoundedDiff {
  let budget = maxLines;
  let hidden = 0;
  const files: BoundedDiff["files"] = [];
  for (const file of parseUnifiedDiff(text)) {
    const parts: string[] = [];
    for (const hunk of file.hunks) {
      const body = hunk.lines.filter((line) => !line.startsWith("\\"));
      if (budget <= 0) {
        hidden += body.length;
        continue;
      }
      const kept: string[] = [];
      let taken = 0;
      for (const line of hunk.lines) {
        const isBody = !line.startsWith("\\");
        if (isBody && taken >= budget) break;
        if (isBody) taken++;
        kept.push(sanitizeForTerminal(line));
      }
      budget -= taken;
      hidden += body.length - taken;
      const oldCount = kept.filter((line) => line[0] === " " || line[0] === "-").length;
      const newCount = kept.filter((line) => line[0] === " " || line[0] === "+").length;
      parts.push(`@@ -${hunk.oldStart},${oldCount} +${hunk.newStart},${newCount} @@`, ...kept);
    }
    if (parts.length === 0) continue;
    const oldName = sanitizeForTerminal(file.oldName || "a");
    const newName = sanitizeForTerminal(file.newName || "b");
    files.push({ name: sanitizeForTerminal(diffFileName(file)), diff: [`--- ${oldName}`, `+++ ${newName}`, ...parts, ""].join("\n") });
  }
  return { files, hidden };
}

/** The bounded diff, one DiffRenderable per file (named when there are several). */
export function DiffView(props: { diff: string; maxLines: number }) {
  const bounded = () => boundDiff(props.diff, props.maxLines);
  codeHighlighter(); // configured before the diff's code takes the shared client
  return (
    <box flexDirection="column" flexShrink={0} paddingLeft={4}>
      <For each={bounded().files}>
        {(file) => (
          <>
            <Show when={bounded().files.length > 1}>
              <text fg={COLORS.dim} attributes={ATTRS.dim}>
                {file.name}
              </text>
            </Show>
            <diff
              syntaxStyle={syntaxStyle()}
              view="unified"
              filetype={filetypeOf(file.name)}
              wrapMode="none"
              fg={COLORS.text}
              lineNumberFg={COLORS.dim}
              addedBg={COLORS.addedBg}
              removedBg={COLORS.removedBg}
              addedSignColor={COLORS.added}
              removedSignColor={COLORS.removed}
              flexShrink={0}
              diff={file.diff}
            />
          </>
        )}
      </For>
      <Show when={bounded().hidden > 0}>
        <text fg={COLORS.dim} attributes={ATTRS.dim}>{`… +${bounded().hidden} more line${bounded().hidden === 1 ? "" : "s"}`}</text>
      </Show>
    </box>
  );
}
