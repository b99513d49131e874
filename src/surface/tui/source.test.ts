import { expect, test } from "bun:test";

// bin/zero runs src/index.ts when a source file is newer than dist/: the source entry must offer
// what src/index.ts (openTui) and tui-command.ts (openTui) call, as dist/tui.js does.
test("the source entry exports the TUI's start functions", async () => {
  const source = await import("./source.ts");
  const bundleEntry = await import("./start.tsx");
  expect(typeof source.openTui).toBe("function");
  expect(typeof source.startTui).toBe("function");
  for (const name of Object.keys(bundleEntry).filter((key) => typeof (bundleEntry as Record<string, unknown>)[key] === "function")) {
    expect(typeof (source as Record<string, unknown>)[name]).toBe("function");
  }
});
