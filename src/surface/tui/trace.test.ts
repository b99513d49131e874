import { expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import type { CliRenderer } from "@opentui/core";
import { createTuiTrace } from "./trace.ts";

/** What the trace uses of a renderer: frame events and OpenTUI's frame-time samples. */
function fakeRenderer(frameTimes: number[]) {
  const emitter = new EventEmitter();
  let resets = 0;
  const renderer = Object.assign(emitter, {
    resetStats: () => void resets++,
    getStats: () => ({ frameTimes }),
  });
  return { renderer: renderer as unknown as CliRenderer, frame: () => emitter.emit("frame", { frameId: 1 }), resets: () => resets };
}

function collect() {
  const lines: string[] = [];
  const data = (name: string) => JSON.parse(lines.find((line) => line.startsWith(`${name}:`))!.slice(name.length + 1));
  return { lines, data, trace: (mark: string) => void lines.push(mark) };
}

test("a run's start and end are marked; its end carries CPU, frame, lag and memory figures", () => {
  const out = collect();
  const tracer = createTuiTrace(out.trace);
  const fake = fakeRenderer([2, 4, 6]);
  tracer.attach(fake.renderer);
  fake.frame();
  expect(out.data("launch").cpuMs).toBeGreaterThan(0);
  tracer.running(false); // not running yet: nothing
  tracer.running(true);
  tracer.running(true); // no change: nothing
  expect(fake.resets()).toBe(1);
  tracer.running(false);
  tracer.finish();
  expect(out.lines.filter((line) => line === "run-start")).toHaveLength(1);
  const end = out.data("run-end");
  expect(end.frames).toBe(3);
  expect(end.frameAvgMs).toBe(4);
  expect(end.frameMaxMs).toBe(6);
  expect(end.frameP95Ms).toBe(6);
  expect(end.rssMiB).toBeGreaterThan(0);
  expect(end.lagMaxMs).toBeGreaterThanOrEqual(0);
});

test("each typed character is timed to the next frame; terminal replies and control keys are not", () => {
  const out = collect();
  const tracer = createTuiTrace(out.trace);
  const fake = fakeRenderer([]);
  tracer.attach(fake.renderer);
  const [input] = tracer.rendererOptions.prependInputHandlers;
  fake.frame(); // the first frame: no key before it
  expect(input!("\x1b[?62;4c")).toBe(false); // a reply to a start-up query: observed, never consumed
  expect(input!("\x03")).toBe(false); // Ctrl-C
  fake.frame();
  input!("a");
  input!("b"); // read before the frame: one sample for both
  fake.frame();
  input!("c");
  fake.frame();
  tracer.finish();
  const keys = out.data("keys") as number[];
  expect(keys).toHaveLength(2);
  for (const latency of keys) expect(latency).toBeGreaterThanOrEqual(0);
});
