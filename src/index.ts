#!/usr/bin/env bun
// Entry point. Start it through bin/zero, which runs Bun with the workspace's
// .env and bunfig.toml disabled; never as `bun src/index.ts` from an untrusted directory.
import { MAIN_HELP } from "./surface/cli/help.ts";
import { VERSION } from "./util/version.ts";

const args = process.argv.slice(2);
const first = args[0];
if (first === "--version" || first === "-v") {
  process.stdout.write(`${VERSION}\n`);
} else if (first === undefined || first === "--help" || first === "-h" || first === "help") {
  process.stdout.write(MAIN_HELP);
} else {
  // Everything else loads the real CLI lazily so the two paths above stay fast.
  // (No top-level await: the bundle is CommonJS so Bun can cache its bytecode.)
  void import("./surface/cli/main.ts").then(async ({ main }) => process.exit(await main(args)));
}
