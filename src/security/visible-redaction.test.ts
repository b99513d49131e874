import { describe, expect, test } from "bun:test";
import { createRedactor } from "./redact.ts";
import { sanitizeForTerminal, stripTerminalSequences, visibleText } from "./terminal.ts";
import { redactVisible, withVisibleRedaction } from "./visible-redaction.ts";

/** A deterministic pseudo-random token body (nothing secret-looking is committed). */
function chars(length: number, seed: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let state = seed;
  let out = "";
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out += alphabet[state % alphabet.length];
  }
  return out;
}

const token = `ghp_${chars(36, 7)}`;
const MARKER = "[REDACTED:github-token]";
const redactor = createRedactor();
const ESC = "\x1b";

/** The token with `separator` put in after `at` characters. */
const split = (separator: string, at = 8) => `${token.slice(0, at)}${separator}${token.slice(at)}`;

describe("redactVisible", () => {
  test("a token split by colour codes is redacted; the raw pass alone misses it", () => {
    const text = `token: ${split(`${ESC}[31m`)}\n`;
    expect(redactor.redact(text).count).toBe(0);
    const result = redactVisible(redactor, text);
    expect(result.text).toBe(`token: ${MARKER}\n`);
    expect(result.count).toBe(1);
    expect(result.kinds).toEqual({ "github-token": 1 });
  });

  test("every kind of hidden separator: reset, OSC title, 8-bit CSI, CR, zero-width, soft hyphen, tag, BOM, bidi, BEL", () => {
    const separators = [`${ESC}[0m`, `${ESC}]0;title\x07`, "\u009b1m", "\r", "\u200b", "\u200d", "\u00ad", "\u{e0041}", "\ufeff", "\u202e", "\u2060", "\x07", "\ufe0f"];
    for (const separator of separators) {
      const result = redactVisible(redactor, `see ${split(separator)} here`);
      expect(result.text).toBe(`see ${MARKER} here`);
      expect(sanitizeForTerminal(result.text)).not.toContain(token.slice(8));
    }
  });

  test("several separators, at every position of the token", () => {
    for (let at = 1; at < token.length; at++) {
      const text = `${ESC}[1m${split(`${ESC}[3${at % 8}m\u200b`, at)}${ESC}[0m`;
      const result = redactVisible(redactor, text);
      expect(visibleText(result.text)).toBe(MARKER);
      expect(sanitizeForTerminal(result.text)).toBe(MARKER);
    }
  });

  test("escapes outside the redacted part and other lines keep their bytes", () => {
    const text = `${ESC}[32mok${ESC}[0m ${split(`${ESC}[0m`)} ${ESC}[1mbold${ESC}[0m\n${ESC}[33mnext line\u200b${ESC}[0m\n`;
    const result = redactVisible(redactor, text);
    expect(result.text).toBe(`${ESC}[32mok${ESC}[0m ${MARKER} ${ESC}[1mbold${ESC}[0m\n${ESC}[33mnext line\u200b${ESC}[0m\n`);
    // What opens before the token goes with it; what follows its last character stays.
    expect(redactVisible(redactor, `a ${ESC}[31m${split("\u200b")}${ESC}[0m b`).text).toBe(`a ${MARKER}${ESC}[0m b`);
  });

  test("text with nothing hidden, or nothing found in its visible form, is returned as the raw pass gives it", () => {
    expect(redactVisible(redactor, `plain ${token}`)).toEqual(redactor.redact(`plain ${token}`));
    const colourful = `${ESC}[31mred${ESC}[0m and \u200b ${ESC}]8;;https://x${ESC}\\link${ESC}]8;;${ESC}\\`;
    expect(redactVisible(redactor, colourful)).toEqual({ text: colourful, count: 0, kinds: {} });
  });

  test("raw and visible findings are counted together", () => {
    const other = `ghp_${chars(36, 99)}`;
    const result = redactVisible(redactor, `${other}\n${split("\u200b")}`);
    expect(result.text).toBe(`${MARKER}\n${MARKER}`);
    expect(result).toMatchObject({ count: 2, kinds: { "github-token": 2 } });
  });

  test("the line count never changes, even for a line break inside a removed sequence", () => {
    const text = `a\n${token.slice(0, 10)}${ESC}]0;two\nlines\x07${token.slice(10)} end\nlast`;
    expect(text.split("\n")).toHaveLength(4);
    const result = redactVisible(redactor, text);
    expect(result.text.split("\n")).toHaveLength(4);
    expect(result.text).toBe(`a\n${MARKER}\n end\nlast`);
    expect(visibleText(result.text)).not.toContain(token.slice(10));
  });

  test("CRLF line ends outside the redacted part are kept", () => {
    const result = redactVisible(redactor, `x ${split("\u200b")}\r\ny\r\n`);
    expect(result.text).toBe(`x ${MARKER}\r\ny\r\n`);
  });

  test("the splice never makes a live sequence: a lone ESC before the cut goes with it", () => {
    const result = redactVisible(redactor, ` ${ESC}\u200b${split(`${ESC}[0m`)}`);
    expect(result.text).toBe(` ${MARKER}`);
    const withTitle = redactVisible(redactor, `${ESC}]0;${token.slice(0, 5)}\x07${split("\u200b")}`);
    expect(withTitle.text).toBe(MARKER);
  });

  test("known secret values split by escapes are found too", () => {
    const key = `local-${chars(30, 3)}`;
    const known = createRedactor({ knownSecrets: [key] });
    const result = redactVisible(known, `KEY=${key.slice(0, 12)}${ESC}[2m${key.slice(12)}`);
    expect(result.text).toBe("KEY=[REDACTED:known-secret]");
  });

  test("a multi-line key block split by escapes is redacted with its line count", () => {
    const body = Array.from({ length: 3 }, (_, line) => chars(64, 40 + line));
    const text = `-----BEGIN PRIVATE${ESC}[0m KEY-----\n${body.join("\n")}\n-----END PRIVATE KEY-----\n`;
    const result = redactVisible(redactor, text);
    expect(result.text.split("\n")).toHaveLength(text.split("\n").length);
    for (const line of body) expect(result.text).not.toContain(line);
  });

  test("random separators at random places: neither view ever shows the token, and a second pass finds nothing", () => {
    const separators = [`${ESC}[0m`, `${ESC}[38;5;1m`, "\u200b", "\r", "\u00ad", "\u{e0020}", `${ESC}]8;;x${ESC}\\`, "\u2066", "\x00"];
    let seed = 1;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let round = 0; round < 300; round++) {
      let text = token;
      for (let count = 1 + (next() % 4); count > 0; count--) {
        const at = 1 + (next() % (text.length - 1));
        text = `${text.slice(0, at)}${separators[next() % separators.length]}${text.slice(at)}`;
      }
      text = `${next() % 2 === 0 ? "" : `${ESC}[1mlead `}${text}${next() % 2 === 0 ? "" : " tail\n"}`;
      const result = redactVisible(redactor, text);
      for (const shown of [visibleText(result.text), sanitizeForTerminal(result.text), stripTerminalSequences(result.text)]) {
        expect(shown.replace(/[^A-Za-z0-9_]/g, "")).not.toContain(token.slice(4).replace(/[^A-Za-z0-9_]/g, "").slice(0, 20));
      }
      expect(redactVisible(redactor, result.text).count).toBe(0);
      expect(result.text.split("\n")).toHaveLength(text.split("\n").length);
    }
  });
});

describe("withVisibleRedaction", () => {
  test("redacts the visible form; wrapping twice changes nothing", () => {
    const wrapped = withVisibleRedaction(redactor);
    expect(withVisibleRedaction(wrapped)).toBe(wrapped);
    expect(wrapped.redact(split(`${ESC}[0m`)).text).toBe(MARKER);
  });

  test("mayContainSecrets sees a trigger split by escapes", () => {
    const wrapped = withVisibleRedaction(redactor);
    const text = `gh${ESC}[0mp_${token.slice(4)}`;
    expect(redactor.mayContainSecrets(text)).toBe(false);
    expect(wrapped.mayContainSecrets(text)).toBe(true);
    expect(wrapped.redact(text).text).toBe(MARKER);
    expect(wrapped.mayContainSecrets(`${ESC}[31mplain words${ESC}[0m`)).toBe(false);
  });
});
