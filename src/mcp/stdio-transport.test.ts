import { expect, test } from "bun:test";
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
