import type { Message, ToolCallPart, ToolResultOutput, ToolResultPart } from "../../protocol/messages.ts";
import { ARTIFACT_REFERENCE_IN_TEXT, type ArtifactStore } from "../../store/artifacts.ts";

/**
 * Before the checkpoint model reads the old part of a conversation, large tool payloads become
 * a short note: their opening, their size and an `artifact://` reference to the full text, so
 * the summary can point at it and the model can reopen it with `read` later (CTX-05).
 */

export const DEFAULT_KEEP_CHARS = 2_000;
/** How much of a pruned payload the note quotes: enough to recognize what it was. */
export const PREVIEW_CHARS = 300;
const MAX_LISTED_REFERENCES = 5;

export type PruneOptions = {
  /** Payloads up to this many characters stay as they are. */
  keepChars?: number;
  /** Told each reference the notes hand out: `read` opens only references the model was given. */
  rememberArtifact?(sha256: string): void;
};

type Stored = { uri: string } | undefined;

function store(artifacts: ArtifactStore, content: string | Uint8Array, options: PruneOptions): Stored {
  try {
    const ref = artifacts.put(content);
    options.rememberArtifact?.(ref.sha256);
    return { uri: ref.uri };
  } catch {
    // The canonical history still holds the payload; the note just cannot point at a copy.
    return undefined;
  }
}

function preview(text: string): string {
  let cut = text.slice(0, PREVIEW_CHARS);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1); // no half of a surrogate pair
  return cut;
}

const count = (n: number) => n.toLocaleString("en-US");

/** The note that replaces a long text: what it was, where the whole of it is, how it began. */
function textNote(what: string, text: string, stored: Stored): string {
  const where = stored ? `; the full text is ${stored.uri} (open it with read)` : "; the full text was not kept";
  const earlier = [...new Set(text.match(ARTIFACT_REFERENCE_IN_TEXT) ?? [])].slice(0, MAX_LISTED_REFERENCES);
  const mentions = earlier.length > 0 ? `\n[it referred to ${earlier.join(", ")}]` : "";
  return `[${what} pruned: ${count(text.length)} characters${where}]${mentions}\n${preview(text)}…`;
}

/** A note made by an earlier pruning: pruning again must not wrap it in another note. */
const NOTE = /^\[[^\]\n]{1,80} pruned: [\d,]+ characters;/;

function pruneText(what: string, text: string, artifacts: ArtifactStore, options: PruneOptions, keepChars: number): string {
  if (text.length <= keepChars || NOTE.test(text)) return text;
  return textNote(what, text, store(artifacts, text, options));
}

type ContentItem = Extract<ToolResultOutput, { type: "content" }>["value"][number];

function mediaNote(item: Extract<ContentItem, { type: "file" }>, artifacts: ArtifactStore, options: PruneOptions): string {
  const bytes = Buffer.from(item.data, "base64");
  const stored = store(artifacts, new Uint8Array(bytes), options);
  const name = item.filename ? ` ${item.filename}` : "";
  const where = stored ? `: ${stored.uri} (open it with read)` : ", not kept";
  return `[${item.mediaType} attachment${name}, ${count(bytes.length)} bytes${where}]`;
}

function pruneOutput(output: ToolResultOutput, artifacts: ArtifactStore, options: PruneOptions, keepChars: number): ToolResultOutput {
  switch (output.type) {
    case "text":
    case "error-text": {
      if (output.value.length <= keepChars || NOTE.test(output.value)) return output;
      // An error stays an error: providers mark it, and the summary should know the call failed.
      return { type: output.type, value: pruneText("tool output", output.value, artifacts, options, keepChars) };
    }
    case "execution-denied":
      return output;
    case "content": {
      const text = output.value.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
      const hasMedia = output.value.some((item) => item.type === "file");
      if (!hasMedia && text.length <= keepChars) return output;
      const pieces = output.value.some((item) => item.type === "text") ? [pruneText("tool output", text, artifacts, options, keepChars)] : [];
      for (const item of output.value) if (item.type === "file") pieces.push(mediaNote(item, artifacts, options));
      return { type: "text", value: pieces.join("\n") };
    }
  }
}

/** A call's own large fields (a whole file to write, a patch, a long message) become notes too. */
function pruneCallInput(part: ToolCallPart, artifacts: ArtifactStore, options: PruneOptions, keepChars: number): ToolCallPart {
  const input = part.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) return part;
  let changed = false;
  const pruned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" && value.length > keepChars) {
      pruned[key] = pruneText(`${part.tool} ${key}`, value, artifacts, options, keepChars);
      changed = true;
    } else {
      pruned[key] = value;
    }
  }
  return changed ? { ...part, input: pruned } : part;
}

/**
 * The head of a conversation with large tool outputs (and large tool-call fields) replaced by
 * notes. Returns a new array and never changes the messages it was given; unchanged messages are
 * shared. Short outputs, outputs that are already notes, and denials stay as they are.
 */
export function pruneToolOutputs(head: readonly Message[], artifacts: ArtifactStore, options: PruneOptions = {}): Message[] {
  const keepChars = Math.max(0, options.keepChars ?? DEFAULT_KEEP_CHARS);
  return head.map((message): Message => {
    if (message.role === "tool") {
      let changed = false;
      const parts = message.parts.map((part): ToolResultPart => {
        const output = pruneOutput(part.output, artifacts, options, keepChars);
        if (output === part.output) return part;
        changed = true;
        return { ...part, output };
      });
      return changed ? { role: "tool", parts } : message;
    }
    if (message.role === "assistant") {
      let changed = false;
      const parts = message.parts.map((part) => {
        if (part.type !== "tool-call") return part;
        const pruned = pruneCallInput(part, artifacts, options, keepChars);
        if (pruned !== part) changed = true;
        return pruned;
      });
      return changed ? { role: "assistant", parts } : message;
    }
    return message;
  });
}
