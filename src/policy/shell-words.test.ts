import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { normalizeCommand, parseShell } from "./shell-words.ts";

const words = (command: string) => parseShell(command).commands.map((c) => c.words);

describe("parseShell", () => {
  test("quote removal, escapes and operators", () => {
    expect(words(`cu"rl" -H 'a  b' c\\ d`)).toEqual([["curl", "-H", "a  b", "c d"]]);
    expect(words("a && b || c; d & e | f |& g")).toEqual([["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]);
    expect(words("echo a\\;b")).toEqual([["echo", "a;b"]]);
    expect(words("$'cu\\x72l' x")[0]![1]).toBe("x");
    expect(words("x \\\n  y")).toEqual([["x", "y"]]);
  });

  test("redirections and their targets are not words; a descriptor number is not either", () => {
    expect(words("cmd 2>/dev/null >out <in >>log &>all 2>&1 <<<data x")).toEqual([["cmd", "x"]]);
    expect(words("echo 2 > f")).toEqual([["echo", "2"]]);
  });

  test("substitutions are commands too, in order of discovery", () => {
    expect(words("echo $(curl x) `wget y` \"$(nc h)\" ${v:-$(ls)}")).toEqual([["curl", "x"], ["wget", "y"], ["nc", "h"], ["ls"], ["echo", "$(curl x)", "`wget y`", "$(nc h)", "${v:-$(ls)}"]]);
    expect(words("diff <(a) >(b)")).toEqual([["a"], ["b"], ["diff"]]);
  });

  test("heredoc bodies are data, except the substitutions of an unquoted one", () => {
    const parsed = parseShell("cat <<EOF\ncurl x\n$(wget y)\nEOF\nls");
    expect(parsed.commands.map((c) => c.words)).toEqual([["cat"], ["wget", "y"], ["ls"]]);
    expect(parsed.commands[0]!.heredocs).toEqual([{ body: "curl x\n$(wget y)\n", quoted: false }]);
    expect(words("cat <<'EOF'\n$(wget y)\nEOF")).toEqual([["cat"]]);
    expect(parseShell("cat <<-\"EOF\"\n\tx\n\tEOF\necho").commands.map((c) => [c.words, c.heredocs])).toEqual([
      [["cat"], [{ body: "x\n", quoted: true }]],
      [["echo"], []],
    ]);
  });

  test("comments, array literals and subshells", () => {
    expect(words("echo a # curl x\nls")).toEqual([["echo", "a"], ["ls"]]);
    expect(words("a=(curl wget) b")).toEqual([["a=(curl wget)", "b"]]);
    expect(words("(cd x && make)")).toEqual([["cd", "x"], ["make"]]);
  });

  test("total on malformed input; deep nesting is reported, not followed", () => {
    for (const odd of ["'", '"', "\\", "$(", "`", "(((", ")))", "<<", "${", "$'", "a=("]) expect(() => parseShell(odd)).not.toThrow();
    expect(parseShell("$(".repeat(40) + "x").truncated).toBe(true);
    expect(parseShell("$(".repeat(5) + "x").truncated).toBe(false);
  });
});

describe("normalizeCommand", () => {
  const CASES: [string, string][] = [
    ["  git   status  ", "git status"],
    ["git\tstatus\t-s", "git status -s"],
    ["echo 'a   b'    \"c   d\"", "echo 'a   b' \"c   d\""],
    ["echo a   \n   rm   x", "echo a\nrm x"],
    ["echo \"$(echo \"a  b\")\"   x", "echo \"$(echo \"a  b\")\" x"],
    ["echo $(  ls   -a  )", "echo $( ls -a )"],
    ["python3 - <<EOF\nif x:\n    y()\nEOF", "python3 - <<EOF\nif x:\n    y()\nEOF"],
    ["echo a\\   b", "echo a\\  b"],
    ["a \\\n   b", "a \\\n b"],
    ["\n\n  ls  \n\n", "ls"],
    ["cat <<EOF\n  x  \nEOF\n", "cat <<EOF\n  x  \nEOF"],
    ["echo a\u00a0 ", "echo a\u00a0"],
  ];
  for (const [command, expected] of CASES) {
    test(`${JSON.stringify(command)} → ${JSON.stringify(expected)}`, () => {
      expect(normalizeCommand(command)).toBe(expected);
    });
  }

  test("line breaks stay: two commands never normalize to one", () => {
    expect(normalizeCommand("echo a\nrm -rf x")).not.toBe(normalizeCommand("echo a rm -rf x"));
  });

  // Commands built from the characters that matter to the shell.
  const pieces = fc.constantFrom(..."ab $(){}`'\"\\;&|<>\n\t#=-cEOF".split(""), "<<EOF\n", "<<'EOF'\n", "\nEOF\n", "curl ", "$(", "  ", "\t ", "\\\n", "\u00a0");
  const command = fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join(""));
  /** How a command splits; a word holding an expansion keeps its source text, whose blanks may change. */
  const shape = (text: string) => parseShell(text).commands.map((c) => ({ words: c.words.map((w) => (/[$`]/.test(w) ? "<expansion>" : w)), heredocs: c.heredocs }));

  test("property: normalizing never changes how a command splits, keeps every non-blank character, and is idempotent", () => {
    fc.assert(
      fc.property(command, (text) => {
        const normalized = normalizeCommand(text);
        expect(shape(normalized)).toEqual(shape(text));
        expect(normalized.replace(/[ \t\n]/g, "")).toBe(text.replace(/[ \t\n]/g, ""));
        expect(normalizeCommand(normalized)).toBe(normalized);
      }),
      { numRuns: 5_000 },
    );
  });
});
