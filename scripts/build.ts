// Builds dist/: the runtime as one minified CommonJS bundle with Bun's bytecode
// cache (dist/main.js + .jsc: parsing ~1 MB of JS is most of a cold start), and a
// tiny entry (dist/index.js) that answers --version/--help without loading it.
import { rmSync } from "node:fs";
import { resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const outdir = resolve(root, "dist");
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
});
await build({
  entrypoints: [resolve(root, "src/index.ts")],
  outdir,
  target: "bun",
  format: "cjs",
  minify: true,
  define: { ZERO_BUNDLED_MAIN: JSON.stringify("./main.js") },
});
console.log("built dist/index.js and dist/main.js (+ bytecode)");
