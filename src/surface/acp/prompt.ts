import * as acp from "@agentclientprotocol/sdk";

/**
 * A `session/prompt`'s content blocks → the task text a turn runs on. Text is taken as is; a
 * resource link is mentioned by its URI (the model may read it with its tools); an embedded text
 * resource is included whole, fenced and labelled with its URI. Images, audio and binary
 * resources are not advertised (promptCapabilities), so they are refused with invalid params.
 */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  if (!Array.isArray(blocks) || blocks.length === 0) throw acp.RequestError.invalidParams(undefined, "prompt: at least one content block is required");
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[${block.title ?? block.name}](${block.uri})`);
        break;
      case "resource": {
        const resource = block.resource;
        if (!("text" in resource) || typeof resource.text !== "string") {
          throw acp.RequestError.invalidParams(undefined, `prompt: binary resource ${resource.uri} is not supported yet (only text resources)`);
        }
        parts.push(`<context uri="${resource.uri}">\n${resource.text}${resource.text.endsWith("\n") ? "" : "\n"}</context>`);
        break;
      }
      default:
        throw acp.RequestError.invalidParams(undefined, `prompt: ${(block as { type: string }).type} content is not supported yet (text, resource_link and text resources are)`);
    }
  }
  const text = parts.join("\n\n").trim();
  if (text === "") throw acp.RequestError.invalidParams(undefined, "prompt: the prompt has no text");
  return text;
}
