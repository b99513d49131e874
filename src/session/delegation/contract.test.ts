import { describe, expect, test } from "bun:test";
import type { Message } from "../../protocol/messages.ts";
import { createRedactor } from "../../security/redact.ts";
import {
  DEFAULT_RECENT_TURNS,
  FULL_CONTEXT_CHARS,
  RECENT_CONTEXT_CHARS,
  SUMMARY_CONTEXT_CHARS,
  childScope,
  contextModeOf,
  globBase,
  parentContext,
  pathScope,
  scopeGuard,
  taskPrompt,
  toolsOutsideScope,
  type ContextMode,
  type TaskContract,
} from "./contract.ts";

const redactor = createRedactor();
/** A GitHub token shape the redactor recognises on its own (no known-secret list needed). */
const SECRET = `ghp_${"aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}`;

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });
const assistant = (text: string): Message => ({ role: "assistant", parts: [{ type: "text", text }] });
const call = (callId: string, tool: string, input: unknown): Message => ({
  role: "assistant",
  parts: [{ type: "tool-call", callId, tool, input, state: "completed" }],
});
const result = (callId: string, tool: string, value: string): Message => ({
  role: "tool",
  parts: [{ type: "tool-result", callId, tool, output: { type: "text", value } }],
});

const ALL_MODES: ContextMode[] = [{ kind: "summary" }, { kind: "full" }, { kind: "recent", turns: 2 }];

describe("contextModeOf", () => {
  test("the requested mode wins over the fallback", () => {
    expect(contextModeOf("none", "full")).toEqual({ kind: "none" });
    expect(contextModeOf("full", "none")).toEqual({ kind: "full" });
    expect(contextModeOf("summary", "full")).toEqual({ kind: "summary" });
    expect(contextModeOf({ type: "recent", turns: 3 }, "none")).toEqual({ kind: "recent", turns: 3 });
  });

  test("without a request the fallback applies; a bare `recent` means the default count", () => {
    expect(contextModeOf(undefined, "summary")).toEqual({ kind: "summary" });
    expect(contextModeOf(undefined, "none")).toEqual({ kind: "none" });
    expect(contextModeOf(undefined, { type: "recent", turns: 2 })).toEqual({ kind: "recent", turns: 2 });
    expect(contextModeOf(undefined, "recent")).toEqual({ kind: "recent", turns: DEFAULT_RECENT_TURNS });
  });
});

describe("parentContext", () => {
  const history: Message[] = [
    user("Fix the login redirect in src/auth."),
    call("c1", "read", { path: "src/auth/callback.ts" }),
    result("c1", "read", "export function callback() {}"),
    assistant("The callback drops the state parameter."),
    user("Also check the logout flow."),
    call("c2", "grep", { pattern: "logout" }),
    result("c2", "grep", "src/auth/logout.ts:3: logout()"),
    call("c3", "read", { path: "src/auth/logout.ts" }),
    result("c3", "read", "export function logout() {}"),
    assistant("Logout looks fine."),
  ];

  test("`none` gives nothing, whatever the history", () => {
    expect(parentContext(history, { kind: "none" }, redactor)).toBeUndefined();
  });

  test("an empty history gives nothing in every mode", () => {
    for (const mode of ALL_MODES) expect(parentContext([], mode, redactor)).toBeUndefined();
  });

  test("a secret in the parent's history never reaches the rendered context", () => {
    const leaky: Message[] = [
      user(`Use the token ${SECRET} to call the API.`),
      call("c1", "bash", { command: `curl -H "x-token: ${SECRET}" https://api.example.com` }),
      result("c1", "bash", `GITHUB_TOKEN=${SECRET}\nok`),
      assistant(`I used ${SECRET} and it worked.`),
    ];
    // The secret really is in the input, so the check below can fail.
    expect(JSON.stringify(leaky)).toContain(SECRET);
    for (const mode of ALL_MODES) {
      const text = parentContext(leaky, mode, redactor);
      expect(text).toBeDefined();
      expect(text!).not.toContain(SECRET);
      expect(text!).not.toContain(SECRET.slice(4, 20));
      expect(text!).toContain("[REDACTED:");
    }
  });

  test("full renders what was said and which tools ran, in order", () => {
    const text = parentContext(history, { kind: "full" }, redactor)!;
    expect(text.split("\n")).toEqual([
      "user: Fix the login redirect in src/auth.",
      'assistant called read {"path":"src/auth/callback.ts"}',
      "read result: export function callback() {}",
      "assistant: The callback drops the state parameter.",
      "user: Also check the logout flow.",
      'assistant called grep {"pattern":"logout"}',
      "grep result: src/auth/logout.ts:3: logout()",
      'assistant called read {"path":"src/auth/logout.ts"}',
      "read result: export function logout() {}",
      "assistant: Logout looks fine.",
    ]);
  });

  test("reasoning and raw media stay out; attachments, errors, denials and summaries are named", () => {
    const mixed: Message[] = [
      { role: "user", parts: [{ type: "summary", text: "Earlier: set up the repo.", replacedMessages: 4 }] },
      { role: "user", parts: [{ type: "text", text: "Look at this" }, { type: "file", mediaType: "image/png", data: "iVBORw0KGgoRAWIMAGEDATA" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "PRIVATE-CHAIN-OF-THOUGHT" },
          { type: "text", text: "   " },
          { type: "tool-call", callId: "a", tool: "read", input: { path: "x" }, state: "failed" },
          { type: "tool-call", callId: "b", tool: "bash", input: { command: "rm -rf build" }, state: "denied" },
          { type: "tool-call", callId: "c", tool: "read", input: { path: "y.png" }, state: "completed" },
        ],
      },
      {
        role: "tool",
        parts: [
          { type: "tool-result", callId: "a", tool: "read", output: { type: "error-text", value: "no such file: x" } },
          { type: "tool-result", callId: "b", tool: "bash", output: { type: "execution-denied", reason: "not allowed" } },
          { type: "tool-result", callId: "c", tool: "read", output: { type: "content", value: [{ type: "file", mediaType: "image/png", data: "RAWTOOLIMAGE" }] } },
        ],
      },
    ];
    const text = parentContext(mixed, { kind: "full" }, redactor)!;
    expect(text).not.toContain("PRIVATE-CHAIN-OF-THOUGHT");
    expect(text).not.toContain("RAWIMAGEDATA");
    expect(text).not.toContain("RAWTOOLIMAGE");
    expect(text.split("\n")).toEqual([
      "summary of earlier conversation: Earlier: set up the repo.",
      "user: Look at this",
      "user: [attached image/png]",
      'assistant called read {"path":"x"}',
      'assistant called bash {"command":"rm -rf build"}',
      'assistant called read {"path":"y.png"}',
      "read result: no such file: x",
      "bash result: denied: not allowed",
      "read result: [content]",
    ]);
  });

  test("recent N keeps only the last N user turns (with what followed each)", () => {
    const turns: Message[] = [];
    for (let i = 1; i <= 5; i++) turns.push(user(`request ${i}`), assistant(`answer ${i}`));
    const text = parentContext(turns, { kind: "recent", turns: 2 }, redactor)!;
    expect(text.split("\n")).toEqual(["user: request 4", "assistant: answer 4", "user: request 5", "assistant: answer 5"]);
    const one = parentContext(turns, { kind: "recent", turns: 1 }, redactor)!;
    expect(one.split("\n")).toEqual(["user: request 5", "assistant: answer 5"]);
    const more = parentContext(turns, { kind: "recent", turns: 50 }, redactor)!;
    expect(more.split("\n")).toHaveLength(10);
  });

  test("a history that starts before any user message counts that start as a turn", () => {
    const history: Message[] = [assistant("preamble"), user("first"), assistant("reply")];
    expect(parentContext(history, { kind: "recent", turns: 1 }, redactor)!.split("\n")).toEqual(["user: first", "assistant: reply"]);
    expect(parentContext(history, { kind: "recent", turns: 2 }, redactor)!.split("\n")).toEqual(["assistant: preamble", "user: first", "assistant: reply"]);
  });

  /** `count` messages whose rendered lines are about 1,000 characters, numbered. */
  function longHistory(count: number): Message[] {
    return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? user : assistant)(`message ${String(i).padStart(3, "0")} ${"z".repeat(980)}`));
  }

  for (const [mode, bound] of [
    [{ kind: "full" } as ContextMode, FULL_CONTEXT_CHARS],
    [{ kind: "recent", turns: 1_000 } as ContextMode, RECENT_CONTEXT_CHARS],
  ] as const) {
    test(`${mode.kind} keeps the newest lines within ${bound} characters and says how many were left out`, () => {
      const count = Math.ceil((bound * 2) / 1_000);
      const text = parentContext(longHistory(count), mode, redactor)!;
      const lines = text.split("\n");
      const marker = /^\[(\d+) earlier lines left out\]$/.exec(lines[0]!);
      expect(marker).not.toBeNull();
      const omitted = Number(marker![1]);
      const kept = lines.slice(1);
      expect(omitted + kept.length).toBe(count);
      expect(omitted).toBeGreaterThan(0);
      // The kept lines are exactly the newest ones, in order.
      expect(kept[0]).toContain(`message ${String(omitted).padStart(3, "0")} `);
      expect(kept[kept.length - 1]).toContain(`message ${String(count - 1).padStart(3, "0")} `);
      expect(text).not.toContain("message 000 ");
      const keptSize = kept.join("\n").length;
      expect(keptSize).toBeLessThanOrEqual(bound);
      // As many as fit: one more line would have gone over.
      expect(keptSize + 1 + 1_000 + 20).toBeGreaterThan(bound);
    });
  }

  test("a history that fits is kept whole, with no left-out note", () => {
    const text = parentContext(longHistory(10), { kind: "full" }, redactor)!;
    expect(text).not.toContain("left out");
    expect(text.split("\n")).toHaveLength(10);
  });

  test("one very long message is cut and says how much was cut", () => {
    const text = parentContext([user(`start ${"y".repeat(5_000)} end`)], { kind: "full" }, redactor)!;
    expect(text).toContain("user: start ");
    expect(text).not.toContain(" end");
    expect(text).toMatch(/… \[\d+ more characters\]$/);
    expect(text.length).toBeLessThan(1_700);
  });

  test("summary names the first request, the current one, the latest reply and the tools used", () => {
    const text = parentContext(history, { kind: "summary" }, redactor)!;
    expect(text.split("\n")).toEqual([
      "first request — user: Fix the login redirect in src/auth.",
      "current request — user: Also check the logout flow.",
      "latest — assistant: Logout looks fine.",
      "tools used so far: read×2, grep×1",
      "(2 turns, 10 messages)",
    ]);
  });

  test("a one-turn summary does not repeat the request as the current one", () => {
    const text = parentContext([user("Only request."), assistant("Done.")], { kind: "summary" }, redactor)!;
    expect(text.split("\n")).toEqual(["first request — user: Only request.", "latest — assistant: Done.", "(1 turn, 2 messages)"]);
  });

  test("summary stays within its bound", () => {
    const big = "w".repeat(4_000);
    const text = parentContext([user(`a ${big}`), assistant(`b ${big}`), user(`c ${big}`), assistant(`d ${big}`)], { kind: "summary" }, redactor)!;
    expect(text.startsWith("first request — user: a ")).toBe(true);
    expect(text).toMatch(/… \[\d+ more characters\]$/);
    expect(text.length).toBeLessThanOrEqual(SUMMARY_CONTEXT_CHARS + 40);
    expect(text.length).toBeGreaterThan(SUMMARY_CONTEXT_CHARS);
  });
});

describe("taskPrompt", () => {
  const contract: TaskContract = {
    taskId: "t-auth",
    taskName: "Audit auth callbacks",
    goal: "Find where the OAuth state is checked.",
    deliverable: "analysis",
    acceptanceCriteria: ["Names every file that reads `state`", "Quotes the line numbers (e.g. L42-L50)", "Says whether PKCE is used"],
    scope: { paths: ["src/auth/**", "docs/auth.md"], components: ["auth", "session"] },
    context: ["The bug report mentions Safari only.", "Ignore the legacy v1 routes."],
    artifactRefs: [`artifact://${"a".repeat(64)}`, `artifact://${"b".repeat(64)}`],
  };

  test("carries the goal, every criterion verbatim, scope, context, artifacts, dependencies and the envelope last", () => {
    const prompt = taskPrompt(contract, {
      parentContext: "user: please audit auth",
      dependencies: [
        { taskId: "t-map", status: "completed", summary: "Mapped the routes.", artifacts: [`artifact://${"c".repeat(64)}`], changedFiles: ["src/routes.ts", "src/app.ts"] },
        { taskId: "t-lint", status: "failed", summary: "Lint could not run.", artifacts: [], changedFiles: [] },
      ],
      envelope: "ENVELOPE-INSTRUCTIONS",
    });
    expect(prompt.startsWith("# Delegated task: Audit auth callbacks")).toBe(true);
    expect(prompt).toContain("Task id: t-auth");
    expect(prompt).toContain("Goal: Find where the OAuth state is checked.");
    expect(prompt).toContain("Deliverable: analysis");
    for (const criterion of contract.acceptanceCriteria) expect(prompt).toContain(`- ${criterion}\n`.trimEnd());
    expect(prompt).toContain("Acceptance criteria:\n- Names every file that reads `state`\n- Quotes the line numbers (e.g. L42-L50)\n- Says whether PKCE is used");
    expect(prompt).toContain("src/auth/**, docs/auth.md");
    expect(prompt).toContain("Components: auth, session");
    for (const line of contract.context!) expect(prompt).toContain(`- ${line}`);
    for (const ref of contract.artifactRefs!) expect(prompt).toContain(ref);
    expect(prompt).toContain(`- t-map (completed): Mapped the routes. [changed: src/routes.ts, src/app.ts] [artifacts: artifact://${"c".repeat(64)}]`);
    expect(prompt).toContain("- t-lint (failed): Lint could not run.");
    expect(prompt).not.toContain("t-lint (failed): Lint could not run. [");
    expect(prompt).toContain("user: please audit auth");
    expect(prompt.endsWith("ENVELOPE-INSTRUCTIONS")).toBe(true);
    // The task comes before the parent's conversation, which is only orientation.
    expect(prompt.indexOf("Acceptance criteria")).toBeLessThan(prompt.indexOf("user: please audit auth"));
  });

  test("sections with nothing in them are left out", () => {
    const bare: TaskContract = { taskId: "t1", taskName: "Plan", goal: "Plan it.", deliverable: "plan", acceptanceCriteria: ["A plan exists"], scope: { paths: [], components: [] }, context: [], artifactRefs: [] };
    const prompt = taskPrompt(bare, { dependencies: [], envelope: "END" });
    expect(prompt).toContain("- A plan exists");
    for (const absent of ["Scope", "Components", "Context from the parent", "Artifacts", "Results of the tasks", "Parent conversation"]) expect(prompt).not.toContain(absent);
    expect(prompt.endsWith("END")).toBe(true);
  });
});

describe("globBase", () => {
  test("the directory before the first wildcard", () => {
    expect(globBase("src/auth/**")).toBe("src/auth");
    expect(globBase("src/*.ts")).toBe("src");
    expect(globBase("src/{a,b}/x.ts")).toBe("src");
    expect(globBase("a/b?/c")).toBe("a");
    expect(globBase("lib/[ab]/x")).toBe("lib");
  });

  test("a plain path is its own base; a leading wildcard means the workspace", () => {
    expect(globBase("docs")).toBe("docs");
    expect(globBase("docs/guide.md")).toBe("docs/guide.md");
    expect(globBase("**/*.ts")).toBe(".");
    expect(globBase("*")).toBe(".");
  });
});

describe("pathScope", () => {
  test("`src/**` covers src and everything under it, nothing else", () => {
    const scope = pathScope(["src/**"]);
    for (const inside of ["src", "src/a.ts", "src/a/b.ts", "src/deep/er/c.md"]) expect([inside, scope.allows(inside)]).toEqual([inside, true]);
    for (const outside of ["README.md", ".", "", "srcx/a", "srcx", "lib/src/a.ts", "/src/a.ts", "/etc/passwd", "../x", "../src/a.ts"]) {
      expect([outside, scope.allows(outside)]).toEqual([outside, false]);
    }
  });

  test("`src/*.ts` covers the matching files only, not the directory or other files", () => {
    const scope = pathScope(["src/*.ts"]);
    expect(scope.allows("src/a.ts")).toBe(true);
    expect(scope.allows("src/index.ts")).toBe(true);
    for (const outside of ["src", "src/notes.md", "src/a/b.ts", "a.ts", "lib/a.ts"]) expect([outside, scope.allows(outside)]).toEqual([outside, false]);
  });

  test("a plain directory covers itself and what is inside", () => {
    const scope = pathScope(["docs"]);
    expect(scope.allows("docs")).toBe(true);
    expect(scope.allows("docs/x.md")).toBe(true);
    expect(scope.allows("docs/api/y.md")).toBe(true);
    for (const outside of ["docsx", "docsx/x.md", "doc", "README.md", "/docs"]) expect([outside, scope.allows(outside)]).toEqual([outside, false]);
  });

  test("`**` covers the whole workspace but nothing outside it (the glob alone would match `../x` and `/etc/passwd`)", () => {
    const scope = pathScope(["**"]);
    for (const inside of [".", "a", "src/a.ts", "a/b/c.md"]) expect([inside, scope.allows(inside)]).toEqual([inside, true]);
    for (const outside of ["../x", "..", "/etc/passwd", "/a.ts", ""]) expect([outside, scope.allows(outside)]).toEqual([outside, false]);
  });

  test("several globs allow the union", () => {
    const scope = pathScope(["src/auth/**", "docs/auth.md"]);
    expect(scope.globs).toEqual(["src/auth/**", "docs/auth.md"]);
    expect(scope.allows("src/auth/x.ts")).toBe(true);
    expect(scope.allows("docs/auth.md")).toBe(true);
    expect(scope.allows("docs/other.md")).toBe(false);
    expect(scope.allows("src/db/x.ts")).toBe(false);
    expect(scope.allows("src")).toBe(false);
  });
});

describe("childScope", () => {
  const okScope = (paths: string[] | undefined, parent?: ReturnType<typeof pathScope>) => {
    const checked = childScope(paths, parent);
    if (!checked.ok) throw new Error(`refused: ${checked.error}`);
    return checked.scope;
  };
  const refusal = (paths: string[], parent?: ReturnType<typeof pathScope>) => {
    const checked = childScope(paths, parent);
    if (checked.ok) throw new Error(`accepted ${paths.join(", ")}`);
    return checked.error;
  };

  test("no paths: unrestricted without a parent scope, the parent's scope with one", () => {
    expect(okScope(undefined)).toBeUndefined();
    expect(okScope([])).toBeUndefined();
    const parent = pathScope(["src/**"]);
    expect(okScope(undefined, parent)).toBe(parent);
    expect(okScope([], parent)).toBe(parent);
  });

  test("paths are normalized: whitespace, a leading ./ and trailing slashes go", () => {
    expect(okScope(["  src/auth/** "])!.globs).toEqual(["src/auth/**"]);
    expect(okScope(["./src/auth/"])!.globs).toEqual(["src/auth"]);
    expect(okScope([".//docs//"])!.globs).toEqual(["docs"]);
    const scope = okScope(["./src/auth/"])!;
    expect(scope.allows("src/auth/x.ts")).toBe(true);
    expect(scope.allows("src/db/x.ts")).toBe(false);
  });

  test("`..`, absolute paths and malformed paths are refused with the path named", () => {
    for (const bad of ["../x", "src/../x", "src/..", "/etc", "/", "src//a", "src/./a", ".", "a\\b", "", "   ", "src/\0"]) {
      const error = refusal([bad]);
      expect(error).toContain(`'${bad}'`);
      expect(error).toContain("workspace-relative");
    }
  });

  test("one bad path refuses the whole scope", () => {
    expect(refusal(["src/**", "../secrets"])).toContain("'../secrets'");
  });

  test("inside a parent scope a child may only narrow it", () => {
    const parent = pathScope(["src/**"]);
    expect(okScope(["src/auth/**"], parent)!.globs).toEqual(["src/auth/**"]);
    expect(okScope(["src/auth/login.ts", "src/*.ts"], parent)!.globs).toEqual(["src/auth/login.ts", "src/*.ts"]);
    expect(okScope(["src"], parent)!.globs).toEqual(["src"]);
    for (const wider of ["lib/**", "**/*.ts", "*", "srcx/**", "README.md"]) {
      const error = refusal([wider], parent);
      expect(error).toContain(`'${wider}'`);
      expect(error).toContain("outside this run's own scope (src/**)");
    }
  });

  test("under a file glob parent, only the same glob (or no paths: inherit) is accepted; a plain path could be a directory", () => {
    const parent = pathScope(["src/*.ts"]);
    expect(okScope(["src/*.ts"], parent)!.globs).toEqual(["src/*.ts"]);
    // `src/a.ts` might be a directory whose files the parent may not touch: refused, never widened.
    expect(refusal(["src/a.ts"], parent)).toContain("outside this run's own scope");
    expect(refusal(["src/x/**"], pathScope(["src/*"]))).toContain("outside this run's own scope");
    expect(refusal(["src/**"], parent)).toContain("outside this run's own scope");
    expect(refusal(["src/notes.md"], parent)).toContain("outside this run's own scope");
    expect(refusal(["src"], parent)).toContain("outside this run's own scope");
  });

  test("under a plain directory parent, anything inside it is fine", () => {
    const parent = pathScope(["docs"]);
    expect(okScope(["docs/api/**"], parent)!.globs).toEqual(["docs/api/**"]);
    expect(okScope(["docs/x.md"], parent)!.globs).toEqual(["docs/x.md"]);
    expect(refusal(["docsx/**"], parent)).toContain("outside");
  });
});

describe("scopeGuard", () => {
  const guard = scopeGuard(pathScope(["src/**", "docs/guide.md"]));
  const OPERATIONS = ["read", "read-secret", "write-edit", "write-delete", "write-move", "write-sensitive"];

  test("file calls inside the scope pass", () => {
    for (const tool of ["read", "find", "write"]) for (const operation of OPERATIONS) expect(guard({ tool, operation, target: "src/a.ts" })).toBeUndefined();
    expect(guard({ tool: "read", operation: "read", target: "docs/guide.md" })).toBeUndefined();
    expect(guard({ tool: "find", operation: "read", target: "src" })).toBeUndefined();
  });

  test("file calls outside the scope are refused, naming the path and the scope", () => {
    for (const tool of ["read", "find", "write"]) {
      for (const operation of OPERATIONS) {
        expect(guard({ tool, operation, target: "README.md" })).toBe("README.md is outside this task's scope (src/**, docs/guide.md)");
      }
    }
    expect(guard({ tool: "read", operation: "read", target: "/etc/passwd" })).toContain("/etc/passwd is outside");
    expect(guard({ tool: "find", operation: "read", target: "." })).toContain(". is outside");
    expect(guard({ tool: "read", operation: "read", target: "../other/x" })).toContain("../other/x is outside");
  });

  test("operations that are not about paths are not checked", () => {
    for (const operation of ["execute", "network", "delegate"]) expect(guard({ tool: "read", operation, target: "/etc/passwd" })).toBeUndefined();
  });

  test("only the file tools are checked (the others are taken from a scoped child instead)", () => {
    for (const tool of ["run", "mcp:files:read", "delegate"]) expect(guard({ tool, operation: "read", target: "README.md" })).toBeUndefined();
    expect(toolsOutsideScope(["read", "find", "write", "run", "mcp:github:search", "delegate", "runner"])).toEqual(["run", "mcp:github:search"]);
  });

  test("every path of a multi-path target must be inside; the first one outside is named", () => {
    expect(guard({ tool: "write", operation: "write-move", target: "src/a.ts\nsrc/b.ts" })).toBeUndefined();
    expect(guard({ tool: "write", operation: "write-move", target: "src/a.ts\nlib/b.ts" })).toBe("lib/b.ts is outside this task's scope (src/**, docs/guide.md)");
    expect(guard({ tool: "write", operation: "write-edit", target: "src/a.ts\nlib/x.ts\nREADME.md" })).toContain("lib/x.ts is outside");
  });

  test("artifact references pass: they are not workspace paths", () => {
    expect(guard({ tool: "read", operation: "read", target: `artifact://${"f".repeat(64)}` })).toBeUndefined();
  });
});

describe("parentContext: redaction before bounds, compacted histories", () => {
  test("a secret that a cut would split is redacted first: no prefix of it survives", () => {
    const text = `${"x".repeat(1_470)} ${SECRET} tail`;
    for (const mode of ALL_MODES) {
      const rendered = parentContext([user(text), assistant("ok")], mode, redactor)!;
      expect(rendered).not.toContain(SECRET.slice(0, 12));
    }
  });

  test("summary mode names the compaction summary when it replaced the first request", () => {
    const compacted: Message = { role: "user", parts: [{ type: "summary", text: "EARLIER: the user asked to fix the login bug", replacedMessages: 40 }] };
    const rendered = parentContext([compacted, assistant("working on it"), user("now the tests")], { kind: "summary" }, redactor)!;
    expect(rendered).toContain("EARLIER: the user asked to fix the login bug");
    expect(rendered).toContain("now the tests");
  });
});
