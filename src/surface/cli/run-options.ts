import { resolve } from "node:path";
import { PERMISSION_MODES, REASONING_EFFORTS, SPEEDS, WORK_DEPTHS } from "../../config/schema.ts";
import type { RunOverrides } from "../../session/run.ts";
import { UsageError } from "../../util/errors.ts";
import { enumFlag, listFlag, stringFlag, type Parsed } from "./args.ts";
import { existingDirectory, workspaceFrom } from "./workspace.ts";

/** The options every command that starts a run accepts (`run`, `exec`). */
export const RUN_OPTION_SPECS = {
  model: { type: "string", short: "m" },
  cwd: { type: "string" },
  "add-dir": { type: "string", multiple: true },
  "permission-mode": { type: "string" },
  yes: { type: "boolean", short: "y" },
  "reasoning-effort": { type: "string" },
  speed: { type: "string" },
  depth: { type: "string" },
  attach: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

/** `attach`: `--attach` paths made absolute from the directory zero was started in (as a shell user means them). */
export type RunOptions = { workspace: string; extraDirs: string[]; overrides: RunOverrides; attach: string[] };

/** Validates and canonicalizes the shared run options; mistakes are usage errors naming the flag. */
export function resolveRunOptions(values: Parsed["values"], cwd: string): RunOptions {
  let permissionMode = enumFlag("permission-mode", values["permission-mode"], PERMISSION_MODES);
  if (values.yes) {
    if (permissionMode !== undefined && permissionMode !== "full-access") {
      throw new UsageError(`--yes means --permission-mode full-access; it conflicts with --permission-mode ${permissionMode}`);
    }
    permissionMode = "full-access";
  }
  const reasoningEffort = enumFlag("reasoning-effort", values["reasoning-effort"], REASONING_EFFORTS);
  const speed = enumFlag("speed", values.speed, SPEEDS);
  const depth = enumFlag("depth", values.depth, WORK_DEPTHS);
  const model = stringFlag(values.model);
  return {
    workspace: workspaceFrom(stringFlag(values.cwd), cwd),
    extraDirs: listFlag(values["add-dir"]).map((dir) => existingDirectory("--add-dir", dir, cwd)),
    attach: listFlag(values.attach).map((path) => resolve(cwd, path)),
    overrides: {
      ...(model !== undefined ? { model } : {}),
      ...(permissionMode ? { permissionMode } : {}),
      ...(reasoningEffort ? { reasoningEffort } : {}),
      ...(speed ? { speed } : {}),
      ...(depth ? { depth } : {}),
    },
  };
}
