import type * as acp from "@agentclientprotocol/sdk";
import type { MediaPart } from "../../tool/define.ts";
import { sniffMedia } from "../../tool/media.ts";
import { invalidParams as invalid, quoted } from "./errors.ts";

/** What a `session/prompt` brings: the task text and the media beside it. */
export type PromptInput = { text: string; media: MediaPart[] };

/** At most this many media blocks in one prompt. */
export const MAX_PROMPT_MEDIA = 16;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A `session/prompt`'s content blocks → the turn's task text and media. Text is taken as is; a
 * resource link is mentioned by its URI (the model may read it with its tools); an embedded text
 * resource is included whole, fenced and labelled with its URI; images, audio and embedded blobs
 * become typed media once their base64 is checked: its length against `maxBytes` before anything
 * is decoded, its alphabet, and the decoded bytes against the declared type (magic bytes).
 */
export function promptInput(blocks: readonly acp.ContentBlock[], maxBytes: number): PromptInput {
  if (!Array.isArray(blocks) || blocks.length === 0) throw invalid("prompt: at least one content block is required");
  const parts: string[] = [];
  const media: MediaPart[] = [];
  const addMedia = (part: MediaPart) => {
    if (media.length >= MAX_PROMPT_MEDIA) throw invalid(`prompt: at most ${MAX_PROMPT_MEDIA} images, audio clips and blobs per prompt`);
    media.push(part);
  };
  for (const [index, block] of blocks.entries()) {
    const where = `prompt[${index}]`;
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[${block.title ?? block.name}](${block.uri})`);
        break;
      case "image":
      case "audio": {
        const name = nameOf(block.type === "image" ? block.uri : undefined, `${block.type}-${media.length + 1}`);
        addMedia(decodeMedia(where, block.type, block.data, block.mimeType, name, maxBytes));
        parts.push(`[${block.type} ${name}]`);
        break;
      }
      case "resource": {
        const resource = block.resource;
        if ("text" in resource && typeof resource.text === "string") {
          parts.push(`<context uri="${resource.uri}">\n${resource.text}${resource.text.endsWith("\n") ? "" : "\n"}</context>`);
        } else if ("blob" in resource && typeof resource.blob === "string") {
          const name = nameOf(resource.uri, `blob-${media.length + 1}`);
          addMedia(decodeMedia(where, "resource", resource.blob, resource.mimeType ?? undefined, name, maxBytes));
          parts.push(`[attached ${resource.uri}]`);
        } else {
          throw invalid(`${where}: an embedded resource needs text or blob`);
        }
        break;
      }
      default:
        throw invalid(`${where}: unknown content type ${quoted((block as { type?: unknown }).type)} (text, image, audio, resource_link and resource are accepted)`);
    }
  }
  const text = parts.join("\n\n").trim();
  if (text === "") throw invalid("prompt: the prompt has no text");
  return { text, media };
}

/** Checks and decodes one base64 payload: bounded before decoding, typed by its bytes. */
function decodeMedia(where: string, kind: "image" | "audio" | "resource", data: unknown, declared: string | undefined, name: string, maxBytes: number): MediaPart {
  if (typeof data !== "string" || data === "") throw invalid(`${where}: ${kind} data must be a non-empty base64 string`);
  // 4 characters carry 3 bytes: the longest encoding of maxBytes, checked before any decoding.
  const maxChars = Math.ceil(maxBytes / 3) * 4;
  if (data.length > maxChars) throw invalid(`${where}: ${kind} is larger than limits.maxAttachmentBytes (${maxBytes} bytes)`);
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw invalid(`${where}: ${kind} data is not valid base64`);
  const bytes = Buffer.from(data, "base64");
  if (bytes.byteLength > maxBytes) throw invalid(`${where}: ${kind} is ${bytes.byteLength} bytes, above limits.maxAttachmentBytes (${maxBytes})`);
  const sniffed = sniffMedia(bytes.subarray(0, 16), name);
  if (!sniffed) throw invalid(`${where}: ${kind} content is not a PNG, JPEG, GIF or WebP image, WAV or MP3 audio, or a PDF`);
  if (kind === "image" && !sniffed.mediaType.startsWith("image/")) throw invalid(`${where}: the image's bytes are ${sniffed.label}`);
  if (kind === "audio" && !sniffed.mediaType.startsWith("audio/")) throw invalid(`${where}: the audio's bytes are ${sniffed.label}`);
  if (declared && normalized(declared) !== sniffed.mediaType) throw invalid(`${where}: mimeType ${declared} does not match the content (${sniffed.mediaType})`);
  return { type: "file", mediaType: sniffed.mediaType, data, filename: name };
}

/** Names the client might use for the same type. */
function normalized(mimeType: string): string {
  const type = mimeType.toLowerCase().split(";")[0]!.trim();
  return type === "image/jpg" ? "image/jpeg" : type === "audio/mp3" ? "audio/mpeg" : type === "audio/x-wav" || type === "audio/wave" ? "audio/wav" : type;
}

/** A file name for the media from its URI's last segment (control characters dropped), else a fallback. */
function nameOf(uri: string | null | undefined, fallback: string): string {
  const last = (uri ?? "").split(/[/\\]/).pop() ?? "";
  const clean = last.replace(/[\p{Cc}\p{Cf}]/gu, "").slice(0, 120);
  return clean === "" ? fallback : clean;
}

