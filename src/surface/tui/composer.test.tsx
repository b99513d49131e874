import { describe, expect, test } from "bun:test";
import { applyChoice, matchFiles, mentionedFiles, menuFor, menuWindow, wants } from "./composer-menu.ts";
import type { PendingApproval } from "../../session/service.ts";
import { enqueue } from "./queue.ts";
import { addUserTurn } from "./timeline.ts";
import { escape, mount, setup } from "./view-test-support.tsx";

const FILES = ["README.md", "docs/my notes.md", "src/app.ts", "src/composer.tsx"];
const SKILLS = [
  { id: "release-notes", description: "write the release notes" },
  { id: "pdf", description: "read PDFs" },
];
const SOURCES = { files: FILES, skills: SKILLS };

describe("composer menus (pure)", () => {
  test("/ at the start offers commands; @ at a word start offers files; elsewhere nothing", () => {
    expect(menuFor("/mo", 3, SOURCES)?.items.map((item) => item.label)).toEqual(["/model"]);
    expect(menuFor("say /mo", 7, SOURCES)).toBeUndefined();
    expect(menuFor("/model fast", 11, SOURCES)).toBeUndefined();
    const files = menuFor("look at @comp", 13, SOURCES)!;
    expect(files.kind).toBe("file");
    expect(files.items[0]!.label).toBe("src/composer.tsx");
    expect(menuFor("mail me@comp", 12, SOURCES)).toBeUndefined(); // an address, not a mention
    expect(menuFor("look at @comp", 13, {})).toBeUndefined(); // not listed yet
    const skills = menuFor("use $rel", 8, SOURCES)!;
    expect(skills.kind).toBe("skill");
    expect(skills.items).toEqual([{ label: "$release-notes", detail: "write the release notes", insert: "$release-notes" }]);
    expect(menuFor("costs $5", 8, { files: FILES })).toBeUndefined(); // no skills listed: no menu
    expect(menuFor("costs $", 7, SOURCES)).toBeUndefined(); // a lone $ is prose: Enter sends
    expect(wants("see @sr", 7)).toBe("files");
    expect(wants("use $p", 6)).toBe("skills");
    expect(wants("plain", 5)).toBeUndefined();
  });

  test("a choice replaces the word, quotes spaces and leaves one space after it", () => {
    const menu = menuFor("see @no and", 7, SOURCES)!;
    expect(applyChoice("see @no and", menu, menu.items[0]!)).toEqual({ text: 'see @"docs/my notes.md" and', cursor: 24 }); // after the space that was there
    const command = menuFor("/he", 3, SOURCES)!;
    expect(applyChoice("/he", command, command.items[0]!)).toEqual({ text: "/help ", cursor: 6 });
  });

  test("mentioned files are the listed ones only; the window follows the selection", () => {
    expect(mentionedFiles('fix @src/app.ts and @"docs/my notes.md", not @nope.ts', FILES)).toEqual(["src/app.ts", "docs/my notes.md"]);
    expect(menuWindow(20, 0)).toEqual({ from: 0, to: 8 });
    expect(menuWindow(20, 12)).toEqual({ from: 5, to: 13 });
    expect(menuWindow(3, 2)).toEqual({ from: 0, to: 3 });
    expect(matchFiles(FILES, "cmp")).toEqual(["src/composer.tsx"]); // letters in order
  });

  test("the file ranking picks the same best 50 as sorting every match would, on 5,000 random paths", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const word = () => Array.from({ length: 2 + Math.floor(next() * 6) }, () => "abcdefgh"[Math.floor(next() * 8)]).join("");
    const files = Array.from({ length: 5000 }, () => Array.from({ length: 1 + Math.floor(next() * 3) }, word).join("/"));
    for (const query of ["a", "bc", "ab/c", "hg"]) {
      const q = query.toLowerCase();
      const rank = (path: string) => {
        const name = path.slice(path.lastIndexOf("/") + 1);
        return name.startsWith(q) ? 0 : name.includes(q) ? 1 : path.includes(q) ? 2 : -1; // the in-order kind is left out
      };
      const expected = files
        .filter((path) => rank(path) >= 0)
        .sort((a, b) => rank(a) - rank(b) || a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, 50);
      const got = matchFiles(files, query);
      // Where the first three kinds fill the 50, both must agree exactly.
      if (expected.length === 50) expect(got).toEqual(expected);
      else expect(got.slice(0, expected.length)).toEqual(expected);
    }
  });
});

describe("composer and popups (rendered)", () => {
  test("/ opens the command menu; Down and Enter run the selected command", async () => {
    const { calls } = await mount();
    await setup!.mockInput.typeText("/m");
    let frame = await setup!.waitForFrame((f) => f.includes("/compact"));
    expect(frame).toContain("› /model");
    setup!.mockInput.pressArrow("down");
    frame = await setup!.waitForFrame((f) => f.includes("› /compact"));
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => calls.length === 1);
    expect(calls).toEqual(["submit:/compact "]);
  });

  test("@ lists files; Tab inserts the quoted mention; the attachment shows above the composer; Esc closes the menu without cancelling", async () => {
    const { calls } = await mount((s) => void (s.started = true), 100, 30, FILES);
    await setup!.mockInput.typeText("read @not");
    let frame = await setup!.waitForFrame((f) => f.includes("docs/my notes.md"));
    expect(frame).toContain("1 match");
    setup!.mockInput.pressTab();
    frame = await setup!.waitForFrame((f) => f.includes('read @"docs/my notes.md"'));
    expect(frame).toContain("📎 docs/my notes.md");
    await setup!.mockInput.typeText("@src");
    await setup!.waitForFrame((f) => f.includes("src/app.ts"));
    await escape();
    frame = await setup!.waitForFrame((f) => !f.includes("src/composer.tsx"));
    expect(calls).toEqual([]); // Esc closed the menu; it did not cancel a run
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => calls.length === 1);
    expect(calls[0]).toBe('submit:read @"docs/my notes.md" @src');
  });

  test("a large bracketed paste lands whole in the composer (newlines kept, nothing sent) and Enter sends it", async () => {
    const { calls } = await mount((s) => void (s.started = true));
    const pasted = Array.from({ length: 2000 }, (_, i) => `line ${i} of a pasted log`).join("\n");
    await setup!.mockInput.pasteBracketedText(pasted);
    await setup!.waitForFrame((f) => f.includes("line 1999 of a pasted log"));
    expect(calls).toEqual([]);
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => calls.length === 1);
    expect(calls[0]).toBe(`submit:${pasted}`);
  });

  test("$ lists the root agent's skills; Enter inserts the mention", async () => {
    const { calls } = await mount((s) => void (s.started = true));
    await setup!.mockInput.typeText("use $rel");
    await setup!.waitForFrame((f) => f.includes("$release-notes  write the release notes"));
    setup!.mockInput.pressEnter();
    await setup!.waitForFrame((f) => f.includes("use $release-notes") && !f.includes("write the release notes"));
    expect(calls).toEqual([]); // a skill is inserted, not sent
  });

  test("with a picker open, letters filter it and never answer a waiting approval; Esc closes the picker, then Y answers", async () => {
    const pending = { sessionId: "s-1", callId: "c1", tool: "run", risk: "execute", operation: "execute", reason: "runs", input: { command: "ls" }, target: "ls" } as unknown as PendingApproval;
    const { update, calls } = await mount((s) => {
      s.started = true;
      s.running = true;
      s.approvals.push(pending);
      s.popup = { kind: "picker", command: "model", options: ["auto", "fast"], current: "auto" };
    });
    await setup!.waitForFrame((f) => f.includes("openai/gpt-x"));
    await setup!.mockInput.typeText("a");
    await setup!.waitForFrame((f) => f.includes("filter: a"));
    expect(calls).toEqual([]);
    await escape();
    setup!.mockInput.pressKey("y");
    await setup!.waitFor(() => calls.length === 1);
    expect(calls).toEqual(["answer:once"]);
    void update;
  });

  test("the /model picker is grouped by provider and filtered by typing; Enter chooses", async () => {
    const { update, calls } = await mount((s) => void (s.started = true));
    update((s) => void (s.popup = { kind: "picker", command: "model", options: ["auto", "fast"], current: "auto" }));
    let frame = await setup!.waitForFrame((f) => f.includes("openai/gpt-x"));
    expect(frame).toContain("› auto");
    await setup!.mockInput.typeText("gpt");
    frame = await setup!.waitForFrame((f) => f.includes("filter: gpt"));
    expect(frame).not.toContain(" auto");
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => calls.length === 1);
    expect(calls).toEqual(["choose:model=fast"]);
  });

  test("/queue: select, expand, reorder with Ctrl-Down, delete with D, edit with E (Enter puts it back in its place)", async () => {
    const { update, state, calls } = await mount((s) => {
      s.started = true;
      s.running = true;
      enqueue(s.queue, "first queued\nwith a second line");
      enqueue(s.queue, "second queued");
      enqueue(s.queue, "third queued");
      s.popup = { kind: "queue" };
    });
    let frame = await setup!.waitForFrame((f) => f.includes("/queue (3)"));
    expect(frame).toContain("› 1. first queued …");
    setup!.mockInput.pressEnter();
    frame = await setup!.waitForFrame((f) => f.includes("with a second line"));
    setup!.mockInput.pressArrow("down", { ctrl: true });
    await setup!.waitFor(() => state.queue.items[1]?.text.startsWith("first") === true);
    setup!.mockInput.pressKey("d");
    await setup!.waitFor(() => state.queue.items.length === 2);
    expect(state.queue.items.map((item) => item.text)).toEqual(["second queued", "third queued"]);
    setup!.mockInput.pressArrow("up");
    setup!.mockInput.pressKey("e");
    frame = await setup!.waitForFrame((f) => f.includes("editing a queued message"));
    expect(state.popup).toBeUndefined();
    await setup!.mockInput.typeText(" (edited)");
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => state.editing === undefined);
    expect(calls).toContain("submit:second queued (edited)");
    expect(state.queue.items.map((item) => item.text)).toEqual(["second queued (edited)", "third queued"]);
    void update;
  });

  test("a text popup (/skills) draws file text cleaned: an escape sequence in a SKILL.md never reaches the terminal", async () => {
    const { update } = await mount((s) => void (s.started = true));
    update((s) => void (s.popup = { kind: "text", title: "$release-notes", lines: ["\u001b]0;evil-title\u0007visible instructions"] }));
    const frame = await setup!.waitForFrame((f) => f.includes("visible instructions"));
    expect(frame).toContain("$release-notes");
    expect(frame).not.toContain("evil-title");
  });

  test("Enter in the help popup does not send; Ctrl-L clears through the command (not the history)", async () => {
    const { update, calls } = await mount((s) => void (s.started = true));
    await setup!.mockInput.typeText("draft");
    update((s) => void (s.popup = { kind: "help", lines: ["Commands"] }));
    await setup!.waitForFrame((f) => f.includes("Esc closes"));
    setup!.mockInput.pressEnter();
    await Bun.sleep(50);
    expect(calls).toEqual([]);
    await escape();
    setup!.mockInput.pressKey("l", { ctrl: true });
    await setup!.waitFor(() => calls.length === 1);
    expect(calls).toEqual(["command:clear"]);
  });

  test("the start screen's controls open their pickers when clicked", async () => {
    const { calls } = await mount();
    const frame = setup!.captureCharFrame();
    const lines = frame.split("\n");
    const y = lines.findIndex((line) => line.includes("reasoning default"));
    expect(y).toBeGreaterThan(0);
    await setup!.mockMouse.click(lines[y]!.indexOf("reasoning default") + 2, y);
    await setup!.waitFor(() => calls.length === 1);
    expect(calls).toEqual(["command:reasoning"]);
  });

  test("Ctrl-Up / Ctrl-Down jump between prompts; the wheel scrolls; scrolled up, the view stays put", async () => {
    const { update } = await mount((s) => {
      s.started = true;
      for (let i = 0; i < 40; i++) {
        addUserTurn(s.timeline, `prompt number ${i}`);
        s.timeline.entries.push({ kind: "notice", id: `n-${i}`, text: `line ${i}` });
      }
    }, 80, 20);
    await setup!.waitForFrame((f) => f.includes("prompt number 39"));
    const topPrompt = (frame: string) => Number(/prompt number (\d+)/.exec(frame.split("\n").find((line) => line.includes("prompt number")) ?? "")?.[1]);
    setup!.mockInput.pressArrow("up", { ctrl: true });
    await Bun.sleep(200);
    await setup!.waitForFrame((f) => !f.includes("prompt number 39"));
    const first = topPrompt(setup!.captureCharFrame());
    expect(first).toBeLessThan(39);
    setup!.mockInput.pressArrow("up", { ctrl: true });
    await Bun.sleep(60); // an escape sequence's key is parsed after a pause
    await setup!.waitForFrame((f) => topPrompt(f) === first - 1);
    setup!.mockInput.pressArrow("down", { ctrl: true });
    await Bun.sleep(60);
    await setup!.waitForFrame((f) => topPrompt(f) === first);
    // The wheel scrolls too; scrolled up, new entries do not pull the view down; back at the bottom it follows.
    for (let i = 0; i < 6; i++) await setup!.mockMouse.scroll(10, 5, "up");
    await setup!.waitForFrame((f) => topPrompt(f) < first);
    const scrolled = topPrompt(setup!.captureCharFrame());
    update((s) => void addUserTurn(s.timeline, "a brand new prompt"));
    await setup!.renderOnce();
    expect(topPrompt(setup!.captureCharFrame())).toBe(scrolled);
    for (let i = 0; i < 40; i++) await setup!.mockMouse.scroll(10, 5, "down");
    await setup!.waitForFrame((f) => f.includes("a brand new prompt"));
  });
});
