/**
 * Running git for isolated child workspaces: an argument array (never a shell), a bounded time, an
 * environment that names no repository (only PATH without workspace entries, HOME, XDG_CONFIG_HOME,
 * TMPDIR, USER, LOGNAME and the variables that locate user/system configuration pass through), and
 * command-line configuration that keeps a repository's own settings from running programs.
 *
 * Covered: hooks (core.hooksPath=/dev/null), the fsmonitor hook, every filter driver defined in any
 * configuration scope (smudge/clean/process blanked and required=false, so Git LFS files stay pointer
 * files), external diff and textconv programs (diff flags at the call sites), submodule recursion,
 * automatic gc/maintenance, the pager, and every transport (protocol.allow=never, which also refuses
 * lazy fetches in partial clones: those fail instead of fetching).
 * Not covered: git's own binary and exec-path are trusted; built-in conversions (eol,
 * working-tree-encoding) still transform bytes, though they run nothing; committed symlinks are
 * checked out as symlinks (the tool layer's root checks judge their targets); the filter list is read
 * just before use, so a driver written into the configuration in between by another process is not
 * blanked; a driver whose name contains "=" cannot be overridden with -c, so that repository is refused.
 */
import { realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import { deflateSync } from "node:zlib";
import type { Env } from "../../util/env.ts";
import { isWithin } from "../../util/paths.ts";

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";
const MAX_MESSAGE_CHARS = 4_000;
/** Variables that only choose which user/system configuration applies, never which repository. */
const KEPT_GIT_VARIABLES = ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES"];
const KEPT_VARIABLES = ["HOME", "XDG_CONFIG_HOME", "TMPDIR", "USER", "LOGNAME"];

const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.quotePath=true",
  "core.splitIndex=false",
  "protocol.allow=never",
  "submodule.recurse=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "advice.detachedHead=false",
  "diff.suppressBlankEmpty=false",
];

export type Git = {
  /** Absolute path of the git executable. */
  executable: string;
  /** The environment every invocation starts from (no GIT_DIR and friends). */
  env: Record<string, string>;
  timeoutMs: number;
};

export type GitResult = { code: number; stdout: Uint8Array; stderr: string };

export type GitCall = {
  cwd: string;
  /** Per-call variables (GIT_DIR, GIT_INDEX_FILE, …) added to the base environment. */
  env?: Record<string, string>;
  /** -c overrides on top of the fixed safe set, e.g. from filterOverrides(). */
  config?: readonly string[];
  signal?: AbortSignal;
  /** Output beyond this many bytes kills git and fails the call. */
  maxOutputBytes?: number;
};

/** A git call that did not finish (timeout, output limit); exit codes are left to the caller. */
export class GitFailure extends Error {
  constructor(
    message: string,
    readonly kind: "timeout" | "output",
  ) {
    super(message);
  }
}

/**
 * Finds git on PATH, skipping relative entries and entries inside `untrusted` (a workspace may put
 * its own node_modules/.bin first on PATH), and builds the filtered base environment.
 */
export function locateGit(env: Env, untrusted: string, timeoutMs = DEFAULT_GIT_TIMEOUT_MS): Git | undefined {
  const searchPath = (env.PATH ?? DEFAULT_PATH)
    .split(":")
    .filter((dir) => isAbsolute(dir) && !isWithin(untrusted, dir) && !isWithin(untrusted, realOr(dir)))
    .join(":");
  const found = Bun.which("git", { PATH: searchPath });
  if (found === null) return undefined;
  const base: Record<string, string> = { PATH: searchPath, GIT_TERMINAL_PROMPT: "0", GIT_NO_LAZY_FETCH: "1", GIT_PAGER: "cat", LC_ALL: "C" };
  for (const name of [...KEPT_VARIABLES, ...KEPT_GIT_VARIABLES]) {
    const value = env[name];
    if (value !== undefined) base[name] = value;
  }
  return { executable: realOr(found), env: base, timeoutMs };
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function argv(git: Git, args: readonly string[], config: readonly string[] = []): string[] {
  return [git.executable, "--no-pager", ...[...SAFE_CONFIG, ...config].flatMap((entry) => ["-c", entry]), ...args];
}

/** Runs git once; throws GitFailure on timeout or oversized output, and the signal's reason on abort. */
export async function runGit(git: Git, args: readonly string[], call: GitCall): Promise<GitResult> {
  call.signal?.throwIfAborted();
  const child = Bun.spawn(argv(git, args, call.config), {
    cwd: call.cwd,
    env: { ...git.env, ...call.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stopped: "timeout" | "output" | "abort" | undefined;
  const stop = (why: typeof stopped) => {
    stopped ??= why;
    child.kill("SIGKILL");
  };
  const timer = setTimeout(() => stop("timeout"), git.timeoutMs);
  const onAbort = () => stop("abort");
  call.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const limit = call.maxOutputBytes ?? Number.POSITIVE_INFINITY;
    const chunks: Uint8Array[] = [];
    let size = 0;
    const readOut = (async () => {
      for await (const chunk of child.stdout) {
        size += chunk.length;
        if (size > limit) {
          stop("output");
          break;
        }
        chunks.push(chunk);
      }
    })();
    const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited, readOut]);
    if (stopped === "abort") call.signal?.throwIfAborted();
    if (stopped === "timeout") throw new GitFailure(`git ${args[0] ?? ""} did not finish within ${git.timeoutMs} ms`, "timeout");
    if (stopped === "output") throw new GitFailure(`git ${args[0] ?? ""} printed more than ${limit} bytes`, "output");
    return { code, stdout: Buffer.concat(chunks), stderr };
  } finally {
    clearTimeout(timer);
    call.signal?.removeEventListener("abort", onAbort);
  }
}

/** The same, synchronously, for exit handlers; a timeout shows as a non-zero code. */
export function runGitSync(git: Git, args: readonly string[], call: Pick<GitCall, "cwd" | "env" | "config">): GitResult {
  const result = Bun.spawnSync(argv(git, args, call.config), {
    cwd: call.cwd,
    env: { ...git.env, ...call.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: git.timeoutMs,
    killSignal: "SIGKILL",
  });
  return { code: result.exitCode ?? 1, stdout: result.stdout, stderr: result.stderr.toString() };
}

export function text(result: GitResult): string {
  return new TextDecoder().decode(result.stdout).trim();
}

/** git's own words for a failed call, bounded. */
export function gitMessage(result: GitResult): string {
  const message = (result.stderr.trim() || text(result) || `git exited with code ${result.code}`).replace(/^(fatal|error): /gm, "");
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)} …` : message;
}

/**
 * -c entries that blank every filter driver defined in any configuration scope (names cannot be
 * wildcarded, so they are listed first). Returns a string instead when a name cannot be overridden.
 */
export async function filterOverrides(git: Git, call: GitCall): Promise<string[] | string> {
  const listed = await runGit(git, ["config", "-z", "--name-only", "--get-regexp", "^filter\\."], call);
  if (listed.code === 1) return []; // nothing matched
  if (listed.code !== 0) return `reading git configuration failed: ${gitMessage(listed)}`;
  const names = new Set<string>();
  for (const key of new TextDecoder().decode(listed.stdout).split("\0")) {
    const last = key.lastIndexOf(".");
    if (last > "filter.".length) names.add(key.slice("filter.".length, last));
  }
  const overrides: string[] = [];
  for (const name of names) {
    if (name.includes("=")) return `the filter driver ${JSON.stringify(name)} cannot be disabled because its name contains "="`;
    overrides.push(`filter.${name}.smudge=`, `filter.${name}.clean=`, `filter.${name}.process=`, `filter.${name}.required=false`);
  }
  return overrides;
}

// --- Keeping a patch exact as a string -------------------------------------------------------
// git prints text hunks with the file's raw bytes. A text file that is not UTF-8 (Latin-1, Shift-JIS)
// would be corrupted by decoding, so such sections are rewritten as git binary patches, which are ASCII.

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const SECTION_START = Buffer.from("\ndiff --git ");

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Decodes a `git diff --binary --full-index` patch losslessly, rewriting non-UTF-8 sections. */
export async function patchAsText(patch: Uint8Array, readBlob: (oid: string) => Promise<Uint8Array>): Promise<string> {
  const whole = decodeUtf8(patch);
  if (whole !== undefined) return whole;
  const bytes = Buffer.from(patch.buffer, patch.byteOffset, patch.byteLength);
  // A section starts at a line "diff --git "; hunk lines start with a space, "+", "-" or a backslash.
  const starts = [0];
  for (let at = bytes.indexOf(SECTION_START); at !== -1; at = bytes.indexOf(SECTION_START, at + 1)) starts.push(at + 1);
  const parts: string[] = [];
  for (const [index, start] of starts.entries()) {
    const section = bytes.subarray(start, starts[index + 1] ?? bytes.length);
    parts.push(decodeUtf8(section) ?? (await asBinarySection(section, readBlob)));
  }
  return parts.join("");
}

async function asBinarySection(section: Buffer, readBlob: (oid: string) => Promise<Uint8Array>): Promise<string> {
  const body = section.indexOf("\n--- ");
  const header = section.subarray(0, body === -1 ? section.length : body + 1).toString("latin1");
  const ids = /^index ([0-9a-f]+)\.\.([0-9a-f]+)/m.exec(header);
  if (body === -1 || ids === null) throw new Error("cannot rewrite a patch section without its index line");
  const [, oldId = "", newId = ""] = ids;
  const read = (oid: string) => (/^0+$/.test(oid) ? Promise.resolve(new Uint8Array()) : readBlob(oid));
  const [before, after] = await Promise.all([read(oldId), read(newId)]);
  return `${header}GIT binary patch\n${literal(after)}${literal(before)}`;
}

/** One `literal` block of a git binary patch: zlib data in base85, 52 bytes a line, then a blank line. */
function literal(content: Uint8Array): string {
  const data = deflateSync(content);
  const lines = [`literal ${content.length}`];
  for (let offset = 0; offset < data.length; offset += 52) {
    const chunk = data.subarray(offset, offset + 52);
    let line = String.fromCharCode(chunk.length <= 26 ? 64 + chunk.length : 70 + chunk.length);
    for (let i = 0; i < chunk.length; i += 4) {
      let value = 0;
      for (let j = 0; j < 4; j++) value = value * 256 + (chunk[i + j] ?? 0);
      let group = "";
      for (let k = 0; k < 5; k++) {
        group = B85[value % 85] + group;
        value = Math.floor(value / 85);
      }
      line += group;
    }
    lines.push(line);
  }
  return `${lines.join("\n")}\n\n`;
}
