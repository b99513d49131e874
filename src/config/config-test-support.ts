import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Env } from "../util/env.ts";
import { ConfigError } from "./errors.ts";

/** Shared by the configuration tests: temp roots with their own HOME, and the ConfigError a load throws. */

const roots: string[] = [];
/** Each test file registers this as its afterEach. */
export function removeConfigSandboxes(): void {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** A temp root with its own HOME and a workspace; nothing reads the real home directory. */
export function configSandbox(extraEnv: Env = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "zero-config-")));
  roots.push(root);
  const home = join(root, "home");
  const ws = join(root, "ws");
  mkdirSync(home);
  mkdirSync(ws);
  const env: Env = { HOME: home, ...extraEnv };
  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  const userPath = join(home, ".config", "zero-cli", "config.jsonc");
  const userFile = (text: string) => write(userPath, text);
  return { root, home, ws, env, write, userPath, userFile };
}

export function loadError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}
