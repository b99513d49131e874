/**
 * An answer as Markdown: OpenTUI's MarkdownRenderable (marked for the structure, tree-sitter for
 * the styling of text and fenced code) over the sanitized text.
 *
 * Streaming cost. Deltas reach the store once a frame (controller.ts); on each content change the
 * renderable re-lexes only from the last two top-level tokens on (`parseMarkdownIncremental`:
 * earlier tokens are kept when the new text still starts with their raw text). In its default
 * "coalesced" mode all ordinary Markdown of an answer is one block whose whole text is re-styled
 * by tree-sitter on every change — for a long answer a worker parse of the whole text per frame
 * (~0.8 s for 66 KB measured here), so highlights never catch up. "top-level" mode keeps one
 * renderable per top-level block: finished paragraphs, lists and code blocks are left alone and
 * only the trailing block is re-styled, so a frame costs the size of that block, not the answer.
 *
 * Sanitizing is incremental too: while the text only grows, just the new part goes through the
 * streaming sanitizer; a finished answer is sanitized once, whole.
 */
import { createTerminalSanitizer, sanitizeForTerminal } from "../../security/terminal.ts";
import { codeHighlighter } from "./highlight.ts";
import { COLORS, syntaxStyle } from "./theme.ts";

/** A sanitizer for one growing text: `(text, final)` → the text safe to draw. */
export function growingSanitizer(): (text: string, final: boolean) => string {
  let raw = "";
  let out = "";
  let live = false; // `out` came from `stream` (and matches its state)
  let stream = createTerminalSanitizer();
  return (text, final) => {
    if (final) {
      // One exact pass (what the stream held back is settled), unless this text already had it.
      if (live || text !== raw || out === "") out = sanitizeForTerminal(text);
      raw = text;
      live = false;
      return out;
    }
    if (live && text.length >= raw.length && text.startsWith(raw)) {
      out += stream.push(text.slice(raw.length));
    } else {
      stream = createTerminalSanitizer();
      out = stream.push(text);
      live = true;
    }
    raw = text;
    return out;
  };
}

/**
 * `streaming`: the answer is still growing (its run is active). The renderer is told so while it
 * is, and told it ended when it does, so the last blocks are parsed for good. An answer that was
 * already finished when it appeared (a resumed session) stays in streaming mode: its text never
 * changes, so the parse is the same, and only in that mode does the renderer draw text blocks at
 * once (from marked) instead of leaving them blank until the tree-sitter worker styled them.
 */
export function MarkdownText(props: { text: string; streaming: boolean }) {
  const clean = growingSanitizer();
  const appearedFinished = !props.streaming;
  codeHighlighter(); // configured before the first code block takes the shared client
  return (
    // The element is built empty and its props set in this order: the style and block mode
    // before any content, or blocks are built (and styled) without them.
    <markdown
      syntaxStyle={syntaxStyle()}
      internalBlockMode="top-level"
      streaming={props.streaming || appearedFinished}
      fg={COLORS.text}
      conceal
      width="100%"
      flexShrink={0}
      content={clean(props.text, !props.streaming)}
    />
  );
}
