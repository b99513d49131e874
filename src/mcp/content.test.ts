import { describe, expect, test } from "bun:test";
import { parseContentUri, promptArguments } from "./content.ts";

const REF = "0123456789abcdef";

describe("parseContentUri", () => {
  test("the catalog of a server, with or without a trailing slash", () => {
    expect(parseContentUri("mcp://content/docs")).toMatchObject({ server: "docs" });
    expect(parseContentUri("mcp://content/docs").kind).toBeUndefined();
    expect(parseContentUri("mcp://content/docs/")).toMatchObject({ server: "docs" });
    expect(parseContentUri("mcp://content/docs/").kind).toBeUndefined();
  });

  test("resource and prompt references, with the query as prompt arguments", () => {
    expect(parseContentUri(`mcp://content/docs/resource/${REF}`)).toMatchObject({ server: "docs", kind: "resource", ref: REF });
    const prompt = parseContentUri(`mcp://content/docs/prompt/${REF}?city=S%C3%A3o+Paulo&state=SP`);
    expect(prompt).toMatchObject({ server: "docs", kind: "prompt", ref: REF });
    expect([...prompt.query]).toEqual([
      ["city", "São Paulo"],
      ["state", "SP"],
    ]);
  });

  test("anything else is refused with a pointer to the catalog", () => {
    for (const bad of [
      `mcp://content/docs/tool/${REF}`,
      "mcp://content/docs/resource",
      "mcp://content/docs/resource/",
      "mcp://content/docs/resource/0123456789ABCDEF",
      "mcp://content/docs/resource/0123456789abcde",
      `mcp://content/docs/resource/${REF}0`,
      `mcp://content/docs/resource/${REF}/more`,
      "mcp://content/docs/resource/../../etc/passwd",
    ]) {
      expect(() => parseContentUri(bad), bad).toThrow("is not a reference this server's catalog handed out; read mcp://content/docs for the catalog");
    }
  });
});

describe("promptArguments", () => {
  const prompt = {
    name: "args-prompt",
    arguments: [
      { name: "city", required: true },
      { name: "state", required: false },
    ],
  };
  const query = (text: string) => new URLSearchParams(text);

  test("declared arguments pass, optional ones may be left out", () => {
    expect(promptArguments(prompt, query("city=Paris"))).toEqual({ city: "Paris" });
    expect(promptArguments(prompt, query("city=Paris&state=IDF"))).toEqual({ city: "Paris", state: "IDF" });
  });

  test("a missing required argument is named", () => {
    expect(() => promptArguments(prompt, query(""))).toThrow('prompt "args-prompt" needs the argument city');
    expect(() => promptArguments(prompt, query("state=IDF"))).toThrow('prompt "args-prompt" needs the argument city');
    const two = { name: "p", arguments: [{ name: "a", required: true }, { name: "b", required: true }] };
    expect(() => promptArguments(two, query(""))).toThrow('prompt "p" needs the arguments a, b');
  });

  test("an argument the prompt does not declare is refused, listing those it does", () => {
    expect(() => promptArguments(prompt, query("city=Paris&planet=Mars"))).toThrow('prompt "args-prompt" has no argument "planet" (arguments: city, state)');
    expect(() => promptArguments({ name: "simple" }, query("x=1"))).toThrow('prompt "simple" has no argument "x" (it takes no arguments)');
  });

  test("an argument given twice or longer than 8192 characters is refused", () => {
    expect(() => promptArguments(prompt, query("city=Paris&city=Lyon"))).toThrow('prompt argument "city" is given twice');
    expect(promptArguments(prompt, query(`city=${"x".repeat(8192)}`)).city).toHaveLength(8192);
    expect(() => promptArguments(prompt, query(`city=${"x".repeat(8193)}`))).toThrow('prompt argument "city" is longer than 8192 characters');
  });

  test("a prompt-declared name that is an Object prototype key is still just a name", () => {
    expect(() => promptArguments(prompt, query("city=Paris&constructor=x"))).toThrow('has no argument "constructor"');
    expect(() => promptArguments(prompt, query("__proto__=x&city=Paris"))).toThrow('has no argument "__proto__"');
  });
});
