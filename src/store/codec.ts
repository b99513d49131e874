import { Buffer } from "node:buffer";

/**
 * Binary-safe JSON for checkpoints. Model history holds `Uint8Array` file parts,
 * which plain JSON turns into `{"0":1,...}`; here they become `{"$bytes":"<base64>"}`
 * and come back as `Uint8Array`. A plain object that would be mistaken for a tagged
 * value (its only key is `$bytes` or `$plain`) is escaped as `{"$plain":[[key,value]]}`,
 * so any plain data round-trips exactly. Lone surrogates survive because
 * JSON.stringify escapes them (`\ud800`), so the stored text is valid UTF-8.
 * Values JSON cannot carry faithfully (other typed arrays, ArrayBuffer, Map, Set)
 * are refused instead of being silently changed.
 */

const BYTES = "$bytes";
const PLAIN = "$plain";

function soleKey(value: object): string | undefined {
  let only: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (only !== undefined) return undefined;
    only = key;
  }
  return only;
}

function replacer(this: unknown, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON ran (Buffer has a toJSON of its own).
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Uint8Array) return { [BYTES]: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("base64") };
  if (raw !== null && typeof raw === "object") {
    if (ArrayBuffer.isView(raw) || raw instanceof ArrayBuffer || raw instanceof Map || raw instanceof Set) {
      throw new TypeError(`cannot store a ${raw.constructor.name} in a checkpoint (only plain JSON data and Uint8Array are kept exactly)`);
    }
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const only = soleKey(value);
    if (only === BYTES || only === PLAIN) return { [PLAIN]: [[only, (value as Record<string, unknown>)[only]]] };
  }
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const only = soleKey(value);
  if (only === BYTES) {
    const text = (value as Record<string, unknown>)[BYTES];
    if (typeof text === "string") return new Uint8Array(Buffer.from(text, "base64"));
  } else if (only === PLAIN) {
    const entries = (value as Record<string, unknown>)[PLAIN];
    if (Array.isArray(entries)) return Object.fromEntries(entries as Array<[string, unknown]>);
  }
  return value;
}

export function encodeValue(value: unknown): string {
  const text = JSON.stringify(value, replacer);
  if (text === undefined) throw new TypeError("cannot store undefined in a checkpoint");
  return text;
}

export function decodeValue(text: string): unknown {
  // The reviver visits every value; skip it when no tagged value can be present.
  if (!text.includes(`"${BYTES}"`) && !text.includes(`"${PLAIN}"`)) return JSON.parse(text);
  return JSON.parse(text, reviver);
}
