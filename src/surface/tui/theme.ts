/** The TUI's colours, in one place (the view and the entry renderers share them). */
export const COLORS = {
  dim: "#8a8a8a",
  accent: "#7aa2f7",
  user: "#e0af68",
  ok: "#9ece6a",
  error: "#f7768e",
  reasoning: "#737aa2",
  border: "#565f89",
};
