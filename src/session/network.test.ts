import { expect, test } from "bun:test";
import { systemResolve } from "../security/net-target.ts";
import { BRAVE_WEB_SEARCH_ENDPOINT } from "../tool/search.ts";
import { networkAccessFor, webSearchAccessFor } from "./network.ts";

const overrides = JSON.stringify({ hosts: { "public.test": ["127.0.0.1"] }, publicAddresses: ["127.0.0.1"], braveEndpoint: "http://brave.test:1/search" });
const settings = { provider: "brave" as const, apiKeyEnv: "BRAVE_SEARCH_API_KEY", safeSearch: "moderate" as const };

test("the test seam is ignored unless ZERO_CLI_TEST_MODE is exactly 1; deprecated DEVOUT_ names never enable it", async () => {
  for (const env of [
    { ZERO_CLI_TEST_NETWORK: overrides },
    { ZERO_CLI_TEST_NETWORK: overrides, ZERO_CLI_TEST_MODE: "true" },
    { ZERO_CLI_TEST_NETWORK: overrides, ZERO_CLI_TEST_MODE: "" },
    { DEVOUT_TEST_NETWORK: overrides, DEVOUT_TEST_MODE: "1" },
    { ZERO_CLI_TEST_NETWORK: overrides, DEVOUT_TEST_MODE: "1" },
  ]) {
    const access = networkAccessFor(env);
    expect(access.resolve).toBe(systemResolve);
    expect(access.classify).toBeUndefined();
    expect(access.trustedCertificates).toBeUndefined();
    expect(webSearchAccessFor(settings, env).endpoint).toBe(BRAVE_WEB_SEARCH_ENDPOINT);
  }
});

test("with ZERO_CLI_TEST_MODE=1 the overrides apply; an invalid value is a clear error", async () => {
  const env = { ZERO_CLI_TEST_NETWORK: overrides, ZERO_CLI_TEST_MODE: "1" };
  const access = networkAccessFor(env);
  expect(await access.resolve("public.test")).toEqual(["127.0.0.1"]);
  expect(access.classify!("127.0.0.1")).toEqual({ public: true });
  expect(access.classify!("127.0.0.2").public).toBe(false);
  expect(webSearchAccessFor(settings, env).endpoint).toBe("http://brave.test:1/search");
  expect(() => networkAccessFor({ ZERO_CLI_TEST_MODE: "1", ZERO_CLI_TEST_NETWORK: "{nope" })).toThrow("ZERO_CLI_TEST_NETWORK is not valid");
});

test("the search key: webSearch.apiKeyEnv first, then BRAVE_SEARCH_API_KEY; none → no key", () => {
  const mine = { ...settings, apiKeyEnv: "MY_BRAVE" };
  expect(webSearchAccessFor(mine, { MY_BRAVE: "k-mine", BRAVE_SEARCH_API_KEY: "k-canonical" }).apiKey).toBe("k-mine");
  expect(webSearchAccessFor(mine, { BRAVE_SEARCH_API_KEY: "k-canonical" }).apiKey).toBe("k-canonical");
  expect(webSearchAccessFor(mine, {}).apiKey).toBeUndefined();
  expect(webSearchAccessFor(mine, {})).not.toHaveProperty("provider");
});
