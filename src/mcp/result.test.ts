import { describe, expect, test } from "bun:test";
import { ContentCollector, MAX_CONTENT_BLOCKS, MAX_MEDIA_PARTS, MAX_TEXT_CHARS, toolCallOutput } from "./result.ts";

const limits = { maxAttachmentBytes: 1024 };
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** A PNG-signed blob of exactly `size` bytes, base64. */
const png = (size: number) => Buffer.from([...PNG_SIGNATURE, ...new Array(size - PNG_SIGNATURE.length).fill(7)]).toString("base64");
const text = (value: string) => ({ type: "text", text: value });
const image = (data: string, mimeType = "image/png") => ({ type: "image", data, mimeType });

describe("toolCallOutput", () => {
  test("text blocks are joined by newlines", () => {
    expect(toolCallOutput({ content: [text("one"), text("two")] }, limits)).toEqual({ output: "one\ntwo" });
  });

  test("an image becomes a typed media part, typed by its bytes rather than the claimed type", () => {
    const data = png(100);
    const out = toolCallOutput({ content: [text("here:"), image(data, "image/jpeg")] }, limits);
    expect(out.media).toEqual([{ type: "file", mediaType: "image/png", data }]);
    expect(out.output).toBe("here:\n[image: PNG image (image/png, 100 bytes), attached]");
  });

  test("an image above limits.maxAttachmentBytes is described, not attached", () => {
    const out = toolCallOutput({ content: [image(png(4096))] }, limits);
    expect(out.media).toBeUndefined();
    expect(out.output).toContain("above limits.maxAttachmentBytes (1024); not attached");
  });

  test("an image of exactly limits.maxAttachmentBytes is attached (base64 padding is not counted as bytes)", () => {
    // 1024 bytes is 1368 base64 characters ending in "=": not more than the limit.
    const data = png(1024);
    expect(data.endsWith("=")).toBe(true);
    const out = toolCallOutput({ content: [image(data)] }, limits);
    expect(out.output).toBe("[image: PNG image (image/png, 1024 bytes), attached]");
    expect(out.media).toHaveLength(1);
  });

  test("invalid base64 and bytes that are no known media are described, never attached", () => {
    const notBase64 = toolCallOutput({ content: [image("not base64!!")] }, limits);
    expect(notBase64.output).toBe("[image: image/png, invalid base64; not attached]");
    expect(notBase64.media).toBeUndefined();
    const plain = toolCallOutput({ content: [image(Buffer.from("just some text bytes").toString("base64"))] }, limits);
    expect(plain.output).toBe("[image: image/png, 20 bytes of binary data; not shown]");
    expect(plain.media).toBeUndefined();
    expect(toolCallOutput({ content: [{ type: "image", mimeType: "image/png" }] }, limits).output).toBe("[image: no data]");
  });

  test(`at most ${MAX_MEDIA_PARTS} media parts are attached from one result`, () => {
    const out = toolCallOutput({ content: Array.from({ length: MAX_MEDIA_PARTS + 2 }, () => image(png(64))) }, limits);
    expect(out.media).toHaveLength(MAX_MEDIA_PARTS);
    expect(out.output.split("\n").filter((line) => line.includes(`not attached (at most ${MAX_MEDIA_PARTS} per result)`))).toHaveLength(2);
  });

  test(`at most ${MAX_CONTENT_BLOCKS} blocks are read; the rest are counted`, () => {
    const out = toolCallOutput({ content: Array.from({ length: MAX_CONTENT_BLOCKS + 6 }, (_, i) => text(`b${i}`)) }, limits);
    const lines = out.output.split("\n");
    expect(lines).toHaveLength(MAX_CONTENT_BLOCKS + 1);
    expect(lines[MAX_CONTENT_BLOCKS - 1]).toBe(`b${MAX_CONTENT_BLOCKS - 1}`);
    expect(lines.at(-1)).toBe("[6 more content blocks were not read]");
  });

  test("isError results throw with their text (a failed call), or a generic message without text", () => {
    expect(() => toolCallOutput({ content: [text("no such repo")], isError: true }, limits)).toThrow("no such repo");
    expect(() => toolCallOutput({ content: [], isError: true }, limits)).toThrow("the tool reported an error");
  });

  test("structured content is shown only when there are no content blocks; nothing at all is (no output)", () => {
    expect(toolCallOutput({ content: [], structuredContent: { sum: 3 } }, limits).output).toBe('{\n  "sum": 3\n}');
    expect(toolCallOutput({ content: [text("3")], structuredContent: { sum: 3 } }, limits).output).toBe("3");
    expect(toolCallOutput({}, limits)).toEqual({ output: "(no output)" });
  });

  test("resource links, embedded resources and unknown block types are described", () => {
    const out = toolCallOutput(
      {
        content: [
          { type: "resource_link", uri: "file:///a.txt", name: "a" },
          { type: "resource", resource: { uri: "file:///b.txt", text: "bee" } },
          { type: "hologram" },
          "not even an object",
        ],
      },
      limits,
    );
    expect(out.output).toBe(
      ["[resource link: file:///a.txt (a)]", "[resource file:///b.txt]", "bee", '[content of type "hologram" is not supported]', '[content of type "undefined" is not supported]'].join("\n"),
    );
  });
});

describe("ContentCollector", () => {
  test(`text beyond ${MAX_TEXT_CHARS} characters is cut and marked truncated`, () => {
    const collector = new ContentCollector(limits);
    collector.text("a".repeat(MAX_TEXT_CHARS - 10));
    collector.text("b".repeat(100));
    collector.text("never kept");
    const out = collector.output();
    expect(out.truncated).toBe(true);
    expect(out.output.length).toBe(MAX_TEXT_CHARS + 1); // the cut text plus one joining newline
    expect(out.output).not.toContain("never kept");
  });

  test("a blob resource is attached like an image when it is media", () => {
    const collector = new ContentCollector(limits);
    collector.resource({ uri: "demo://x.png", blob: png(32), mimeType: "application/octet-stream" });
    expect(collector.output().output).toBe("[resource demo://x.png: PNG image (image/png, 32 bytes), attached]");
  });
});
