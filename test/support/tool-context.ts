import { createRedactor } from "../../src/security/redact.ts";
import type { Roots } from "../../src/security/roots.ts";
import { createArtifactStore } from "../../src/store/artifacts.ts";
import type { ToolContext } from "../../src/tool/define.ts";

/**
 * A ToolContext for calling a tool directly (unit tests, tool benchmarks): real roots,
 * a real artifact store in `artifactsDir`, a real redactor; anything can be overridden.
 */
export function makeToolContext(options: { roots: Roots; artifactsDir: string } & Partial<ToolContext>): ToolContext {
  const { artifactsDir, ...overrides } = options;
  return {
    callId: "call_test",
    signal: new AbortController().signal,
    timeoutMs: 20_000,
    progress: () => undefined,
    env: {},
    artifacts: createArtifactStore(artifactsDir),
    knownArtifacts: new Set(),
    maxAttachmentBytes: 1024 * 1024,
    redactor: createRedactor(),
    ...overrides,
  };
}
