import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, runZero, type Sandbox } from "../support/cli.ts";

let fake: FakeProvider;
let sandbox: Sandbox;

useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("tiny png payload \u0000\u0001\u0002")]);

test("an image read reaches an image-capable model as typed content", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "anthropic", {
      models: { fake: { provider: "anthropic", model: "fake-1", baseURL: fake.url, apiKeyEnv: "FAKE_KEY", capabilities: ["text", "image", "tools"] } },
    }),
  );
  fake.script([{ toolCalls: [{ name: "read", args: { path: "shot.png" }, id: "toolu_img" }] }, { text: "I see it" }]);
  const result = await runZero(["run", "look at the screenshot"], { sandbox, env: { FAKE_KEY: "k" } });
  expect(result.code).toBe(0);
  const messages: any[] = fake.requests[1]!.body.messages;
  const toolResult = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((p: any) => p.type === "tool_result");
  const image = toolResult.content.find((p: any) => p.type === "image");
  expect(image.source).toEqual({ type: "base64", media_type: "image/png", data: PNG.toString("base64") });
});

test("a model without the image capability gets a note instead of the bytes", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ toolCalls: [{ name: "read", args: { path: "shot.png" }, id: "call_img" }] }, { text: "ok" }]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  const tool = fake.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  expect(tool.content).toContain('image/png not sent: the model does not declare the "image" capability');
  expect(tool.content).not.toContain(PNG.toString("base64"));
});

test("a long file is cut with a snapshot artifact the model can read back", async () => {
  writeFileSync(join(sandbox.workspace, "app.log"), Array.from({ length: 4000 }, (_, i) => `event ${i + 1}`).join("\n"));
  sandbox.writeUserConfig(fakeConfig(fake.url));
  let uri = "";
  fake.script([
    { toolCalls: [{ name: "read", args: { path: "app.log" }, id: "call_1" }] },
    (req) => {
      const tool = req.body.messages.find((m: any) => m.role === "tool");
      uri = /artifact:\/\/[0-9a-f]{64}/.exec(tool.content)?.[0] ?? "missing";
      return { toolCalls: [{ name: "read", args: { path: uri, offset: 4000 }, id: "call_2" }] };
    },
    { text: "done" },
  ]);
  const result = await runZero(["run", "x"], { sandbox });
  expect(result.code).toBe(0);
  expect(uri).toMatch(/^artifact:\/\//);
  const answers = fake.requests[2]!.body.messages.filter((m: any) => m.role === "tool");
  expect(answers.at(-1).content).toBe("4000\tevent 4000");
});

test("openai-compatible: an image a tool returns reaches the model as a real image part in a user message, not as JSON in the tool message", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] } } }));
  fake.script([{ toolCalls: [{ name: "read", args: { path: "shot.png" }, id: "call_img" }] }, { text: "I see it" }, { text: "again" }]);
  const result = await runZero(["run", "look at the screenshot"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  const messages: any[] = fake.requests[1]!.body.messages;
  const toolIndex = messages.findIndex((m) => m.role === "tool");
  expect(typeof messages[toolIndex].content).toBe("string");
  expect(messages[toolIndex].content).toContain("the file follows in the next message");
  expect(messages[toolIndex].content).not.toContain(PNG.toString("base64"));
  const next = messages[toolIndex + 1];
  expect(next.role).toBe("user");
  expect(next.content.find((p: any) => p.type === "image_url").image_url.url).toBe(`data:image/png;base64,${PNG.toString("base64")}`);
});
