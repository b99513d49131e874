import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { FILESYSTEM, completion, describeRun, everythingServer, fixtureServer, lastToolMessage, offeredTools } from "../fixtures/mcp/support.ts";

// MCP tools as the model sees and uses them: escaped names that reach the real tool (MCP-06),
// results from a real third-party server, typed images, redacted secrets (SEC-05), and nothing
// beyond the core tools and the servers' own tools (MCP-09: no sampling).

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });
setDefaultTimeout(45_000);

test("MCP-06: create-issue is exposed as mcp__issues__create_u2d_issue and the call reaches create-issue", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { issues: fixtureServer() }, agents: { build: { mcpServers: ["issues"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__issues__create_u2d_issue", args: { title: "Crash on start" }, id: "call_issue" }] }, { text: "filed" }]);
  const result = await runZero(["run", "-y", "--json", "file it"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const offered = offeredTools(fake, 0);
  expect(offered).toContain("mcp__issues__create_u2d_issue");
  expect(offered).toContain("mcp__issues__ask_u2d_model");
  expect(offered.filter((name) => name.includes("create-issue"))).toEqual([]);
  const described = fake.requests[0]!.body.tools.find((t: any) => t.function.name === "mcp__issues__create_u2d_issue").function;
  expect(described.description).toContain('(MCP server "issues", tool "create-issue")');
  expect(described.parameters.required).toEqual(["title"]);
  expect(lastToolMessage(fake, 1)).toBe("created issue: Crash on start");
  const events = jsonLines(result.stdout);
  expect(events.find((e) => e.type === "tool.requested")).toMatchObject({ tool: "mcp__issues__create_u2d_issue", risk: "execute", target: "mcp:issues:create-issue" });
  expect(completion(events, "call_issue").status).toBe("completed");
});

test("the server's input schema is enforced before the call reaches the server", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { issues: fixtureServer() }, agents: { build: { mcpServers: ["issues"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__issues__create_u2d_issue", args: { title: 7 }, id: "call_bad" }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const answer = lastToolMessage(fake, 1);
  expect(answer).toContain("invalid input for mcp__issues__create_u2d_issue");
  expect(answer).not.toContain("created issue");
});

test("MCP-09: zero declares no sampling; a server's sampling/createMessage gets a JSON-RPC error", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer() }, agents: { build: { mcpServers: ["fx"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__fx__ask_u2d_model", args: {}, id: "call_sample" }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  // -32601: the client has no handler for the method (it would be -32603 etc. if zero tried and failed).
  expect(lastToolMessage(fake, 1)).toBe("sampling failed: code -32601: MCP error -32601: Method not found");
});

test("MCP-09: the model gets the core tools, todo and the servers' tools, nothing else (no sampling/elicitation tools, no resource or prompt tools)", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: "plain" }]);
  expect((await runZero(["run", "x"], { sandbox })).code).toBe(0);
  const plain = offeredTools(fake, 0);
  expect(plain.filter((name) => name.startsWith("mcp__"))).toEqual([]);

  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { everything: everythingServer() }, agents: { build: { mcpServers: ["everything"] } } }));
  fake.script([{ text: "with mcp" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const offered = offeredTools(fake, 1);
  expect(offered.filter((name) => !name.startsWith("mcp__")).sort()).toEqual([...plain].sort());
  expect(plain).toContain("todo");
  // (simulate-research-query, a task-only tool, is the next test's subject.)
  expect(offered.filter((name) => name.startsWith("mcp__") && name !== RESEARCH).sort()).toEqual(
    [
      "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference", "get-structured-content", "get-sum",
      "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
    ].map((tool) => `mcp__everything__${tool.replaceAll("-", "_u2d_")}`).sort(),
  );
  // everything registers these only for clients that declare sampling / elicitation / roots.
  for (const conditional of ["trigger_u2d_sampling_u2d_request", "trigger_u2d_elicitation_u2d_request", "get_u2d_roots_u2d_list"]) {
    expect(offered).not.toContain(`mcp__everything__${conditional}`);
  }
});

const RESEARCH = "mcp__everything__simulate_u2d_research_u2d_query";

test("MCP-09: a tool that requires task-based execution (which zero does not implement) is not offered", async () => {
  // simulate-research-query declares execution.taskSupport "required": a plain tools/call of it can only fail.
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { everything: everythingServer() }, agents: { build: { mcpServers: ["everything"] } } }));
  fake.script([{ toolCalls: [{ name: RESEARCH, args: { topic: "mcp" }, id: "call_task" }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "--json", "x"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(offeredTools(fake, 0)).toContain("mcp__everything__echo");
  expect(offeredTools(fake, 0)).not.toContain(RESEARCH);
  // Were it called anyway, the model must not be told about SDK internals it cannot use.
  expect(lastToolMessage(fake, 1)).not.toContain("callToolStream");
});

test("an MCP image result reaches an image-capable model as a typed image part", async () => {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "anthropic", {
      models: { fake: { provider: "anthropic", model: "fake-1", baseURL: fake.url, apiKeyEnv: "FAKE_KEY", capabilities: ["text", "tools", "image"] } },
      mcp: { everything: everythingServer() },
      agents: { build: { mcpServers: ["everything"] } },
    }),
  );
  fake.script([{ toolCalls: [{ name: "mcp__everything__get_u2d_tiny_u2d_image", args: {}, id: "toolu_img" }] }, { text: "a logo" }]);
  const result = await runZero(["run", "-y", "look"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code, describeRun(result)).toBe(0);
  const parts: any[] = fake.requests[1]!.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  const toolResult = parts.find((p) => p.type === "tool_result" && p.tool_use_id === "toolu_img");
  const image = toolResult.content.find((p: any) => p.type === "image");
  expect(image.source.type).toBe("base64");
  expect(image.source.media_type).toBe("image/png");
  expect(image.source.data).toStartWith("iVBORw0KGgo"); // the PNG signature, base64
  expect(image.source.data.length).toBeGreaterThan(1000);
  const text = toolResult.content.filter((p: any) => p.type === "text").map((p: any) => p.text).join("\n");
  expect(text).toContain("image/png");
  expect(text).not.toContain(image.source.data);
});

test("server-filesystem over stdio, allowed the workspace, reads a file for the model", async () => {
  writeFileSync(join(sandbox.workspace, "notes.md"), "# Notes\nfilesystem server line\n");
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      mcp: { fs: { type: "stdio", command: "node", args: [FILESYSTEM, sandbox.workspace] } },
      agents: { build: { mcpServers: ["fs"] } },
    }),
  );
  fake.script([{ toolCalls: [{ name: "mcp__fs__read_text_file", args: { path: join(sandbox.workspace, "notes.md") }, id: "call_fs" }] }, { text: "read" }]);
  const result = await runZero(["run", "-y", "--json", "read notes"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  expect(offeredTools(fake, 0)).toContain("mcp__fs__list_allowed_directories");
  expect(lastToolMessage(fake, 1)).toContain("# Notes\nfilesystem server line");
  expect(completion(jsonLines(result.stdout), "call_fs").status).toBe("completed");
});

test("SEC-05: a secret in an MCP tool result reaches the model redacted, and the event counts it", async () => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const token = `ghp_${Array.from(crypto.getRandomValues(new Uint8Array(36)), (b) => alphabet[b % alphabet.length]).join("")}`;
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer({ FIXTURE_SECRET: token }) }, agents: { build: { mcpServers: ["fx"] } } }));
  fake.script([{ toolCalls: [{ name: "mcp__fx__leak", args: {}, id: "call_leak" }] }, { text: "ok" }]);
  const result = await runZero(["run", "-y", "--json", "dump config"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const answer = lastToolMessage(fake, 1);
  expect(answer).toBe("config dump: token=[REDACTED:github-token]\nend of dump");
  expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain(token);
  expect(result.stdout).not.toContain(token);
  expect(completion(jsonLines(result.stdout), "call_leak").redactions).toEqual({ count: 1, kinds: { "github-token": 1 } });
});

test("a long MCP tool result is bounded like any tool output: head and tail for the model, the whole text in an artifact it can read back", async () => {
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { mcp: { fx: fixtureServer() }, agents: { build: { mcpServers: ["fx"] } } }));
  let uri = "";
  fake.script([
    { toolCalls: [{ name: "mcp__fx__big", args: {}, id: "call_big" }] },
    (req) => {
      const answer = req.body.messages.filter((m: any) => m.role === "tool").at(-1).content as string;
      uri = /artifact:\/\/[0-9a-f]{64}/.exec(answer)?.[0] ?? "missing";
      return { toolCalls: [{ name: "read", args: { path: uri, offset: 1500, limit: 1 }, id: "call_back" }] };
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "-y", "--json", "list"], { sandbox });
  expect(result.code, describeRun(result)).toBe(0);
  const bounded = lastToolMessage(fake, 1);
  expect(bounded).toStartWith(`row 1 ${"-".repeat(40)}\n`);
  expect(bounded).toEndWith(`row 3000 ${"-".repeat(40)}`);
  expect(bounded).toContain(`characters omitted; the full output is ${uri} (read it with offset/limit)`);
  expect(bounded).not.toContain("row 1500 ");
  expect(bounded.length).toBeLessThan(61_000);
  expect(uri).toMatch(/^artifact:\/\/[0-9a-f]{64}$/);
  expect(completion(jsonLines(result.stdout), "call_big")).toMatchObject({ status: "completed", truncated: true });
  // The part the model did not see is there in the artifact.
  expect(lastToolMessage(fake, 2)).toStartWith(`1500\trow 1500 ${"-".repeat(40)}\n(lines 1500-1500 of 3000 lines`);
});
