import { expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { BoundedStdioTransport, MAX_PENDING_INPUT_BYTES, resolveCommand, safePath, serverEnvironment } from "./stdio-transport.ts";

test("a server that stops reading its stdin is cut off once the waiting input passes the bound", async () => {
  // `sleep` never reads: everything zero sends waits in the pipe and then in zero's buffer.
  const transport = new BoundedStdioTransport({ command: "/bin/sleep", args: ["30"], cwd: "/", env: { PATH: "/usr/bin:/bin" } });
  const errors: string[] = [];
  let closed = false;
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => (closed = true);
  await transport.start();
  const big = { jsonrpc: "2.0" as const, method: "notifications/message", params: { data: "x".repeat(1024 * 1024) } };
  let refused = 0;
  for (let i = 0; i < 40; i++) await transport.send(big).catch(() => refused++);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(closed).toBe(true);
  // Once cut, later sends are refused at once (no more writes, no second close).
  expect(refused).toBeGreaterThan(0);
  expect(errors.filter((message) => message.includes("stopped reading"))).toHaveLength(1);
  expect(errors.join("\n")).toContain("the server stopped reading its input");
  expect(transport.describeExit()).toContain(`bytes waiting`);
  expect(MAX_PENDING_INPUT_BYTES).toBe(16 * 1024 * 1024);
  await transport.close();
});

test("safe PATH: relative and empty entries are dropped, from zero's PATH and a configured one", () => {
  expect(safePath("/usr/bin::.:bin:/opt/x/bin")).toBe("/usr/bin:/opt/x/bin");
  const env = serverEnvironment({ PATH: ".:/usr/bin", GITHUB_TOKEN: "t", HOME: "/home/u" }, { PATH: "node_modules/.bin:/bin", LOG_LEVEL: "warn" });
  expect(env.PATH).toBe("/bin");
  expect(env.LOG_LEVEL).toBe("warn");
  expect(env.GITHUB_TOKEN).toBeUndefined();
  expect(() => resolveCommand("bin/server", "/usr/bin")).toThrow("must be absolute, start with ./ or ../");
  expect(resolveCommand("sh", "/usr/bin:/bin")).toMatch(/\/sh$/);
});

test("a bare command name is found only through absolute PATH entries, never through a relative one", () => {
  const dir = mkdtempSync(join(tmpdir(), "zero-mcp-path-"));
  try {
    writeFileSync(join(dir, "zero-probe-server"), "#!/bin/sh\n");
    chmodSync(join(dir, "zero-probe-server"), 0o755);
    // The same directory named relatively (as "." or "bin" would be) is dropped from the PATH a server is looked up on.
    const relativeEntry = relative(process.cwd(), dir);
    expect(relativeEntry.startsWith("/")).toBe(false);
    expect(() => resolveCommand("zero-probe-server", safePath(`${relativeEntry}:/usr/bin`))).toThrow('command "zero-probe-server" was not found on PATH');
    expect(resolveCommand("zero-probe-server", safePath(`${dir}:/usr/bin`))).toBe(join(dir, "zero-probe-server"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
