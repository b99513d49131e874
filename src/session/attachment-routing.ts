/**
 * Attachments in the user message, and the route for media the run's model cannot read: a
 * specialist child (usually `vision`) gets the media with a task to report on them, and its
 * report replaces the media in the parent's message.
 */
import type { AgentProfile, ResolvedModel } from "../config/schema.ts";
import type { Message, UserMessage } from "../protocol/messages.ts";
import type { Redactor } from "../security/redact.ts";
import { capabilityOf } from "../tool/media.ts";
import { taskWithTextAttachments, type Attachment } from "./attachments.ts";
import type { RunDelegation } from "./delegation/types.ts";

/** A report longer than this is cut before it joins the parent's context. */
export const MAX_REPORT_CHARS = 16_000;

/** The task with its attachments: text ones inline (redacted like any file text), media as typed parts. */
export function attachmentMessage(task: string, attachments: readonly Attachment[], redactor: Redactor): UserMessage {
  const redacted = attachments.map((attachment) => ("text" in attachment ? { ...attachment, text: redactor.redact(attachment.text).text } : attachment));
  const media = attachments.flatMap((attachment) => ("media" in attachment ? [attachment.media] : []));
  return {
    role: "user",
    parts: [
      { type: "text", text: taskWithTextAttachments(task, redacted) },
      ...media.map((part) => ({ type: "file" as const, mediaType: part.mediaType, data: part.data, ...(part.filename ? { filename: part.filename } : {}) })),
    ],
  };
}

/**
 * Runs the specialist on the media `model` cannot read and returns the message with that media
 * replaced by the specialist's report (media the model can read stays). Throws when the
 * specialist does not complete: the run cannot go on without what the user attached.
 */
export async function routeAttachments(
  message: Message,
  specialist: AgentProfile,
  attachments: readonly Attachment[],
  model: ResolvedModel,
  delegation: RunDelegation,
  signal: AbortSignal,
): Promise<Message> {
  if (message.role !== "user") return message;
  const unreadable = attachments.flatMap((attachment) => ("media" in attachment && !model.capabilities.includes(capabilityOf(attachment.media.mediaType) as never) ? [attachment] : []));
  const names = unreadable.map((attachment) => attachment.shown);
  const outcome = await delegation.phase(
    {
      id: "attachments",
      agent: specialist,
      goal:
        `The user attached ${names.join(", ")} to a task for a coding agent whose model cannot read them. ` +
        "Read them and report, as text, everything the coding agent needs from them: what they show or say, exact text, numbers, layout and visual details that matter for implementation. " +
        "Report only: do not change any file and do not start the task yourself. " +
        `The coding agent's task:\n${cut(textOf(message), MAX_TASK_CHARS)}`,
      deliverable: "analysis",
      acceptanceCriteria: ["every attached file is covered", "exact text and values are quoted"],
      dependencies: [],
      media: unreadable.map((attachment) => ("media" in attachment ? attachment.media : undefined)!),
    },
    signal,
  );
  const { result } = outcome;
  if (result.status !== "completed") throw new Error(`the ${specialist.name} agent could not read the attachments (${result.status}): ${result.summary}`);
  const findings = result.findings.map((finding) => `- ${finding.path}${finding.line ? `:${finding.line}` : ""}: ${finding.description}`);
  let report = [result.summary, ...findings].join("\n");
  if (report.length > MAX_REPORT_CHARS) report = `${report.slice(0, MAX_REPORT_CHARS)}\n… (report cut)`;
  const routed = new Set(unreadable.map((attachment) => ("media" in attachment ? attachment.media.data : "")));
  return {
    role: "user",
    parts: [
      ...message.parts.filter((part) => part.type !== "file" || !routed.has(part.data)),
      { type: "text", text: `[${names.join(", ")}: read by the ${specialist.name} agent (run ${outcome.childRunId}), whose report follows]\n${report}` },
    ],
  };
}

/** How much of the task the specialist is shown (text attachments can be long). */
const MAX_TASK_CHARS = 4_000;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function textOf(message: Message): string {
  return message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}
