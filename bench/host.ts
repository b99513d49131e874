// Host protocol benchmarks: one-shot bridge calls (process start → exit) and ping
// throughput on a long-lived host. `node_modules/.bin/bun bench/host.ts`.
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, ZERO_BIN } from "../test/support/cli.ts";
import { median } from "./stats.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const PINGS = Number(process.env.BENCH_PINGS ?? 5000);


const sandbox = makeSandbox();
const fake = await startFakeProvider({ fallback: { text: "pong from the model" } });
sandbox.writeUserConfig(fakeConfig(fake.url));

async function oneShot(line: string): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([ZERO_BIN, "host", "--bridge-compat", "--single-request"], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    stdin: new TextEncoder().encode(`${line}\n`),
    stdout: "pipe",
    stderr: "ignore",
  });
  await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("one-shot request failed");
  return performance.now() - started;
}

try {
  const ping = JSON.stringify({ protocol_version: 1, type: "ping", request_id: "p", session_id: "s" });
  const pings: number[] = [];
  const runs: number[] = [];
  await oneShot(ping); // warm-up
  for (let i = 0; i < RUNS; i++) pings.push(await oneShot(ping));
  for (let i = 0; i < RUNS; i++) {
    const run = { protocol_version: 1, type: "run", request_id: `r${i}`, session_id: `bench-${i}`, prompt: "hello", idempotency_key: `k${i}` };
    runs.push(await oneShot(JSON.stringify(run)));
  }

  // Long-lived host: many pings on one process.
  const proc = Bun.spawn([ZERO_BIN, "host"], { cwd: sandbox.workspace, env: sandbox.env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const lines = Array.from({ length: PINGS }, (_, i) => JSON.stringify({ protocol_version: 1, type: "ping", request_id: `p${i}`, session_id: "s" })).join("\n");
  const started = performance.now();
  proc.stdin.write(`${lines}\n`);
  proc.stdin.end();
  const output = await new Response(proc.stdout).text();
  const elapsed = performance.now() - started;
  await proc.exited;
  const answered = output.split("\n").filter((l) => l.includes('"PONG"')).length;
  if (answered !== PINGS) throw new Error(`expected ${PINGS} PONGs, got ${answered}`);

  console.log(
    [
      `host protocol (medians over ${RUNS} runs)`,
      `one-shot --bridge-compat --single-request ping   ${median(pings).toFixed(1)} ms (process start → exit)`,
      `one-shot --bridge-compat --single-request run    ${median(runs).toFixed(1)} ms (instant fake provider)`,
      `long-lived host: ${PINGS} pings                  ${(PINGS / (elapsed / 1000)).toFixed(0)} requests/s`,
    ].join("\n"),
  );
} finally {
  await fake.close();
  sandbox.cleanup();
}
