import { describe, expect, test } from "bun:test";
import type { PendingApproval } from "../../session/service.ts";
import { remember } from "./history.ts";
import { enqueue } from "./queue.ts";
import { addUserTurn, applyEvent } from "./timeline.ts";
import { escape, event, mount, setup } from "./view-test-support.tsx";

describe("TUI view", () => {
  test("start screen: composer, controls and the ⚙ footer; Enter submits and clears; the timeline replaces the start screen", async () => {
    const { calls } = await mount();
    let frame = setup!.captureCharFrame();
    expect(frame).toContain("a multi-agent coding agent");
    expect(frame).toContain("fast · ");
    expect(frame).toContain("reasoning default · speed default");
    expect(frame).toContain("⚙");
    await setup!.mockInput.typeText("hello world");
    setup!.mockInput.pressEnter();
    frame = await setup!.waitForFrame((f) => f.includes("› hello world"));
    expect(calls).toEqual(["submit:hello world"]);
    expect(frame).not.toContain("a multi-agent coding agent");
    expect(frame).toContain("Ask zero to do something"); // placeholder back: composer cleared
  });

  test("Ctrl-J inserts a newline instead of sending; Up at the first line recalls history", async () => {
    const { calls } = await mount((s) => remember(s.history, "earlier message"));
    await setup!.mockInput.typeText("line one");
    setup!.mockInput.pressKey("j", { ctrl: true });
    await setup!.mockInput.typeText("line two");
    await setup!.waitForFrame((f) => f.includes("line two"));
    expect(calls).toEqual([]);
    setup!.mockInput.pressEnter();
    await setup!.waitFor(() => calls.length === 1);
    expect(calls[0]).toBe("submit:line one\nline two");
    setup!.mockInput.pressArrow("up");
    const frame = await setup!.waitForFrame((f) => f.includes("earlier message"));
    expect(frame).toContain("earlier message");
  });

  test("approval prompt: the exact command and cwd; A answers 'always' and is not typed into the composer", async () => {
    const pending = { sessionId: "s-1", callId: "c1", tool: "run", risk: "execute", operation: "execute", reason: "runs a command", input: { command: "rm -rf build" }, target: "rm -rf build" } as unknown as PendingApproval;
    const { calls } = await mount((s) => {
      s.started = true;
      s.running = true;
      s.approvals.push(pending);
    });
    let frame = await setup!.waitForFrame((f) => f.includes("$ rm -rf build"));
    expect(frame).toContain("run wants to execute");
    expect(frame).toContain("in /work/ws");
    expect(frame).toContain("[A] allow for this session");
    setup!.mockInput.pressKey("a");
    await setup!.waitFor(() => calls.length > 0);
    expect(calls).toEqual(["answer:always"]);
    frame = await setup!.waitForFrame((f) => !f.includes("[A] allow"));
    expect(frame).not.toMatch(/│\s*a\s/);
  });

  test("N and Esc deny; Y allows once", async () => {
    const pending = (id: string) => ({ sessionId: "s-1", callId: id, tool: "write", risk: "write", operation: "write", reason: "edit", input: {}, target: "a.ts" }) as unknown as PendingApproval;
    const { calls } = await mount((s) => {
      s.started = true;
      s.approvals.push(pending("1"), pending("2"), pending("3"));
    });
    setup!.mockInput.pressKey("y");
    setup!.mockInput.pressKey("n");
    await escape();
    await setup!.waitFor(() => calls.length === 3);
    expect(calls).toEqual(["answer:once", "answer:deny", "answer:deny"]);
  });

  test("queued messages: the count in the status line and the next one above the composer; a click opens /queue", async () => {
    const { calls } = await mount((s) => {
      s.started = true;
      s.running = true;
      enqueue(s.queue, "second task");
      enqueue(s.queue, "third task");
    });
    const frame = await setup!.waitForFrame((f) => f.includes("2 queued"));
    expect(frame).toContain("2 queued · next: second task");
    expect(frame).toMatch(/speed default · 2 queued/);
    // A click on the queue line opens the editor.
    const lines = frame.split("\n");
    const y = lines.findIndex((line) => line.includes("2 queued · next"));
    await setup!.mockMouse.click(lines[y]!.indexOf("2 queued") + 1, y);
    await setup!.waitFor(() => calls.includes("command:queue"));
  });

  test("a finished run collapses under 'Worked for …'; Ctrl-O expands and collapses it; the final answer stays", async () => {
    const { update } = await mount((s) => {
      s.started = true;
      addUserTurn(s.timeline, "task");
      const now = 1_000_000;
      for (const e of [
        event("r1", { type: "run.started", agent: "build", model: { alias: "fast" }, parentRunId: null, rootRunId: "r1" }),
        event("r1", { type: "tool.requested", step: 1, callId: "c1", tool: "run", input: { command: "ls -la" }, risk: "execute", operation: "execute", target: "ls -la" }),
        event("r1", { type: "tool.completed", callId: "c1", tool: "run", status: "completed", output: "a\nb", truncated: false, durationMs: 3 }),
        event("r1", { type: "message.delta", step: 2, text: "The final answer." }),
        event("r1", { type: "run.completed", status: "completed", reason: "completed", exitCode: 0, text: "", usage: {}, steps: 2, toolCalls: 1, durationMs: 65_000 }),
      ])
        applyEvent(s.timeline, e, now);
    });
    let frame = await setup!.waitForFrame((f) => f.includes("Worked for"));
    expect(frame).toContain("▸ Worked for 1m 05s · 1 step");
    expect(frame).toContain("The final answer.");
    expect(frame).toContain("build · fast"); // the agent/model footer under the final answer
    expect(frame).not.toContain("run $ ls -la");
    setup!.mockInput.pressKey("o", { ctrl: true });
    frame = await setup!.waitForFrame((f) => f.includes("run $ ls -la"));
    expect(frame).toContain("▾ Worked for");
    expect(frame).toContain("⎿ completed · 0s · a (+1 lines)");
    setup!.mockInput.pressKey("o", { ctrl: true });
    frame = await setup!.waitForFrame((f) => !f.includes("run $ ls -la"));
    expect(frame).toContain("▸ Worked for");
    void update;
  });

  test("a streaming run: text grows in place, the tool row shows its status, 'Working for' while active; Esc cancels", async () => {
    const { update, calls } = await mount((s) => {
      s.started = true;
      s.running = true;
      addUserTurn(s.timeline, "task");
      applyEvent(s.timeline, event("r2", { type: "run.started", agent: "build", model: { alias: "fast" }, parentRunId: null, rootRunId: "r2" }));
      applyEvent(s.timeline, event("r2", { type: "message.delta", step: 1, text: "Hel" }));
    });
    await setup!.waitForFrame((f) => f.includes("Working for"));
    update((s) => {
      applyEvent(s.timeline, event("r2", { type: "message.delta", step: 1, text: "lo there" }));
      applyEvent(s.timeline, event("r2", { type: "tool.requested", step: 1, callId: "c9", tool: "read", input: { path: "src/a.ts" }, risk: "read", operation: "read", target: "src/a.ts" }));
      applyEvent(s.timeline, event("r2", { type: "tool.started", callId: "c9", tool: "read" }));
    });
    const frame = await setup!.waitForFrame((f) => f.includes("read src/a.ts"));
    expect(frame).toContain("Hello there");
    expect(frame).toContain("⎿ running…");
    await escape();
    await setup!.waitFor(() => calls.includes("cancel"));
  });

  test("Ctrl-C clears the composer; a second press within a second exits", async () => {
    const { exits } = await mount();
    await setup!.mockInput.typeText("draft text");
    await setup!.waitForFrame((f) => f.includes("draft text"));
    setup!.mockInput.pressCtrlC();
    const frame = await setup!.waitForFrame((f) => f.includes("press Ctrl-C again to quit"));
    expect(frame).not.toContain("draft text");
    expect(exits()).toBe(0);
    setup!.mockInput.pressCtrlC();
    await setup!.waitFor(() => exits() === 1);
  });

  test("/help popup lists the commands; Esc closes it", async () => {
    const { update } = await mount((s) => void (s.started = true));
    update((s) => void (s.popup = { kind: "help", lines: ["Commands", "  /model   choose the model"] }));
    await setup!.waitForFrame((f) => f.includes("/model   choose the model"));
    await escape();
    await setup!.waitForFrame((f) => !f.includes("/model   choose"));
  });
});
