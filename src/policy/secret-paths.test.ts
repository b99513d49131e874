import { describe, expect, test } from "bun:test";
import { SECRET_FILE_GLOBS, isSecretLikePath } from "./secret-paths.ts";

/** Paths that must be secret-like; several are nested or in odd case on purpose. */
const SECRET_EXAMPLES: readonly string[] = [
  ".env",
  ".ENV",
  "src/.env",
  ".env.local",
  ".env.production",
  ".env.development.local",
  ".env.bak",
  "deploy/prod.env",
  ".envrc",
  "id_rsa",
  "home/u/.ssh/id_ed25519",
  "keys/id_ecdsa",
  ".ssh/config",
  ".ssh/known_hosts",
  "certs/server.pem",
  "tls.KEY",
  "AuthKey_ABC123.p8",
  "cert.p12",
  "store.pfx",
  "putty.ppk",
  "android/release.jks",
  "debug.keystore",
  ".gnupg/private-keys-v1.d/ABC.key",
  ".gnupg/pubring.kbx",
  ".npmrc",
  "packages/app/.npmrc",
  ".pypirc",
  ".netrc",
  "_netrc",
  ".git-credentials",
  ".pgpass",
  ".htpasswd",
  ".vault-token",
  ".terraformrc",
  "terraform.rc",
  ".terraform.d/credentials.tfrc.json",
  "infra/terraform.tfstate",
  "infra/terraform.tfstate.backup",
  "kubeconfig",
  "kubeconfig.yaml",
  "cluster.kubeconfig",
  ".kube/config",
  "home/u/.docker/config.json",
  ".aws/credentials",
  ".aws/config",
  ".aws/sso/cache/token.json",
  ".azure/msal_token_cache.json",
  ".config/gcloud/credentials.db",
  ".config/gcloud/legacy_credentials/me@example.com/adc.json",
  "application_default_credentials.json",
  "credentials.json",
  "client_secret_123.apps.googleusercontent.com.json",
  "secrets.json",
  "config/secrets.yml",
  "secrets.yaml",
  "secrets.toml",
  ".config/gh/hosts.yml",
  ".gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".composer/auth.json",
  ".config/composer/auth.json",
  "/home/u/project/.env",
];

/** Look-alikes that must stay visible. */
const ORDINARY_EXAMPLES: readonly string[] = [
  ".env.example",
  ".env.sample",
  ".env.template",
  ".env.dist",
  ".env.foo",
  ".envrc.example",
  "env.ts",
  "src/env.ts",
  "environment.ts",
  "dotenv.js",
  "id_rsa.pub",
  ".ssh.md",
  "docs/ssh.md",
  "keyboard.ts",
  "monkey.py",
  "src/key.ts",
  "src/keys/index.ts",
  "keys.json",
  "pem.ts",
  "public.asc",
  "secrets.ts",
  "src/secret.yaml",
  "credentials.ts",
  "credentials",
  "config.json",
  "auth.json",
  "hosts.yml",
  ".docker/daemon.json",
  "docker/config.json",
  ".kube/cache/discovery.json",
  ".aws-sam/build/template.yaml",
  "tfstate.go",
  "kubeconfig.go",
  ".npmrc.example",
  ".npmignore",
  "package.json",
  "README.md",
  "",
  ".",
];

/** An independent check with Bun.Glob and gitignore semantics: a glob matches a component, or (with a slash) a prefix of the path. */
function someGlobMatches(path: string): boolean {
  const components = path.toLowerCase().split("/").filter((c) => c !== "" && c !== ".");
  return SECRET_FILE_GLOBS.some((glob) => {
    const matcher = new Bun.Glob(glob);
    if (!glob.includes("/")) return components.some((component) => matcher.match(component));
    return components.some((_, index) => matcher.match(components.slice(0, index + 1).join("/")));
  });
}

describe("isSecretLikePath", () => {
  test.each(SECRET_EXAMPLES.map((path) => [path]))("%p is secret-like", (path) => {
    expect(isSecretLikePath(path)).toBe(true);
  });

  test.each(ORDINARY_EXAMPLES.map((path) => [path]))("%p is not secret-like", (path) => {
    expect(isSecretLikePath(path)).toBe(false);
  });

  test("a secret-like directory hides everything under it, a secret-like file name nothing", () => {
    expect(isSecretLikePath("/work/.aws/anything/deep/file.txt")).toBe(true);
    expect(isSecretLikePath("/work/.env/lib/site.py")).toBe(true);
    expect(isSecretLikePath("/work/.env.example/x")).toBe(false);
  });
});

describe("SECRET_FILE_GLOBS", () => {
  test("every secret example is matched by at least one glob (Bun.Glob)", () => {
    const unmatched = SECRET_EXAMPLES.filter((path) => !someGlobMatches(path));
    expect(unmatched).toEqual([]);
  });

  test("no ordinary example is matched by any glob (Bun.Glob)", () => {
    const matched = ORDINARY_EXAMPLES.filter((path) => someGlobMatches(path));
    expect(matched).toEqual([]);
  });

  test("globs are lowercase, use only `*`, and anchor nothing (a slash means a leading **/)", () => {
    for (const glob of SECRET_FILE_GLOBS) {
      expect(glob).toBe(glob.toLowerCase());
      expect(glob).not.toMatch(/[?[\]{}!\\]/);
      if (glob.includes("/")) expect(glob.startsWith("**/")).toBe(true);
      expect(glob.slice(glob.startsWith("**/") ? 3 : 0)).not.toContain("**");
    }
    expect(new Set(SECRET_FILE_GLOBS).size).toBe(SECRET_FILE_GLOBS.length);
  });
});
