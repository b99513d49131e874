/**
 * Syntax highlighting for the timeline: OpenTUI's shared tree-sitter client (a worker thread),
 * used by the Markdown answers and the write diffs. It starts on first use.
 *
 * It must be the shared one: the Solid elements are constructed before their props are set and
 * `<markdown>`/`<diff>` have no `treeSitterClient` setter, so their code blocks always take
 * OpenTUI's process-wide client. We only point its data directory at zero's cache (the worker
 * creates it; OpenTUI's default is ~/.local/share/opentui) before it initializes.
 *
 * Offline by construction: the only parsers registered are the ones OpenTUI ships (JavaScript,
 * TypeScript, Markdown, Markdown inline, Zig), read from files next to the bundle (scripts/build.ts
 * copies them into dist/ as tui-*.wasm/.scm, with the worker as tui-parser.worker-*.js); nothing
 * registers a parser by URL, so the worker never downloads. Any other language is drawn plain
 * (the worker answers "no parser"). Without a working worker, text is drawn unstyled.
 */
import { getTreeSitterClient, pathToFiletype, type TreeSitterClient } from "@opentui/core";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** Filetypes OpenTUI bundles a parser for; a diff of any other file is not sent to the worker. */
const BUNDLED = new Set(["javascript", "javascriptreact", "typescript", "typescriptreact", "markdown", "zig"]);

let configured = false;

function cacheDir(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), ".cache");
  return join(base, "zero-cli");
}

/** The shared client, its data directory set (call before the first code block is built). */
export function codeHighlighter(): TreeSitterClient {
  const client = getTreeSitterClient();
  if (!configured) {
    configured = true;
    // Before initialization this only records the path the INIT message will carry.
    void client.setDataPath(cacheDir(process.env)).catch(() => {});
  }
  return client;
}

/** The filetype to highlight a file's content as, when a bundled parser knows it. */
export function filetypeOf(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const type = pathToFiletype(path);
  return type && BUNDLED.has(type) ? type : undefined;
}
