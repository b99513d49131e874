/**
 * The network a run's tools may use: the system resolver and the real public-address rules.
 *
 * Tests need public-looking stand-ins on 127.0.0.1, so one seam exists: ZERO_CLI_TEST_NETWORK
 * (names → addresses, addresses to treat as public, extra trusted CA files) is honored only when
 * ZERO_CLI_TEST_MODE=1 is set as well. It widens nothing an attacker could reach without already
 * controlling zero's environment, and a test shows it is ignored without the mode variable.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { classifyAddress } from "../security/net-address.ts";
import { systemResolve, type Resolve } from "../security/net-target.ts";
import type { NetworkAccess } from "../tool/url-fetch.ts";
import { zeroEnv, type Env } from "../util/env.ts";

const testNetworkSchema = z
  .object({
    hosts: z.record(z.string(), z.array(z.string())).default({}),
    publicAddresses: z.array(z.string()).default([]),
    caFiles: z.array(z.string()).default([]),
  })
  .strict();

export function networkAccessFor(env: Env): NetworkAccess {
  const raw = zeroEnv(env, "TEST_NETWORK");
  if (zeroEnv(env, "TEST_MODE") !== "1" || raw === undefined) return { resolve: systemResolve };
  let parsed: z.infer<typeof testNetworkSchema>;
  try {
    parsed = testNetworkSchema.parse(JSON.parse(raw));
  } catch (error) {
    throw new Error(`ZERO_CLI_TEST_NETWORK is not valid: ${error instanceof Error ? error.message : String(error)}`);
  }
  const hosts = new Map(Object.entries(parsed.hosts));
  const resolve: Resolve = async (hostname) => hosts.get(hostname) ?? systemResolve(hostname);
  const allowed = new Set(parsed.publicAddresses);
  return {
    resolve,
    classify: (address) => (allowed.has(address) ? { public: true } : classifyAddress(address)),
    ...(parsed.caFiles.length > 0 ? { trustedCertificates: parsed.caFiles.map((file) => readFileSync(file, "utf8")) } : {}),
  };
}
