import { describe, expect, test } from "bun:test";
import { matchTarget } from "./target-match.ts";

describe("matchTarget: command patterns", () => {
  const CASES: [pattern: string, command: string, expected: boolean][] = [
    ["git status*", "git status", true],
    ["git status*", "git status --short", true],
    ["git status*", "git status src/a b", true],
    ["git status*", "git statusx", true],
    ["git status", "git status --short", false],
    ["git status*", "git log", false],
    ["git status*", " git status", false],
    ["git status*", "git status; rm -rf x", false],
    ["git status*", "git status && rm -rf x", false],
    ["git status*", "git status || rm -rf x", false],
    ["git status*", "git status | sh", false],
    ["git status*", "git status & rm x", false],
    ["git status*", "git status > ~/.bashrc", false],
    ["git status*", "git status < /etc/passwd", false],
    ["git status*", "git status $(curl x)", false],
    ["git status*", "git status ${HOME}", false],
    ["git status*", "git status `curl x`", false],
    ["git status*", "git status (x)", false],
    ["git status*", "git status\nrm -rf x", false],
    ["git status*", "git status\rrm", false],
    ["git status *&& git diff*", "git status -s && git diff --stat", true],
    ["git status *&& git diff*", "git status -s && git diff; rm x", false],
    ["npm test -- ?", "npm test -- a", true],
    ["npm test -- ?", "npm test -- ab", false],
    ["npm test -- ?", "npm test -- ;", false],
    ["echo \\*", "echo *", true],
    ["echo \\*", "echo a", false],
    ["*", "", true],
    ["*", "anything at all", true],
    ["*", "a; b", false],
    ["**", "a | b", false],
    ["*x*y*z", "axbyz", true],
    ["*x*y*z", "axbzy", false],
    ["ünï*", "ünïcödé 🎉", true],
    ["*🎉", "party 🎉", true],
  ];
  for (const [pattern, command, expected] of CASES) {
    test(`${JSON.stringify(pattern)} ~ ${JSON.stringify(command)} → ${expected}`, () => {
      expect(matchTarget(pattern, command, "command")).toBe(expected);
    });
  }

  test("linear enough: many stars against a long command", () => {
    const started = performance.now();
    expect(matchTarget(`${"*a".repeat(50)}b`, "a".repeat(200_000), "command")).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});

describe("matchTarget: path globs", () => {
  const CASES: [pattern: string, path: string, expected: boolean][] = [
    ["src/**", "src/a.ts", true],
    ["src/**", "src/deep/er/a.ts", true],
    ["src/**", "srcx/a.ts", false],
    ["src/**", "test/a.ts", false],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/deep/a.ts", false],
    ["**/*.ts", "a.ts", true],
    ["**/*.ts", "src/deep/a.ts", true],
    ["*.{ts,tsx}", "a.tsx", true],
    ["/etc/**", "/etc/passwd", true],
    ["/etc/**", "etc/passwd", false],
    [".github/**", ".github/workflows/ci.yml", true],
    ["https://docs.example.com/**", "https://docs.example.com/guide/intro", true],
    ["https://docs.example.com/**", "https://docs.example.com.evil.net/x", false],
    ["web-search", "web-search", true],
    ["mcp:github:*", "mcp:github:create_issue", true],
    ["mcp:github:*", "mcp:gitlab:create_issue", false],
  ];
  for (const [pattern, path, expected] of CASES) {
    test(`${JSON.stringify(pattern)} ~ ${JSON.stringify(path)} → ${expected}`, () => {
      expect(matchTarget(pattern, path, "path")).toBe(expected);
    });
  }
});
