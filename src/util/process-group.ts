/**
 * Process groups: a child started with `detached: true` leads its own session and group, so one
 * signal to the group reaches everything it started (the `run` tool's commands, MCP stdio servers).
 */
import { readdirSync, readFileSync } from "node:fs";

const GROUP_POLL_MS = 20;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sends a signal to a process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while a process of the group is alive. A zombie (exited, not yet reaped by an init that is
 * slow to reap) still answers a signal, so on Linux /proc is asked whether a live member remains.
 */
export function groupIsAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true; // no /proc (macOS): trust the signal check
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat = "";
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {} // exited meanwhile
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // after "(comm)": state ppid pgrp
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/** SIGTERM to the group, up to `graceMs` for it to go, then SIGKILL. */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await sleep(GROUP_POLL_MS);
    if (!groupIsAlive(pgid)) return;
  }
  signalGroup(pgid, "SIGKILL");
}

