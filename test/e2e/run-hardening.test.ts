// The run tool against the real CLI: commands cannot wait for a person (issue 12, class 2), and
// processes that escape a command's process group are reported and ended when zero exits (class 3).
import { expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

function toolAnswers(index: number): Array<{ tool_call_id: string; content: string }> {
  return fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool");
}

function processesMatching(pattern: string): number[] {
  const out = new TextDecoder().decode(Bun.spawnSync(["pgrep", "-f", pattern]).stdout);
  return out.split("\n").filter((line) => line.trim() !== "").map(Number);
}

/** Alive and not a zombie (an init slow to reap must not count as alive). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "");
  } catch {
    return false;
  }
}

test("git commit without -m returns git's error at once, though the user's editor would take 30 s", async () => {
  const editor = join(sandbox.root, "slow-editor");
  const trace = join(sandbox.root, "editor-ran");
  writeFileSync(editor, `#!/bin/sh\ntouch ${trace}\nsleep 30\n`);
  chmodSync(editor, 0o755);
  // The user's git config names the slow editor too (GIT_EDITOR must win over core.editor).
  writeFileSync(join(sandbox.home, ".gitconfig"), `[user]\n\tname = t\n\temail = t@example.com\n[core]\n\teditor = ${editor}\n`);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { limits: { toolTimeoutMs: 20_000 } }));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "git add -A && git commit" } }] }, { text: "ok" }]);
  const started = performance.now();
  const result = await runZero(["run", "-y", "commit"], { sandbox, env: { EDITOR: editor, VISUAL: editor, GIT_EDITOR: editor }, timeoutMs: 40_000 });
  const elapsed = performance.now() - started;
  expect(result.code).toBe(0);
  const answer = toolAnswers(1)[0]!.content;
  expect(answer.split("\n")[0]).toBe("exit code 1");
  expect(answer).toContain("There was a problem with the editor 'false'");
  expect(answer).toContain("Please supply the message using either -m or -F option.");
  expect(existsSync(trace)).toBe(false);
  expect(elapsed).toBeLessThan(8_000); // the whole zero run, start-up included; the editor alone takes 30 s
});

test.if(process.platform === "linux")("a setsid process is reported in the tool result and ended when zero exits", async () => {
  const mark = `41.${process.pid}`;
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "run", args: { command: `setsid sleep ${mark} & sleep 0.2; echo started` } }] }, { text: "ok" }]);
  let seen: number[] = [];
  try {
    const result = await runZero(["run", "-y", "x"], { sandbox });
    expect(result.code).toBe(0);
    const answer = toolAnswers(1)[0]!.content;
    const lines = answer.split("\n");
    expect(lines[0]).toBe("exit code 0");
    const pid = Number(/^note: 1 process escaped the command's process group and is still running: pid (\d+) `sleep [^`]+`/.exec(lines[1] ?? "")?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(lines[1]).toContain(`\`sleep ${mark}\``);
    expect(lines.slice(2).join("\n")).toBe("started\n");
    seen = [pid];
    // zero's exit handler ended it (SIGTERM); an init may take a moment to reap it.
    for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(20);
    expect(alive(pid)).toBe(false);
    expect(processesMatching(`^sleep ${mark}`)).toEqual([]);
  } finally {
    for (const pid of [...seen, ...processesMatching(`^sleep ${mark}`)]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
});

test("a plain command reports no escape", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "run", args: { command: "echo hi" } }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(toolAnswers(1)[0]!.content).toBe("exit code 0\nhi\n");
});
