import { afterEach, expect, test } from "bun:test";
import { createCampaign } from "./run-context.ts";
import { userMessage } from "../protocol/messages.ts";
import { finalStep, removeWorkspaces, run } from "../agent/loop-test-support.ts";

afterEach(removeWorkspaces);

const capped = () =>
  createCampaign({ steps: null, toolCalls: null, tokens: 1_000_000, costMicroUsd: null, runs: null, deadline: new Date(Date.now() + 60_000) });

test("a runner that throws still gives the admission queue back: the campaign's next call is not stuck", async () => {
  const campaign = capped();
  const failing = run({
    script: [
      () => {
        throw new Error("conversion failed");
      },
    ],
    campaign,
  });
  await expect(failing).rejects.toThrow("conversion failed");
  const next = await Promise.race([
    campaign.admitModelCall!({ estimatedInputTokens: 10, signal: new AbortController().signal }),
    Bun.sleep(500).then(() => "stuck" as const),
  ]);
  expect(next).not.toBe("stuck");
});

test("a finish refused while the run is cancelled ends cancelled, never completed", async () => {
  const controller = new AbortController();
  const { result } = await run({
    script: [finalStep("done")],
    controller,
    hooks: {
      async beforeFinish() {
        controller.abort();
        return { continueWith: [userMessage("[gate] not verified")] };
      },
    },
  });
  expect(result).toMatchObject({ status: "cancelled", reason: "cancelled" });
});
