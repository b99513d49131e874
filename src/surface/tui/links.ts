/**
 * Links in answers show where they go. OpenTUI's Markdown draws `[text](url)` as just "text" with
 * a terminal hyperlink (OSC 8) when the terminal supports them, so a model (or a page it quotes)
 * could show "docs.python.org" and link elsewhere. With the renderer reporting no hyperlink
 * support, the Markdown renderer writes the target after the text — "text (url)" — whatever the
 * terminal can do; the text can no longer hide the destination.
 */
import type { CliRenderer } from "@opentui/core";

export function showLinkTargets(renderer: CliRenderer): void {
  let owner: object | null = Object.getPrototypeOf(renderer);
  let descriptor: PropertyDescriptor | undefined;
  while (owner && !(descriptor = Object.getOwnPropertyDescriptor(owner, "capabilities"))) owner = Object.getPrototypeOf(owner);
  const read = descriptor?.get;
  if (!read) return;
  Object.defineProperty(renderer, "capabilities", {
    configurable: true,
    get() {
      const capabilities = read.call(renderer);
      return capabilities ? { ...capabilities, hyperlinks: false } : capabilities;
    },
  });
}
