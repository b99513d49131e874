import type { AgentProfile, PermissionMode } from "../config/schema.ts";
import buildPrompt from "./prompts/build.md" with { type: "text" };
import explorePrompt from "./prompts/explore.md" with { type: "text" };
import implementPrompt from "./prompts/implement.md" with { type: "text" };
import planPrompt from "./prompts/plan.md" with { type: "text" };
import reviewPrompt from "./prompts/review.md" with { type: "text" };
import systemPrompt from "./prompts/system.md" with { type: "text" };
import verifyPrompt from "./prompts/verify.md" with { type: "text" };
import visionPrompt from "./prompts/vision.md" with { type: "text" };

/** How much of the workspace-root AGENTS.md goes into the prompt. */
export const AGENTS_MD_LIMIT = 64 * 1024;

const AGENT_PROMPTS = {
  build: buildPrompt,
  plan: planPrompt,
  explore: explorePrompt,
  implement: implementPrompt,
  verify: verifyPrompt,
  review: reviewPrompt,
  vision: visionPrompt,
} as const;

export const BUILT_IN_PROMPTS = Object.keys(AGENT_PROMPTS) as Array<keyof typeof AGENT_PROMPTS>;

/** The text of a built-in agent prompt (shipped as .md files next to this module). */
export function builtInPrompt(name: string): string | undefined {
  return Object.hasOwn(AGENT_PROMPTS, name) ? AGENT_PROMPTS[name as keyof typeof AGENT_PROMPTS] : undefined;
}

/** Cuts UTF-8 bytes at a character boundary, never inside a multi-byte sequence. */
export function utf8Prefix(bytes: Uint8Array, limit: number): string {
  if (bytes.length <= limit) return new TextDecoder().decode(bytes);
  let end = limit;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

export type PromptFacts = {
  workspace: string;
  roots: string[];
  permissionMode: PermissionMode;
  model: string;
  now: Date;
  platform: string;
};

/** Texts the caller read (through the workspace boundary): this module does no file I/O. */
export type PromptTexts = {
  /** The agent's own prompt: inline, from its promptFile, or undefined for the built-in text. */
  agentPrompt?: string;
  /** The workspace-root AGENTS.md, already bounded (see AGENTS_MD_LIMIT). */
  agentsMd?: string;
};

/**
 * The system prompt: the shared base, the agent's own prompt, runtime facts,
 * then the repository's AGENTS.md (bounded). Kept small on purpose: every
 * byte is paid for on every request.
 */
export function assembleSystemPrompt(agent: AgentProfile, facts: PromptFacts, texts: PromptTexts = {}): string {
  const base = systemPrompt.trim();
  const own = texts.agentPrompt ?? builtInPrompt(agent.name);
  const extraRoots = facts.roots.filter((root) => root !== facts.workspace);
  const runtime = [
    `Workspace root: ${facts.workspace}`,
    ...(extraRoots.length > 0 ? [`Other allowed roots: ${extraRoots.join(", ")}`] : []),
    `Date: ${facts.now.toISOString().slice(0, 10)}`,
    `Platform: ${facts.platform}`,
    `Permission mode: ${facts.permissionMode}`,
    `Agent: ${agent.name}; model: ${facts.model}`,
  ].join("\n");
  const sections = [base, own?.trim(), `# Environment\n${runtime}`];
  const agentsMd = texts.agentsMd;
  if (agentsMd !== undefined && agentsMd.trim() !== "") {
    sections.push(`# Repository instructions (AGENTS.md)\n${agentsMd.trim()}`);
  }
  return sections.filter((s): s is string => s !== undefined && s !== "").join("\n\n");
}
