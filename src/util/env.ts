/** The process environment as an explicit value, passed down instead of read deep inside modules. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads `ZERO_CLI_<name>`, falling back to the deprecated `DEVOUT_<name>` only
 * when the new name is not set at all: `ZERO_CLI_X=` deliberately clears a
 * stale `DEVOUT_X`. An empty value counts as unset.
 */
export function zeroEnv(env: Env, name: string): string | undefined {
  const value = env[`ZERO_CLI_${name}`] ?? env[`DEVOUT_${name}`];
  return value === undefined || value === "" ? undefined : value;
}
