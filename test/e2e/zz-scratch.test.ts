import { test } from "bun:test";
import { startFakeProvider } from "/work/main/test/support/fake-provider.ts";
import { fakeConfig, makeSandbox, runZero } from "/work/main/test/support/cli.ts";
test("try", async () => {
  const fake = await startFakeProvider();
  const sb = makeSandbox();
  sb.writeUserConfig(fakeConfig(fake.url));
  fake.script([{ text: ["Project has ", "src, tests, ", "and docs."], reasoning: "hmm", usage: { input: 120, output: 40 } }]);
  const input = [
    {"protocol_version":1,"type":"ping","request_id":"ping-001","session_id":"s-user-1"},
    {"protocol_version":1,"type":"run","request_id":"run-001","session_id":"s-user-1","ts_ms":1773935000100,"prompt":"Analyze project structure","metadata":{"channel":"clawbridge","trace_id":"trace-001"},"timeout_ms":120000,"idempotency_key":"idem-001","stream":true},
  ].map((l) => JSON.stringify(l)).join("\n") + "\n";
  const r = await runZero(["host"], { sandbox: sb, stdin: input });
  console.log(r.code, r.ms, r.stdout, "STDERR", r.stderr);
  console.log(JSON.stringify(fake.requests[0]?.body.messages));
  await fake.close(); sb.cleanup();
});
