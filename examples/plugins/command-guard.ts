// An example lifecycle plugin for zero (see docs/plugins.md). Enable it in a configuration file:
//
//   { "plugins": ["/absolute/path/to/examples/plugins/command-guard.ts"],
//     "agents": { "build": { "tools": ["read", "write", "run", "find", "search", "delegate", "count_words"] } } }
//
// It refuses `run` commands that match a pattern before policy is even asked (`beforeTool`),
// ends a run that takes more model steps than it allows (`shouldStop`), and adds one small tool.
// A plugin is code running with zero's own privileges: read it before you enable it.
import { definePlugin, definePluginTool, z } from "../../src/plugin/define.ts";

/** Commands this plugin never lets through, whatever the permission mode says. */
const REFUSED_COMMANDS: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*r)\b/, why: "recursive forced deletes are not allowed by the command-guard plugin" },
  { pattern: /\bgit\s+push\b.*\s(--force|-f)\b/, why: "force pushes are not allowed by the command-guard plugin" },
];

/** More model steps than this in one run end it (exit 4): a runaway run costs money. */
const MAX_STEPS = 40;

const countWords = definePluginTool({
  name: "count_words",
  description: "Counts the words, lines and characters of a text.",
  inputSchema: z.object({ text: z.string().describe("the text to count") }),
  risk: "read",
  kind: "think",
  execute({ text }) {
    const words = text.split(/\s+/).filter((word) => word !== "").length;
    const lines = text === "" ? 0 : text.split("\n").length;
    return `${words} words, ${lines} lines, ${[...text].length} characters`;
  },
});

export default definePlugin({
  hooks: {
    beforeTool({ call }) {
      if (call.tool !== "run") return;
      const command = (call.input as { command?: unknown } | null)?.command;
      if (typeof command !== "string") return;
      const refused = REFUSED_COMMANDS.find((rule) => rule.pattern.test(command));
      if (refused) return { block: refused.why };
    },
    shouldStop({ step }) {
      return step >= MAX_STEPS;
    },
  },
  tools: [countWords],
});
