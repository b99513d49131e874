/**
 * The TUI's slash commands and keys, as one registry: the `/` completion menu, the `/help` popup
 * and the key hints are all drawn from it, so none of them can name a command that does not exist.
 * What a command does is the app's business (`app.ts` maps names to actions); this file only knows
 * names, arguments and words for people.
 */

export type CommandSpec = {
  name: string;
  /** Shown after the name in menus and help: the argument's shape, when it takes one. */
  args?: string;
  description: string;
  /** Other names that run it (`/exit` for `/quit`). */
  aliases?: string[];
};

export const COMMANDS: readonly CommandSpec[] = [
  { name: "model", args: "[alias|auto]", description: "choose the model of the next runs (no argument: a searchable picker); an alias starts a fresh conversation" },
  { name: "reasoning", args: "[effort]", description: "reasoning effort of the next runs: default, low, medium, high, xhigh, max, ultra" },
  { name: "speed", args: "[default|standard|fast]", description: "model speed of the next runs" },
  { name: "depth", args: "[flash|medium|pro|ultra]", description: "work depth of the next runs" },
  { name: "workflow", args: "[name|off]", description: "run the next tasks as a workflow, or off (a fresh conversation)" },
  { name: "skills", args: "[name]", description: "the root agent's skills; with a name, where it comes from and its instructions" },
  { name: "compact", description: "summarize the conversation before the next request, to free context" },
  { name: "queue", description: "messages waiting behind the active run: expand, edit, delete, reorder" },
  { name: "new", description: "start a fresh session" },
  { name: "clear", description: "clear the visible timeline (the conversation stays)" },
  { name: "settings", description: "the settings workspace (coming with the next TUI release)" },
  { name: "help", description: "every command and key" },
  { name: "quit", aliases: ["exit"], description: "close the TUI" },
];

/** Keys, for `/help` and the footer hints. */
export const KEYS: readonly { keys: string; does: string }[] = [
  { keys: "Enter", does: "send (queued while a run is active)" },
  { keys: "Shift-Enter, Alt-Enter, Ctrl-J", does: "new line" },
  { keys: "Up / Down", does: "previous / next sent message (at the first / last line)" },
  { keys: "@path, @\"path with spaces\"", does: "attach a workspace file to the message (@ opens the file menu)" },
  { keys: "$name", does: "have the model load one of the agent's skills ($ opens the skill menu)" },
  { keys: "/name", does: "a command (below; / opens the command menu)" },
  { keys: "Esc", does: "cancel the active run, or close the top popup" },
  { keys: "Ctrl-C", does: "clear the composer; twice within a second: quit" },
  { keys: "Ctrl-L", does: "clear the timeline" },
  { keys: "PageUp / PageDown, wheel", does: "scroll the timeline" },
  { keys: "Ctrl-Up / Ctrl-Down", does: "jump to the previous / next of your prompts (in /queue: move the message)" },
  { keys: "Ctrl-O", does: "expand or collapse the last 'Worked for' row" },
  { keys: "Y / A / N", does: "approval: allow once / allow for the session / deny" },
];

/** The command a name (or alias) stands for. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name || command.aliases?.includes(name));
}

/** `/name rest` as the composer holds it; undefined when the text is not a command line. */
export function parseCommandLine(text: string): { name: string; argument: string; known: boolean } | undefined {
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const name = match[1]!.toLowerCase();
  const spec = findCommand(name);
  return { name: spec?.name ?? name, argument: (match[2] ?? "").trim(), known: spec !== undefined };
}

/** The commands a `/prefix` being typed may complete to, best first (prefix matches, then the rest that contain it). */
export function completeCommand(prefix: string): CommandSpec[] {
  const word = prefix.replace(/^\//, "").toLowerCase();
  const names = (command: CommandSpec) => [command.name, ...(command.aliases ?? [])];
  const starts = COMMANDS.filter((command) => names(command).some((name) => name.startsWith(word)));
  const contains = COMMANDS.filter((command) => !starts.includes(command) && names(command).some((name) => name.includes(word)));
  return [...starts, ...contains];
}

/** The `/help` popup's lines. */
export function helpLines(): string[] {
  const width = Math.max(...COMMANDS.map((command) => `/${command.name}${command.args ? ` ${command.args}` : ""}`.length));
  const keyWidth = Math.max(...KEYS.map((key) => key.keys.length));
  return [
    "Commands",
    ...COMMANDS.map((command) => {
      const left = `/${command.name}${command.args ? ` ${command.args}` : ""}`;
      const aliases = command.aliases?.length ? ` (also ${command.aliases.map((alias) => `/${alias}`).join(", ")})` : "";
      return `  ${left.padEnd(width)}  ${command.description}${aliases}`;
    }),
    "",
    "Keys",
    ...KEYS.map((key) => `  ${key.keys.padEnd(keyWidth)}  ${key.does}`),
  ];
}
