/**
 * Does a shell command plainly reach the network? Judged on the tokenized command (see
 * shell-words.ts), never on its raw text: `echo curl` and `git commit -m "git push"` do not,
 * `cu"rl" x`, `FOO=1 git push`, `sudo apt-get install x`, `bash -c 'curl x'` and
 * `echo $(wget -qO- x)` do. Wrappers (sudo, env, timeout, xargs, nohup, …), shells run with
 * `-c` or fed a heredoc, `eval` and `find -exec` are looked through.
 *
 * A heuristic for showing and judging risk, not a sandbox: a command can always reach the
 * network in ways no table lists (a script, a variable holding the program name, a build that
 * downloads). The table below names programs whose purpose is the network, and subcommands of
 * package managers and version control that fetch or publish.
 */
import { MAX_DEPTH, parseShell, type SimpleCommand } from "./shell-words.ts";

/** A command's arguments after its name. */
type Args = readonly string[];

/** Programs that exist to talk to other machines. */
const ALWAYS = new Set([
  "curl",
  "wget",
  "wget2",
  "ssh",
  "scp",
  "sftp",
  "mosh",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "telnet",
  "ftp",
  "lftp",
  "tftp",
  "aria2c",
  "http",
  "https",
  "xh",
  "nslookup",
  "dig",
  "host",
  "ping",
  "ping6",
  "traceroute",
  "whois",
  "gh",
  "glab",
]);

/**
 * The first non-option word and what follows it. Options named in `withValue` take the next
 * word as their value; `--opt=value` carries its own.
 */
function subcommand(args: Args, withValue: ReadonlySet<string> = new Set()): { name: string; rest: Args } | undefined {
  for (let k = 0; k < args.length; k++) {
    const word = args[k]!;
    if (word === "--") return args[k + 1] === undefined ? undefined : { name: args[k + 1]!, rest: args.slice(k + 2) };
    if (word.startsWith("-") && word.length > 1) {
      if (!word.includes("=") && withValue.has(word)) k++;
      continue;
    }
    return { name: word, rest: args.slice(k + 1) };
  }
  return undefined;
}

/** A tool whose listed subcommands (after its global options) reach the network. */
function subcommands(names: readonly string[], withValue: readonly string[] = []): (args: Args) => boolean {
  const set = new Set(names);
  const values = new Set(withValue);
  return (args) => {
    const found = subcommand(args, values);
    return found !== undefined && set.has(found.name);
  };
}

/** `tool group action`: e.g. `git remote update`, `docker image pull`. */
function nested(top: (args: Args) => boolean, groups: Record<string, readonly string[]>, withValue: readonly string[] = []): (args: Args) => boolean {
  const values = new Set(withValue);
  return (args) => {
    if (top(args)) return true;
    const found = subcommand(args, values);
    const actions = found ? groups[found.name] : undefined;
    if (!found || !actions) return false;
    const action = subcommand(found.rest, values);
    return action !== undefined && actions.includes(action.name);
  };
}

const NPM_INSTALL = ["install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add", "ci", "clean-install", "ic", "install-clean", "install-test", "it", "install-ci-test", "cit"];
const NPM = subcommands(
  [...NPM_INSTALL, "update", "up", "upgrade", "udpate", "publish", "unpublish", "audit", "outdated", "view", "v", "info", "show", "search", "s", "se", "find", "login", "adduser", "add-user", "logout", "ping", "whoami", "owner", "access", "dist-tag", "deprecate", "token", "create", "exec", "x"],
  ["--prefix", "-w", "--workspace", "--registry", "--userconfig", "--cache"],
);
const PNPM = subcommands(
  ["install", "i", "add", "update", "up", "upgrade", "publish", "dlx", "fetch", "audit", "outdated", "view", "info", "show", "create", "install-test", "it", "login", "logout", "whoami", "search"],
  ["-C", "--dir", "--filter", "-F", "--registry", "--store-dir"],
);
const YARN_NETWORK = new Set(["install", "add", "upgrade", "up", "upgrade-interactive", "publish", "dlx", "info", "audit", "outdated", "create", "login", "logout", "npm", "set", "import"]);
const YARN = (args: Args): boolean => {
  const found = subcommand(args, new Set(["--cwd", "--registry", "--modules-folder", "--cache-folder"]));
  // A bare `yarn` installs.
  return found === undefined || YARN_NETWORK.has(found.name);
};
const BUN = subcommands(["install", "i", "add", "a", "update", "publish", "create", "c", "outdated", "audit", "info", "upgrade"], ["--cwd", "-c", "--config"]);
const PIP = subcommands(["install", "download", "search", "index", "wheel"], ["-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "--target", "-t", "--prefix", "--root", "--python"]);
const PYTHON = (args: Args): boolean => {
  // python -m pip …, python3 -X opt -m pip …
  for (let k = 0; k < args.length; k++) {
    const word = args[k]!;
    if (word === "-m") return args[k + 1] === "pip" || args[k + 1] === "pip3" ? PIP(args.slice(k + 2)) : false;
    if (word.startsWith("-m") && word.length > 2) return word === "-mpip" ? PIP(args.slice(k + 1)) : false;
    if (word === "-c" || !word.startsWith("-")) return false; // a program or a script: not looked into
    if (word === "-X" || word === "-W") k++;
  }
  return false;
};
const UV = nested(subcommands(["add", "sync", "lock", "publish"], ["--directory", "--project", "-p", "--python"]), {
  pip: ["install", "sync", "compile", "download"],
  tool: ["install", "upgrade", "run"],
  python: ["install"],
});
const GIT = nested(
  subcommands(["clone", "fetch", "pull", "push", "ls-remote", "send-email", "request-pull"], ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"]),
  { remote: ["update", "show", "prune", "add"], submodule: ["update", "add"], lfs: ["fetch", "pull", "push", "clone"] },
  ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"],
);
const APT = subcommands(["install", "update", "upgrade", "dist-upgrade", "full-upgrade", "download", "source", "build-dep", "reinstall", "changelog"], ["-o", "-t", "-c", "--option", "--target-release", "--config-file"]);
const DNF = subcommands(["install", "update", "upgrade", "reinstall", "downgrade", "makecache", "download", "groupinstall", "check-update", "search", "distro-sync"], ["--setopt", "--repo", "--enablerepo", "--disablerepo", "-c", "--config", "--installroot", "--releasever"]);
const DOCKER = nested(subcommands(["pull", "push", "login", "search"], ["-H", "--host", "-c", "--context", "--config", "-l", "--log-level"]), {
  image: ["pull", "push"],
  compose: ["pull", "push"],
  manifest: ["push"],
  plugin: ["install", "upgrade"],
}, ["-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "-f", "--file", "-p", "--project-name"]);
const PACMAN = (args: Args): boolean => args.some((word) => /^-[A-Za-z]*S/.test(word) || word === "--sync" || word === "--refresh" || /^-[A-Za-z]*y/.test(word));
const RSYNC = (args: Args): boolean =>
  // host:path, user@host:path, host::module or rsync://…: a remote side. Local paths with a colon start with ./ or /.
  args.some((word) => !word.startsWith("-") && (word.startsWith("rsync://") || /^[^/:]+:/.test(word)));

/** Programs whose listed subcommands reach the network. */
const BY_SUBCOMMAND: Record<string, (args: Args) => boolean> = {
  git: GIT,
  hg: subcommands(["clone", "pull", "push", "incoming", "outgoing", "in", "out"]),
  svn: subcommands(["checkout", "co", "update", "up", "commit", "ci", "export", "import", "switch", "sw"]),
  npm: NPM,
  pnpm: PNPM,
  yarn: YARN,
  bun: BUN,
  deno: subcommands(["install", "add", "upgrade"]),
  pip: PIP,
  pip3: PIP,
  uv: UV,
  pipx: subcommands(["install", "upgrade", "upgrade-all", "run", "inject", "reinstall", "reinstall-all"]),
  poetry: subcommands(["install", "add", "update", "lock", "publish", "search"]),
  pipenv: subcommands(["install", "update", "lock", "sync", "upgrade"]),
  conda: subcommands(["install", "create", "update", "upgrade", "search"]),
  mamba: subcommands(["install", "create", "update", "upgrade", "search"]),
  micromamba: subcommands(["install", "create", "update", "search"]),
  gem: subcommands(["install", "update", "push", "fetch", "search", "yank"]),
  bundle: subcommands(["install", "update", "add", "outdated"]),
  bundler: subcommands(["install", "update", "add", "outdated"]),
  cargo: subcommands(["install", "add", "fetch", "update", "publish", "search", "login", "yank", "owner", "vendor"], ["-Z", "--config", "-C"]),
  go: nested(subcommands(["get", "install"]), { mod: ["download", "tidy"] }),
  composer: subcommands(["install", "require", "update", "create-project", "self-update", "selfupdate", "outdated"]),
  apt: APT,
  "apt-get": APT,
  aptitude: APT,
  yum: DNF,
  dnf: DNF,
  microdnf: DNF,
  zypper: subcommands(["install", "in", "update", "up", "refresh", "ref", "dist-upgrade", "dup", "source-install", "si"]),
  apk: subcommands(["add", "update", "upgrade", "fetch"]),
  pacman: PACMAN,
  yay: PACMAN,
  paru: PACMAN,
  brew: subcommands(["install", "reinstall", "update", "upgrade", "fetch", "tap", "search"]),
  port: subcommands(["install", "selfupdate", "sync", "upgrade"]),
  snap: subcommands(["install", "refresh", "download"]),
  flatpak: subcommands(["install", "update", "remote-add"]),
  docker: DOCKER,
  podman: DOCKER,
  nerdctl: DOCKER,
  rsync: RSYNC,
};

/** Reserved words that may stand before the command of a simple command. */
const LEADING_KEYWORDS = new Set(["!", "{", "}", "then", "else", "elif", "do", "if", "while", "until"]);
/** A simple command that starts with these is a loop or case header, not a program. */
const HEADERS = new Set(["for", "select", "case", "done", "fi", "esac", "in"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish"]);

/** `/usr/bin/curl` → `curl`; `pip3.12` → `pip3`. */
function programName(word: string): string {
  const base = word.slice(word.lastIndexOf("/") + 1);
  if (/^pip3?(\.\d+)*$/.test(base)) return base.startsWith("pip3") ? "pip3" : "pip";
  if (/^python[0-9.]*$/.test(base) || base === "py") return "python";
  return base;
}

/** Drops options (and the values of `withValue` options) before a wrapped command; `--` ends them. */
function afterOptions(args: Args, withValue: ReadonlySet<string>): Args {
  let k = 0;
  while (k < args.length) {
    const word = args[k]!;
    if (word === "--") return args.slice(k + 1);
    if (!word.startsWith("-") || word === "-") break;
    // -u bob takes a value; -ubob and --user=bob carry it.
    if (withValue.has(word)) k += 2;
    else k += 1;
  }
  return args.slice(k);
}

const SUDO_VALUES = new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--command-timeout", "--other-user"]);
const ENV_VALUES = new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P"]);
const TIMEOUT_VALUES = new Set(["-s", "--signal", "-k", "--kill-after"]);
const NICE_VALUES = new Set(["-n", "--adjustment"]);
const XARGS_VALUES = new Set(["-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", "--replace", "--max-lines"]);
const STDBUF_VALUES = new Set(["-i", "-o", "-e"]);
const IONICE_VALUES = new Set(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]);
const EXEC_VALUES = new Set(["-a"]);
const TIME_VALUES = new Set(["-f", "--format", "-o", "--output"]);
const DOAS_VALUES = new Set(["-u", "-C"]);
const WATCH_VALUES = new Set(["-n", "--interval", "-d", "-q", "--equexit"]);

/** The command a wrapper runs, or undefined when the word is not a wrapper. */
type Unwrapped = { words: Args } | { script: string } | { none: true };

function unwrap(name: string, args: Args): Unwrapped | undefined {
  switch (name) {
    case "sudo":
      return { words: afterOptions(args, SUDO_VALUES) };
    case "doas":
      return { words: afterOptions(args, DOAS_VALUES) };
    case "env": {
      // env -S 'cmd args' splits its string into a command.
      const split = args.findIndex((word) => word === "-S" || word === "--split-string");
      if (split !== -1 && args[split + 1] !== undefined) return { script: [args[split + 1]!, ...args.slice(split + 2)].join(" ") };
      return { words: afterOptions(args, ENV_VALUES) };
    }
    case "timeout": {
      const rest = afterOptions(args, TIMEOUT_VALUES);
      return { words: rest.slice(1) }; // the duration
    }
    case "nice":
      return { words: afterOptions(args, NICE_VALUES) };
    case "nohup":
    case "builtin":
    case "chronic":
    case "unbuffer":
    case "setsid":
    case "caffeinate":
    case "proxychains":
    case "proxychains4":
    case "torsocks":
      return { words: afterOptions(args, new Set()) };
    case "time":
      return { words: afterOptions(args, TIME_VALUES) };
    case "exec":
      return { words: afterOptions(args, EXEC_VALUES) };
    case "stdbuf":
      return { words: afterOptions(args, STDBUF_VALUES) };
    case "ionice":
      return { words: afterOptions(args, IONICE_VALUES) };
    case "xargs":
      return { words: afterOptions(args, XARGS_VALUES) };
    case "command":
      // command -v/-V only looks the name up.
      if (args.some((word) => /^-[a-zA-Z]*[vV]/.test(word))) return { none: true };
      return { words: afterOptions(args, new Set()) };
    case "watch":
      return { script: afterOptions(args, WATCH_VALUES).join(" ") };
    case "eval":
      return { script: args.join(" ") };
    case "busybox":
      return { words: args };
    default:
      return undefined;
  }
}

/** `sh -c 'cmd'`, `bash -lc 'cmd'`, `su -c 'cmd' user`: the command string, if any. */
function shellString(name: string, args: Args): string | undefined {
  if (name === "su") {
    for (let k = 0; k < args.length; k++) {
      const word = args[k]!;
      if (word === "-c" || word === "--command") return args[k + 1];
      if (word.startsWith("--command=")) return word.slice("--command=".length);
    }
    return undefined;
  }
  let wantsString = false;
  for (let k = 0; k < args.length; k++) {
    const word = args[k]!;
    if (word === "--") return wantsString ? args[k + 1] : undefined;
    if (word === "-o" || word === "+o" || word === "-O" || word === "+O" || word === "--rcfile" || word === "--init-file") {
      k++;
      continue;
    }
    if (/^-[A-Za-z]+$/.test(word)) {
      if (word.includes("c")) wantsString = true;
      continue;
    }
    if (word.startsWith("-") || word.startsWith("+")) continue;
    return wantsString ? word : undefined;
  }
  return undefined;
}

/** Does one simple command reach the network? */
function commandReaches(words: Args, heredocs: SimpleCommand["heredocs"], depth: number): boolean {
  let rest = words;
  for (let guard = 0; guard < 64; guard++) {
    let start = 0;
    while (start < rest.length && (LEADING_KEYWORDS.has(rest[start]!) || ASSIGNMENT.test(rest[start]!))) start++;
    rest = rest.slice(start);
    if (rest.length === 0) return false;
    if (HEADERS.has(rest[0]!)) return false;
    if (rest[0] === "function") {
      rest = rest.slice(2); // function name { body; }: the body follows the name
      continue;
    }
    const name = programName(rest[0]!);
    const args = rest.slice(1);
    if (ALWAYS.has(name)) return true;
    const bySubcommand = BY_SUBCOMMAND[name];
    if (bySubcommand) return bySubcommand(args);
    if (name === "python") return PYTHON(args);
    if (SHELLS.has(name) || name === "su") {
      const script = shellString(name, args);
      if (script !== undefined) return reaches(script, depth + 1);
      // A shell reading its script from stdin runs a heredoc's body.
      const readsStdin = name !== "su" && !args.some((word) => !word.startsWith("-") && !word.startsWith("+"));
      return readsStdin && heredocs.some((heredoc) => reaches(heredoc.body, depth + 1));
    }
    if (name === "find") {
      for (let k = 0; k < args.length; k++) {
        if (!["-exec", "-execdir", "-ok", "-okdir"].includes(args[k]!)) continue;
        let end = k + 1;
        while (end < args.length && args[end] !== ";" && args[end] !== "+") end++;
        if (commandReaches(args.slice(k + 1, end), [], depth + 1)) return true;
        k = end;
      }
      return false;
    }
    const wrapped = unwrap(name, args);
    if (wrapped === undefined) return false;
    if ("none" in wrapped) return false;
    if ("script" in wrapped) return reaches(wrapped.script, depth + 1);
    rest = wrapped.words;
  }
  return true; // wrappers nested beyond reason: fail closed
}

function reaches(command: string, depth: number): boolean {
  if (depth > MAX_DEPTH) return true;
  const parsed = parseShell(command, depth);
  if (parsed.truncated) return true;
  return parsed.commands.some((command) => commandReaches(command.words, command.heredocs, depth));
}

/**
 * True when the command plainly reaches the network (see the module comment). Total: never
 * throws; nesting too deep to follow counts as reaching it.
 */
export function reachesNetwork(command: string): boolean {
  return reaches(command, 0);
}
