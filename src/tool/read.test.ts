import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Roots, createRoots } from "../security/roots.ts";
import type { ToolResult } from "./define.ts";
import { readTool } from "./read.ts";
import { createArtifactStore } from "../store/artifacts.ts";
import { makeToolContext } from "../../test/support/tool-context.ts";

// base/ws/        the workspace
// base/outside/   a sibling directory that is not a root
let base = "";
let ws = "";
let roots: Roots;

const SECRET = "TOP-SECRET-CONTENT-42";

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "zero-read-")));
  ws = join(base, "ws");
  mkdirSync(join(ws, "sub", "deeper"), { recursive: true });
  mkdirSync(join(ws, "listing", "child"), { recursive: true });
  mkdirSync(join(base, "outside"), { recursive: true });

  writeFileSync(join(ws, "hundred.txt"), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  writeFileSync(join(ws, "small.txt"), "alpha\nbeta\ngamma"); // no trailing newline
  writeFileSync(join(ws, "crlf.txt"), "one\r\ntwo\r\n");
  writeFileSync(join(ws, "empty.txt"), "");
  writeFileSync(join(ws, "long.txt"), `short\n${"x".repeat(5000)}\nend\n`);
  writeFileSync(join(ws, "blob.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, ...Buffer.from("hidden text")]));
  writeFileSync(join(ws, "sub", "inner.txt"), "inner\n");

  writeFileSync(join(ws, "listing", "a.txt"), "12345");
  writeFileSync(join(ws, "listing", "b.md"), "");
  writeFileSync(join(ws, "listing", "child", "nested.txt"), "not listed");

  writeFileSync(join(base, "outside", "secret.txt"), `${SECRET}\n`);
  symlinkSync(join(base, "outside", "secret.txt"), join(ws, "link-out"));
  symlinkSync(join(base, "outside"), join(ws, "dirlink-out"));
  symlinkSync(join(ws, "small.txt"), join(ws, "link-in"));

  roots = createRoots({ workspace: ws });
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

async function read(raw: unknown, signal: AbortSignal = new AbortController().signal): Promise<ToolResult> {
  const prepared = readTool.prepare(raw);
  if (!prepared.ok) throw new Error(`prepare failed: ${prepared.error}`);
  expect(prepared.classification).toMatchObject({ risk: "read", operation: "read" });
  return readTool.run(prepared.input, makeToolContext({ roots, artifactsDir: join(base, "artifacts"), signal, timeoutMs: 10_000 }));
}

function numberedLines(output: string): string[] {
  return output.split("\n").filter((line) => /^\d+\t/.test(line));
}

function expectFailed(result: ToolResult): string {
  if (result.status !== "failed") throw new Error(`expected failed, got ${result.status}: ${result.output}`);
  return result.output;
}

function expectCompleted(result: ToolResult): string {
  if (result.status !== "completed") throw new Error(`expected completed, got ${result.status}: ${result.output}`);
  return result.output;
}

describe("read: files", () => {
  test("offset 10 limit 3 on a 100-line file shows exactly lines 10, 11 and 12", async () => {
    const result = await read({ path: "hundred.txt", offset: 10, limit: 3 });
    const output = expectCompleted(result);
    expect(numberedLines(output)).toEqual(["10\tline 10", "11\tline 11", "12\tline 12"]);
    expect(output).toContain("of 100");
    expect(output).toContain("offset=13");
  });

  test("a whole small file is numbered from 1, including a last line without a newline", async () => {
    const result = await read({ path: "small.txt" });
    expect(expectCompleted(result)).toBe("1\talpha\n2\tbeta\n3\tgamma");
    expect(result.truncated).toBe(false);
  });

  test("the last line of a file can be read on its own", async () => {
    const output = expectCompleted(await read({ path: "hundred.txt", offset: 100 }));
    expect(numberedLines(output)).toEqual(["100\tline 100"]);
    expect(output).not.toContain("offset=");
  });

  test("a limit past the end shows what there is", async () => {
    const output = expectCompleted(await read({ path: "hundred.txt", offset: 98, limit: 50 }));
    expect(numberedLines(output)).toEqual(["98\tline 98", "99\tline 99", "100\tline 100"]);
  });

  test("CRLF line endings are not shown as part of the line", async () => {
    expect(expectCompleted(await read({ path: "crlf.txt" }))).toBe("1\tone\n2\ttwo");
  });

  test("a path with ./ and inner .. that stays inside works", async () => {
    expect(expectCompleted(await read({ path: "./sub/../sub/inner.txt" }))).toBe("1\tinner");
  });

  test("an absolute path inside the workspace works", async () => {
    expect(expectCompleted(await read({ path: join(ws, "sub", "inner.txt") }))).toBe("1\tinner");
  });

  test("a symlink inside the workspace to a file inside it is followed", async () => {
    expect(expectCompleted(await read({ path: "link-in" }))).toBe("1\talpha\n2\tbeta\n3\tgamma");
  });

  test("offset past the end fails with a clear message", async () => {
    const message = expectFailed(await read({ path: "hundred.txt", offset: 101 }));
    expect(message).toContain("hundred.txt");
    expect(message).toContain("100 lines");
    expect(message).toContain("101");
    expect(message).toContain("past the end");
  });

  test("a long line is clipped, not dumped whole", async () => {
    const result = await read({ path: "long.txt" });
    const output = expectCompleted(result);
    const lines = numberedLines(output);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe("1\tshort");
    expect(lines[1]!.startsWith(`2\t${"x".repeat(100)}`)).toBe(true);
    expect(lines[1]).toContain("clipped");
    expect(lines[1]!.length).toBeLessThan(2200);
    expect(lines[1]).not.toContain("x".repeat(2001));
    expect(lines[2]).toBe("3\tend");
    expect(result.truncated).toBe(true);
  });

  test("a binary file is reported as binary, not dumped", async () => {
    const output = expectCompleted(await read({ path: "blob.bin" }));
    expect(output).toContain("blob.bin");
    expect(output).toContain("binary");
    expect(output).toContain("23 bytes");
    expect(output).not.toContain("hidden text");
    expect(output).not.toContain("\0");
  });

  test("an empty file says so", async () => {
    const result = await read({ path: "empty.txt" });
    const output = expectCompleted(result);
    expect(output).toContain("empty.txt");
    expect(output).toContain("empty");
    expect(numberedLines(output)).toEqual([]);
  });

  test("a missing file fails and names the path", async () => {
    const message = expectFailed(await read({ path: "nope.txt" }));
    expect(message).toContain("nope.txt");
    expect(message).toContain("does not exist");
  });

  test("every line of a large file is reachable by offset, with bounded memory", async () => {
    const big = join(ws, "big.txt");
    writeFileSync(big, Array.from({ length: 200_000 }, (_, i) => `line ${i + 1} ${"y".repeat(90)}`).join("\n")); // ~19 MB
    try {
      const head = await read({ path: "big.txt", limit: 2 });
      expect(numberedLines(expectCompleted(head))).toHaveLength(2);
      expect(head.output).toMatch(/of a \d+-byte file; use offset=3 to continue/);
      expect(head.truncated).toBe(true);
      const tail = await read({ path: "big.txt", offset: 199_999 });
      expect(numberedLines(expectCompleted(tail)).map((l) => l.split(" ")[0])).toEqual(["199999\tline", "200000\tline"]);
      expect(tail.truncated).toBe(false);
      const past = expectFailed(await read({ path: "big.txt", offset: 200_001 }));
      expect(past).toContain("has 200000 lines");
    } finally {
      rmSync(big);
    }
  });

  test("a FIFO is refused at once instead of blocking", async () => {
    const fifo = join(ws, "pipe");
    Bun.spawnSync(["mkfifo", fifo]);
    try {
      const message = expectFailed(await read({ path: "pipe" }));
      expect(message).toContain("not a regular file");
    } finally {
      rmSync(fifo);
    }
  });

  test("a run whose signal is already aborted does not read", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await read({ path: "small.txt" }, controller.signal);
    expect(result.status).toBe("cancelled");
    expect(result.output).not.toContain("alpha");
  });
});

describe("read: directories", () => {
  test("lists files with sizes and directories with a trailing slash", async () => {
    const output = expectCompleted(await read({ path: "listing" }));
    const lines = output.split("\n");
    expect(lines[0]).toContain("listing");
    expect(lines[0]).toContain("3 entries");
    expect(lines.slice(1)).toEqual(["a.txt (5 bytes)", "b.md (0 bytes)", "child/"]);
    expect(output).not.toContain("nested.txt");
  });

  test("the workspace itself can be listed as '.'", async () => {
    const output = expectCompleted(await read({ path: "." }));
    expect(output).toContain("hundred.txt (");
    expect(output).toContain("sub/");
    expect(output).toContain("listing/");
  });

  test("a symlinked directory inside a root pointing outside is not listed", async () => {
    const message = expectFailed(await read({ path: "dirlink-out" }));
    expect(message).toContain("outside the allowed roots");
    expect(message).not.toContain("secret.txt (");
  });
});

describe("read: the workspace boundary", () => {
  const expectOutside = (result: ToolResult) => {
    const message = expectFailed(result);
    expect(message).toContain("outside the allowed roots");
    expect(message).toContain("Allowed roots");
    expect(message).toContain(ws);
    expect(message).not.toContain(SECRET);
    return message;
  };

  test("../ traversal out of the workspace fails and names the allowed roots", async () => {
    expectOutside(await read({ path: "../outside/secret.txt" }));
  });

  test("traversal disguised inside a path fails", async () => {
    expectOutside(await read({ path: "sub/../../outside/secret.txt" }));
  });

  test("an absolute path outside fails and names the allowed roots", async () => {
    expectOutside(await read({ path: join(base, "outside", "secret.txt") }));
  });

  test("a symlink inside the workspace pointing outside fails and names the allowed roots", async () => {
    const message = expectOutside(await read({ path: "link-out" }));
    expect(message).toContain(join(base, "outside", "secret.txt")); // where it really points
  });

  test("a file reached through a symlinked directory pointing outside fails", async () => {
    expectOutside(await read({ path: "dirlink-out/secret.txt" }));
  });

  test("/etc/passwd is outside", async () => {
    expectOutside(await read({ path: "/etc/passwd" }));
  });
});

describe("read: input validation", () => {
  const prepareError = (raw: unknown): string => {
    const prepared = readTool.prepare(raw);
    if (prepared.ok) throw new Error(`expected prepare to fail for ${JSON.stringify(raw)}`);
    return prepared.error;
  };

  test("an unknown key instead of path is rejected with a readable message", () => {
    const error = prepareError({ file: "x" });
    expect(error).toContain("read");
    expect(error).toContain("path");
    expect(error).toContain("file");
  });

  test("offset 0 is rejected, naming offset", () => {
    const error = prepareError({ path: "small.txt", offset: 0 });
    expect(error).toContain("offset");
    expect(error).not.toContain("limit");
  });

  test("limit 0, a fractional offset, an empty path and a non-object are rejected", () => {
    expect(prepareError({ path: "small.txt", limit: 0 })).toContain("limit");
    expect(prepareError({ path: "small.txt", offset: 1.5 })).toContain("offset");
    expect(prepareError({ path: "" })).toContain("path");
    expect(prepareError("small.txt")).toContain("read");
    expect(prepareError(null)).toContain("read");
  });

  test("valid input is accepted as is and classified as a read", () => {
    const prepared = readTool.prepare({ path: "small.txt", offset: 2, limit: 1 });
    expect(prepared).toEqual({
      ok: true,
      input: { path: "small.txt", offset: 2, limit: 1 },
      classification: { risk: "read", operation: "read", target: "small.txt", categories: [] },
    });
  });

  test("the schema offered to the model requires path and has no $schema key", () => {
    expect(readTool.inputSchema.required).toEqual(["path"]);
    expect(readTool.inputSchema.$schema).toBeUndefined();
    expect(Object.keys(readTool.inputSchema.properties as object).sort()).toEqual(["limit", "offset", "path"]);
  });
});

test("a long default read stops at its own budget and says where to continue", async () => {
  writeFileSync(join(ws, "wide.txt"), Array.from({ length: 3000 }, (_, i) => `${i + 1} ${"y".repeat(90)}`).join("\n"));
  const result = await read({ path: "wide.txt" });
  expect(result.status).toBe("completed");
  expect(result.truncated).toBe(true);
  expect(result.output).not.toContain("omitted");
  const lines = numberedLines(result.output);
  expect(lines.length).toBeGreaterThan(100);
  expect(lines.length).toBeLessThan(2000);
  expect(result.output).toContain(`use offset=${lines.length + 1} to continue`);
  const next = await read({ path: "wide.txt", offset: lines.length + 1, limit: 1 });
  expect(numberedLines(next.output)[0]).toStartWith(`${lines.length + 1}\t${lines.length + 1} `);
});

describe("read: media and artifacts", () => {
  const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("rest of a tiny png \u0000 body")]);

  async function readWith(raw: unknown, known: Set<string>, store = createArtifactStore(join(base, "artifacts")), maxAttachmentBytes = 1024 * 1024) {
    const prepared = readTool.prepare(raw);
    if (!prepared.ok) throw new Error(prepared.error);
    const ctx = makeToolContext({ roots, artifactsDir: join(base, "artifacts"), artifacts: store, knownArtifacts: known, maxAttachmentBytes, timeoutMs: 10_000 });
    return readTool.run(prepared.input, ctx);
  }

  test("images, PDFs and audio come back as typed media with their bytes", async () => {
    writeFileSync(join(ws, "shot.png"), PNG);
    writeFileSync(join(ws, "spec.pdf"), "%PDF-1.7\n% fake pdf body\n");
    writeFileSync(join(ws, "a.wav"), Buffer.concat([Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt "), Buffer.alloc(16)]));
    const image = await readWith({ path: "shot.png" }, new Set());
    expect(image.status).toBe("completed");
    expect(image.media).toEqual([{ type: "file", mediaType: "image/png", data: PNG.toString("base64"), filename: "shot.png" }]);
    expect(image.output).toContain("image/png");
    expect((await readWith({ path: "spec.pdf" }, new Set())).media?.[0]?.mediaType).toBe("application/pdf");
    expect((await readWith({ path: "a.wav" }, new Set())).media?.[0]?.mediaType).toBe("audio/wav");
  });

  test("media above limits.maxAttachmentBytes is refused, not truncated", async () => {
    writeFileSync(join(ws, "big.png"), Buffer.concat([PNG, Buffer.alloc(4096)]));
    const result = await readWith({ path: "big.png" }, new Set(), undefined, 1000);
    expect(result.status).toBe("failed");
    expect(result.output).toContain("limits.maxAttachmentBytes");
    expect(result.media).toBeUndefined();
  });

  test("artifact:// references: only known ones, verified against their hash, with line ranges", async () => {
    const dir = join(base, "artifact-test");
    const store = createArtifactStore(dir);
    const ref = store.put(Array.from({ length: 20 }, (_, i) => `row ${i + 1}`).join("\n"));
    const unknown = await readWith({ path: ref.uri }, new Set());
    expect(unknown.status).toBe("failed");
    expect(unknown.output).toContain("not a reference from this conversation");
    const known = new Set([ref.sha256]);
    const lines = await readWith({ path: ref.uri, offset: 3, limit: 2 }, known, store);
    expect(numberedLines(lines.output)).toEqual(["3\trow 3", "4\trow 4"]);
    // Flip one byte of the stored blob: the read fails verification.
    const file = join(dir, ref.sha256.slice(0, 2), ref.sha256);
    const bytes = readFileSync(file);
    bytes[0] = bytes[0]! ^ 1;
    writeFileSync(file, bytes);
    const tampered = await readWith({ path: ref.uri }, known, store);
    expect(tampered.status).toBe("failed");
    expect(tampered.output).toContain("failed verification");
    expect((await readWith({ path: "artifact://xyz" }, known, store)).output).toContain("not a valid reference");
  });

  test("a default read that cuts a file names a snapshot artifact that can be read back", async () => {
    writeFileSync(join(ws, "long.log"), Array.from({ length: 5000 }, (_, i) => `entry ${i + 1}`).join("\n"));
    const known = new Set<string>();
    const store = createArtifactStore(join(base, "spill"));
    const first = await readWith({ path: "long.log" }, known, store);
    const uri = /artifact:\/\/[0-9a-f]{64}/.exec(first.output)?.[0];
    expect(uri).toBeDefined();
    known.add(uri!.slice("artifact://".length));
    const tail = await readWith({ path: uri!, offset: 5000 }, known, store);
    expect(numberedLines(tail.output)).toEqual(["5000\tentry 5000"]);
  });
});
