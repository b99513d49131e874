import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProvider } from "../support/fake-provider.ts";
import { useFakeProviderAndSandbox } from "../support/e2e-hooks.ts";
import { fakeConfig, jsonLines, runZero, type Sandbox } from "../support/cli.ts";
import { envelope, requestsOf, scriptBySender } from "../support/delegation.ts";

let fake: FakeProvider;
let sandbox: Sandbox;
useFakeProviderAndSandbox({ fake: (f) => (fake = f), sandbox: (s) => (sandbox = s) }, { userConfig: false });

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("tiny png payload \u0000\u0001\u0002")]);
const PDF = Buffer.from("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");
/** Every content part of a chat-completions request's user messages. */
const userParts = (body: any): any[] => body.messages.filter((m: any) => m.role === "user").flatMap((m: any) => (Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }]));
const userText = (body: any): string => userParts(body).filter((p) => p.type === "text").map((p) => p.text).join("\n");
const imageParts = (body: any) => userParts(body).filter((p) => p.type === "image_url");
const fileParts = (body: any) => userParts(body).filter((p) => p.type === "file");

/** The root on a text-only model; `vision` on a model that reads images and files. */
function textOnlyWithVision(extra: Record<string, unknown> = {}) {
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models: { eye: { provider: "fake", model: "fake-eye", capabilities: ["text", "tools", "image", "file"] } },
      agents: { vision: { model: "eye" } },
      ...extra,
    }),
  );
}

test("a PNG and a PDF attached for a text-only model go to the vision agent; its report replaces them", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  writeFileSync(join(sandbox.workspace, "spec.pdf"), PDF);
  textOnlyWithVision();
  scriptBySender(fake, {
    attachments: [envelope({ summary: "The screenshot shows a red Save button; the PDF's section 4 asks for a retry limit of 3.", findings: [] })],
    root: [{ text: "done" }],
  });
  const result = await runZero(["run", "--json", "--attach", "shot.png", "implement section 4 of @spec.pdf"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  const child = requestsOf(fake, "attachments")[0]!.body;
  expect(imageParts(child)).toHaveLength(1);
  expect(imageParts(child)[0].image_url.url).toBe(`data:image/png;base64,${PNG.toString("base64")}`);
  expect(fileParts(child)).toHaveLength(1);
  const root = requestsOf(fake, "root")[0]!.body;
  expect(imageParts(root)).toEqual([]);
  expect(fileParts(root)).toEqual([]);
  expect(userText(root)).toContain("implement section 4 of @spec.pdf");
  expect(userText(root)).toContain("read by the vision agent");
  expect(userText(root)).toContain("retry limit of 3");
  // The child comes before the root's first request: nothing reached the text-only model first.
  expect(fake.requests[0]!.body.model).toBe("fake-eye");
  const events = jsonLines(result.stdout);
  expect(events.some((e) => e.type === "agent.spawned" && e.agent === "vision")).toBe(true);
});

test("a model that declares the capabilities gets the media itself; a text file is included as text", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  writeFileSync(join(sandbox.workspace, "notes.md"), "# Notes\nuse port 8080\n");
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] } } }));
  fake.script([{ text: "seen" }]);
  const result = await runZero(["run", "--attach", "shot.png", "look at @notes.md and @missing.png"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(fake.requests).toHaveLength(1);
  const body = fake.requests[0]!.body;
  expect(imageParts(body)).toHaveLength(1);
  expect(userText(body)).toContain("Attached file notes.md:\n```\n# Notes\nuse port 8080\n");
  // A mention of a file that does not exist stays prompt text.
  expect(userText(body)).toContain("@missing.png");
});

test("files with spaces by quoted mention; attachments outside the roots, oversize or secret-like are refused before any request", async () => {
  mkdirSync(join(sandbox.workspace, "design refs"));
  writeFileSync(join(sandbox.workspace, "design refs", "home page.png"), PNG);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] } }, limits: { maxAttachmentBytes: 64 } }));
  fake.script([{ text: "ok" }]);
  const quoted = await runZero(["run", 'inspect @"design refs/home page.png"'], { sandbox });
  expect(quoted.code, quoted.stderr).toBe(0);
  expect(imageParts(fake.requests[0]!.body)).toHaveLength(1);

  fake.reset();
  writeFileSync(join(sandbox.root, "outside.png"), PNG);
  const outside = await runZero(["run", "--attach", join(sandbox.root, "outside.png"), "x"], { sandbox });
  expect(outside.code).toBe(2);
  expect(outside.stderr).toContain(`--attach ${join(sandbox.root, "outside.png")}: Access denied`);
  writeFileSync(join(sandbox.workspace, "big.png"), Buffer.concat([PNG, Buffer.alloc(100)]));
  const big = await runZero(["run", "--attach", "big.png", "x"], { sandbox });
  expect(big.code).toBe(2);
  expect(big.stderr).toContain("above limits.maxAttachmentBytes (64)");
  writeFileSync(join(sandbox.workspace, ".env"), "TOKEN=x\n");
  const secret = await runZero(["run", "--attach", ".env", "x"], { sandbox });
  expect(secret.code).toBe(2);
  expect(secret.stderr).toContain("looks like a secret");
  expect(fake.requests).toHaveLength(0);
});

test("no agent whose model reads the media: the run fails before any model call", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  sandbox.writeUserConfig(fakeConfig(fake.url));
  const result = await runZero(["run", "--attach", "shot.png", "x"], { sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("the attachments need the image capability, which model 'fake' does not declare");
  expect(fake.requests).toHaveLength(0);
  // At flash no child can start: the same attachments cannot be routed.
  textOnlyWithVision();
  const flash = await runZero(["run", "--depth", "flash", "--attach", "shot.png", "x"], { sandbox });
  expect(flash.code).toBe(2);
  expect(flash.stderr).toContain("no child run is possible here at --depth flash");
  expect(fake.requests).toHaveLength(0);
});

test("mentions of what is not an existing file stay text; other binary files are refused; long text is cut", async () => {
  writeFileSync(join(sandbox.workspace, "types"), "a file, not a directory\n");
  writeFileSync(join(sandbox.workspace, "app.wasm"), Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
  writeFileSync(join(sandbox.workspace, "big.txt"), "x".repeat(60_000));
  sandbox.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: "ok" }, { text: "ok" }]);
  // A file the task asks to create (secret-looking or not) and a path through a file are just text.
  // A file outside the roots (@/etc/passwd) is not attached either: the mention stays text.
  const text = await runZero(["run", "create @.env.local with FOO=1, upgrade @types/node and ignore @/etc/passwd"], { sandbox });
  expect(text.code, text.stderr).toBe(0);
  expect(userText(fake.requests[0]!.body)).toBe("create @.env.local with FOO=1, upgrade @types/node and ignore @/etc/passwd");

  const binary = await runZero(["run", "--attach", "app.wasm", "x"], { sandbox });
  expect(binary.code).toBe(2);
  expect(binary.stderr).toContain("app.wasm is binary content other than an image, audio or PDF");

  const long = await runZero(["run", "summarize @big.txt"], { sandbox });
  expect(long.code, long.stderr).toBe(0);
  const sent = userText(fake.requests[1]!.body);
  expect(sent).toContain("(cut at 50000 of 60000 characters; read big.txt for the rest)");
  expect(sent.length).toBeLessThan(51_000);
});

/** A minimal RIFF/WAVE header and an ID3-tagged MP3 head: recognized by their bytes. */
const WAV = Buffer.concat([Buffer.from("RIFF"), Buffer.from([36, 0, 0, 0]), Buffer.from("WAVEfmt "), Buffer.alloc(24)]);
const MP3 = Buffer.concat([Buffer.from("ID3"), Buffer.from([4, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(32)]);
const audioParts = (body: any) => userParts(body).filter((p) => p.type === "input_audio");

test("MEDIA-01/04/05: --attach of a PDF, a PNG, a WAV and an MP3 reaches a capable model as typed parts with their MIME types (run and exec)", async () => {
  writeFileSync(join(sandbox.workspace, "spec.pdf"), PDF);
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  writeFileSync(join(sandbox.workspace, "voice.wav"), WAV);
  writeFileSync(join(sandbox.workspace, "song.mp3"), MP3);
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image", "audio", "file"] } } }));
  fake.script([{ text: "seen" }, { text: "seen again" }]);
  const attach = ["--attach", "spec.pdf", "--attach", "shot.png", "--attach", "voice.wav", "--attach", "song.mp3"];
  const result = await runZero(["run", ...attach, "implement the spec"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  expect(fake.requests).toHaveLength(1);
  const body = fake.requests[0]!.body;
  expect(fileParts(body)).toHaveLength(1);
  expect(fileParts(body)[0].file).toMatchObject({ filename: "spec.pdf", file_data: `data:application/pdf;base64,${PDF.toString("base64")}` });
  expect(imageParts(body).map((p) => p.image_url.url)).toEqual([`data:image/png;base64,${PNG.toString("base64")}`]);
  expect(audioParts(body).map((p) => p.input_audio)).toEqual([
    { data: WAV.toString("base64"), format: "wav" },
    { data: MP3.toString("base64"), format: "mp3" },
  ]);
  expect(userText(body)).toBe("implement the spec");
  // `exec` sends the same attachments through the same session service.
  const exec = await runZero(["exec", "--attach", "shot.png", "--attach", "voice.wav", "look and listen"], { sandbox });
  expect(exec.code, exec.stderr).toBe(0);
  expect(imageParts(fake.requests[1]!.body)).toHaveLength(1);
  expect(audioParts(fake.requests[1]!.body).map((p) => p.input_audio.format)).toEqual(["wav"]);
});

test("MEDIA-03: an 11 MiB file is refused at the 10 MiB default naming the limit; raising limits.maxAttachmentBytes accepts it; a directory is not a file", async () => {
  writeFileSync(join(sandbox.workspace, "huge.png"), Buffer.concat([PNG, Buffer.alloc(11 * 1024 * 1024)]));
  const capable = { models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] } } };
  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", capable));
  fake.script([{ text: "big" }]);
  const refused = await runZero(["run", "--attach", "huge.png", "x"], { sandbox });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`huge.png is ${PNG.length + 11 * 1024 * 1024} bytes, above limits.maxAttachmentBytes (10485760)`);
  mkdirSync(join(sandbox.workspace, "shots"));
  const directory = await runZero(["run", "--attach", "shots", "x"], { sandbox });
  expect(directory.code).toBe(2);
  expect(directory.stderr).toContain("shots is not a regular file");
  expect(fake.requests).toHaveLength(0);

  sandbox.writeUserConfig(fakeConfig(fake.url, "chat", { ...capable, limits: { maxAttachmentBytes: 12 * 1024 * 1024 } }));
  const accepted = await runZero(["run", "--attach", "huge.png", "x"], { sandbox });
  expect(accepted.code, accepted.stderr).toBe(0);
  expect(imageParts(fake.requests[0]!.body)).toHaveLength(1);
});

test("MEDIA-07: a vision agent the root may not delegate to, or no child left to start, fails the run before any model call", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  textOnlyWithVision({ agents: { vision: { model: "eye" }, build: { canDelegateTo: ["explore", "review"] } } });
  const barred = await runZero(["run", "--attach", "shot.png", "x"], { sandbox });
  expect(barred.code).toBe(2);
  expect(barred.stderr).toContain("the attachments need the image capability, which model 'fake' does not declare, and no agent that 'build' may delegate to (explore, review) has a model that does");
  expect(fake.requests).toHaveLength(0);

  // A workflow phase ignores the child caps; the media route is the root's own child and does not.
  for (const extra of [{ multiAgent: { maxChildrenPerAgent: 0 } }, { agents: { vision: { model: "eye" }, build: { maxChildren: 0 } } }]) {
    textOnlyWithVision(extra);
    const noChild = await runZero(["run", "--attach", "shot.png", "x"], { sandbox });
    expect(noChild.code).toBe(2);
    expect(noChild.stderr).toBe("zero: the attachments need a vision child run (model 'fake' cannot read them), but agent build may start no children (agents.build.maxChildren or multiAgent.maxChildrenPerAgent is 0)\n");
  }
  expect(fake.requests).toHaveLength(0);
});

test("MEDIA-06: only what the model cannot read is routed — the image stays with an image model, the PDF goes to the specialist", async () => {
  writeFileSync(join(sandbox.workspace, "shot.png"), PNG);
  writeFileSync(join(sandbox.workspace, "spec.pdf"), PDF);
  sandbox.writeUserConfig(
    fakeConfig(fake.url, "chat", {
      models: { fake: { provider: "fake", model: "fake-1", capabilities: ["text", "tools", "image"] }, eye: { provider: "fake", model: "fake-eye", capabilities: ["text", "tools", "file"] } },
      agents: { vision: { model: "eye" } },
    }),
  );
  scriptBySender(fake, { attachments: [envelope({ summary: "Section 4 of the PDF sets the retry limit to 3.", findings: [] })], root: [{ text: "done" }] });
  const result = await runZero(["run", "--attach", "shot.png", "--attach", "spec.pdf", "implement section 4"], { sandbox });
  expect(result.code, result.stderr).toBe(0);
  const child = requestsOf(fake, "attachments")[0]!.body;
  expect(fileParts(child)).toHaveLength(1);
  expect(imageParts(child)).toEqual([]);
  const root = requestsOf(fake, "root")[0]!.body;
  expect(imageParts(root)).toHaveLength(1);
  expect(fileParts(root)).toEqual([]);
  expect(userText(root)).toContain("[spec.pdf: read by the vision agent");
  expect(userText(root)).toContain("retry limit to 3");
});
