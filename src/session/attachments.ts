/**
 * Files a headless prompt brings along: `--attach <path>` (repeatable) and `@path` /
 * `@"path with spaces"` mentions in the task. Each must be a regular file inside an allowed root
 * and within limits.maxAttachmentBytes. Images, audio and PDFs become typed media; UTF-8 text is
 * included as text; any other binary file is refused (no provider takes it: see docs/attachments.md).
 * What the run's model cannot read (by its declared capabilities) is routed to a specialist child
 * whose model can — preferring an agent named `vision` — and its report replaces the media.
 */
import { statSync } from "node:fs";
import type { AgentProfile, EffectiveConfig, ResolvedModel, WorkDepth } from "../config/schema.ts";
import { campaignCeilings, childCeiling } from "../config/work-depth.ts";
import { isSecretLikePath } from "../policy/secret-paths.ts";
import { openChecked, readHead } from "../security/files.ts";
import { displayPath, resolveInRoots, type Roots } from "../security/roots.ts";
import type { MediaPart } from "../tool/define.ts";
import { capabilityOf, looksBinary, sniffMedia } from "../tool/media.ts";
import { UsageError } from "../util/errors.ts";
import { mentionedPaths } from "../util/mentions.ts";

export { mentionedPaths };

/** An attached file: typed media, or text to include in the user message. */
export type Attachment = { shown: string; media: MediaPart } | { shown: string; text: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** The most text one attached file adds to the prompt (as much as a `read` shows at once). */
export const MAX_TEXT_ATTACHMENT_CHARS = 50_000;

/** Reads one attachment; throws a message for the user when it cannot be attached. */
function load(roots: Roots, requested: string, maxBytes: number): Attachment {
  const checked = resolveInRoots(roots, requested, "read");
  if (!checked.ok) throw new Error(checked.error);
  const shown = displayPath(roots, checked.value.path);
  // The user's own config and keys never leave by accident: read them yourself if you mean it.
  if (isSecretLikePath(checked.value.relative) || isSecretLikePath(requested)) throw new Error(`${shown} looks like a secret (keys, credentials, .env); it is not attached`);
  const opened = openChecked(checked.value.path);
  try {
    if (!opened.stat.isFile()) throw new Error(`${shown} is not a regular file`);
    if (opened.stat.size > maxBytes) throw new Error(`${shown} is ${opened.stat.size} bytes, above limits.maxAttachmentBytes (${maxBytes})`);
    const { bytes } = readHead(opened, maxBytes);
    const name = shown.slice(shown.lastIndexOf("/") + 1);
    const kind = sniffMedia(bytes.subarray(0, 16), name);
    if (kind) return { shown, media: { type: "file", mediaType: kind.mediaType, data: Buffer.from(bytes).toString("base64"), filename: name } };
    if (!looksBinary(bytes)) {
      try {
        const text = utf8.decode(bytes);
        // Text goes into every request of the run: bounded like a `read`, the rest left to `read`.
        return { shown, text: text.length > MAX_TEXT_ATTACHMENT_CHARS ? `${text.slice(0, MAX_TEXT_ATTACHMENT_CHARS)}\n… (cut at ${MAX_TEXT_ATTACHMENT_CHARS} of ${text.length} characters; read ${shown} for the rest)` : text };
      } catch {
        // not UTF-8: refused below
      }
    }
    // Providers take images, audio, PDFs and text; other binary content would fail at the provider.
    throw new Error(`${shown} is binary content other than an image, audio or PDF; only those and text files can be attached`);
  } finally {
    opened.close();
  }
}

/**
 * The run's attachments: every `--attach` path (an error names a bad one: exit 2, before any
 * request), then each mention that is an attachable file inside the roots (one that is not stays
 * ordinary prompt text). A file named twice is attached once.
 */
export function resolveAttachments(roots: Roots, explicit: readonly string[], task: string, maxBytes: number): Attachment[] {
  const attachments: Attachment[] = [];
  const seen = new Set<string>();
  const add = (attachment: Attachment) => {
    if (seen.has(attachment.shown)) return;
    seen.add(attachment.shown);
    attachments.push(attachment);
  };
  for (const path of explicit) {
    try {
      add(load(roots, path, maxBytes));
    } catch (error) {
      throw new UsageError(`--attach ${path}: ${(error as Error).message}`);
    }
  }
  for (const path of mentionedPaths(task)) {
    // A mention of anything but an existing regular file inside the roots is just text (`@types/node`,
    // a file the task asks to create); a real file that cannot be attached is an error to see.
    const checked = resolveInRoots(roots, path, "read");
    if (!checked.ok || !isRegularFile(checked.value.path)) continue;
    try {
      add(load(roots, path, maxBytes));
    } catch (error) {
      throw new UsageError(`@${path}: ${(error as Error).message}`);
    }
  }
  return attachments;
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The capabilities the media need that `model` does not declare. */
export function missingCapabilities(attachments: readonly Attachment[], model: ResolvedModel): string[] {
  const needed = new Set(attachments.flatMap((attachment) => ("media" in attachment ? [capabilityOf(attachment.media.mediaType)] : [])));
  return [...needed].filter((capability) => !model.capabilities.includes(capability as never));
}

/**
 * The specialist that reads media the run's model cannot: one of the agent's delegation targets
 * whose model declares every missing capability, an agent named `vision` first. Throws (exit 2,
 * before any request) when there is none.
 */
export function mediaSpecialist(config: EffectiveConfig, agent: AgentProfile, model: ResolvedModel, missing: readonly string[]): AgentProfile {
  // `vision` first, then agents that cannot change anything (a report is all that is wanted).
  const rank = (name: string) => (name === "vision" ? 0 : config.agents[name]?.tools.some((tool) => tool === "write" || tool === "run") ? 2 : 1);
  const targets = [...agent.canDelegateTo].sort((a, b) => rank(a) - rank(b));
  for (const name of targets) {
    const candidate = config.agents[name];
    const candidateModel = candidate ? config.models[candidate.model] : undefined;
    if (candidate && candidateModel && missing.every((capability) => candidateModel.capabilities.includes(capability as never))) return candidate;
  }
  throw new UsageError(
    `the attachments need the ${missing.join(" and ")} capabilit${missing.length > 1 ? "ies" : "y"}, which model '${model.alias}' does not declare, ` +
      `and no agent that '${agent.name}' may delegate to (${agent.canDelegateTo.join(", ") || "none"}) has a model that does; ` +
      `use a model that declares it (models.<alias>.capabilities) or give agents.vision such a model`,
  );
}

/**
 * Throws (exit 2, before any request) when the run cannot start the specialist child: no
 * delegation here, the delegation depth used up (`--depth flash`, multiAgent.maxDepth), or an
 * agent that may start no children (its maxChildren or multiAgent.maxChildrenPerAgent is 0).
 */
export function checkMediaRoute(
  config: EffectiveConfig,
  agent: AgentProfile,
  specialist: AgentProfile,
  model: ResolvedModel,
  place: { depth: number; workDepth: WorkDepth; canDelegate: boolean },
): void {
  const needs = `the attachments need a ${specialist.name} child run (model '${model.alias}' cannot read them), but`;
  if (!place.canDelegate || place.depth + 1 > campaignCeilings(config, place.workDepth).delegationDepth) {
    throw new UsageError(`${needs} no child run is possible here${place.depth === 0 ? ` at --depth ${place.workDepth}` : ""}`);
  }
  if (childCeiling(agent, config.multiAgent) < 1) {
    throw new UsageError(`${needs} agent ${agent.name} may start no children (agents.${agent.name}.maxChildren or multiAgent.maxChildrenPerAgent is 0)`);
  }
}

/** The user message's text: the task, then each text attachment as a fenced block. */
export function taskWithTextAttachments(task: string, attachments: readonly Attachment[]): string {
  const texts = attachments.filter((attachment): attachment is { shown: string; text: string } => "text" in attachment);
  if (texts.length === 0) return task;
  const fence = (text: string) => "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return [task, ...texts.map((attachment) => `Attached file ${attachment.shown}:\n${fence(attachment.text)}\n${attachment.text}\n${fence(attachment.text)}`)].join("\n\n");
}

/** Where a path is shown from the workspace (for the specialist's task). */
export function attachmentNames(attachments: readonly Attachment[]): string[] {
  return attachments.filter((attachment) => "media" in attachment).map((attachment) => attachment.shown);
}

