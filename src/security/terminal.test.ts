import { describe, expect, test } from "bun:test";
import {
  MAX_SEQUENCE_LENGTH,
  createTerminalSanitizer,
  isInvisibleCodePoint,
  mayHideText,
  sanitizeForTerminal,
  stripTerminalSequences,
  visibleText,
  visibleTextWithSources,
} from "./terminal.ts";

const ESC = "\x1b";
const BEL = "\x07";
const ST = `${ESC}\\`;

describe("sanitizeForTerminal", () => {
  test("removes CSI sequences whole", () => {
    expect(sanitizeForTerminal(`${ESC}[31mred${ESC}[0m`)).toBe("red");
    expect(sanitizeForTerminal(`a${ESC}[2J${ESC}[1;1Hb`)).toBe("ab");
    expect(sanitizeForTerminal(`${ESC}[?1049h${ESC}[38;5;196mx`)).toBe("x");
  });

  test("removes OSC sequences, with BEL or ST, including clipboard and links", () => {
    expect(sanitizeForTerminal(`${ESC}]0;evil title${BEL}after`)).toBe("after");
    expect(sanitizeForTerminal(`${ESC}]52;c;ZWNobyBwd25lZA==${BEL}ok`)).toBe("ok");
    expect(sanitizeForTerminal(`${ESC}]8;;https://evil.example${ST}click${ESC}]8;;${ST}`)).toBe("click");
  });

  test("removes DCS, SOS, PM and APC strings", () => {
    expect(sanitizeForTerminal(`a${ESC}Pq#0;2;0;0;0${ST}b`)).toBe("ab");
    expect(sanitizeForTerminal(`a${ESC}Xsos${ST}b`)).toBe("ab");
    expect(sanitizeForTerminal(`a${ESC}^pm${ST}b`)).toBe("ab");
    expect(sanitizeForTerminal(`a${ESC}_Gf=100;AAAA${ST}b`)).toBe("ab");
  });

  test("removes two-byte and intermediate escapes", () => {
    expect(sanitizeForTerminal(`a${ESC}cb`)).toBe("ab"); // RIS, full reset
    expect(sanitizeForTerminal(`a${ESC}7b${ESC}8`)).toBe("ab");
    expect(sanitizeForTerminal(`a${ESC}(0b`)).toBe("ab"); // line-drawing charset
    expect(sanitizeForTerminal(`a${ESC}#8b`)).toBe("ab");
  });

  test("removes 8-bit C1 sequences", () => {
    expect(sanitizeForTerminal("\u009b31mred")).toBe("red");
    expect(sanitizeForTerminal("\u009d0;title\u0007x")).toBe("x");
    expect(sanitizeForTerminal("\u009d52;c;AAAA\u009cx")).toBe("x");
    expect(sanitizeForTerminal("\u0090q\u009cx")).toBe("x");
    expect(sanitizeForTerminal("\u0098s\u009cx\u009ep\u009cy\u009fa\u009cz")).toBe("xyz");
    expect(sanitizeForTerminal("a\u0085b\u0084c")).toBe("a\\x85b\\x84c"); // other C1 controls, shown escaped
  });

  test("never reassembles a live sequence", () => {
    expect(sanitizeForTerminal(`${ESC}${ESC}[31m]0;X${BEL}`)).toBe("]0;X\\x07");
    expect(sanitizeForTerminal(`${ESC}[${ESC}[31m31mx`)).toBe("31mx");
    const output = sanitizeForTerminal(`${ESC}${ESC}]${ESC}[m${ESC}\u009b\u009d${ESC}\x00[31m`);
    expect(output).not.toContain(ESC);
    expect(output).not.toMatch(/[\u0080-\u009f]/);
  });

  test("shows stray C0 controls (except newline and tab), DEL and bidi controls escaped; drops CR", () => {
    expect(sanitizeForTerminal("a\x07b\x08c\x00d\x7fe\x0bf\x0cg")).toBe("a\\x07b\\x08c\\x00d\\x7fe\\x0bf\\x0cg");
    expect(sanitizeForTerminal("line1\r\nline2\rline3\n\tend")).toBe("line1\nline2line3\n\tend");
    const bidi = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c";
    expect(sanitizeForTerminal(`safe${bidi}text`)).toBe("safe\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061ctext");
  });

  test("keeps printable Unicode unchanged", () => {
    const text = "日本語 テキスト 👨‍👩‍👧 é (e\u0301) ñ Ω ∑ ✓ 🇩🇪 \u00a0nbsp \u3000 ok";
    expect(sanitizeForTerminal(text)).toBe(text);
  });

  test("drops an unterminated sequence at the end", () => {
    expect(sanitizeForTerminal(`text${ESC}[31`)).toBe("text");
    expect(sanitizeForTerminal(`text${ESC}]52;c;AAAA`)).toBe("text");
    expect(sanitizeForTerminal(`text${ESC}`)).toBe("text");
  });

  test("malformed CSI is abandoned and its remains filtered", () => {
    // A control inside CSI aborts it (as terminals do); the control itself is deleted.
    expect(sanitizeForTerminal(`${ESC}[31\nx`)).toBe("\nx");
  });

  test("an over-long unterminated sequence stops swallowing text", () => {
    const payload = "A".repeat(MAX_SEQUENCE_LENGTH * 2);
    const output = sanitizeForTerminal(`${ESC}]52;c;${payload}${BEL}visible`);
    expect(output.endsWith("visible")).toBe(true);
    // 4096 characters of the sequence (introducer included) were swallowed, the rest shown.
    // The BEL that ended nothing is shown escaped (4 characters).
    expect(output.length).toBe(`${ESC}]52;c;${payload}`.length - MAX_SEQUENCE_LENGTH + "\\x07visible".length);
    expect(output).not.toContain(ESC);
  });

  test("handles a 1 MB input in one linear pass", () => {
    const unit = `plain text ${ESC}[1;31mred${ESC}[0m ${ESC}]8;;https://x${ST}link${ESC}]8;;${ST} \r\n`;
    const input = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const output = sanitizeForTerminal(input);
    expect(output).toBe("plain text red link \n".repeat(Math.ceil(1_000_000 / unit.length)));
    // Pathological shapes that would make a backtracking regex explode.
    expect(sanitizeForTerminal(`${ESC}[`.repeat(200_000)).length).toBe(0);
    expect(sanitizeForTerminal(`${ESC}]`.repeat(200_000))).toBe("");
    expect(sanitizeForTerminal("\x07".repeat(500_000) + "x")).toBe("\\x07".repeat(500_000) + "x");
  });
});

describe("invisible and format characters", () => {
  test("zero-width characters are shown escaped", () => {
    expect(sanitizeForTerminal("a\u200bb\u200cc\u200dd\u2060e")).toBe("a\\u200bb\\u200cc\\u200dd\\u2060e");
    expect(sanitizeForTerminal("ghp_abc\u200bdef")).toBe("ghp_abc\\u200bdef"); // a split token stays visibly split
  });

  test("the BOM (zero-width no-break space) is shown escaped, at the start and inside", () => {
    expect(sanitizeForTerminal("\ufeffstart mid\ufeffdle")).toBe("\\ufeffstart mid\\ufeffdle");
  });

  test("line and paragraph separators are shown escaped", () => {
    expect(sanitizeForTerminal("one\u2028two\u2029three")).toBe("one\\u2028two\\u2029three");
  });

  test("tag characters are shown escaped (hidden ASCII text), subdivision flags included", () => {
    const hidden = [..."ignore"].map((char) => String.fromCodePoint(0xe0000 + char.charCodeAt(0))).join("");
    expect(sanitizeForTerminal(`ok${hidden}`)).toBe("ok\\u{e0069}\\u{e0067}\\u{e006e}\\u{e006f}\\u{e0072}\\u{e0065}");
    expect(sanitizeForTerminal("\u{e0001}\u{e007f}")).toBe("\\u{e0001}\\u{e007f}");
    const scotland = "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
    expect(sanitizeForTerminal(scotland)).toBe("🏴\\u{e0067}\\u{e0062}\\u{e0073}\\u{e0063}\\u{e0074}\\u{e007f}");
  });

  test("other format characters (category Cf) are shown escaped", () => {
    expect(sanitizeForTerminal("a\u00adb")).toBe("a\\xadb"); // soft hyphen
    expect(sanitizeForTerminal("a\u180eb\u061cc\u2061d\u206ae\ufff9f\u0600g")).toBe(
      "a\\u180eb\\u061cc\\u2061d\\u206ae\\ufff9f\\u0600g",
    );
    expect(sanitizeForTerminal("a\u{1d173}b\u{13430}c\u{1bca0}d")).toBe("a\\u{1d173}b\\u{13430}c\\u{1bca0}d");
  });

  test("other default-ignorable characters (Hangul fillers, grapheme joiner) are shown escaped", () => {
    expect(sanitizeForTerminal("a\u3164b\u115fc\uffa0d\u034fe\u17b4f")).toBe("a\\u3164b\\u115fc\\uffa0d\\u034fe\\u17b4f");
  });

  test("variation selectors: VS15/VS16 after a character with an emoji form stay, every other one is escaped", () => {
    expect(sanitizeForTerminal("❤️ ☺︎ 1️⃣")).toBe("❤️ ☺︎ 1️⃣");
    expect(sanitizeForTerminal("a\ufe0fb")).toBe("a\\ufe0fb");
    expect(sanitizeForTerminal("\ufe0f")).toBe("\\ufe0f");
    expect(sanitizeForTerminal("❤\ufe0f\ufe0f")).toBe("❤\ufe0f\\ufe0f"); // a second one hides data
    expect(sanitizeForTerminal("a\ufe00b\u{e0100}c\u180bd")).toBe("a\\ufe00b\\u{e0100}c\\u180bd");
    expect(sanitizeForTerminal("😀\u{e0100}\u{e0101}")).toBe("😀\\u{e0100}\\u{e0101}"); // bytes smuggled after an emoji
  });

  test("emoji ZWJ sequences stay readable; a joiner anywhere else is escaped", () => {
    for (const emoji of ["👨‍👩‍👧", "🏳️‍🌈", "👩🏽‍💻", "❤️‍🔥", "🏃‍♀️", "🐻‍❄️", "👨🏻‍❤️‍👨🏼"]) {
      expect(sanitizeForTerminal(`x ${emoji} y`)).toBe(`x ${emoji} y`);
    }
    expect(sanitizeForTerminal("👨\u200d")).toBe("👨\\u200d");
    expect(sanitizeForTerminal("\u200d👨")).toBe("\\u200d👨");
    expect(sanitizeForTerminal("👨\u200d\u200d👩")).toBe("👨\\u200d\\u200d👩");
    expect(sanitizeForTerminal("👨\u200da")).toBe("👨\\u200da");
  });

  test("ZWNJ and ZWJ between letters of joining scripts stay; between Latin letters they are escaped", () => {
    for (const text of ["می‌خواهم", "क्‍ष", "ന്‍ന"]) expect(sanitizeForTerminal(text)).toBe(text);
    expect(sanitizeForTerminal("pass\u200cword")).toBe("pass\\u200cword");
    expect(sanitizeForTerminal("م\u200c a")).toBe("م\\u200c a");
  });

  test("the table matches the engine's Unicode data: Cf, Default_Ignorable_Code_Point, U+2028/U+2029", () => {
    const expected = /^[\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]$/u;
    const wrong: string[] = [];
    for (let point = 0; point <= 0x10ffff; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      if (isInvisibleCodePoint(point) !== expected.test(String.fromCodePoint(point))) wrong.push(point.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  test("every invisible character outside the contextual exceptions is escaped, alone and between letters", () => {
    for (let point = 0xa0; point <= 0x10ffff; point++) {
      if (!isInvisibleCodePoint(point)) continue;
      const char = String.fromCodePoint(point);
      expect(sanitizeForTerminal(`a${char}b`)).not.toContain(char);
      expect(sanitizeForTerminal(char)).toMatch(/^\\(x|u)/);
    }
  });

  test("escapes are plain ASCII, so sanitizing twice changes nothing and markers survive", () => {
    const text = "a\u200b\u{e0041}\ufeff👨‍👩‍👧 می‌خواهم ❤️ [REDACTED:github-token]";
    const once = sanitizeForTerminal(text);
    expect(sanitizeForTerminal(once)).toBe(once);
    expect(once).toContain("[REDACTED:github-token]");
  });
});

describe("other views of a text", () => {
  test("stripTerminalSequences removes sequences only", () => {
    expect(stripTerminalSequences("ghp_abc\x1b[31mdef\x1b]0;title\x07 \r\n\x07\u200b\u009b1m")).toBe("ghp_abcdef \r\n\x07\u200b");
    expect(stripTerminalSequences("plain\ttext\n")).toBe("plain\ttext\n");
  });

  test("visibleText removes sequences and everything shown escaped or invisible", () => {
    expect(visibleText("ghp_abc\x1b[31mdef")).toBe("ghp_abcdef");
    expect(visibleText("ghp_abc\u200bd\u00ade\u{e0041}f\r\x07g\u202eh\ufe0fi\n")).toBe("ghp_abcdefghi\n");
    expect(visibleText("👨‍👩 ok")).toBe("👨👩 ok");
    expect(visibleText("a\x1b]0;x\ny\x07b")).toBe("ab"); // a line break inside a sequence is not seen
  });

  test("visibleTextWithSources maps every unit back to the input", () => {
    const input = "a\x1b[1mb\u200b😀\nc";
    const { text, sources } = visibleTextWithSources(input);
    expect(text).toBe("ab😀\nc");
    expect(sources).toHaveLength(text.length);
    for (const [index, source] of sources.entries()) expect(input[source]).toBe(text[index]);
  });

  test("mayHideText is false only when visibleText changes nothing", () => {
    for (const text of ["plain text\n\tend", "日本語 👍"]) {
      expect(mayHideText(text)).toBe(false);
      expect(visibleText(text)).toBe(text);
    }
    for (const text of ["a\x1b[0m", "a\rb", "a\u200bb", "\u{e0041}", "a\u009b"]) expect(mayHideText(text)).toBe(true);
  });
});

const samples = [
  `${ESC}[31mred${ESC}[0m plain`,
  `${ESC}${ESC}[31m]0;X${BEL}`,
  `a${ESC}]8;;https://evil.example${ST}link${ESC}]8;;${ST}b`,
  `x\u009b1;2Hy\u009d0;t\u009cz\u0090q${ESC}\\w`,
  "line\r\nnext\rlast\t\u202eevil\u2066",
  "emoji 👨‍👩‍👧 and 日本語 \u0301",
  `${ESC}(B${ESC}#8${ESC}c${ESC}[?25l done${ESC}`,
  `unterminated ${ESC}]52;c;QUJD`,
  "👨‍👩‍👧 a\u200db 👨\u200d\u200d👩 ❤️ a\ufe0f می‌خواهم \u{e0041}\ufeff\u2028",
  "🏳️‍🌈\u200d",
];

describe("createTerminalSanitizer", () => {
  test("a sequence split across chunks is removed whole", () => {
    const sanitizer = createTerminalSanitizer();
    expect(sanitizer.push(`${ESC}[3`)).toBe("");
    expect(sanitizer.push("1mred")).toBe("red");
    expect(sanitizer.flush()).toBe("");
  });

  test("text before an incomplete trailing sequence is printed at once", () => {
    const sanitizer = createTerminalSanitizer();
    expect(sanitizer.push(`hello ${ESC}]0;ti`)).toBe("hello ");
    expect(sanitizer.push(`tle${BEL}world`)).toBe("world");
    expect(sanitizer.flush()).toBe("");
  });

  test("every two-way split gives the same output as the whole", () => {
    for (const sample of samples) {
      const whole = sanitizeForTerminal(sample);
      for (let index = 0; index <= sample.length; index++) {
        const sanitizer = createTerminalSanitizer();
        const joined =
          sanitizer.push(sample.slice(0, index)) + sanitizer.push(sample.slice(index)) + sanitizer.flush();
        expect(joined).toBe(whole);
      }
    }
  });

  test("one character at a time gives the same output as the whole", () => {
    for (const sample of samples) {
      const sanitizer = createTerminalSanitizer();
      let joined = "";
      for (const char of sample.split("")) joined += sanitizer.push(char);
      joined += sanitizer.flush();
      expect(joined).toBe(sanitizeForTerminal(sample));
    }
  });

  test("the length bound does not depend on how the input is split", () => {
    const sample = `${ESC}]52;c;${"B".repeat(MAX_SEQUENCE_LENGTH + 100)}${BEL}after`;
    const whole = sanitizeForTerminal(sample);
    for (const size of [1, 7, 1000, 4095, 4096, 4097]) {
      const sanitizer = createTerminalSanitizer();
      let joined = "";
      for (let index = 0; index < sample.length; index += size) {
        joined += sanitizer.push(sample.slice(index, index + size));
      }
      expect(joined + sanitizer.flush()).toBe(whole);
    }
  });

  test("a split surrogate pair is never printed in halves", () => {
    const sanitizer = createTerminalSanitizer();
    const emoji = "😀";
    expect(sanitizer.push(`a${emoji[0]}`)).toBe("a");
    expect(sanitizer.push(`${emoji[1]}b`)).toBe(`${emoji}b`);
    expect(sanitizer.flush()).toBe("");
  });

  test("flush resets the state for the next stream", () => {
    const sanitizer = createTerminalSanitizer();
    expect(sanitizer.push(`${ESC}]0;never closed`)).toBe("");
    expect(sanitizer.flush()).toBe("");
    expect(sanitizer.push("fresh")).toBe("fresh");
  });
});

describe("random inputs", () => {
  // Deterministic PRNG so a failure reproduces.
  function random(seed: number): () => number {
    let value = seed;
    return () => {
      value = (value * 1103515245 + 12345) % 2147483648;
      return value / 2147483648;
    };
  }
  const alphabet = [ESC, "[", "]", "\\", "P", "_", "^", "X", "0", ";", "m", "a", "\x07", "\r", "\n", "\t",
    "\x18", "\x7f", "\u009b", "\u009c", "\u009d", "\u0090", "\u0085", "\u202e", "\u2066", "日", "😀", "(",
    "\u200b", "\u200d", "\u200c", "\ufe0f", "\u{e0041}", "\ufeff", "\u2028", "م", "❤"];
  const unsafe = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b\ufeff\u2028\u{e0041}]/u;

  test("output never contains a control, whatever the input and split", () => {
    const next = random(42);
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(next() * 40);
      let input = "";
      for (let index = 0; index < length; index++) input += alphabet[Math.floor(next() * alphabet.length)];
      const whole = sanitizeForTerminal(input);
      expect(unsafe.test(whole)).toBe(false);
      const cut = Math.floor(next() * (input.length + 1));
      const sanitizer = createTerminalSanitizer();
      expect(sanitizer.push(input.slice(0, cut)) + sanitizer.push(input.slice(cut)) + sanitizer.flush()).toBe(whole);
    }
  });
});

test("sanitizing is idempotent and no control character survives (random inputs)", () => {
  // A fixed-seed generator over an alphabet rich in escapes, controls and bidi marks.
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const alphabet = ["\x1b", "[", "]", "\x07", "\x9b", "\x9d", "\x9c", "\\", "\r", "\n", "\t", "\x00", "\x7f", "\u202e", "3", "1", "m", ";", "a", "日", "P", "_",
    "\u200b", "\u200d", "\ufe0f", "😀", "\u{e0041}", "م"];
  for (let round = 0; round < 2000; round++) {
    let input = "";
    const length = next() % 40;
    for (let i = 0; i < length; i++) input += alphabet[next() % alphabet.length];
    const once = sanitizeForTerminal(input);
    expect(sanitizeForTerminal(once)).toBe(once);
    expect(once).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b\u{e0041}]/u);
  }
});

test("a variation selector after a digit, # or * is kept only as part of a keycap", () => {
  expect(sanitizeForTerminal("1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3")).toBe("1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3");
  expect(sanitizeForTerminal("a1\ufe0fb")).toBe("a1\\ufe0fb");
  expect(sanitizeForTerminal("x1\ufe0f")).toBe("x1\\ufe0f");
  const streamed = (chunks: string[]) => {
    const sanitizer = createTerminalSanitizer();
    return chunks.map((chunk) => sanitizer.push(chunk)).join("") + sanitizer.flush();
  };
  expect(streamed(["a1\ufe0f", "\u20e3b"])).toBe("a1\ufe0f\u20e3b");
  expect(streamed(["a1\ufe0f", "b"])).toBe("a1\\ufe0fb");
});
