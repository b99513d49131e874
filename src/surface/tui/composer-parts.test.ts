import { describe, expect, test } from "bun:test";
import { COMMANDS, completeCommand, findCommand, helpLines, KEYS, parseCommandLine } from "./commands.ts";
import { emptyHistory, newer, older, remember } from "./history.ts";
import { editQueued, emptyQueue, enqueue, MAX_QUEUED, moveQueued, removeQueued } from "./queue.ts";

describe("command registry", () => {
  test("parses command lines; aliases resolve; plain text and paths are not commands", () => {
    expect(parseCommandLine("/model fast")).toEqual({ name: "model", argument: "fast", known: true });
    expect(parseCommandLine("  /exit ")).toEqual({ name: "quit", argument: "", known: true });
    expect(parseCommandLine("/nope x")).toEqual({ name: "nope", argument: "x", known: false });
    expect(parseCommandLine("/usr/bin/env is odd")).toBeUndefined();
    expect(parseCommandLine("fix /model")).toBeUndefined();
    expect(findCommand("exit")?.name).toBe("quit");
  });

  test("completion: prefix matches first, then names that contain the word", () => {
    expect(completeCommand("/m").map((c) => c.name)).toEqual(["model", "compact"]); // starts with, then contains
    const e = completeCommand("/e");
    expect(e[0]!.name).toBe("quit"); // its alias /exit starts with e
    expect(e.every((c) => [c.name, ...(c.aliases ?? [])].some((n) => n.includes("e")))).toBe(true);
    expect(completeCommand("/").length).toBe(COMMANDS.length);
    expect(completeCommand("/zzz")).toEqual([]);
  });

  test("help lists every command and key", () => {
    const help = helpLines().join("\n");
    for (const command of COMMANDS) expect(help).toContain(`/${command.name}`);
    for (const key of KEYS) expect(help).toContain(key.keys);
    expect(help).toContain("(also /exit)");
  });
});

describe("composer history", () => {
  test("Up goes back, Down comes forward to the draft; repeats are kept once", () => {
    const history = emptyHistory();
    remember(history, "one");
    remember(history, "two");
    remember(history, "two");
    remember(history, "  ");
    expect(history.sent).toEqual(["one", "two"]);
    expect(older(history, "draft")).toBe("two");
    expect(older(history, "two")).toBe("one");
    expect(older(history, "one")).toBeUndefined();
    expect(newer(history)).toBe("two");
    expect(newer(history)).toBe("draft");
    expect(newer(history)).toBeUndefined();
  });
});

describe("message queue", () => {
  test("FIFO, bounded, with delete, edit and reorder", () => {
    const queue = emptyQueue();
    for (let i = 0; i < MAX_QUEUED; i++) expect(enqueue(queue, `m${i}`)).toBe(true);
    expect(enqueue(queue, "one too many")).toBe(false);
    expect(queue.items).toHaveLength(MAX_QUEUED);
    const [first, second, third] = queue.items;
    moveQueued(queue, third!.id, -1);
    expect(queue.items.slice(0, 3).map((m) => m.text)).toEqual(["m0", "m2", "m1"]);
    moveQueued(queue, first!.id, -1); // already first: stays
    expect(queue.items[0]!.text).toBe("m0");
    editQueued(queue, second!.id, "m1 edited");
    expect(removeQueued(queue, first!.id)?.text).toBe("m0");
    expect(queue.items.slice(0, 2).map((m) => m.text)).toEqual(["m2", "m1 edited"]);
  });
});
