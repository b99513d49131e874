/**
 * MCP content (tool results, resource contents, rendered prompts) as a tool output: text stays
 * text, images/audio/PDFs become typed media when their bytes say what they are, everything is
 * bounded before it is decoded or joined. The tool contract then redacts, bounds and spills the
 * text like any other tool's.
 */
import type { MediaPart, ToolOutput } from "../tool/define.ts";
import { sniffMedia } from "../tool/media.ts";

/** At most this many content blocks of one answer are looked at. */
export const MAX_CONTENT_BLOCKS = 64;
/** At most this many media parts are attached from one answer. */
export const MAX_MEDIA_PARTS = 8;
/** Text beyond this is not even joined (the contract keeps 60 000 characters and spills the rest). */
export const MAX_TEXT_CHARS = 4 * 1024 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Block = { type?: unknown; [key: string]: unknown };

export type ContentLimits = { maxAttachmentBytes: number };

/** Collects the parts of one answer within the limits. */
export class ContentCollector {
  private readonly lines: string[] = [];
  private chars = 0;
  private readonly media: MediaPart[] = [];
  private truncated = false;

  constructor(private readonly limits: ContentLimits) {}

  text(text: string): void {
    if (this.chars >= MAX_TEXT_CHARS) {
      this.truncated = true;
      return;
    }
    const room = MAX_TEXT_CHARS - this.chars;
    const kept = text.length > room ? text.slice(0, room) : text;
    if (kept.length < text.length) this.truncated = true;
    this.lines.push(kept);
    this.chars += kept.length;
  }

  /** Base64 data that claims `mimeType`: attached when valid, within limits and really media; described otherwise. */
  binary(data: unknown, mimeType: unknown, label: string): void {
    const type = typeof mimeType === "string" ? mimeType.slice(0, 100) : "unknown type";
    if (typeof data !== "string") return this.text(`[${label}: no data]`);
    // The size is known from the length: nothing over the limit is decoded.
    const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
    if (bytes > this.limits.maxAttachmentBytes) return this.text(`[${label}: ${type}, about ${bytes} bytes, above limits.maxAttachmentBytes (${this.limits.maxAttachmentBytes}); not attached]`);
    if (data.length % 4 !== 0 || !BASE64.test(data)) return this.text(`[${label}: ${type}, invalid base64; not attached]`);
    if (this.media.length >= MAX_MEDIA_PARTS) return this.text(`[${label}: ${type}; not attached (at most ${MAX_MEDIA_PARTS} per result)]`);
    const decoded = Buffer.from(data, "base64");
    const kind = sniffMedia(decoded.subarray(0, 16), "");
    if (!kind) return this.text(`[${label}: ${type}, ${decoded.length} bytes of binary data; not shown]`);
    this.media.push({ type: "file", mediaType: kind.mediaType, data });
    this.text(`[${label}: ${kind.label} (${kind.mediaType}, ${decoded.length} bytes), attached]`);
  }

  /** One content block of a tool result or prompt message. */
  block(block: Block): void {
    switch (block.type) {
      case "text":
        return this.text(typeof block.text === "string" ? block.text : "");
      case "image":
        return this.binary(block.data, block.mimeType, "image");
      case "audio":
        return this.binary(block.data, block.mimeType, "audio");
      case "resource_link":
        return this.text(`[resource link: ${String(block.uri).slice(0, 500)}${typeof block.name === "string" ? ` (${block.name.slice(0, 200)})` : ""}]`);
      case "resource":
        return this.resource((block.resource ?? {}) as Block);
      default:
        return this.text(`[content of type ${JSON.stringify(String(block.type).slice(0, 50))} is not supported]`);
    }
  }

  /** One resource content (text or blob). */
  resource(contents: Block): void {
    const uri = typeof contents.uri === "string" ? contents.uri.slice(0, 500) : "";
    if (typeof contents.text === "string") {
      if (uri !== "") this.text(`[resource ${uri}]`);
      return this.text(contents.text);
    }
    return this.binary(contents.blob, contents.mimeType, `resource ${uri}`);
  }

  blocks(blocks: unknown): void {
    const list = Array.isArray(blocks) ? blocks : [];
    for (const block of list.slice(0, MAX_CONTENT_BLOCKS)) this.block(block && typeof block === "object" ? (block as Block) : {});
    if (list.length > MAX_CONTENT_BLOCKS) this.text(`[${list.length - MAX_CONTENT_BLOCKS} more content blocks were not read]`);
  }

  output(): ToolOutput {
    return {
      output: this.lines.join("\n"),
      ...(this.truncated ? { truncated: true } : {}),
      ...(this.media.length > 0 ? { media: this.media } : {}),
    };
  }
}

/** A `tools/call` result as a tool output; a result the server marks as an error throws (a failed call). */
export function toolCallOutput(result: { content?: unknown; structuredContent?: unknown; isError?: unknown }, limits: ContentLimits): ToolOutput {
  const collector = new ContentCollector(limits);
  collector.blocks(result.content);
  const hasContent = Array.isArray(result.content) && result.content.length > 0;
  // Structured output is shown only when the server gave no content blocks (they usually repeat it).
  if (!hasContent && result.structuredContent !== undefined) collector.text(JSON.stringify(result.structuredContent, null, 2));
  const output = collector.output();
  if (result.isError === true) throw new Error(output.output === "" ? "the tool reported an error" : output.output);
  return output.output === "" && !output.media ? { ...output, output: "(no output)" } : output;
}
