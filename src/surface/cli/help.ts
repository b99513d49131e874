/**
 * Help texts. This module must stay free of heavy imports: `zero --help` and
 * `zero --version` load only it and the version.
 */
export const MAIN_HELP = `zero: a multi-agent coding agent for your terminal

Usage:
  zero                        the interactive TUI (in a terminal; zero --resume <id> continues a session)
  zero run [options] [task]   run one task headlessly (task from arguments or stdin)
  zero exec [options] [prompt]  run one prompt for editors and wrappers (stream-json protocol)
  zero host                   serve the NDJSON host protocol v1 to bridge programs
  zero acp                    serve the Agent Client Protocol (ACP) on stdio to editors
  zero sessions               list this workspace's sessions (--interrupted: interrupted runs)
  zero agents                 show the effective agent profiles
  zero mcp list|login|logout  show MCP servers and their tools; sign in to or out of one
  zero skills                 list skill packages: where each comes from, which agents see it
  zero init                   create zero-cli.jsonc and prompt files, and trust this workspace
  zero trust                  trust this workspace's project configuration

Options:
  -h, --help                  show help (also: zero <command> --help)
  -v, --version               print the version

Exit codes: 0 success, 1 internal error, 2 usage or configuration error,
3 provider error, 4 a limit stopped the run, 130 cancelled.
`;

export const TUI_HELP = `Usage: zero [--resume <session id>] [-C <dir>]

The interactive TUI (needs a terminal on stdin and stdout; elsewhere use 'zero run').

Options:
  --resume <id>        continue a saved TUI session (its timeline shown again)
  -C, --cwd <dir>      the workspace (default: the current directory)
  -h, --help           show this help

Inside: Enter sends, /help lists every command and key, Ctrl-C twice quits.
`;

export const RUN_HELP = `Usage: zero run [options] [task]

Runs one task with the default agent and prints the answer. Without a task
argument the task is read from standard input.

Options:
  -w, --workflow <name>           run a configured workflow: each phase on its own agent
  -m, --model <alias>             use this model alias instead of the agent's (every phase's)
      --cwd <dir>                 workspace directory (default: current directory)
      --add-dir <dir>             allow another directory (repeatable)
      --permission-mode <mode>    read-only, ask, accept-edits or full-access
  -y, --yes                       same as --permission-mode full-access
      --json                      write every runtime event as one JSON line
      --reasoning-effort <level>  default, low, medium, high, xhigh, max or ultra
      --speed <mode>              standard or fast
      --depth <preset>            flash, medium, pro or ultra
      --attach <path>             attach a file (repeatable); @path and @"a path" in the task
                                  attach workspace files too
      --resume <id|latest>        continue a saved session (its exact history) with a new task
      --resume-run <id|latest>    continue a run interrupted by a process death (same run id,
                                  permissions, spent budget and deadline)
  -h, --help                      show this help

Headless runs cannot ask for approval: a call that needs it is denied and the
model is told so. Choose a permission mode that fits the job.
`;

export const AGENTS_HELP = `Usage: zero agents [--cwd <dir>]

Prints the effective agent profiles after merging built-in defaults, the user
configuration and a trusted project configuration. The root agent is marked.
`;

export const INIT_HELP = `Usage: zero init [--cwd <dir>]

Writes zero-cli.jsonc and prompts/zero-cli/<agent>.md into the workspace and
marks the workspace trusted. Refuses, writing nothing, when a project
configuration or one of the prompt files already exists.
`;

export const TRUST_HELP = `Usage: zero trust [--cwd <dir>]

Marks the workspace trusted so its project configuration (zero-cli.jsonc,
.zero-cli/zero-cli.jsonc or .zero-cli/config.jsonc) is loaded. Read that file
first: it can choose model endpoints, permissions and prompts.
`;

export const SESSIONS_HELP = `Usage: zero sessions [--interrupted] [--cwd <dir>]

Lists this workspace's CLI sessions, newest first: id, last activity (UTC),
status of the latest run, title. With --interrupted, lists root runs that a
process death interrupted; continue one with 'zero run --resume-run <id> <task>'.
`;

export const EXEC_HELP = `Usage: zero exec [options] [prompt]

Runs one prompt for editor extensions and automation wrappers.

Options:
      --input-format <fmt>        text (the prompt from arguments or stdin, default) or
                                  stream-json (JSONL message/prompt events, schemaVersion 2)
      --output-format <fmt>       text (default), json (one result object at the end) or
                                  stream-json (schemaVersion 2 events, one per line)
      --file <path>               read the input from a file instead of stdin
  plus the run options: -m/--model, --cwd, --add-dir, --permission-mode, -y/--yes,
  --reasoning-effort, --speed, --depth (see 'zero run --help').

With stream-json output every run ends with one run_end line whose exitCode is the
process exit code. The protocol is described in docs/stream-json.md.
`;

export const HOST_HELP = `Usage: zero host [--bridge-compat] [--single-request] [run options]

Serves the host protocol v1 for bridge programs: one JSON request per line on
stdin (ping, run, cancel), protocol lines on stdout, logs on stderr.

Options:
      --bridge-compat             a run answers with its terminal line only (final or error)
      --single-request            answer the first request, then exit with its exit code
  plus the run options: -m/--model, --cwd, --add-dir, --permission-mode, -y/--yes,
  --reasoning-effort, --speed, --depth (see 'zero run --help').

The protocol is described in docs/host-protocol.md.
`;

export const ACP_HELP = `Usage: zero acp

Serves the Agent Client Protocol (ACP) on stdio for editors: JSON-RPC messages,
one per line, on stdin and stdout; diagnostics on stderr. Each session has the
configuration, tools, plugins and MCP servers of the directory it names, is stored
there, and can be listed, loaded and resumed later. Approvals are asked with
session/request_permission. The server runs until stdin ends.

Editor setup: { "command": "zero", "args": ["acp"] }. Details: docs/acp.md.
`;

export const MCP_HELP = `Usage: zero mcp <action> [options]

Actions:
  list              connect to every enabled MCP server and show its status, tool
                    count, the agents that may use it and, for OAuth servers,
                    whether zero holds tokens for it
  login <server>    sign in to an OAuth server now: the authorization URL is
                    printed on stderr and zero waits for the browser's callback
                    on 127.0.0.1 (for CI and scripts, ahead of a run)
  logout <server>   remove the tokens, discovery data and client registration
                    zero stored for the server

Options:
      --cwd <dir>   workspace directory (default: current directory)
      --json        one JSON object on stdout
  -h, --help        show this help

Exit codes: 0 done, 2 usage or configuration error, 3 the sign-in failed or
timed out.
`;

export const SKILLS_HELP = `Usage: zero skills [--cwd <dir>] [--json]

Lists every skill package zero found for this workspace: its id, description,
SKILL.md path, where it comes from (codex-user, user, user-config, workspace,
project-config), whether it is enabled and which agents are offered it; then
packages a higher-precedence one replaced, and packages that were not loaded
with the reason. A workspace's .agents/skills is read only once the workspace
is trusted ('zero trust').

Options:
      --cwd <dir>   workspace directory (default: current directory)
      --json        one JSON object on stdout
  -h, --help        show this help

Exit codes: 0 done, 2 usage or configuration error (an invalid "skills" entry).
`;
