import { describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { decodeValue, encodeValue } from "./codec.ts";

const roundTrip = (value: unknown) => decodeValue(encodeValue(value));

describe("binary-safe JSON", () => {
  test("Uint8Array comes back as an equal Uint8Array, at any offset into its buffer", () => {
    const backing = new Uint8Array([9, 9, 0, 1, 2, 255, 128, 9]);
    const bytes = backing.subarray(2, 7);
    const back = roundTrip({ data: bytes, empty: new Uint8Array(0) }) as { data: Uint8Array; empty: Uint8Array };
    expect(back.data).toBeInstanceOf(Uint8Array);
    expect(Array.from(back.data)).toEqual([0, 1, 2, 255, 128]);
    expect(back.empty).toBeInstanceOf(Uint8Array);
    expect(back.empty.length).toBe(0);
  });

  test("a Buffer is stored as its bytes (not Buffer.toJSON's shape)", () => {
    const back = roundTrip([Buffer.from("héllo")]) as Uint8Array[];
    expect(back[0]).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(back[0])).toBe("héllo");
  });

  test("strings keep U+2028, U+2029, emoji, NUL and lone surrogates", () => {
    const text = "a\u2028b\u2029c 😀 \u0000 \ud800 x \udfff";
    expect(roundTrip({ text })).toEqual({ text });
    expect((roundTrip([text]) as string[])[0]).toBe(text);
  });

  test("plain objects that look like tagged values stay plain objects", () => {
    const value = [
      { $bytes: "AAEC" },
      { $plain: [["a", 1]] },
      { $bytes: "AAEC", other: true },
      { $plain: new Uint8Array([7]) },
      { nested: { $bytes: { $bytes: "x" } } },
      { $ref: "#/definitions/a" },
    ];
    const back = roundTrip(value) as unknown[];
    expect(back).toEqual([
      { $bytes: "AAEC" },
      { $plain: [["a", 1]] },
      { $bytes: "AAEC", other: true },
      { $plain: new Uint8Array([7]) },
      { nested: { $bytes: { $bytes: "x" } } },
      { $ref: "#/definitions/a" },
    ]);
    expect((back[3] as { $plain: unknown }).$plain).toBeInstanceOf(Uint8Array);
  });

  test("a model history round-trips deeply equal", () => {
    const history = [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [
          { type: "text", text: "what is in this file?\u2028line two 🚀" },
          { type: "file", mediaType: "image/png", data: new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]) },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a.ts", n: null } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "ok" } }] },
    ];
    expect(roundTrip(history)).toEqual(history);
  });

  test("values JSON would silently change are refused", () => {
    expect(() => encodeValue([new Uint16Array([1])])).toThrow("Uint16Array");
    expect(() => encodeValue({ a: new ArrayBuffer(2) })).toThrow("ArrayBuffer");
    expect(() => encodeValue({ a: new Map() })).toThrow("Map");
    expect(() => encodeValue(undefined)).toThrow();
  });
});
