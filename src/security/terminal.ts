/**
 * Terminal sanitizing for model text shown to a human.
 *
 * The model must not drive the user's terminal: no colors it chose, no cursor moves, no window
 * titles, no OSC 52 clipboard writes, no OSC 8 links, no bidi tricks that make shown text differ
 * from stored text. One linear state machine does both jobs the design asks for:
 *   1. whole escape sequences (7-bit `ESC …` and their 8-bit C1 forms) are swallowed, and
 *   2. every character that reaches the output passes `isSafeChar` — the final filter: every
 *      remaining C0 control except `\n` and `\t`, DEL, every C1 and the bidi controls is shown
 *      as a printable escape (`\x07`, `\u202e`); CR is dropped.
 * Because ESC itself never passes the final filter, removing one sequence can never join its
 * neighbours into a new live one (`"\x1b\x1b[31m]0;X\x07"` yields `"]0;X"`).
 *
 * The machine holds no text, only its state, so streaming and one-shot use share one code path
 * and any split of the input gives the same output as the whole.
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

/** Where the scanner is: plain text, or inside some kind of escape sequence. */
type Mode =
  | "ground"
  | "escape" // after ESC
  | "escape-intermediate" // ESC followed by 0x20–0x2F bytes (e.g. `ESC ( B`)
  | "csi" // after `ESC [` or 0x9B: parameters and intermediates until a final byte
  | "string"; // OSC, DCS, SOS, PM, APC bodies: until BEL or ST

type ScanState = { mode: Mode; sequenceLength: number };

/** True for characters that may reach the terminal. This is the final pass. */
function isSafeChar(code: number): boolean {
  if (code < 0x20) return code === 0x0a || code === 0x09;
  if (code < 0x7f) return true;
  if (code <= 0x9f) return false; // DEL and every C1
  if (code === 0x061c || code === 0x200e || code === 0x200f) return false;
  if (code >= 0x202a && code <= 0x202e) return false;
  if (code >= 0x2066 && code <= 0x2069) return false;
  return true;
}

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

/** Scans `text` from `state`, returning the safe output; updates `state` in place. */
function scan(state: ScanState, text: string): string {
  const parts: string[] = [];
  let runStart = -1; // start of the current run of safe ground characters, -1 when none
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (state.mode !== "ground") {
      if (state.sequenceLength >= MAX_SEQUENCE_LENGTH) {
        abandon(state); // an unterminated sequence may not swallow unbounded output
      } else {
        state.sequenceLength++;
        if (consumeInSequence(state, code)) continue;
      }
    }
    // Ground: the character is text, an introducer, or something the final filter deletes.
    let opens: Mode | undefined;
    if (code === ESC) opens = "escape";
    else if (code >= 0x80 && code <= 0x9f) opens = c1IntroducerMode(code);
    if (opens !== undefined) {
      state.mode = opens;
      state.sequenceLength = 1;
    }
    if (opens === undefined && isSafeChar(code)) {
      if (runStart < 0) runStart = index;
      continue;
    }
    if (runStart >= 0) parts.push(text.slice(runStart, index));
    runStart = -1;
    // A stray control (not part of a sequence) is shown escaped, so the reader sees that
    // something was there; CR is dropped (CRLF is just a line break here).
    if (opens === undefined && code !== 0x0d) parts.push(visibleEscape(code));
  }
  if (runStart >= 0) parts.push(text.slice(runStart));
  return parts.join("");
}

/** `\x07`, `\x9b`, `\u202e`: printable ASCII naming the control character. */
function visibleEscape(code: number): string {
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * Removes everything from `text` that could drive a terminal: escape sequences (7-bit and 8-bit),
 * C0 controls except `\n` and `\t` (so `\r\n` becomes `\n` and a lone `\r` goes), DEL, C1 and bidi
 * controls. An unterminated sequence at the end of the text is dropped. Printable Unicode is kept.
 */
export function sanitizeForTerminal(text: string): string {
  const sanitizer = createTerminalSanitizer();
  return sanitizer.push(text) + sanitizer.flush();
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
  const state: ScanState = { mode: "ground", sequenceLength: 0 };
  // A high surrogate at the end of a chunk waits for its pair, so a printed chunk never ends in
  // half a character (writing it alone would show U+FFFD).
  let heldSurrogate = "";
  return {
    push(chunk) {
      const output = heldSurrogate + scan(state, chunk);
      const last = output.charCodeAt(output.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        heldSurrogate = output.slice(-1);
        return output.slice(0, -1);
      }
      heldSurrogate = "";
      return output;
    },
    flush() {
      // An unfinished sequence at the end is dropped: it never was text.
      const output = heldSurrogate;
      heldSurrogate = "";
      state.mode = "ground";
      state.sequenceLength = 0;
      return output;
    },
  };
}
