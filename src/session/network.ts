/**
 * The network a run's tools may use: the system resolver and the real public-address rules.
 *
 * Tests need public-looking stand-ins on 127.0.0.1, so one seam exists: ZERO_CLI_TEST_NETWORK
 * (names → addresses, addresses to treat as public, extra trusted CA files, a stand-in for the
 * Brave Search endpoint) is honored only when
 * ZERO_CLI_TEST_MODE=1 is set as well. It widens nothing an attacker could reach without already
 * controlling zero's environment, and a test shows it is ignored without the mode variable.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { classifyAddress } from "../security/net-address.ts";
import { systemResolve, type Resolve } from "../security/net-target.ts";
import type { WebSearchSettings } from "../config/effective.ts";
import { BRAVE_WEB_SEARCH_ENDPOINT, type WebSearchAccess } from "../tool/search.ts";
import type { NetworkAccess } from "../tool/url-fetch.ts";
import type { Env } from "../util/env.ts";

const testNetworkSchema = z
  .object({
    hosts: z.record(z.string(), z.array(z.string())).default({}),
    publicAddresses: z.array(z.string()).default([]),
    caFiles: z.array(z.string()).default([]),
    braveEndpoint: z.url().optional(),
  })
  .strict();

function testNetwork(env: Env): z.infer<typeof testNetworkSchema> | undefined {
  // Only the exact ZERO_CLI_ names (no deprecated DEVOUT_ fallback): the seam is for our tests alone.
  const raw = env.ZERO_CLI_TEST_NETWORK;
  if (env.ZERO_CLI_TEST_MODE !== "1" || raw === undefined || raw === "") return undefined;
  try {
    return testNetworkSchema.parse(JSON.parse(raw));
  } catch (error) {
    throw new Error(`ZERO_CLI_TEST_NETWORK is not valid: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const BRAVE_KEY_VARIABLE = "BRAVE_SEARCH_API_KEY";

/**
 * The search settings with the key looked up by name (webSearch.apiKeyEnv, then the canonical
 * variable, as for model keys); the endpoint is Brave's own outside tests.
 */
export function webSearchAccessFor(settings: WebSearchSettings, env: Env): WebSearchAccess {
  const apiKey = env[settings.apiKeyEnv] || env[BRAVE_KEY_VARIABLE];
  const { provider: _brave, ...rest } = settings;
  return {
    ...rest,
    endpoint: testNetwork(env)?.braveEndpoint ?? BRAVE_WEB_SEARCH_ENDPOINT,
    ...(apiKey ? { apiKey } : {}),
  };
}

export function networkAccessFor(env: Env): NetworkAccess {
  const parsed = testNetwork(env);
  if (parsed === undefined) return { resolve: systemResolve };
  const hosts = new Map(Object.entries(parsed.hosts));
  const resolve: Resolve = async (hostname) => hosts.get(hostname) ?? systemResolve(hostname);
  const allowed = new Set(parsed.publicAddresses);
  return {
    resolve,
    classify: (address) => (allowed.has(address) ? { public: true } : classifyAddress(address)),
    ...(parsed.caFiles.length > 0 ? { trustedCertificates: parsed.caFiles.map((file) => readFileSync(file, "utf8")) } : {}),
  };
}
