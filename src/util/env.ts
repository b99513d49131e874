/** The process environment as an explicit value, passed down instead of read deep inside modules. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Reads `ZERO_CLI_<name>`, falling back to the deprecated `DEVOUT_<name>`. */
export function zeroEnv(env: Env, name: string): string | undefined {
  const value = env[`ZERO_CLI_${name}`];
  if (value !== undefined && value !== "") return value;
  const legacy = env[`DEVOUT_${name}`];
  return legacy === undefined || legacy === "" ? undefined : legacy;
}
