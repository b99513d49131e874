/**
 * Redaction of text as it will be seen, not only as it is stored.
 *
 * A token split by something a reader never sees — colour codes (`ghp_abc\x1b[31mdef…`), a
 * zero-width space, a soft hyphen, a CR, a tag character — is not found by the redactor in the raw
 * text, yet a terminal (after zero's sanitizer removed the sequence) or a model shows it whole.
 * So text is redacted twice: as it is, and in its visible form (`visibleText`: escape sequences
 * and every control, invisible or format character removed). What the visible pass finds is
 * written back into the raw text line by line: on a line where it redacted something, the part
 * from just after the last unchanged character before the change to the last changed character
 * is replaced by its redacted visible form (the escapes and invisible characters inside that part
 * go with it); every other line, and the rest of that line, keeps its bytes. The line count never changes (a line break that was inside
 * a removed escape sequence is put back after the marker).
 */
import type { Redaction, Redactor } from "./redact.ts";
import { mayHideText, visibleText, visibleTextWithSources } from "./terminal.ts";

/** Adds the counts of `more` to `base`. */
function combine(base: Redaction, more: Redaction, text: string): Redaction {
  const kinds = { ...base.kinds };
  for (const [kind, count] of Object.entries(more.kinds)) kinds[kind] = (kinds[kind] ?? 0) + count;
  return { text, count: base.count + more.count, kinds };
}

/** Line breaks in `text` between `start` and `end` (those that were inside escape sequences). */
function lineBreaks(text: string, start: number, end: number): number {
  let count = 0;
  for (let index = text.indexOf("\n", start); index !== -1 && index < end; index = text.indexOf("\n", index + 1)) count++;
  return count;
}

/**
 * `redactor.redact(text)`, and also whatever the redactor finds in the visible form of the text
 * (see the module comment). Counts and kinds cover both passes.
 */
export function redactVisible(redactor: Redactor, text: string): Redaction {
  const raw = redactor.redact(text);
  if (!mayHideText(raw.text)) return raw;
  const visible = visibleText(raw.text);
  if (visible === raw.text) return raw;
  const seen = redactor.redact(visible);
  if (seen.count === 0) return raw;
  const { sources } = visibleTextWithSources(raw.text);
  const before = visible.split("\n");
  const after = seen.text.split("\n");
  // The redactor keeps the line count; should it ever not, the redacted visible text is the safe answer.
  if (before.length !== after.length) return combine(raw, seen, seen.text);
  const parts: string[] = [];
  let cursor = 0; // in raw.text
  let offset = 0; // start of the current line in `visible`
  for (const [line, shown] of before.entries()) {
    const redacted = after[line] ?? "";
    if (shown !== redacted) {
      let prefix = 0;
      const most = Math.min(shown.length, redacted.length);
      while (prefix < most && shown[prefix] === redacted[prefix]) prefix++;
      let suffix = 0;
      while (suffix < most - prefix && shown[shown.length - 1 - suffix] === redacted[redacted.length - 1 - suffix]) suffix++;
      const start = offset + prefix; // first changed unit of `visible`
      const end = offset + shown.length - suffix; // first unchanged unit after the change
      // Cut right after the last unchanged character and right after the last changed one: right
      // after a character that was shown the raw text is outside any sequence, so the splice can't
      // complete one. (Right before a shown character it may not be: `ESC é` shows `é`.)
      const rawStart = start > 0 ? (sources[start - 1] ?? -1) + 1 : 0;
      const rawEnd = end > start ? (sources[end - 1] ?? raw.text.length - 1) + 1 : rawStart;
      parts.push(raw.text.slice(cursor, rawStart), redacted.slice(prefix, redacted.length - suffix), "\n".repeat(lineBreaks(raw.text, rawStart, rawEnd)));
      cursor = rawEnd;
    }
    offset += shown.length + 1;
  }
  parts.push(raw.text.slice(cursor));
  return combine(raw, seen, parts.join(""));
}

const visibleAware = new WeakSet<Redactor>();

/**
 * A redactor that redacts what a reader will see as well as the raw text (`redactVisible`);
 * wrapping one twice returns it unchanged.
 */
export function withVisibleRedaction(redactor: Redactor): Redactor {
  if (visibleAware.has(redactor)) return redactor;
  const wrapped: Redactor = {
    redact: (text) => redactVisible(redactor, text),
    mayContainSecrets: (text) => redactor.mayContainSecrets(text) || (mayHideText(text) && redactor.mayContainSecrets(visibleText(text))),
  };
  visibleAware.add(wrapped);
  return wrapped;
}
