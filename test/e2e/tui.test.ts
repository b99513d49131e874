import { afterEach, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeConfig, ZERO_BIN, type Sandbox } from "../support/cli.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import type { FakeProvider } from "../support/fake-provider.ts";

// The real binary in a real terminal (tmux 120x40) against the scripted fake provider.

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: true });

const session = `zero-tui-${process.pid}`;
const tmux = (...args: string[]) => Bun.spawnSync(["tmux", ...args], { stdout: "pipe", stderr: "pipe" });
const pane = () => tmux("capture-pane", "-p", "-t", session).stdout.toString();
const keys = (...k: string[]) => tmux("send-keys", "-t", session, ...k);
const typeText = (text: string) => tmux("send-keys", "-t", session, "-l", text);

async function waitForPane(what: string | RegExp, timeoutMs = 15_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < end) {
    last = pane();
    if (typeof what === "string" ? last.includes(what) : what.test(last)) return last;
    await Bun.sleep(50);
  }
  throw new Error(`timed out waiting for ${what}; the pane:\n${last}`);
}

afterEach(() => void tmux("kill-session", "-t", session));

/**
 * A shell in tmux (120x40) in the workspace, the terminal's modes saved; then zero in it, its exit
 * code echoed as `<label>=<code>`. Waits for `ready` (the composer); returns the environment
 * assignments for more command lines.
 */
async function startZero(label: string, options: { env?: Record<string, string>; ready?: string } = {}): Promise<string> {
  const env = Object.entries({ ...sandbox.env, TERM: "xterm-256color", ...options.env })
    .map(([key, value]) => `${key}='${value.replaceAll("'", "'\\''")}'`)
    .join(" ");
  tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", sandbox.workspace, "bash --norc --noprofile");
  keys(`PS1='$ '; stty -g > ${sandbox.root}/stty.before; clear`, "Enter");
  await Bun.sleep(200);
  keys(`env -i ${env} ${ZERO_BIN}; echo ${label}=$?; stty -g > ${sandbox.root}/stty.after`, "Enter");
  await waitForPane(options.ready ?? "Ask zero to do something");
  return env;
}

/** The terminal is as it was: main screen, no mouse tracking, the same tty modes. */
async function expectTerminalRestored(): Promise<void> {
  const modes = tmux("display", "-p", "-t", session, "#{alternate_on} #{mouse_any_flag}").stdout.toString().trim();
  expect(modes).toBe("0 0");
  await Bun.sleep(200);
  expect(await Bun.file(`${sandbox.root}/stty.after`).text()).toBe(await Bun.file(`${sandbox.root}/stty.before`).text());
}

test("zero in a terminal: type a task, see streamed text and a tool row, approve with A, exit with Ctrl-C twice (terminal restored, resume hint)", async () => {
  // tmux is a test dependency (.ci/run installs it when missing): without it this fails, never skips.
  expect(Bun.spawnSync(["sh", "-c", "command -v tmux"]).exitCode).toBe(0);
  fake.script([
    { text: ["Let me ", "check ", "the files."], chunkDelayMs: 30, toolCalls: [{ name: "run", args: { command: "echo tui-ok" } }] },
    { text: ["All ", "done: ", "tui-ok seen."], chunkDelayMs: 30 },
  ]);
  const env = await startZero("EXIT");
  typeText("list the files please");
  keys("Enter");
  let screen = await waitForPane("› list the files please");
  screen = await waitForPane("Let me check the files.");
  screen = await waitForPane("[A] allow for this session");
  expect(screen).toContain("$ echo tui-ok");
  expect(screen).toContain(`in ${sandbox.workspace}`);
  keys("a");
  screen = await waitForPane("All done: tui-ok seen.");
  expect(screen).toContain("✓ allowed for this session: run");
  expect(screen).toMatch(/Worked for \d+s/);
  // Ctrl-O shows the collapsed tool row.
  keys("C-o");
  screen = await waitForPane("run $ echo tui-ok");
  expect(screen).toMatch(/⎿ completed/);
  keys("C-c");
  await waitForPane("press Ctrl-C again to quit");
  keys("C-c");
  screen = await waitForPane("EXIT=0");
  expect(screen).toMatch(/resume with: zero --resume \S+/);
  const modes = tmux("display", "-p", "-t", session, "#{alternate_on} #{mouse_any_flag}").stdout.toString().trim();
  expect(modes).toBe("0 0");
  await Bun.sleep(200);
  expect(await Bun.file(`${sandbox.root}/stty.after`).text()).toBe(await Bun.file(`${sandbox.root}/stty.before`).text());
  expect(fake.requests.length).toBe(2);
  // Resume: the timeline comes back; the next task continues the same conversation.
  const id = /resume with: zero --resume (\S+)/.exec(screen)![1]!;
  fake.script([{ text: "Second answer." }]);
  keys("clear", "Enter");
  keys(`env -i ${env} ${ZERO_BIN} --resume ${id}; echo EXIT2=$?`, "Enter");
  screen = await waitForPane("All done: tui-ok seen.");
  expect(screen).toContain("› list the files please");
  typeText("and again");
  keys("Enter");
  await waitForPane("Second answer.");
  expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("All done: tui-ok seen.");
  keys("C-c");
  keys("C-c");
  screen = await waitForPane("EXIT2=0");
  expect(screen).toContain(`resume with: zero --resume ${id}`);
  // A refused --resume in a terminal: the screen goes first, so the error can be read.
  keys("clear", "Enter");
  keys(`env -i ${env} ${ZERO_BIN} --resume no-such-session; echo EXIT3=$?`, "Enter");
  screen = await waitForPane("EXIT3=2");
  expect(screen).toContain("no session 'no-such-session'");
  expect(tmux("display", "-p", "-t", session, "#{alternate_on} #{mouse_any_flag}").stdout.toString().trim()).toBe("0 0");
  // A headless run refuses the TUI's session and says where it is continued.
  const refused = Bun.spawnSync([ZERO_BIN, "run", "--resume", id, "go on"], { env: sandbox.env, cwd: sandbox.workspace, stdout: "pipe", stderr: "pipe" });
  expect(refused.exitCode).toBe(2);
  expect(refused.stderr.toString()).toContain("belongs to the tui surface; here only cli sessions can be resumed (zero --resume <id> resumes it)");
}, 60_000);

test("zero without a terminal prints the help; the TUI's flags and help work without one", async () => {
  const zero = async (...args: string[]) => {
    const proc = Bun.spawn([ZERO_BIN, ...args], { env: sandbox.env, cwd: sandbox.workspace, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { stdout, stderr, code };
  };
  expect((await zero()).stdout).toContain("Usage:");
  for (const args of [["tui", "--help"], ["--resume", "--help"], ["-C", sandbox.workspace, "-h"]]) {
    const { stdout, code } = await zero(...args);
    expect(stdout).toContain("Usage: zero [--resume <session id>] [-C <dir>]");
    expect(code).toBe(0);
  }
  const noTerminal = await zero("-C", sandbox.workspace);
  expect(noTerminal.stderr).toContain("the interactive TUI needs a terminal");
  expect(noTerminal.code).toBe(2);
  const missing = await zero("--resume");
  expect(missing.stderr).toContain("option --resume needs a value");
  expect(missing.code).toBe(2);
}, 30_000);

test("two messages queued during a run both run after Esc cancels it, in order, in the same conversation", async () => {
  fake.script([{ kind: "stall" }, { text: "answer two" }, { text: "answer three" }]);
  await startZero("EXIT");
  typeText("first task");
  keys("Enter");
  await fake.waitForRequests(1);
  await waitForPane("Working for");
  typeText("second message");
  keys("Enter");
  typeText("third message");
  keys("Enter");
  let screen = await waitForPane("2 queued");
  expect(screen).toContain("next: second message");
  keys("Escape");
  screen = await waitForPane("answer three");
  expect(screen).toContain("answer two");
  expect(screen).not.toContain("queued ·");
  expect(screen.indexOf("› second message")).toBeLessThan(screen.indexOf("› third message"));
  expect(fake.requests).toHaveLength(3);
  // Both ran in the one conversation: the third request carries the second's answer.
  expect(JSON.stringify(fake.requests[2]!.body.messages)).toContain("answer two");
  keys("C-c");
  keys("C-c");
  await waitForPane("EXIT=0");
  await expectTerminalRestored();
}, 60_000);

test("a crash (a plugin's uncaught error) still restores the terminal and exits non-zero", async () => {
  const plugin = join(sandbox.root, "crash-plugin.ts");
  writeFileSync(plugin, `export default { hooks: { beforeRun() { setTimeout(() => { throw new Error("plugin bug"); }, 0); } } };\n`);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { plugins: [plugin] }));
  fake.script([{ kind: "stall" }]);
  await startZero("CRASHED");
  typeText("anything");
  keys("Enter");
  const screen = await waitForPane(/CRASHED=(\d+)/);
  expect(Number(/CRASHED=(\d+)/.exec(screen)![1])).not.toBe(0);
  expect(screen).toContain("plugin bug");
  await expectTerminalRestored();
}, 60_000);

test("plain zero draws its screen before the runtime loads; a configuration error then restores the terminal and is printed (exit 2)", async () => {
  sandbox.writeUserConfig({ ...fakeConfig(fake.url), permissionMode: "banana" });
  await startZero("CONFIG", { env: { ZERO_TUI_TRACE: join(sandbox.root, "trace") }, ready: "CONFIG=2" });
  const screen = pane();
  expect(screen).toContain("permissionMode");
  expect(screen).toContain("banana");
  await expectTerminalRestored();
  // The screen was up first: its first frame came before the runtime's command ran.
  const marks = Object.fromEntries((await Bun.file(join(sandbox.root, "trace")).text()).trim().split("\n").map((line) => line.split(" ") as [string, string]));
  expect(Number(marks["first-frame"])).toBeLessThan(Number(marks["tui-command"]));
}, 60_000);

test("/skills in the TUI shows the root agent's skills found at start-up, and one skill's instructions", async () => {
  const dir = join(sandbox.configDir, "skills", "release-notes");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), "---\nname: release-notes\ndescription: drafting release notes\n---\n\nInspect the user-facing commits first.\n");
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { agents: { build: { skills: ["*"] } } }));
  await startZero("EXIT");
  typeText("/skills");
  keys("Enter");
  let screen = await waitForPane("$release-notes  drafting release notes  (user)");
  keys("Escape");
  await Bun.sleep(200); // a lone Esc is told from an Alt- sequence by a pause
  typeText("/skills release-notes");
  keys("Enter");
  screen = await waitForPane("Inspect the user-facing commits first.");
  expect(screen).toContain(join(dir, "SKILL.md"));
  keys("Escape");
  keys("C-c");
  keys("C-c");
  await waitForPane("EXIT=0");
}, 60_000);
