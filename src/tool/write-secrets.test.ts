import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRedactor } from "../security/redact.ts";
import { completed, expectNoTempFiles, failed, makeBase, type Runner, runnerFor } from "../../test/support/write-tool.ts";
import { addedMarkers, hiddenFragments, markerInOldTextProblem, markerOverwriteProblem } from "./write-secrets.ts";

// Built at run time so no scanner mistakes the test for a leak.
const token = `ghp_${"A1b2C3d4E5f6".repeat(3)}`;
const otherToken = `ghp_${"Z9y8X7w6V5u4".repeat(3)}`;
const keyBody = Array.from({ length: 4 }, (_, i) => `${String(i).repeat(2)}${"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7".repeat(2)}`.slice(0, 64));
const privateKey = ["-----BEGIN PRIVATE KEY-----", ...keyBody, "-----END PRIVATE KEY-----"].join("\n");
const redactor = createRedactor();
const seen = (text: string) => redactor.redact(text).text;

describe("the rule, on texts", () => {
  test("added markers are counted per marker", () => {
    expect(addedMarkers("a", "a [REDACTED:github-token]")).toEqual(["[REDACTED:github-token]"]);
    expect(addedMarkers("[REDACTED:github-token]", "[REDACTED:github-token] x")).toEqual([]);
    expect(addedMarkers("[REDACTED:github-token]", "[REDACTED:github-token] [REDACTED:github-token]")).toEqual(["[REDACTED:github-token]"]);
    expect(addedMarkers("", "[REDACTED:bad kind] [REDACTED:]")).toEqual([]);
  });

  test("hidden fragments are the secrets, also across the lines of a key", () => {
    const text = `a = 1\nTOKEN=${token}\nb = 2\n${privateKey}\n`;
    const fragments = hiddenFragments(text, seen(text));
    expect(fragments).toContain(token);
    for (const line of keyBody) expect(fragments.some((fragment) => line.includes(fragment) && fragment.length >= 60)).toBe(true);
    expect(fragments.some((fragment) => fragment.includes("a = 1"))).toBe(false);
  });

  const file = `# config\nTOKEN=${token}\nDEBUG=false\n`;
  const CASES: ReadonlyArray<[string, string | undefined | "unexamined", string, boolean]> = [
    ["the file written back as seen", file, seen(file), true],
    ["written back as seen with another line changed", file, seen(file).replace("DEBUG=false", "DEBUG=true"), true],
    ["a new file with a marker (no secret to lose)", undefined, seen(file), false],
    ["a file without secrets receiving a marker", "# notes\n", "# notes\nexample: [REDACTED:github-token]\n", false],
    ["every secret kept, a marker added elsewhere", file, `${file}# shown as [REDACTED:github-token]\n`, false],
    ["a secret removed on purpose, no marker", file, "# config\nDEBUG=false\n", false],
    ["a secret replaced by another value", file, file.replace(token, otherToken), false],
    ["a secret replaced by a marker of another kind", file, file.replace(token, "[REDACTED:known-secret]"), true],
    ["a literal marker kept, the secret overwritten by a second one", `[REDACTED:github-token]\n${file}`, `[REDACTED:github-token]\n${seen(file)}`, true],
    ["a literal marker kept and the secret kept", `[REDACTED:github-token]\n${file}`, `[REDACTED:github-token]\n${file}x\n`, false],
    ["a binary or huge file receiving a marker", "unexamined", seen(file), true],
    ["a binary or huge file receiving plain text", "unexamined", "plain\n", false],
    ["a private key written back as seen", `${privateKey}\n`, seen(`${privateKey}\n`), true],
  ];
  test.each(CASES.map((row) => [...row]))("%s → refused: %p", (_name, before, after, refused) => {
    const problem = markerOverwriteProblem(before as string | undefined | "unexamined", after as string, redactor, "config.env");
    expect(problem !== undefined).toBe(refused as boolean);
    if (problem !== undefined) expect(problem).toContain("Nothing was changed");
  });

  test("the exact values of known secrets count as hidden too", () => {
    const known = createRedactor({ knownSecrets: ["plain-looking-value-1234"] });
    const text = "password: plain-looking-value-1234\n";
    expect(known.redact(text).text).toContain("[REDACTED:");
    expect(markerOverwriteProblem(text, known.redact(text).text, known, "x.yml")).toBeDefined();
  });

  test("an oldText with a marker the file does not hold gets an explanation", () => {
    expect(markerInOldTextProblem(file, `TOKEN=[REDACTED:github-token]`, "config.env")).toContain("can never match");
    expect(markerInOldTextProblem(`x [REDACTED:github-token]\n`, "x [REDACTED:github-token]", "notes.md")).toBeUndefined();
    expect(markerInOldTextProblem(file, "DEBUG=false", "config.env")).toBeUndefined();
  });
});

describe("the write tool refuses to put a marker over a secret", () => {
  let base = "";
  let ws = "";
  let run: Runner;
  const config = () => join(ws, "config.env.txt");
  const original = `# settings\nTOKEN=${token}\nDEBUG=false\nNAME=app\n`;

  beforeAll(() => {
    base = makeBase("zero-write-secrets-");
    ws = join(base, "ws");
    mkdirSync(ws, { recursive: true });
    ({ run } = runnerFor(base, { workspace: ws }));
  });
  afterAll(() => {
    if (base !== "") rmSync(base, { recursive: true, force: true });
  });

  const reset = () => writeFileSync(config(), original);
  const onDisk = () => readFileSync(config(), "utf8");

  test("write: the file written back exactly as the model saw it is refused, the secret stays", async () => {
    reset();
    const output = failed(await run({ operation: "write", path: "config.env.txt", content: seen(original) }));
    expect(output).toContain("Refused: config.env.txt holds a secret (github-token)");
    expect(output).toContain("operation edit");
    expect(output).not.toContain(token);
    expect(onDisk()).toBe(original);
    expectNoTempFiles(ws);
  });

  test("edit: oldText with a marker explains why it never matches; newText may not replace the secret either", async () => {
    reset();
    const stale = failed(await run({ operation: "edit", path: "config.env.txt", oldText: "TOKEN=[REDACTED:github-token]", newText: "TOKEN=[REDACTED:github-token]\nNEW=1" }));
    expect(stale).toContain("oldText contains [REDACTED:github-token]");
    expect(stale).toContain("edit around the secret".replace("edit", "Edit"));
    expect(onDisk()).toBe(original);
  });

  test("edit around the secret works, and a marker added next to a kept secret is allowed", async () => {
    reset();
    completed(await run({ operation: "edit", path: "config.env.txt", oldText: "DEBUG=false", newText: "DEBUG=true" }));
    expect(onDisk()).toBe(original.replace("DEBUG=false", "DEBUG=true"));
    completed(await run({ operation: "edit", path: "config.env.txt", oldText: "NAME=app", newText: "NAME=app\n# the token shows as [REDACTED:github-token] in zero" }));
    expect(onDisk()).toContain(`TOKEN=${token}`);
  });

  test("edit: an oldText that covers the secret (known from elsewhere) with a marker as newText is refused", async () => {
    reset();
    const output = failed(await run({ operation: "edit", path: "config.env.txt", oldText: `TOKEN=${token}`, newText: "TOKEN=[REDACTED:github-token]" }));
    expect(output).toContain("Refused");
    expect(onDisk()).toBe(original);
  });

  test("patch: replacing the secret line with a marker is refused before git runs; a stale context line gets a hint", async () => {
    reset();
    const replace = ["--- a/config.env.txt", "+++ b/config.env.txt", "@@ -2 +2 @@", `-TOKEN=${token}`, "+TOKEN=[REDACTED:github-token]", ""].join("\n");
    expect(failed(await run({ operation: "patch", patch: replace }))).toContain("Patch refused: config.env.txt holds a secret");
    expect(onDisk()).toBe(original);
    const stale = ["--- a/config.env.txt", "+++ b/config.env.txt", "@@ -2,2 +2,2 @@", " TOKEN=[REDACTED:github-token]", "-DEBUG=false", "+DEBUG=true", ""].join("\n");
    const output = failed(await run({ operation: "patch", patch: stale }));
    expect(output).toContain("does not apply");
    expect(output).toContain("context or removed lines contain [REDACTED:github-token]");
    expect(onDisk()).toBe(original);
    const around = ["--- a/config.env.txt", "+++ b/config.env.txt", "@@ -3,2 +3,2 @@", "-DEBUG=false", "+DEBUG=true", " NAME=app", ""].join("\n");
    completed(await run({ operation: "patch", patch: around }));
    expect(onDisk()).toBe(original.replace("DEBUG=false", "DEBUG=true"));
  });

  test("move: a copy written with markers cannot replace the original", async () => {
    reset();
    completed(await run({ operation: "write", path: "copy.txt", content: seen(original) })); // a new file: allowed
    const output = failed(await run({ operation: "move", path: "copy.txt", to: "config.env.txt", overwrite: true }));
    expect(output).toContain("Refused: config.env.txt holds a secret");
    expect(onDisk()).toBe(original);
    writeFileSync(join(ws, "plain.txt"), "nothing secret\n");
    completed(await run({ operation: "move", path: "plain.txt", to: "copy.txt", overwrite: true }));
  });

  test("write: a file without secrets, or a new file, may hold markers", async () => {
    writeFileSync(join(ws, "doc.md"), "# redaction\n");
    completed(await run({ operation: "write", path: "doc.md", content: "# redaction\nTokens show as [REDACTED:github-token].\n" }));
    completed(await run({ operation: "write", path: "new-doc.md", content: "[REDACTED:private-key]\n" }));
  });
});
