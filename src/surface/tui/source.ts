// The TUI's entry when zero runs from source (bin/zero runs src/index.ts when a source file is newer
// than dist/): Bun runs with --config=/dev/null, so no bunfig preload registers OpenTUI's Solid
// transform; register it here, before the first .tsx (and solid-js) is loaded.
import { ensureSolidTransformPlugin } from "@opentui/solid/bun-plugin";

ensureSolidTransformPlugin();
export const { startTui, openTui } = await import("./start.tsx");
