import { afterEach, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import type { McpStdioServer } from "../config/schema.ts";
import { MAX_PAGES, paginate, ServerConnection } from "./connection.ts";

describe("paginate", () => {
  /** A lister whose pages come from `pages` (cursor → page), recording the cursors asked for. */
  function lister(pages: (cursor: string | undefined) => { items: number[]; nextCursor?: unknown }) {
    const asked: Array<string | undefined> = [];
    const page = async (cursor: string | undefined) => {
      asked.push(cursor);
      return pages(cursor) as { items: number[]; nextCursor?: string };
    };
    return { page, asked };
  }

  test("follows cursors to the end", async () => {
    const { page, asked } = lister((cursor) => (cursor === undefined ? { items: [1, 2], nextCursor: "p2" } : { items: [3] }));
    expect(await paginate(page, 100, "tools")).toEqual({ items: [1, 2, 3] });
    expect(asked).toEqual([undefined, "p2"]);
  });

  test(`stops after ${MAX_PAGES} pages of a server that never stops paging`, async () => {
    let n = 0;
    const { page, asked } = lister(() => ({ items: [n], nextCursor: `c${++n}` }));
    const listing = await paginate(page, 1000, "resources");
    expect(asked).toHaveLength(MAX_PAGES);
    expect(listing.items).toHaveLength(MAX_PAGES);
    expect(listing.notice).toBe(`resources: stopped after ${MAX_PAGES} pages`);
  });

  test("a cursor seen before ends the listing at once (a cycle a → b → a)", async () => {
    const { page, asked } = lister((cursor) => (cursor === "b" ? { items: [2], nextCursor: "a" } : cursor === "a" ? { items: [3], nextCursor: "b" } : { items: [1], nextCursor: "a" }));
    const listing = await paginate(page, 1000, "resources");
    expect(asked).toEqual([undefined, "a", "b"]);
    expect(listing).toEqual({ items: [1, 3, 2], notice: "resources: the server repeated a page cursor; listing stopped" });
  });

  test("a page whose cursor is its own stops after that page", async () => {
    const { page, asked } = lister(() => ({ items: [1], nextCursor: "same" }));
    expect((await paginate(page, 1000, "prompts")).notice).toBe("prompts: the server repeated a page cursor; listing stopped");
    expect(asked).toEqual([undefined, "same"]);
  });

  test("a cursor that is not a string stops the listing", async () => {
    const { page, asked } = lister(() => ({ items: [1], nextCursor: 42 }));
    expect(await paginate(page, 1000, "tools")).toEqual({ items: [1], notice: "tools: the server repeated a page cursor; listing stopped" });
    expect(asked).toEqual([undefined]);
  });

  test("keeps at most maxItems, asking for no page beyond them", async () => {
    const { page, asked } = lister((cursor) => ({ items: [1, 2, 3], nextCursor: `${cursor ?? ""}x` }));
    expect(await paginate(page, 5, "tools")).toEqual({ items: [1, 2, 3, 1, 2], notice: "tools: only the first 5 are used" });
    expect(asked).toHaveLength(2);
  });
});

describe("ServerConnection (stdio, the fixture server)", () => {
  // Not imported: a path to the fixture server that the e2e tests also use.
  const fixture = resolve(import.meta.dir, "../../test/fixtures/mcp/fixture-server.mjs");
  const open: ServerConnection[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((connection) => connection.close()));
  });
  function connection(id: string, env: Record<string, string>, startupTimeoutMs?: number) {
    const server: McpStdioServer = { type: "stdio", command: "node", args: [fixture], cwd: import.meta.dir, env, enabled: true };
    const made = new ServerConnection({ id, server, env: { PATH: process.env.PATH, HOME: process.env.HOME }, log: () => {}, interactive: false, ...(startupTimeoutMs ? { startupTimeoutMs } : {}) });
    open.push(made);
    return made;
  }

  test("connects and lists the server's tools", async () => {
    const fx = connection("fx", {});
    await fx.connect();
    expect(fx.state).toBe("connected");
    expect(fx.tools.map((tool) => tool.name)).toContain("create-issue");
    const answer = await fx.callTool("create-issue", { title: "unit" }, { signal: AbortSignal.timeout(10_000), timeoutMs: 10_000 });
    expect(answer.content).toEqual([{ type: "text", text: "created issue: unit" }]);
  }, 20_000);

  test("a server slower than the startup bound fails with the bound as the reason (it closed nothing)", async () => {
    const slow = connection("slow", { FIXTURE_SLOW_START_MS: "10000" }, 300);
    await slow.connect(); // settles, never rejects
    expect(slow.state).toBe("failed");
    expect(slow.problem).toBe('MCP server "slow" did not answer initialize within 300 ms');
    await expect(slow.ready()).rejects.toThrow('MCP server "slow" is unavailable');
  }, 20_000);

  test("a call to a server that exits mid-call fails naming the server and why; the next call starts it again", async () => {
    const fx = connection("fx", {});
    await fx.connect();
    const options = { signal: AbortSignal.timeout(15_000), timeoutMs: 15_000 };
    await expect(fx.callTool("die", {}, options)).rejects.toThrow(/^MCP server "fx" went away during the call: the server exited with code 3; its stderr ended with: fixture: dying on purpose/);
    expect(fx.state).toBe("failed");
    const again = await fx.callTool("create-issue", { title: "again" }, options);
    expect(again.content).toEqual([{ type: "text", text: "created issue: again" }]);
    expect(fx.state).toBe("connected");
  }, 20_000);

  test("a closed connection stays closed", async () => {
    const fx = connection("fx", {});
    await fx.connect();
    await fx.close();
    await expect(fx.ready()).rejects.toThrow('MCP server "fx" was closed');
  }, 20_000);
});
