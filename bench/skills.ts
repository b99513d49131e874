// Benchmark of skills: `node_modules/.bin/bun bench/skills.ts` (after a build). Medians over
// BENCH_SKILLS_RUNS runs (default 9), the two sides alternating in the same process:
// 1. start-up: `zero run --json` from spawn to the fake's first model request, with no skill
//    package and with 200 discovered packages (100 in ~/.codex/skills, 100 in
//    ~/.config/zero-cli/skills; each a SKILL.md with a realistic description plus two resource
//    files, so the package walk has something to count);
// 2. the bytes the 200-package catalog adds to that first request (whole request body, and the
//    catalog section of the system prompt);
// 3. discovery alone, in this process: loadSkills for the 200 packages (median).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, spawnZero, type Sandbox } from "../test/support/cli.ts";
import { loadConfig } from "../src/config/load.ts";
import { loadSkills } from "../src/skill/source.ts";
import { median } from "./stats.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_SKILLS_RUNS ?? 9));
const PACKAGES = 200;

function populate(sandbox: Sandbox): void {
  for (let i = 0; i < PACKAGES; i++) {
    const base = i % 2 === 0 ? join(sandbox.home, ".codex", "skills") : join(sandbox.configDir, "skills");
    const name = `skill-${String(i).padStart(3, "0")}`;
    const dir = join(base, name);
    mkdirSync(join(dir, "references"), { recursive: true });
    const description = `Use when the task involves area ${i} of the product, such as drafting, checking and updating its documents, scripts and release material.`;
    writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n\n# ${name}\n\n${"Step by step instructions. ".repeat(80)}\n`);
    writeFileSync(join(dir, "references", "guide.md"), "# Guide\n".repeat(200));
    writeFileSync(join(dir, "check.sh"), "#!/bin/sh\necho ok\n");
  }
}

function catalogSection(request: { body: any }): string {
  const system = String(request.body.messages[0]?.content ?? "");
  const start = system.indexOf("# Skills\n");
  return start === -1 ? "" : system.slice(start);
}

async function startup() {
  const fake = await startFakeProvider({ fallback: () => ({ text: "done" }) });
  const none = makeSandbox();
  const many = makeSandbox();
  populate(many);
  const sides = { none, many } as const;
  const samples: Record<keyof typeof sides, number[]> = { none: [], many: [] };
  const bytes: Record<keyof typeof sides, number> = { none: 0, many: 0 };
  let section = "";
  try {
    for (const sandbox of [none, many]) sandbox.writeUserConfig(fakeConfig(fake.url));
    for (let i = 0; i <= RUNS; i++) {
      const order = i % 2 === 0 ? (["none", "many"] as const) : (["many", "none"] as const);
      for (const name of order) {
        fake.reset();
        const startedAt = performance.timeOrigin + performance.now();
        const result = await spawnZero(["run", "--json", "hi"], { sandbox: sides[name], timeoutMs: 60_000 }).result;
        if (result.code !== 0 || fake.requests.length !== 1) throw new Error(`${name}: exit ${result.code}, ${fake.requests.length} requests: ${result.stderr.slice(0, 400)}`);
        const request = fake.requests[0]!;
        const lines = catalogSection(request).split("\n").filter((line) => line.startsWith("- ")).length;
        if (lines !== (name === "many" ? PACKAGES : 0)) throw new Error(`${name}: ${lines} catalog lines`);
        if (name === "many") section = catalogSection(request);
        bytes[name] = request.bodyBytes;
        if (i > 0) samples[name].push(request.receivedAt - startedAt); // run 0 warms caches
      }
    }
  } finally {
    none.cleanup();
    await fake.close();
  }
  const a = median(samples.none);
  const b = median(samples.many);
  console.log(`start → first model request (median of ${RUNS}, alternating): no skills ${a.toFixed(0)} ms, ${PACKAGES} discovered skills ${b.toFixed(0)} ms (+${(b - a).toFixed(0)} ms, ×${(b / a).toFixed(2)})`);
  console.log(`first request body: ${bytes.none} bytes without skills, ${bytes.many} with ${PACKAGES} (+${bytes.many - bytes.none} bytes; catalog section ${Buffer.byteLength(section)} bytes, ${(Buffer.byteLength(section) / PACKAGES).toFixed(0)} per skill)`);
  return many;
}

function discovery(sandbox: Sandbox) {
  const loaded = loadConfig({ workspace: sandbox.workspace, env: sandbox.env });
  const times: number[] = [];
  for (let i = 0; i <= RUNS * 2; i++) {
    const started = performance.now();
    const catalog = loadSkills({ env: sandbox.env, loaded, workspace: sandbox.workspace });
    if (catalog.entries.length !== PACKAGES) throw new Error(`discovered ${catalog.entries.length}`);
    if (i > 0) times.push(performance.now() - started);
  }
  console.log(`discovery + validation of ${PACKAGES} packages in process (median of ${times.length}): ${median(times).toFixed(1)} ms`);
}

const many = await startup();
try {
  discovery(many);
} finally {
  many.cleanup();
}
