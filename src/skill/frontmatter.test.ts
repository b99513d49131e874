import { describe, expect, test } from "bun:test";
import { FrontmatterError, parseFrontmatter, unsafeCharacter } from "./frontmatter.ts";

const doc = (front: string, body = "# Body\n") => `---\n${front}\n---\n${body}`;

function problem(text: string): string {
  try {
    parseFrontmatter(text);
  } catch (error) {
    expect(error).toBeInstanceOf(FrontmatterError);
    return (error as Error).message;
  }
  throw new Error("expected the frontmatter to be refused");
}

describe("what is accepted", () => {
  test("plain name and description; the body is not read", () => {
    expect(parseFrontmatter(doc("name: release-notes\ndescription: Use when drafting release notes", "# Notes\n---\nname: other\n"))).toEqual({
      name: "release-notes",
      description: "Use when drafting release notes",
    });
  });

  test("quoted strings with their escapes; a trailing comment", () => {
    const front = `name: "rel-notes" # the id\ndescription: 'It''s for \\"notes\\"'`;
    expect(parseFrontmatter(doc(front))).toEqual({ name: "rel-notes", description: `It's for \\"notes\\"` });
    expect(parseFrontmatter(doc(`name: a\ndescription: "caf\\u00e9 \\x41 \\"q\\" tab\\there"`)).description).toBe('café A "q" tab here');
  });

  test("literal and folded blocks, and multi-line plain values, fold to one line (as Codex does)", () => {
    expect(parseFrontmatter(doc("name: a\ndescription: |\n  first line\n    indented: fine # kept\n\n  last")).description).toBe("first line indented: fine # kept last");
    expect(parseFrontmatter(doc("name: a\ndescription: >-\n  folded\n  text")).description).toBe("folded text");
    expect(parseFrontmatter(doc("name: a\ndescription: starts here\n  and goes on\n  over lines")).description).toBe("starts here and goes on over lines");
    expect(parseFrontmatter(doc("name: a\ndescription:\n  only below")).description).toBe("only below");
  });

  test("other keys are ignored, nested or flow, with comments and blank lines around", () => {
    const front = "# a comment\nname: a\n\nlicense: MIT\nallowed-tools: [Read, \"Bash(git *)\"]\nmetadata:\n  short-description: short\n  tags:\n    - x\n    - y\ndescription: d";
    expect(parseFrontmatter(doc(front))).toEqual({ name: "a", description: "d" });
    expect(parseFrontmatter(doc("name: a\ndescription: d\nallowed-tools: Bash(git *), Read"))).toEqual({ name: "a", description: "d" });
  });

  test("a UTF-8 byte order mark, CRLF line ends, trailing spaces after the markers", () => {
    expect(parseFrontmatter(`\ufeff---\r\nname: a\r\ndescription: d e\r\n---\r\nbody\r\n`)).toEqual({ name: "a", description: "d e" });
    expect(parseFrontmatter(`---  \nname: a\ndescription: d\n---   \n`)).toEqual({ name: "a", description: "d" });
  });
});

describe("what is refused", () => {
  test("no frontmatter, no closing marker, a lone CR", () => {
    expect(problem("# Just markdown\n")).toContain('must start with a "---" line');
    expect(problem("---\nname: a\ndescription: d\n")).toContain('no closing "---"');
    expect(problem("---\rname: a\rdescription: d\r---\r")).toContain("carriage return");
    expect(problem("---\nname: a\r\ndescription: d\rx\n---\n")).toContain("carriage return");
  });

  test("missing or empty fields", () => {
    expect(problem(doc("description: d"))).toBe('missing "name"');
    expect(problem(doc("name: a"))).toBe('missing "description"');
    expect(problem(doc("Name: a\ndescription: d"))).toBe('missing "name"');
    expect(problem(doc("name: a\ndescription:"))).toContain("is empty");
    expect(problem(doc("name: a\ndescription: |\n"))).toContain("is empty");
  });

  test("duplicate keys, whichever they are", () => {
    expect(problem(doc("name: a\nname: b\ndescription: d"))).toContain('duplicate key "name"');
    expect(problem(doc("name: a\ndescription: d\nlicense: x\nlicense: y"))).toContain('duplicate key "license"');
  });

  test("anchors, aliases, tags and merge keys, in the fields and in ignored keys", () => {
    expect(problem(doc("name: &n a\ndescription: d"))).toContain("anchors, aliases and tags");
    expect(problem(doc("name: a\ndescription: *n"))).toContain("anchors, aliases and tags");
    expect(problem(doc("name: !!str a\ndescription: d"))).toContain("anchors, aliases and tags");
    expect(problem(doc("name: a\ndescription: d\nmeta: &m {x: 1}"))).toContain("anchors, aliases and tags");
    expect(problem(doc("name: a\ndescription: d\nlist:\n  - *m"))).toContain("anchors, aliases and tags");
    expect(problem(doc("name: a\ndescription: d\nmeta:\n  <<: {x: 1}"))).toContain("merge keys");
    expect(problem(doc("<<: {name: b}\nname: a\ndescription: d"))).toContain("merge keys");
  });

  test("tabs in indentation, indented lines without a key, document markers, quoted keys", () => {
    expect(problem(doc("name: a\ndescription:\n\tindented with a tab"))).toContain("tab in the indentation");
    expect(problem(doc("  name: a\ndescription: d"))).toContain("belongs to no key");
    expect(problem(doc("name: a\n...\ndescription: d"))).toContain("document marker");
    expect(problem(doc('"name": a\ndescription: d'))).toContain("plain key");
    expect(problem(doc("name:a\ndescription: d"))).toContain("plain key");
    expect(problem(doc("%YAML 1.2\nname: a\ndescription: d"))).toContain("plain key");
  });

  test("values that are not plainly text", () => {
    expect(problem(doc("name: [a]\ndescription: d"))).toContain("not a list or a mapping");
    expect(problem(doc("name: a\ndescription:\n  - item"))).toContain("not a list or a mapping");
    expect(problem(doc("name: a\ndescription:\n  key: value"))).toContain('": "');
    expect(problem(doc("name: a\ndescription: Use when: drafting"))).toContain('": "');
    expect(problem(doc("name: true\ndescription: d"))).toContain("null or boolean");
    expect(problem(doc("name: a\ndescription: ~"))).toContain("null or boolean");
    expect(problem(doc("name: 1.5\ndescription: d"))).toContain("number");
    expect(problem(doc("name: a\ndescription: 0x1F"))).toContain("number");
    expect(problem(doc("name: a\ndescription: @me"))).toContain("reserved character");
    expect(problem(doc("name: a\ndescription: |2\n  x"))).toContain("no indentation digits");
    expect(problem(doc("name: a\ndescription: |\n    deeper\n  shallower"))).toContain("indented less");
  });

  test("quoted values must close on their line; nothing may follow the quote", () => {
    expect(problem(doc('name: a\ndescription: "open\n  still open"'))).toContain("close on its own line");
    expect(problem(doc("name: a\ndescription: 'x' y"))).toContain("after the closing quote");
    expect(problem(doc('name: a\ndescription: "x"\n  more'))).toContain("continues a quoted value");
    expect(problem(doc('name: a\ndescription: d\nlicense: "open\nsecond: b"'))).toContain("close on its own line");
    expect(problem(doc("name: a\ndescription: d\ntools: [a,\n  b]"))).toContain("close on its line");
    expect(problem(doc('name: a\ndescription: "bad \\q escape"'))).toContain("invalid escape");
  });

  test("control, bidi and invisible characters, raw or escaped", () => {
    expect(problem(doc("name: a\ndescription: red \x1b[31m text"))).toContain("U+001B");
    expect(problem(doc('name: a\ndescription: "bell \\a"'))).toContain("U+0007");
    expect(problem(doc("name: a\ndescription: admin\u202Etxt.exe"))).toContain("U+202E");
    expect(problem(doc('name: a\ndescription: "hidden\\u200bspace"'))).toContain("U+200B");
    expect(problem(doc("name: a\u2066b\ndescription: d"))).toContain("U+2066");
    expect(problem(doc("name: a\ndescription: c1 \u0085 next line"))).toContain("U+0085");
    expect(problem(doc("name: a\ndescription: tag \u{E0041} chars"))).toContain("U+E0041");
  });
});

test("unsafeCharacter: tab and newline only where text may hold them", () => {
  expect(unsafeCharacter("a\tb\nc")).toBeUndefined();
  expect(unsafeCharacter("a\tb", false)).toBe("U+0009");
  expect(unsafeCharacter("/x/\ny", false)).toBe("U+000A");
  expect(unsafeCharacter("émoji 🎉 ok")).toBeUndefined();
  expect(unsafeCharacter("del\x7f")).toBe("U+007F");
});
