import { expect, test } from "bun:test";
import { createApprovalBroker, type ApprovalAnswer, type ApprovalRequest } from "../policy/approvals.ts";
import { MODE_RULES, evaluate } from "../policy/rules.ts";
import { isOtherUrl, nestingDepth, stripTags } from "./read-url.ts";
import { fetchBudget } from "./url-fetch.ts";
import { readTool } from "./read.ts";

const classify = (path: string) => {
  const prepared = readTool.prepare({ path });
  if (!prepared.ok) throw new Error(prepared.error);
  return prepared.classification;
};

test("a URL read is classified as network access, a local or artifact read is not", () => {
  expect(classify("https://example.com/a?q=1#top")).toEqual({ risk: "network", operation: "network", target: "https://example.com/a", categories: ["network"] });
  expect(classify("HTTP://user:pw@Example.com:80/")).toEqual({ risk: "network", operation: "network", target: "http://example.com/", categories: ["network"] });
  expect(classify("src/main.ts")).toEqual({ risk: "read", operation: "read", target: "src/main.ts", categories: [] });
  expect(classify(`artifact://${"a".repeat(64)}`)).toEqual({ risk: "read", operation: "read", target: `artifact://${"a".repeat(64)}`, categories: [] });
  expect(isOtherUrl("ftp://example.com/x")).toBe(true);
  expect(isOtherUrl("file:///etc/passwd")).toBe(true);
  expect(isOtherUrl("https://example.com")).toBe(false);
  expect(isOtherUrl("notes/http://x")).toBe(false);
});

test("policy: URL reads ask in ask and accept-edits, are denied in read-only, allowed in full-access", () => {
  const call = { tool: "read", ...classify("https://example.com/") };
  expect(evaluate(MODE_RULES.ask, call, "ask").decision).toBe("ask");
  expect(evaluate(MODE_RULES["accept-edits"], call, "accept-edits").decision).toBe("ask");
  expect(evaluate(MODE_RULES["read-only"], call, "read-only").decision).toBe("deny");
  expect(evaluate(MODE_RULES["full-access"], call, "full-access").decision).toBe("allow");
});

test("an 'always' given to a local read (of a secret-like file) does not approve a URL read", async () => {
  const seen: ApprovalRequest[] = [];
  const answers: ApprovalAnswer[] = ["always", "deny"];
  const broker = createApprovalBroker(async (request) => {
    seen.push(request);
    return answers.shift()!;
  });
  const signal = new AbortController().signal;
  const local = { callId: "c1", tool: "read", ...classify(".env"), reason: "r", input: { path: ".env" } };
  expect(local.operation).toBe("read-secret");
  expect((await broker.request(local, signal)).allowed).toBe(true);
  const url = { callId: "c2", tool: "read", ...classify("https://example.com/"), reason: "r", input: { path: "https://example.com/" } };
  expect((await broker.request(url, signal)).allowed).toBe(false);
  expect(seen.map((r) => r.callId)).toEqual(["c1", "c2"]);
});

test("hostile pages cost linear time: deep nesting, '<' floods and endless titles never reach the DOM converter", () => {
  const pages = [
    "<html><body>" + "<div>".repeat(100_000) + "deep",
    "<".repeat(2_000_000) + ">",
    "<title".repeat(500_000),
    `<div class="${"x".repeat(3000)}">`.repeat(1500),
  ];
  for (const page of pages) {
    const started = performance.now();
    nestingDepth(page);
    stripTags(page);
    expect(performance.now() - started).toBeLessThan(1_000);
  }
  expect(nestingDepth("<div><div><p>x<br><img src=a/><span>y</span></div></div>")).toBe(3);
  expect(nestingDepth("<div>".repeat(100_000))).toBe(100_000);
});

test("the fallback text keeps words and line breaks, drops scripts, styles and the head", () => {
  expect(stripTags("<html><head><title>T</title><style>b{}</style></head><body><h1>Hi</h1><script>evil()</script><p>a <b>b</b></p><div>c</div>tail")).toBe(
    "Hi\n\na b\n\nc\ntail",
  );
});

test("the fetch budget stays under the tool's own timeout so a slow page keeps what arrived", () => {
  expect(fetchBudget(120_000, 30_000)).toBe(30_000);
  expect(fetchBudget(10_000, 30_000)).toBe(8_000);
  expect(fetchBudget(1_000, 30_000)).toBe(500);
});
