/**
 * The names MCP tools get before a model sees them: `mcp__<server>__<tool>`. Providers accept only
 * `[A-Za-z0-9_-]{1,64}` in tool names, so every other character (and `-`, to keep the separator
 * and the escape readable) becomes `_u<hex>_` — `create-issue` → `create_u2d_issue`. A name that
 * would be too long, or that two tools would share (a tool `a-b` and a tool `a_u2d_b`), gets a
 * short hash of the real server and tool names instead of its tail, so every exposed name maps
 * to exactly one tool.
 */

/** Providers' limit on a tool name's length (OpenAI and Anthropic both allow 64). */
export const MAX_TOOL_NAME = 64;

/** `[A-Za-z0-9_]` stay; everything else is `_u<hex code point>_`. */
export function escapeNamePart(text: string): string {
  let out = "";
  for (const char of text) out += /[A-Za-z0-9_]/.test(char) ? char : `_u${char.codePointAt(0)!.toString(16)}_`;
  return out;
}

/** The plain exposed name, before length and collision handling. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${escapeNamePart(server)}__${escapeNamePart(tool)}`;
}

/** A stable 8-hex-digit tag of the real names (FNV-1a over UTF-16 units: no crypto import at startup). */
function tag(server: string, tool: string): string {
  let hash = 0x811c9dc5;
  const text = `${server}\u0000${tool}`;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

function hashed(server: string, tool: string): string {
  const suffix = `_h${tag(server, tool)}`;
  return mcpToolName(server, tool).slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
}

/**
 * Exposed names for the tools of all servers, in a stable order: plain where that is unique and
 * short enough, hashed otherwise. Returns exposed name → the server and tool it calls.
 */
export function assignToolNames(entries: ReadonlyArray<{ server: string; tool: string }>): Map<string, { server: string; tool: string }> {
  const plainCounts = new Map<string, number>();
  for (const { server, tool } of entries) {
    const plain = mcpToolName(server, tool);
    plainCounts.set(plain, (plainCounts.get(plain) ?? 0) + 1);
  }
  const names = new Map<string, { server: string; tool: string }>();
  for (const entry of entries) {
    const plain = mcpToolName(entry.server, entry.tool);
    const name = plain.length <= MAX_TOOL_NAME && plainCounts.get(plain) === 1 ? plain : hashed(entry.server, entry.tool);
    // Identical (server, tool) pairs are one tool: a server listing a name twice keeps the first.
    if (!names.has(name)) names.set(name, entry);
  }
  return names;
}
