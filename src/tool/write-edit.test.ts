import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyEdit, detectEol } from "./write-edit.ts";
import { describeNearMatches } from "./write-near.ts";
import { completed, expectNoTempFiles, failed, makeBase, type Runner, runnerFor } from "../../test/support/write-tool.ts";

let base = "";
let ws = "";
let run: Runner;

beforeAll(() => {
  base = makeBase("zero-write-edit-");
  ws = join(base, "ws");
  mkdirSync(ws, { recursive: true });
  ({ run } = runnerFor(base, { workspace: ws }));
});

afterAll(() => {
  if (base !== "") rmSync(base, { recursive: true, force: true });
});

const SOURCE = ["function greet(name) {", "  const greeting = 'hello';", "  return `${greeting} ${name}`;", "}", ""].join("\n");

describe("edit through the tool", () => {
  test("a unique match is replaced; the summary and diff show the change; mode is kept", async () => {
    writeFileSync(join(ws, "greet.js"), SOURCE);
    chmodSync(join(ws, "greet.js"), 0o640);
    const result = await run({ operation: "edit", path: "greet.js", oldText: "'hello'", newText: "'hi'" });
    const output = completed(result);
    expect(output).toStartWith("edited greet.js (+1 -1)\n--- a/greet.js\n+++ b/greet.js");
    expect(readFileSync(join(ws, "greet.js"), "utf8")).toBe(SOURCE.replace("'hello'", "'hi'"));
    expect(result.diff).toContain("-  const greeting = 'hello';\n+  const greeting = 'hi';\n");
    expect(statSync(join(ws, "greet.js")).mode & 0o777).toBe(0o640);
    expectNoTempFiles(ws);
  });

  test("no match fails, changes nothing, and shows the near match with line numbers", async () => {
    writeFileSync(join(ws, "near.js"), SOURCE);
    const output = failed(await run({ operation: "edit", path: "near.js", oldText: "const greeting = 'hello';\nreturn `${greeting} ${name}`;", newText: "x" }));
    expect(output).toContain("oldText was not found in near.js");
    expect(output).toContain("different whitespace or indentation");
    expect(output).toContain("lines 2-3:\n2\t  const greeting = 'hello';\n3\t  return `${greeting} ${name}`;");
    expect(readFileSync(join(ws, "near.js"), "utf8")).toBe(SOURCE);
    expectNoTempFiles(ws);
  });

  test("a similar but different oldText gets the closest region", async () => {
    writeFileSync(join(ws, "similar.js"), SOURCE);
    const output = failed(await run({ operation: "edit", path: "similar.js", oldText: "function greet(person) {\n  const greeting = 'hello';", newText: "x" }));
    expect(output).toContain("The closest regions of the file:");
    expect(output).toMatch(/lines 1-2 \(\d+% similar\):\n1\tfunction greet\(name\) \{\n2\t  const greeting = 'hello';/);
  });

  test("several matches fail with the count and line numbers; replaceAll replaces them all", async () => {
    writeFileSync(join(ws, "many.txt"), "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n");
    const output = failed(await run({ operation: "edit", path: "many.txt", oldText: "x = 1", newText: "x = 9" }));
    expect(output).toContain("oldText occurs 3 times in many.txt (at lines 1, 3, 5)");
    expect(readFileSync(join(ws, "many.txt"), "utf8")).toBe("x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n");
    const result = await run({ operation: "edit", path: "many.txt", oldText: "x = 1", newText: "x = 9", replaceAll: true });
    expect(completed(result)).toStartWith("edited many.txt (3 replacements, +3 -3)");
    expect(readFileSync(join(ws, "many.txt"), "utf8")).toBe("x = 9\ny = 2\nx = 9\nz = 3\nx = 9\n");
  });

  test("a CRLF file matched with LF text stays CRLF", async () => {
    writeFileSync(join(ws, "dos.txt"), "one\r\ntwo\r\nthree\r\n");
    const result = await run({ operation: "edit", path: "dos.txt", oldText: "one\ntwo\n", newText: "one\nTWO\nand a half\n" });
    expect(completed(result)).toStartWith("edited dos.txt (+2 -1)");
    expect(readFileSync(join(ws, "dos.txt"), "utf8")).toBe("one\r\nTWO\r\nand a half\r\nthree\r\n");
  });

  test("refuses a missing file, a binary file and an empty oldText", async () => {
    expect(failed(await run({ operation: "edit", path: "nope.txt", oldText: "a", newText: "b" }))).toContain("does not exist; use operation write");
    writeFileSync(join(ws, "blob.bin"), Buffer.from([1, 2, 0, 3]));
    expect(failed(await run({ operation: "edit", path: "blob.bin", oldText: "a", newText: "b" }))).toContain("binary or not valid UTF-8");
    writeFileSync(join(ws, "e.txt"), "abc\n");
    expect(failed(await run({ operation: "edit", path: "e.txt", oldText: "", newText: "b" }))).toContain("oldText is empty");
    expect(failed(await run({ operation: "edit", path: "e.txt", oldText: "abc", newText: "abc" }))).toContain("identical");
  });

  test("a UTF-8 BOM survives an edit", async () => {
    writeFileSync(join(ws, "bom.txt"), "\uFEFFfirst\nsecond\n");
    completed(await run({ operation: "edit", path: "bom.txt", oldText: "second", newText: "2nd" }));
    expect(readFileSync(join(ws, "bom.txt"))[0]).toBe(0xef);
    expect(readFileSync(join(ws, "bom.txt"), "utf8")).toBe("\uFEFFfirst\n2nd\n");
  });
});

describe("applyEdit (pure)", () => {
  test("line endings: LF text in a CRLF file, CRLF text in an LF file", () => {
    expect(applyEdit("a\r\nb\r\n", { oldText: "a\nb", newText: "c\nd", replaceAll: false }, "f")).toEqual({ ok: true, text: "c\r\nd\r\n", replacements: 1 });
    expect(applyEdit("a\nb\n", { oldText: "a\r\nb", newText: "c\r\nd", replaceAll: false }, "f")).toEqual({ ok: true, text: "c\nd\n", replacements: 1 });
  });

  test("a mixed-ending file matches the text as sent when the converted text is absent", () => {
    const original = "x\r\ny\r\nz\nw\n"; // dominant LF by one
    expect(detectEol(original)).toBe("\n");
    const outcome = applyEdit(original, { oldText: "x\r\ny", newText: "X\nY", replaceAll: false }, "f");
    expect(outcome).toEqual({ ok: true, text: "X\nY\r\nz\nw\n", replacements: 1 });
  });

  test("a file that ended with a newline still does", () => {
    expect(applyEdit("a\nlast\n", { oldText: "last\n", newText: "end", replaceAll: false }, "f")).toEqual({ ok: true, text: "a\nend\n", replacements: 1 });
    // ... and one without a final newline does not gain one.
    expect(applyEdit("a\nlast", { oldText: "last", newText: "end", replaceAll: false }, "f")).toEqual({ ok: true, text: "a\nend", replacements: 1 });
  });

  test("replacement text is literal ($& and $1 are not patterns)", () => {
    expect(applyEdit("cost: X\n", { oldText: "X", newText: "$& $1 $$", replaceAll: false }, "f")).toEqual({ ok: true, text: "cost: $& $1 $$\n", replacements: 1 });
  });

  test("overlapping occurrences count once each, left to right", () => {
    const outcome = applyEdit("aaaa", { oldText: "aa", newText: "b", replaceAll: true }, "f");
    expect(outcome).toEqual({ ok: true, text: "bb", replacements: 2 });
  });
});

describe("near matches", () => {
  test("line-number prefixes copied from read output are pointed out", () => {
    const text = describeNearMatches(SOURCE, "2\t  const greeting = 'hello';\n3\t  return `${greeting} ${name}`;");
    expect(text).toContain("line-number prefixes");
    expect(text).toContain("2\t  const greeting = 'hello';");
  });

  test("a one-line fragment is found ignoring case and spacing", () => {
    const text = describeNearMatches(SOURCE, "RETURN   `${greeting}");
    expect(text).toContain("line 3:\n3\t  return `${greeting} ${name}`;");
  });

  test("nothing similar says so", () => {
    expect(describeNearMatches(SOURCE, "zzzzqqqq wwww")).toContain("Nothing in the file resembles oldText");
  });

  test("a large file (comparisons bounded) still finds the region", () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `const value${i} = compute(${i});`);
    const text = describeNearMatches(lines.join("\n"), "const value123456 = compute(123457);\nconst value123457 = compute(123457);");
    expect(text).toContain("lines 123457-123458");
  });
});
