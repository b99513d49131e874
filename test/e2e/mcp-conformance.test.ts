import { expect, test } from "bun:test";
import { resolve } from "node:path";

// The official MCP conformance suite's client scenarios against zero's connection code
// (scripts/mcp-conformance.ts runs the runner; scripts/mcp-conformance-client.ts is the client).
test("MCP conformance: initialize, tools_call, sse-retry and the auth suite all pass", async () => {
  const script = resolve(import.meta.dir, "../../scripts/mcp-conformance.ts");
  const child = Bun.spawn([process.execPath, script, "--json"], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" } });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  const report = JSON.parse(stdout) as { passed: number; total: number; results: Array<{ scenario: string; passed: boolean; failures: string[] }> };
  console.log(`MCP conformance (client): ${report.passed}/${report.total} scenarios passed`);
  const scenarios = report.results.map((result) => result.scenario);
  for (const required of ["initialize", "tools_call", "sse-retry", "auth/metadata-default", "auth/pre-registration", "auth/scope-step-up", "auth/token-endpoint-auth-basic"]) {
    expect(scenarios).toContain(required);
  }
  expect(report.results.filter((result) => !result.passed)).toEqual([]);
  expect(report.total).toBeGreaterThanOrEqual(17);
  expect(code).toBe(0);
}, 240_000);
