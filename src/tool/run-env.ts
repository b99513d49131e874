/**
 * The environment of a `run` command: built from zero's by allowlist, then made non-interactive.
 *
 * A command has no terminal (its own session, so no controlling terminal; stdin is /dev/null;
 * stdout and stderr are pipes). A program that waits for a person would wait until the timeout,
 * so whatever would open an editor, a pager or a prompt is pointed at something that ends at once:
 * - Editors (`EDITOR`, `VISUAL`, `GIT_EDITOR`, `GIT_SEQUENCE_EDITOR`) are `false`: every caller
 *   (git through a shell, tools that exec the word, tools that split it) gets an immediate failure,
 *   and git says "There was a problem with the editor 'false'. Please supply the message using
 *   either -m or -F option." `GIT_EDITOR`/`GIT_SEQUENCE_EDITOR` also beat `core.editor` and
 *   `sequence.editor` in the user's git config. Editors named by other variables (KUBE_EDITOR,
 *   SYSTEMD_EDITOR, …) are not allowlisted, so those programs fall back to `EDITOR`.
 * - Pagers (`PAGER`, `GIT_PAGER` — beats `core.pager` —, `MANPAGER`, `SYSTEMD_PAGER`) are `cat`.
 * - Prompts: `GIT_TERMINAL_PROMPT=0`; `GIT_ASKPASS` set EMPTY (git then skips `core.askPass` and
 *   `SSH_ASKPASS` as well and fails with "terminal prompts disabled"); `SSH_ASKPASS` is not passed
 *   and `SSH_ASKPASS_REQUIRE=never`; `GCM_INTERACTIVE=never` (Git Credential Manager's dialogs);
 *   `DEBIAN_FRONTEND=noninteractive`. ssh itself reads passwords and host-key answers from
 *   /dev/tty, which a command without a controlling terminal cannot open, so it fails at once.
 * - A user's own `GIT_SSH_COMMAND` that runs `ssh` is kept, with `-o BatchMode=yes` appended; one
 *   that runs something else (a wrapper, `sshpass`) is not passed. zero does not set one otherwise:
 *   it would override `core.sshCommand` from the user's git config.
 * - `CI` is not set: CI=true changes far more than prompting (pnpm and yarn freeze the lockfile,
 *   some builds turn warnings into errors, reporters change). A user's own `CI` is passed through.
 */
import { SECRET_ENV_NAME } from "../security/redact-rules.ts";
import type { Env } from "../util/env.ts";

// Variables a normal command needs; everything else in zero's environment stays behind.
const ALLOWED_NAMES = new Set([
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE", "TZ",
  "TMPDIR", "TMP", "TEMP", "NO_COLOR", "FORCE_COLOR", "CI",
  "XDG_RUNTIME_DIR",
  // Certificate locations (paths, not secrets): without them TLS fails behind corporate proxies.
  "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
  // Toolchain locations that a non-login shell would not get from a profile.
  "JAVA_HOME", "GOPATH", "GOROOT", "CARGO_HOME", "RUSTUP_HOME", "VIRTUAL_ENV", "BUN_INSTALL", "PNPM_HOME", "NVM_DIR",
]);
const ALLOWED_PATTERNS = [/^LC_[A-Z_]+$/, /^XDG_[A-Z]+_(HOME|DIRS)$/];
/** Proxies are passed only without credentials in the URL. */
const PROXY_NAME = /^(https?|all|no)_proxy$/i;
const URL_WITH_CREDENTIALS = /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/@\s]+@/i;
const ZERO_NAME = /^(ZERO_CLI_|DEVOUT_)/;

/** Set in every command's environment, replacing the user's values: nothing waits for a person. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = Object.freeze({
  EDITOR: "false",
  VISUAL: "false",
  GIT_EDITOR: "false",
  GIT_SEQUENCE_EDITOR: "false",
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "",
  SSH_ASKPASS_REQUIRE: "never",
  GCM_INTERACTIVE: "never",
  DEBIAN_FRONTEND: "noninteractive",
});

/**
 * The user's GIT_SSH_COMMAND in batch mode, or undefined when it does not run ssh itself: a
 * wrapper (`sshpass -p …`, a script) may not take ssh options and may carry a password, so it is
 * not passed (as before this variable was handled at all).
 */
export function batchSshCommand(command: string): string | undefined {
  const first = command.trim().split(/\s+/)[0] ?? "";
  if (first.slice(first.lastIndexOf("/") + 1) !== "ssh") return undefined;
  return /\bBatchMode\b/i.test(command) ? command : `${command.trimEnd()} -o BatchMode=yes`;
}

/**
 * The environment of a `run` command, built from zero's by allowlist. Secret-like names and
 * zero's own variables are dropped even when allowlisted. Deliberately absent: SSH_AUTH_SOCK (the
 * user's SSH agent is a credential; a command must not sign with it unasked) and npm_config_* (when
 * zero is started by npm/npx they describe that invocation, e.g. `global`, and would leak into the
 * project's npm; npm reads its own config files anyway). NON_INTERACTIVE_ENV is laid over it.
 * `ZERO_CLI_TOOL=run` is added so scripts and hooks can tell they run under zero's agent.
 */
export function commandEnvironment(env: Env): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.includes("\0")) continue;
    if (SECRET_ENV_NAME.test(name) || ZERO_NAME.test(name)) continue;
    if (PROXY_NAME.test(name)) {
      if (!URL_WITH_CREDENTIALS.test(value)) result[name] = value;
      continue;
    }
    if (name === "GIT_SSH_COMMAND") {
      const batch = batchSshCommand(value);
      if (batch !== undefined) result[name] = batch;
      continue;
    }
    if (ALLOWED_NAMES.has(name) || ALLOWED_PATTERNS.some((pattern) => pattern.test(name))) result[name] = value;
  }
  Object.assign(result, NON_INTERACTIVE_ENV);
  result.ZERO_CLI_TOOL = "run";
  return result;
}
