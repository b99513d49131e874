import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkImports, findImportSpecifiers } from "./support/architecture.ts";

const repoRoot = join(import.meta.dir, "..");

describe("the source tree", () => {
  test("every import runs the allowed way", () => {
    const files = [...new Bun.Glob("src/**/*.{ts,tsx}").scanSync({ cwd: repoRoot })].sort().map((path) => ({
      path,
      source: readFileSync(join(repoRoot, path), "utf8"),
    }));
    expect(files.length).toBeGreaterThan(0);
    expect(checkImports(files)).toEqual([]);
  });
});

describe("checkImports", () => {
  test("reports exactly the wrong-way, banned and dynamic violations", () => {
    const files = [
      { path: "src/tool/read.ts", source: `import { runLoop } from "../agent/loop.ts";\nimport { z } from "zod";` },
      { path: "src/tool/write.ts", source: `import { streamText } from "ai";` },
      { path: "src/llm/step.ts", source: `import { streamText } from "ai";\nimport { openai } from "@ai-sdk/openai";` },
      { path: "src/store/db.ts", source: `const m = await import("../session/service.ts");` },
      { path: "src/agent/loop.ts", source: `import type { Tool } from "../tool/define.ts";\nimport "../protocol/events.ts";` },
      { path: "src/protocol/events.ts", source: `import { z } from "zod";` },
    ];
    expect(checkImports(files)).toEqual([
      "src/tool/read.ts imports src/agent/loop.ts: tool may not import agent",
      "src/tool/write.ts imports ai: only src/llm/ may import ai",
      "src/store/db.ts imports src/session/service.ts: store may not import session",
    ]);
  });

  test("protocol imports nothing of ours", () => {
    expect(checkImports([{ path: "src/protocol/ids.ts", source: `export * from "../util/env.ts";` }])).toEqual([
      "src/protocol/ids.ts imports src/util/env.ts: protocol may not import util",
    ]);
  });

  test("skill, mcp, plugin and workflow share a level and may not import each other", () => {
    const files = [
      { path: "src/skill/load.ts", source: `import { x } from "../mcp/client.ts";` },
      { path: "src/workflow/run.ts", source: `import { s } from "../session/service.ts";` },
      { path: "src/surface/cli/run.ts", source: `import { w } from "../../workflow/run.ts";` },
    ];
    expect(checkImports(files)).toEqual(["src/skill/load.ts imports src/mcp/client.ts: skill may not import mcp"]);
  });

  test("src/index.ts is surface, and unknown folders or top-level files are violations", () => {
    const files = [
      { path: "src/index.ts", source: `import { main } from "./surface/cli/main.ts";` },
      { path: "src/helpers/misc.ts", source: `export const x = 1;` },
      { path: "src/stray.ts", source: `export const y = 2;` },
      { path: "src/agent/loop.ts", source: `import { main } from "../index.ts";\nimport { h } from "../helpers/misc.ts";` },
    ];
    expect(checkImports(files)).toEqual([
      "src/helpers/misc.ts: helpers is not a known layer (add it to the layer list deliberately)",
      "src/stray.ts: files directly under src/ other than src/index.ts belong to no layer",
      "src/agent/loop.ts imports src/index.ts: agent may not import surface",
      "src/agent/loop.ts imports src/helpers/misc.ts: helpers is not a known layer",
    ]);
  });

  test("UI and protocol SDKs stay in their surface", () => {
    const files = [
      { path: "src/surface/tui/app.tsx", source: `import { render } from "@opentui/solid";\nimport { createSignal } from "solid-js";` },
      { path: "src/surface/cli/run.ts", source: `import { createSignal } from "solid-js/store";` },
      { path: "src/surface/acp/agent.ts", source: `import * as acp from "@agentclientprotocol/sdk";` },
      { path: "src/session/service.ts", source: `export { agent } from "@agentclientprotocol/sdk";` },
    ];
    expect(checkImports(files)).toEqual([
      "src/surface/cli/run.ts imports solid-js/store: only src/surface/tui/ may import solid-js",
      "src/session/service.ts imports @agentclientprotocol/sdk: only src/surface/acp/ may import @agentclientprotocol/sdk",
    ]);
  });

  test("only test files may import test/support, and nothing reaches outside src", () => {
    const files = [
      { path: "src/tool/read.test.ts", source: `import { fake } from "../../test/support/fake-provider.ts";` },
      { path: "src/tool/read.ts", source: `import { fake } from "../../test/support/fake-provider.ts";` },
      { path: "src/tool/find.ts", source: `import { b } from "../../bench/run.ts";` },
      { path: "src/tool/find.test.ts", source: `import { l } from "../agent/loop.ts";` },
      { path: "src/util/version.ts", source: `import pkg from "../../package.json" with { type: "json" };` },
    ];
    expect(checkImports(files)).toEqual([
      "src/tool/read.ts imports test/support/fake-provider.ts: only test files may import test/support/",
      "src/tool/find.ts imports bench/run.ts: src/ may only import from src/ (and its tests from test/support/)",
      "src/tool/find.test.ts imports src/agent/loop.ts: tool may not import agent",
    ]);
  });
});

describe("findImportSpecifiers", () => {
  test("finds every import form", () => {
    const source = [
      `import a from "./a.ts";`,
      `import { b, type C } from './b.ts';`,
      `import type { D } from "./d.ts";`,
      `import * as e from "./e.ts";`,
      `import f, { g } from "./f.ts" with { type: "json" };`,
      `import "./side-effect.ts";`,
      `import {`,
      `  h,`,
      `  i,`,
      `} from "./multi-line.ts"`,
      `export * from "./star.ts";`,
      `export * as ns from "./ns.ts";`,
      `export { j } from "./j.ts";`,
      `export type { K } from "./k.ts";`,
      `const l = await import("./dynamic.ts");`,
      "const m = await import(`./template.ts`);",
      `type N = import("./type-import.ts").N;`,
      `const o = require("./required.ts");`,
    ].join("\n");
    expect(findImportSpecifiers(source)).toEqual([
      "./a.ts", "./b.ts", "./d.ts", "./e.ts", "./f.ts", "./side-effect.ts", "./multi-line.ts", "./star.ts",
      "./ns.ts", "./j.ts", "./k.ts", "./dynamic.ts", "./template.ts", "./type-import.ts", "./required.ts",
    ]);
  });

  test("ignores imports inside comments, strings, templates and regexes, and non-literal ones", () => {
    const source = [
      `// import x from "./line-comment.ts";`,
      `/* import y from "./block-comment.ts"; */`,
      `const s = 'import z from "./in-string.ts"';`,
      "const t = `import(\"./in-template.ts\") ${1 + 1} import \"./after-substitution.ts\"`;",
      `const r = /import "\\.\\/in-regex.ts"/;`,
      `const u = import.meta.dir;`,
      `const v = { import: 1 }.import;`,
      `const w = await import(pluginPath);`,
      `export { local };`,
      `export const n = 1 / 2; import q from "./after-division.ts";`,
    ].join("\n");
    expect(findImportSpecifiers(source)).toEqual(["./after-division.ts"]);
  });

  test("survives JSX text with stray quotes and code inside template substitutions", () => {
    const source = [
      `import { Box } from "@opentui/solid";`,
      `const view = <text>Don't panic</text>;`,
      "const label = `${await import(\"./inside-substitution.ts\")}`;",
      `import { after } from "./after-jsx.ts";`,
    ].join("\n");
    expect(findImportSpecifiers(source)).toEqual(["@opentui/solid", "./inside-substitution.ts", "./after-jsx.ts"]);
  });
});
