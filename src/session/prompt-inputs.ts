import type { AgentProfile } from "../config/schema.ts";
import { AGENTS_MD_LIMIT, utf8Prefix, type PromptTexts } from "../agent/prompt.ts";
import { readRegularFile } from "../security/files.ts";
import { resolveInRoots, type Roots } from "../security/roots.ts";
import { UsageError, errorMessage } from "../util/errors.ts";

/** A prompt file from trusted config may be long, but not unbounded. */
const MAX_PROMPT_FILE_BYTES = 256 * 1024;

/**
 * Reads what the system prompt needs from disk. AGENTS.md is repository
 * content: it goes through the workspace boundary (a symlink to
 * /proc/self/environ or outside the roots is skipped), must be a regular file
 * (never a FIFO or device) and is read only up to its bound.
 */
export function readPromptTexts(agent: AgentProfile, roots: Roots): PromptTexts {
  const texts: PromptTexts = {};
  if (agent.prompt !== undefined) texts.agentPrompt = agent.prompt;
  else if (agent.promptFile !== undefined) {
    try {
      const head = readRegularFile(agent.promptFile, MAX_PROMPT_FILE_BYTES);
      if (head.truncated) throw new Error(`it is larger than ${MAX_PROMPT_FILE_BYTES} bytes`);
      texts.agentPrompt = new TextDecoder().decode(head.bytes);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === "EISDIR" ? "it is a directory" : errorMessage(error);
      throw new UsageError(`agents.${agent.name}.promptFile: cannot read ${agent.promptFile} (${reason})`);
    }
  }
  const checked = resolveInRoots(roots, "AGENTS.md", "read");
  if (checked.ok) {
    try {
      const head = readRegularFile(checked.value.path, AGENTS_MD_LIMIT);
      const text = utf8Prefix(head.bytes, AGENTS_MD_LIMIT);
      texts.agentsMd = head.truncated ? `${text}\n[AGENTS.md truncated at ${AGENTS_MD_LIMIT} bytes]` : text;
    } catch {
      // Missing, not a regular file, or swapped while opening: no repository instructions.
    }
  }
  return texts;
}
