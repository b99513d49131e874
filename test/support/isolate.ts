// Preloaded by `bun test` (bunfig.toml). Every test process gets a private HOME
// and XDG dirs and no provider keys, so no test can read a real config or key.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const home = mkdtempSync(join(tmpdir(), "zero-test-home-"));
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, ".config");
process.env.XDG_STATE_HOME = join(home, ".local/state");
process.env.XDG_CACHE_HOME = join(home, ".cache");
for (const name of Object.keys(process.env)) {
  if (
    /(_API_KEY|_TOKEN|_SECRET)$/.test(name) ||
    name.startsWith("ZERO_CLI_") ||
    name.startsWith("DEVOUT_") ||
    /^(https?|all|no)_proxy$/i.test(name) ||
    name === "VERCEL_OIDC_TOKEN"
  ) {
    delete process.env[name];
  }
}
