/**
 * Recognizes the media a model can take as typed content, by magic bytes
 * first (a file's name can lie) and by extension only to tell MP3 frames.
 */
import type { MediaPart } from "./define.ts";

export type MediaKind = { mediaType: string; label: string };

function startsWith(bytes: Uint8Array, signature: number[], offset = 0): boolean {
  return signature.every((byte, index) => bytes[offset + index] === byte);
}

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The media type of supported images, PDFs and audio; undefined for anything else. */
export function sniffMedia(head: Uint8Array, name: string): MediaKind | undefined {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mediaType: "image/png", label: "PNG image" };
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { mediaType: "image/jpeg", label: "JPEG image" };
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return { mediaType: "image/gif", label: "GIF image" };
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return { mediaType: "image/webp", label: "WebP image" };
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WAVE"), 8)) return { mediaType: "audio/wav", label: "WAV audio" };
  if (startsWith(head, ascii("%PDF-"))) return { mediaType: "application/pdf", label: "PDF document" };
  if (startsWith(head, ascii("ID3"))) return { mediaType: "audio/mpeg", label: "MP3 audio" };
  // A bare MPEG audio frame header: only trusted with the .mp3 extension (the sync bits are common).
  if (name.toLowerCase().endsWith(".mp3") && head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0) {
    return { mediaType: "audio/mpeg", label: "MP3 audio" };
  }
  return undefined;
}

/** The capability a model must declare to receive a media type. */
export function capabilityOf(mediaType: string): "image" | "audio" | "file" {
  return mediaType.startsWith("image/") ? "image" : mediaType.startsWith("audio/") ? "audio" : "file";
}

/** Binary, for our purposes: a NUL byte in the first 8 KiB. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, 8192).includes(0);
}

/** Media as a typed part for the model, refused above limits.maxAttachmentBytes (`shown` names it in messages). */
export function attachMedia(shown: string, kind: MediaKind, size: number, bytes: () => Uint8Array, maxBytes: number, filename: string): { output: string; media: MediaPart[] } {
  if (size > maxBytes) {
    throw new Error(`${shown} is a ${kind.label} of ${size} bytes, above limits.maxAttachmentBytes (${maxBytes}); it was not attached`);
  }
  return {
    output: `${shown}: ${kind.label} (${kind.mediaType}, ${size} bytes), attached`,
    media: [{ type: "file", mediaType: kind.mediaType, data: Buffer.from(bytes()).toString("base64"), filename }],
  };
}
