/**
 * Terminal sanitizing for model text shown to a human.
 *
 * The model must not drive the user's terminal: no colors it chose, no cursor moves, no window
 * titles, no OSC 52 clipboard writes, no OSC 8 links, no bidi tricks that make shown text differ
 * from stored text, no invisible characters that hide or split text. One linear state machine
 * does both jobs the design asks for:
 *   1. whole escape sequences (7-bit `ESC …` and their 8-bit C1 forms) are swallowed, and
 *   2. every character that reaches the output passes the final filter: every remaining C0
 *      control except `\n` and `\t`, DEL, every C1, and every invisible or format character
 *      (Unicode category Cf — bidi controls, zero-width characters, the BOM, soft hyphen, tag
 *      characters — plus the other default-ignorable code points such as variation selectors
 *      and Hangul fillers, and U+2028/U+2029) is shown as a printable escape (`\x07`, `\u200b`,
 *      `\u{e0041}`); CR is dropped.
 * Because ESC itself never passes the final filter, removing one sequence can never join its
 * neighbours into a new live one (`"\x1b\x1b[31m]0;X\x07"` yields `"]0;X\x07"` with the BEL escaped).
 *
 * Kept so text stays readable (each needs a visible neighbour, so they can hide nothing):
 * - ZWJ (U+200D) between two emoji (`👨‍👩‍👧`, `🏳️‍🌈`, `👩🏽‍💻`), and ZWJ/ZWNJ (U+200C) between two letters
 *   or marks of a script from Hebrew (U+0590) on, where they change how the letters join
 *   (Persian `می‌خواهم`, Devanagari conjuncts). Anywhere else — inside ASCII text, at an edge,
 *   next to another invisible — they are escaped.
 * - VS15/VS16 (U+FE0E/U+FE0F, text/emoji presentation) right after a character that has an
 *   emoji form (`❤️`, `1️⃣`). Every other variation selector is escaped (they can encode bytes
 *   invisibly), and so are tag characters, which makes the subdivision flags (🏴 + tags) show as
 *   the black flag followed by escapes: tags are the vector for hidden "ASCII" text.
 *
 * The machine holds no text, only its state (plus, while streaming, at most a trailing character
 * whose fate depends on what follows: half a surrogate pair, a ZWJ), so streaming and one-shot
 * use share one code path and any split of the input gives the same output as the whole.
 *
 * The same machine gives two other views of a text (see `stripTerminalSequences`, `visibleText`):
 * what a model is shown, and what redaction must look at.
 */

/** An unterminated sequence stops swallowing text after this many characters. */
export const MAX_SEQUENCE_LENGTH = 4096;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;
const ZWNJ = 0x200c;
const ZWJ = 0x200d;
const VS15 = 0xfe0e;
const VS16 = 0xfe0f;

/**
 * Invisible and format characters, as sorted inclusive ranges: Unicode category Cf, the
 * Default_Ignorable_Code_Point property, and U+2028/U+2029 (checked against the engine's
 * Unicode tables by the unit tests, so a Unicode update that adds one fails there).
 */
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad], // soft hyphen
  [0x034f, 0x034f], // combining grapheme joiner
  [0x0600, 0x0605], // Arabic number signs
  [0x061c, 0x061c], // Arabic letter mark (bidi)
  [0x06dd, 0x06dd],
  [0x070f, 0x070f],
  [0x0890, 0x0891],
  [0x08e2, 0x08e2],
  [0x115f, 0x1160], // Hangul fillers
  [0x17b4, 0x17b5], // Khmer inherent vowels
  [0x180b, 0x180f], // Mongolian variation selectors and vowel separator
  [0x200b, 0x200f], // ZWSP, ZWNJ, ZWJ, LRM, RLM
  [0x2028, 0x202e], // line/paragraph separator, bidi embeddings and overrides
  [0x2060, 0x206f], // word joiner, invisible operators, bidi isolates, deprecated format controls
  [0x3164, 0x3164], // Hangul filler
  [0xfe00, 0xfe0f], // variation selectors 1-16
  [0xfeff, 0xfeff], // BOM / zero-width no-break space
  [0xffa0, 0xffa0], // halfwidth Hangul filler
  [0xfff0, 0xfffb], // reserved, interlinear annotation
  [0x110bd, 0x110bd],
  [0x110cd, 0x110cd],
  [0x13430, 0x1343f], // Egyptian hieroglyph format controls
  [0x1bca0, 0x1bca3], // shorthand format controls
  [0x1d173, 0x1d17a], // musical symbol format controls
  [0xe0000, 0xe0fff], // tag characters, variation selectors 17-256, reserved
];

/** The BMP part of INVISIBLE_RANGES as a lookup table: the hot path of the scan. */
const INVISIBLE_BMP = new Uint8Array(0x10000);
for (const [start, end] of INVISIBLE_RANGES) for (let point = start; point <= Math.min(end, 0xffff); point++) INVISIBLE_BMP[point] = 1;

/** True for an invisible or format character (see INVISIBLE_RANGES). */
export function isInvisibleCodePoint(point: number): boolean {
  if (point < 0x00ad) return false;
  let low = 0;
  let high = INVISIBLE_RANGES.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [start, end] = INVISIBLE_RANGES[middle] as readonly [number, number];
    if (point < start) high = middle - 1;
    else if (point > end) low = middle + 1;
    else return true;
  }
  return false;
}

/** True for a character that may reach the terminal as itself, whatever surrounds it. */
function isPlain(point: number): boolean {
  if (point < 0x20) return point === 0x0a || point === 0x09;
  if (point < 0x7f) return true;
  if (point <= 0x9f) return false; // DEL and every C1
  return !isInvisibleCodePoint(point);
}

const EXTENDED_PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const EMOJI = /^\p{Emoji}$/u;
const LETTER_OR_MARK = /^[\p{L}\p{M}]$/u;

const isPictographic = (point: number) => point >= 0xa9 && EXTENDED_PICTOGRAPHIC.test(String.fromCodePoint(point));
const KEYCAP = 0x20e3;
const isKeycapBase = (point: number) => (point >= 0x30 && point <= 0x39) || point === 0x23 || point === 0x2a;
const isSkinTone = (point: number) => point >= 0x1f3fb && point <= 0x1f3ff;
const isJoiningLetter = (point: number) => point >= 0x0590 && LETTER_OR_MARK.test(String.fromCodePoint(point));

/**
 * Whether a joiner, VS15 or VS16 is kept as itself between `previous` (the last character shown
 * as itself, -1 when none) and `next` (-1 at the end).
 */
function keepsInContext(point: number, previous: number, next: number): boolean {
  if (point === VS15 || point === VS16) {
    if (previous < 0) return false;
    // Digits, # and * are "emoji" only as keycaps: after them a selector must be followed by U+20E3,
    // or it would ride invisibly on ordinary text.
    if (isKeycapBase(previous)) return next === KEYCAP;
    return EMOJI.test(String.fromCodePoint(previous));
  }
  if (previous < 0 || next < 0) return false;
  if (point === ZWJ && (isPictographic(previous) || isSkinTone(previous) || previous === VS16) && isPictographic(next)) return true;
  return isJoiningLetter(previous) && isJoiningLetter(next);
}

/** The code point before `index` (-1 at the start). */
function codePointBefore(text: string, index: number): number {
  if (index <= 0) return -1;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/** The code point at `index`: -1 at the end, -2 when it is cut off (half a surrogate pair at the end). */
function codePointAt(text: string, index: number): number {
  if (index >= text.length) return -1;
  const high = text.charCodeAt(index);
  if (high < 0xd800 || high > 0xdbff) return high;
  if (index + 1 >= text.length) return -2;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdfff ? (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000 : high;
}

/** Where the scanner is: plain text, or inside some kind of escape sequence. */
type Mode =
  | "ground"
  | "escape" // after ESC
  | "escape-intermediate" // ESC followed by 0x20–0x2F bytes (e.g. `ESC ( B`)
  | "csi" // after `ESC [` or 0x9B: parameters and intermediates until a final byte
  | "string"; // OSC, DCS, SOS, PM, APC bodies: until BEL or ST

/** `previous`: the last character shown as itself (for joiners and variation selectors), -1 when none. */
type ScanState = { mode: Mode; sequenceLength: number; previous: number };

/**
 * What a scan produces from the text outside sequences:
 * - `terminal`: plain characters as themselves, the rest as printable escapes (CR dropped);
 * - `strip`: every character as itself (only sequences go);
 * - `visible`: plain characters only (everything that could be invisible or is shown escaped goes).
 */
type View = "terminal" | "strip" | "visible";

/** The mode an 8-bit C1 introducer opens, or undefined for other characters. */
function c1IntroducerMode(code: number): Mode | undefined {
  if (code === C1_CSI) return "csi";
  if (code === C1_OSC || code === C1_DCS || code === C1_SOS || code === C1_PM || code === C1_APC) {
    return "string";
  }
  return undefined;
}

/**
 * Consumes one character inside a sequence. Returns true when the character belongs to the
 * sequence (it is swallowed), false when the sequence ended WITHOUT it and the character must
 * be scanned again as text.
 */
function consumeInSequence(state: ScanState, code: number): boolean {
  switch (state.mode) {
    case "escape":
      if (code === 0x5b) return enter(state, "csi"); // ESC [
      if (code === 0x5d || code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) {
        return enter(state, "string"); // ESC ] P X ^ _
      }
      if (code >= 0x20 && code <= 0x2f) return enter(state, "escape-intermediate");
      if (code >= 0x30 && code <= 0x7e) return finish(state); // two-byte ESC x
      return abandon(state); // ESC before a control or non-ASCII: the lone ESC is dropped
    case "escape-intermediate":
      if (code >= 0x20 && code <= 0x2f) return true;
      if (code >= 0x30 && code <= 0x7e) return finish(state);
      return abandon(state);
    case "csi":
      if (code >= 0x20 && code <= 0x3f) return true; // parameter and intermediate bytes
      if (code >= 0x40 && code <= 0x7e) return finish(state); // final byte
      return abandon(state); // malformed: terminals abort it too
    case "string":
      if (code === BEL || code === C1_ST) return finish(state);
      if (code === ESC) return enter(state, "escape"); // ESC \ (ST) ends the string as a 2-byte escape
      if (code === CAN || code === SUB) return finish(state); // cancel the string, as terminals do
      return true;
    case "ground":
      return false;
  }
}

function enter(state: ScanState, mode: Mode): true {
  state.mode = mode;
  return true;
}

function finish(state: ScanState): true {
  state.mode = "ground";
  state.sequenceLength = 0;
  return true;
}

function abandon(state: ScanState): false {
  state.mode = "ground";
  state.sequenceLength = 0;
  return false;
}

/** Where each output unit came from: `indices[0 … length)`. */
type Sources = { indices: Int32Array; length: number };

/**
 * Scans `text` from `state` (updated in place) and returns the view's output and where the scan
 * stopped: the end, or — when not `final` — a trailing character whose fate depends on text not
 * seen yet (the caller scans it again in front of the next chunk). `sources`, when given, gets
 * the index in `text` of every UTF-16 unit of the output (only for `visible`, where output units
 * are input units).
 */
function scan(state: ScanState, text: string, view: View, final: boolean, sources?: Sources): { output: string; end: number } {
  const parts: string[] = [];
  let runStart = -1; // start of the current run of characters shown as themselves, -1 when none
  const closeRun = (at: number) => {
    if (runStart < 0) return;
    parts.push(text.slice(runStart, at));
    if (sources !== undefined) for (let source = runStart; source < at; source++) sources.indices[sources.length++] = source;
    state.previous = codePointBefore(text, at);
    runStart = -1;
  };
  let index = 0;
  for (; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (state.mode !== "ground") {
      if (state.sequenceLength >= MAX_SEQUENCE_LENGTH) {
        abandon(state); // an unterminated sequence may not swallow unbounded output
      } else {
        state.sequenceLength++;
        if (consumeInSequence(state, code)) continue;
      }
    }
    // Ground: the character is text, an introducer, or something the final filter escapes.
    let opens: Mode | undefined;
    if (code === ESC) opens = "escape";
    else if (code >= 0x80 && code <= 0x9f) opens = c1IntroducerMode(code);
    if (opens !== undefined) {
      closeRun(index);
      state.mode = opens;
      state.sequenceLength = 1;
      continue;
    }
    if (view === "strip" || (code >= 0x20 && code < 0x7f) || code === 0x0a || code === 0x09 || (code >= 0xa0 && code < 0xd800 && INVISIBLE_BMP[code] === 0)) {
      if (runStart < 0) runStart = index; // the fast path: printable ASCII and BMP text
      continue;
    }
    const point = codePointAt(text, index);
    if (point === -2 && !final) break; // half a surrogate pair: wait for the other half
    const codePoint = point < 0 ? code : point;
    const width = codePoint > 0xffff ? 2 : 1;
    let keep = isPlain(codePoint);
    if (!keep && view === "terminal" && (codePoint === ZWJ || codePoint === ZWNJ || codePoint === VS15 || codePoint === VS16)) {
      const previous = runStart >= 0 ? codePointBefore(text, index) : state.previous;
      const joiner = codePoint === ZWJ || codePoint === ZWNJ;
      // A joiner, and a selector after a keycap base, are decided by what follows them.
      const looksAhead = joiner || isKeycapBase(previous);
      const next = looksAhead ? codePointAt(text, index + width) : -1;
      if (looksAhead && next < 0 && !final) break;
      keep = keepsInContext(codePoint, previous, next < 0 ? -1 : next);
    }
    if (keep) {
      if (runStart < 0) runStart = index;
      index += width - 1;
      continue;
    }
    closeRun(index);
    // A stray control or an invisible character is shown escaped, so the reader sees that
    // something was there; CR is dropped (CRLF is just a line break here).
    if (view === "terminal") {
      if (codePoint !== 0x0d) parts.push(visibleEscape(codePoint));
      state.previous = -1;
    }
    index += width - 1;
  }
  closeRun(index);
  return { output: parts.join(""), end: index };
}

/** `\x07`, `\x9b`, `\u202e`, `\u{e0041}`: printable ASCII naming the character. */
function visibleEscape(point: number): string {
  const hex = point.toString(16);
  if (point <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  return point <= 0xffff ? `\\u${hex.padStart(4, "0")}` : `\\u{${hex}}`;
}

function freshState(): ScanState {
  return { mode: "ground", sequenceLength: 0, previous: -1 };
}

/**
 * Removes everything from `text` that could drive a terminal or hide text: escape sequences
 * (7-bit and 8-bit) go; C0 controls except `\n` and `\t`, DEL, C1, bidi controls and every other
 * invisible or format character are shown as printable escapes (`\x07`, `\u200b`), except the
 * joiners and presentation selectors that emoji and some scripts need (see the module comment);
 * CR is dropped (so `\r\n` becomes `\n`). An unterminated sequence at the end of the text is
 * dropped. Printable Unicode is kept. Idempotent.
 */
export function sanitizeForTerminal(text: string): string {
  return scan(freshState(), text, "terminal", true).output;
}

/**
 * The text with terminal escape sequences removed, and nothing else changed (controls,
 * invisible characters and CR stay): what a model is shown of tool output, so it reads what a
 * person would see on a terminal, without colour codes it has no use for.
 */
export function stripTerminalSequences(text: string): string {
  return scan(freshState(), text, "strip", true).output;
}

/**
 * The text as a reader of the sanitized terminal output would see it with every escape and
 * invisible character taken out: sequences removed, and every character that is not shown as
 * itself in every context (controls, CR, DEL, C1, bidi and other invisible or format characters,
 * joiners and variation selectors included) removed. Line feeds outside sequences stay. Redaction
 * runs on this view too, so a token split by colour codes or a zero-width space is still found.
 */
export function visibleText(text: string): string {
  return scan(freshState(), text, "visible", true).output;
}

/** `visibleText` with, for each UTF-16 unit of it, the index of the unit in `text` it came from. */
export function visibleTextWithSources(text: string): { text: string; sources: Int32Array } {
  const sources: Sources = { indices: new Int32Array(text.length), length: 0 };
  const { output } = scan(freshState(), text, "visible", true, sources);
  return { text: output, sources: sources.indices.subarray(0, sources.length) };
}

/** Characters `visibleText` may remove: every control but `\n` and `\t`, DEL, C1, and invisible characters. */
const HIDING = new RegExp(
  `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${INVISIBLE_RANGES.map(([start, end]) => `\\u{${start.toString(16)}}-\\u{${end.toString(16)}}`).join("")}]`,
  "u",
);

/** False when `visibleText(text) === text` for certain: the text has no escape, control or invisible character. */
export function mayHideText(text: string): boolean {
  return HIDING.test(text);
}

export type TerminalSanitizer = {
  /** Sanitizes the next chunk; returns what is safe to print now. */
  push(chunk: string): string;
  /** Ends the stream: returns what was held back and resets for reuse. */
  flush(): string;
};

/**
 * A streaming sanitizer for text that arrives in pieces. A sequence split across chunks
 * (`"\x1b[3"` + `"1mred"`) is still removed whole; the joined outputs always equal
 * `sanitizeForTerminal` of the joined input.
 */
export function createTerminalSanitizer(): TerminalSanitizer {
  const state = freshState();
  // A trailing character whose fate depends on what follows (half a surrogate pair — printed
  // alone it would show U+FFFD — or a joiner) waits for the next chunk.
  let held = "";
  return {
    push(chunk) {
      const text = held + chunk;
      const { output, end } = scan(state, text, "terminal", false);
      held = text.slice(end);
      return output;
    },
    flush() {
      // An unfinished sequence at the end is dropped: it never was text.
      const { output } = scan(state, held, "terminal", true);
      held = "";
      Object.assign(state, freshState());
      return output;
    },
  };
}
