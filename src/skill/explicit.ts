/**
 * The `skills` map as the two explicit levels of discovery: the entries of the user file
 * ("user-config") and those of the project file or ZERO_CLI_CONFIG ("project-config"), each with
 * a way to fail at the file:line of its path. The loaded configuration keeps only the merged
 * values, so the applied files are read again and merged the same way: up to the user file for
 * the user level, all of them for the project level (an entry there merges over the user's, field
 * by field, exactly as the configuration does).
 */
import { ConfigError } from "../config/errors.ts";
import { errorAt } from "../config/finalize.ts";
import { defaultsLayer, readConfigLayer, type ConfigLayer } from "../config/layer.ts";
import type { LoadedConfig } from "../config/load.ts";
import { mergeLayers, type Origins } from "../config/merge.ts";
import type { Env } from "../util/env.ts";
import type { ExplicitSkill } from "./discover.ts";

export function explicitSkills(loaded: LoadedConfig, env: Env): ExplicitSkill[] {
  const skills = loaded.config.skills;
  if (Object.keys(skills).length === 0) return [];
  const layers: ConfigLayer[] = [defaultsLayer(env), ...loaded.sources.map((source) => readConfigLayer(source.file, source.layer)!)];
  const userEnd = layers.findLastIndex((layer) => layer.source === "user") + 1 || 1;
  const full = mergeLayers(layers);
  const user = mergeLayers(layers.slice(0, userEnd));
  const out: ExplicitSkill[] = [];
  for (const [id, { path, enabled }] of Object.entries(skills)) {
    const again = full.merged.skills[id];
    if ((again?.path ?? "") !== path || (again?.enabled ?? true) !== enabled) {
      throw new ConfigError(`skills.${id}: the configuration changed while zero was reading it; run the command again`);
    }
    const fail = (upTo: readonly ConfigLayer[], origins: Origins) => (problem: string): never => {
      throw errorAt(upTo, origins, ["skills", id, "path"], problem);
    };
    const mine = user.merged.skills[id];
    // A user entry without a path is only complete with a higher layer's: it stands alone when disabled.
    if (mine !== undefined && (mine.path !== undefined || mine.enabled === false)) {
      out.push({ id, path: mine.path ?? "", enabled: mine.enabled ?? true, provenance: "user-config", fail: fail(layers.slice(0, userEnd), user.origins) });
    }
    if ((full.origins.find(["skills", id]) ?? 0) >= userEnd) {
      out.push({ id, path, enabled, provenance: "project-config", fail: fail(layers, full.origins) });
    }
  }
  return out;
}
