// Builds dist/: the runtime as one minified CommonJS bundle with Bun's bytecode
// cache (dist/main.js + .jsc: parsing ~1 MB of JS is most of a cold start), and a
// tiny entry (dist/index.js) that answers --version/--help without loading it.
import { chmodSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import solidPlugin from "@opentui/solid/bun-plugin";

const root = resolve(import.meta.dir, "..");
// `--outdir <dir>` (bench/tui.ts): a private build that a concurrent `bun run build` cannot
// remove mid-measurement. It must sit inside the package so node_modules resolves from it.
const outdirFlag = process.argv.indexOf("--outdir");
const outdir = outdirFlag > 0 && process.argv[outdirFlag + 1] ? resolve(process.argv[outdirFlag + 1]!) : resolve(root, "dist");
rmSync(outdir, { recursive: true, force: true });

async function build(options: Parameters<typeof Bun.build>[0]): Promise<void> {
  const result = await Bun.build(options);
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    process.exit(1);
  }
}

await build({
  entrypoints: [resolve(root, "src/surface/cli/main.ts")],
  outdir,
  target: "bun",
  format: "cjs",
  bytecode: true,
  minify: true,
  // Loaded on the first HTML page only: kept out of the bundle every start has to map.
  external: ["turndown"],
  // dist/tui.js is loaded with import() only when the TUI starts (never bundled into main.js).
  define: { ZERO_BUNDLED_TUI: JSON.stringify("./tui.js") },
});
// The TUI: ESM (OpenTUI uses top-level await, so no CJS and no bytecode), Solid's browser build
// inside (its node build renders once and then ignores input), the JSX through OpenTUI's Solid
// transform. The native library stays in its platform package (@opentui/core-<os>-<arch>),
// resolved at run time from dist/ through node_modules: an absolute path whatever the cwd.
await build({
  entrypoints: [resolve(root, "src/surface/tui/start.tsx")],
  outdir,
  target: "bun",
  format: "esm",
  minify: true,
  conditions: ["browser"],
  // Without it Bun.build adds the "development" condition and picks solid-js/dist/dev.js.
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  plugins: [solidPlugin],
  external: ["@opentui/core-*"],
  naming: { entry: "tui.[ext]", chunk: "tui-[name]-[hash].[ext]", asset: "tui-[name]-[hash].[ext]" },
});
await build({
  entrypoints: [resolve(root, "src/index.ts")],
  outdir,
  target: "bun",
  format: "cjs",
  minify: true,
  define: { ZERO_BUNDLED_MAIN: JSON.stringify("./main.js"), ZERO_BUNDLED_TUI: JSON.stringify("./tui.js") },
});
// bin/zero is the only way in: it starts Bun with --config=/dev/null --no-env-file. A built file
// that could be executed on its own (a shebang, an executable bit) would run with the current
// directory's .env and bunfig.toml preloads, so none may have either.
for (const name of readdirSync(outdir)) {
  const file = resolve(outdir, name);
  if (readFileSync(file).subarray(0, 2).toString() === "#!") {
    console.error(`dist/${name} starts with a shebang; the sources must not have one (start zero through bin/zero)`);
    process.exit(1);
  }
  chmodSync(file, 0o644);
}
console.log(`built ${outdir}: index.js, main.js (+ bytecode), tui.js`);
