import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { DEFAULT_MAX_STEPS, EMERGENCY_TOOL_CALLS } from "../../config/defaults.ts";
import { fieldMark, toolMark, workspaceModeMark, type NotEnforcedMark } from "../../config/enforcement.ts";
import { loadConfig, type LoadedConfig } from "../../config/load.ts";
import type { AgentProfile } from "../../config/schema.ts";
import { existingProjectConfigs, findProjectConfig, projectRootOf } from "../../config/paths.ts";
import { reviewProjectConfig, type ProjectReview } from "../../config/review.ts";
import { contentHash, ownProjectFile, trustEntryFor, trustWorkspace, unsafeOwnership } from "../../config/trust.ts";
import { endpointHost } from "../../llm/providers.ts";
import { BUILT_IN_PROMPTS, builtInPrompt } from "../../agent/prompt.ts";
import { UsageError, errorMessage } from "../../util/errors.ts";
import { canonicalPath, isWithin } from "../../util/paths.ts";
import { parseCommandArgs, stringFlag } from "./args.ts";
import { AGENTS_HELP, INIT_HELP, TRUST_HELP } from "./help.ts";
import { reportConfigNotices, type CliIo } from "./io.ts";
import { workspaceFrom } from "./workspace.ts";

const CWD_ONLY = { cwd: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export function agentsCommand(io: CliIo): number {
  const { values } = parseCommandArgs("agents", io.argv, CWD_ONLY, false);
  if (values.help) {
    io.stdout(AGENTS_HELP);
    return 0;
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const loaded = loadConfig({ workspace, env: io.env });
  reportConfigNotices(io, loaded);
  io.stdout(formatAgents(loaded));
  return 0;
}

/** `text (mark)` when the setting is accepted but not enforced yet (see NOT_YET_ENFORCED). */
function marked(text: string, mark: NotEnforcedMark | undefined): string {
  return mark === undefined ? text : `${text} (${mark})`;
}

/** The effective profiles, root first; settings nothing enforces yet are marked as such. */
export function formatAgents(loaded: Pick<LoadedConfig, "config" | "sources">): string {
  const { config } = loaded;
  const lines: string[] = [];
  const names = Object.keys(config.agents).sort((a, b) =>
    a === config.defaultAgent ? -1 : b === config.defaultAgent ? 1 : a.localeCompare(b),
  );
  for (const name of names) {
    const agent = config.agents[name]!;
    // Every displayed field goes through the table, so an entry added there is marked here too.
    const field = (key: keyof AgentProfile, text: string) => marked(text, fieldMark(key));
    const model = config.models[agent.model];
    const modelText = model ? `${agent.model} → ${model.type} ${model.model}` : `${agent.model} (unknown alias)`;
    const budgets = [
      field("maxSteps", `maxSteps ${agent.maxSteps ?? DEFAULT_MAX_STEPS}`),
      field("maxToolCalls", `maxToolCalls ${agent.maxToolCalls ?? EMERGENCY_TOOL_CALLS}`),
      field("maxTokens", `maxTokens ${agent.maxTokens ?? "-"}`),
      field("timeoutMs", `timeoutMs ${agent.timeoutMs ?? "-"}`),
      field("maxChildren", `maxChildren ${agent.maxChildren ?? "-"}`),
    ].join(", ");
    const tools = agent.tools.map((tool) => marked(tool, toolMark(tool))).join(", ") || "none";
    const permissionMode = agent.permissionMode ?? `${config.permissionMode} (default)`;
    const workspaceMode = marked(agent.workspaceMode, workspaceModeMark(agent.workspaceMode));
    lines.push(`${name}${name === config.defaultAgent ? " (root)" : ""}${agent.description ? ` - ${agent.description}` : ""}`);
    lines.push(`  model: ${field("model", modelText)}`);
    lines.push(`  tools: ${field("tools", tools)}`);
    lines.push(`  permissionMode: ${field("permissionMode", permissionMode)}  workspaceMode: ${field("workspaceMode", workspaceMode)}`);
    for (const key of ["canDelegateTo", "skills", "mcpServers", "accepts"] as const) {
      if (agent[key].length > 0) lines.push(`  ${key}: ${field(key, agent[key].join(", "))}`);
    }
    lines.push(`  budgets: ${budgets}`);
  }
  const sources = loaded.sources.map((s) => `${s.layer} ${s.file}`);
  lines.push("", `config: built-in defaults${sources.length > 0 ? `, ${sources.join(", ")}` : ""}`);
  return `${lines.join("\n")}\n`;
}

export function trustCommand(io: CliIo): number {
  const { values } = parseCommandArgs("trust", io.argv, CWD_ONLY, false);
  if (values.help) {
    io.stdout(TRUST_HELP);
    return 0;
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const project = findProjectConfig(workspace);
  const root = project ? projectRootOf(project) : workspace;
  if (root !== workspace) {
    // Never trust a parent the user did not name: it may be shared (/tmp) or someone else's.
    throw new UsageError(
      `the nearest project config is ${project}, in ${root} above this workspace; nothing was trusted. ` +
        `Review that file, then trust its directory explicitly: zero trust --cwd ${root}`,
      { command: "trust" },
    );
  }
  const unsafe = unsafeOwnership(project ? [root, dirname(project), project] : [root]);
  if (unsafe) throw new UsageError(`refusing to trust ${root}: ${unsafe}`, { command: "trust" });
  // Read once: what is summarized (and validated) here is exactly what the recorded hash covers.
  // An invalid file is reported (exit 2) and nothing is recorded.
  const own = ownProjectFile(root);
  const review = own === undefined ? undefined : reviewProjectConfig(own.file, own.bytes.toString("utf8"), io.env);
  const files: Record<string, string> = own === undefined ? {} : { [own.file]: own.sha256 };
  const before = trustEntryFor(root, io.env);
  const already = before?.files !== undefined && own !== undefined && before.files[own.file] === own.sha256 && Object.keys(before.files).length === 1;
  trustWorkspace(root, io.env, files);
  const lines = [`${already ? "already trusted" : "trusted"} ${root}`];
  if (own === undefined || review === undefined) {
    lines.push("no project config found yet (one added later loads only after 'zero trust' again)");
  } else {
    lines.push(`project config: ${own.file} (sha256 ${own.sha256.slice(0, 12)})`, ...formatReview(review));
    lines.push("a later change to it is not loaded until you review it and run 'zero trust' again");
  }
  io.stdout(`${lines.map(visible).join("\n")}\n`);
  return 0;
}

/** What trusting the file hands over, one line each, indented under a heading. */
export function formatReview(review: ProjectReview): string[] {
  const shown = (path: string) => (isWithin(review.root, path) ? relative(review.root, path) || "." : `${path} (outside the project)`);
  const lines: string[] = [];
  for (const { model, keyVariable, setBy } of review.endpoints) {
    const endpoint = model.baseURL ?? `the ${model.type} default endpoint${endpointHost(model) ? ` (${endpointHost(model)})` : ""}`;
    const key = keyVariable === undefined ? "no key" : `$${keyVariable}`;
    lines.push(`model "${model.alias}" (${model.type} ${model.model}, set by ${setBy}) sends ${key} to ${endpoint}`);
  }
  if (review.webSearchKey !== undefined) lines.push(`web search sends $${review.webSearchKey} to Brave Search`);
  for (const { id, server } of review.mcp) {
    const what =
      server.type === "stdio"
        ? `runs ${[server.command, ...server.args].map(quoteIfNeeded).join(" ")} in ${shown(server.cwd)}`
        : `connects to ${server.url}`;
    // What the server is handed besides: environment names, header names, an OAuth client secret.
    const env = server.type === "stdio" && Object.keys(server.env).length > 0 ? ` with environment ${Object.keys(server.env).join(", ")}` : "";
    const headers = server.type === "http" && Object.keys(server.headers).length > 0 ? ` sending headers ${Object.keys(server.headers).join(", ")}` : "";
    const oauth = server.type === "http" && typeof server.oauth === "object" && server.oauth.clientSecretEnv !== undefined ? ` with the OAuth client secret $${server.oauth.clientSecretEnv}` : "";
    lines.push(`MCP server "${id}" ${what}${env}${headers}${oauth}${server.enabled ? "" : " (disabled)"}`);
  }
  for (const plugin of review.plugins) lines.push(`plugin ${shown(plugin)}`);
  for (const { agent, path, outside } of review.promptFiles) {
    lines.push(`agent "${agent}" reads its prompt from ${outside ? `${path} (outside the project)` : relative(review.root, path)}`);
  }
  if (review.defaultAgent !== undefined) lines.push(`root agent: ${review.defaultAgent}`);
  for (const { keyPath, mode } of review.permissions) {
    const ignored = review.ignoredPermissions.find((entry) => entry.keyPath === keyPath);
    lines.push(ignored ? `${keyPath}: ${mode}: ignored, wider than your own (${ignored.ceiling})` : `${keyPath}: ${mode}`);
  }
  for (const ignored of review.ignoredPermissions) {
    if (ignored.keyPath === "defaultAgent") lines.push(`defaultAgent: ${ignored.value}: ignored, it runs wider than your own mode (${ignored.ceiling})`);
  }
  if (lines.length === 0) return ["it sets no model endpoints or keys, MCP servers, plugins, prompt files or permission modes"];
  return ["what it sets that matters:", ...lines.map((line) => `  ${visible(line)}`)];
}

/**
 * Control, format (bidi, zero-width, tag) and line separator characters shown as `\u{…}`: what the
 * user reviews must look like what it is, and a value from the file must not drive the terminal.
 */
function visible(line: string): string {
  return line.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}

function quoteIfNeeded(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word);
}

function initialConfig(): string {
  const agents = BUILT_IN_PROMPTS.map(
    (name) => `    "${name}": { "promptFile": "./prompts/zero-cli/${name}.md" }`,
  ).join(",\n");
  return `// zero configuration for this project (JSONC: comments and trailing commas are fine).
// Loaded only while this workspace is trusted ('zero trust'). Keep secrets out:
// name environment variables with apiKeyEnv instead.
{
  "version": 2,
  "defaultAgent": "build",
  "workDepth": "medium",
  "permissionMode": "ask",

  // Model aliases. The built-in alias "default" uses Vercel AI Gateway; define
  // your own and point agents at it, for example:
  // "models": {
  //   "coder": { "provider": "openai", "model": "<model id>", "apiKeyEnv": "OPENAI_API_KEY" }
  // },

  // Agents merge over the built-in profiles: only what you set here changes.
  "agents": {
${agents}
  }
}
`;
}

export function initCommand(io: CliIo): number {
  const { values } = parseCommandArgs("init", io.argv, CWD_ONLY, false);
  if (values.help) {
    io.stdout(INIT_HELP);
    return 0;
  }
  const workspace = workspaceFrom(stringFlag(values.cwd), io.cwd);
  const existing = existingProjectConfigs(workspace);
  if (existing.length > 0) {
    throw new UsageError(`${existing[0]} already exists; nothing was written (edit it, or run 'zero trust' to use it)`, { command: "init" });
  }
  const files = new Map<string, string>();
  for (const name of BUILT_IN_PROMPTS) files.set(join(workspace, "prompts", "zero-cli", `${name}.md`), builtInPrompt(name) ?? "");
  files.set(join(workspace, "zero-cli.jsonc"), initialConfig());
  for (const path of files.keys()) {
    // A `prompts` symlink must not carry the files out of the workspace.
    if (!isWithin(workspace, canonicalPath(path))) throw new UsageError(`${path} would be written outside the workspace; nothing was written`, { command: "init" });
    if (existsSync(path)) throw new UsageError(`${path} already exists; nothing was written`, { command: "init" });
  }
  // Exclusive creation: a file that appears meanwhile is never overwritten; on any
  // failure the files created so far are removed, so init is all or nothing.
  const created: string[] = [];
  try {
    for (const [path, text] of files) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text, { flag: "wx" });
      created.push(path);
    }
  } catch (error) {
    for (const path of created) rmSync(path, { force: true });
    throw new UsageError(`could not write ${workspace}: ${errorMessage(error)}; nothing was kept`, { command: "init" });
  }
  // What was written is what was reviewed: its hash is recorded, so a later change needs 'zero trust'.
  const configFile = join(workspace, "zero-cli.jsonc");
  trustWorkspace(workspace, io.env, { [configFile]: contentHash(files.get(configFile)!) });
  io.stdout(`created ${join(workspace, "zero-cli.jsonc")} and prompts/zero-cli/*.md\ntrusted ${workspace}\n`);
  return 0;
}
