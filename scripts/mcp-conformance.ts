/**
 * Runs the official MCP conformance suite's client scenarios against zero's MCP client
 * (scripts/mcp-conformance-client.ts) and prints the pass count. `initialize`, `tools_call`,
 * `sse-retry` and the `auth` suite run; a scenario passes when none of its checks failed.
 * Exit 1 when a scenario fails. `bun scripts/mcp-conformance.ts [--json]`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const bun = process.execPath;
const runner = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const client = `${bun} ${join(root, "scripts/mcp-conformance-client.ts")}`;
const out = mkdtempSync(join(tmpdir(), "zero-mcp-conformance-results-"));

type Check = { id: string; status: string; errorMessage?: string };
export type ScenarioResult = { scenario: string; passed: boolean; checks: { success: number; failure: number; warning: number }; failures: string[] };

async function run(args: string[]): Promise<void> {
  const child = Bun.spawn([bun, runner, "client", "--command", client, "-o", out, ...args], { stdout: "ignore", stderr: "ignore", cwd: out });
  await child.exited;
}

/** Every results directory the runner wrote: `<out>/<scenario>-<timestamp>/checks.json` (auth scenarios one level down). */
function collect(): ScenarioResult[] {
  const results: ScenarioResult[] = [];
  const visit = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      const files = readdirSync(path);
      if (!files.includes("checks.json")) {
        visit(path, `${prefix}${entry.name}/`);
        continue;
      }
      const checks = JSON.parse(readFileSync(join(path, "checks.json"), "utf8")) as Check[];
      const count = (status: string) => checks.filter((check) => check.status === status).length;
      const failures = checks.filter((check) => check.status === "FAILURE").map((check) => `${check.id}: ${check.errorMessage ?? "failed"}`);
      const scenario = `${prefix}${entry.name.replace(/-\d{4}-\d{2}-\d{2}T.*$/, "")}`;
      results.push({ scenario, passed: failures.length === 0 && count("SUCCESS") > 0, checks: { success: count("SUCCESS"), failure: count("FAILURE"), warning: count("WARNING") }, failures });
    }
  };
  visit(out, "");
  return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

try {
  for (const scenario of ["initialize", "tools_call", "sse-retry"]) await run(["--scenario", scenario]);
  await run(["--suite", "auth"]);
  const results = collect();
  const passed = results.filter((result) => result.passed).length;
  if (process.argv.includes("--json")) {
    process.stdout.write(`${JSON.stringify({ passed, total: results.length, results })}\n`);
  } else {
    for (const result of results) {
      process.stdout.write(`${result.passed ? "pass" : "FAIL"}  ${result.scenario}  (${result.checks.success} checks passed, ${result.checks.failure} failed, ${result.checks.warning} warnings)\n`);
      for (const failure of result.failures) process.stdout.write(`        ${failure}\n`);
    }
    process.stdout.write(`MCP conformance (client): ${passed}/${results.length} scenarios passed\n`);
  }
  process.exitCode = passed === results.length && results.length > 0 ? 0 : 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
