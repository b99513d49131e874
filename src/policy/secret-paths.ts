/**
 * The one definition of a "secret-like path": a narrow, well-known filename heuristic, not a
 * secret scanner. The policy classifies a direct read of such a path as `read-secret`; `find`
 * hides these paths from listings and searches.
 *
 * The glob list below IS the definition: `isSecretLikePath` matches paths against the same globs
 * that `find` hands to ripgrep, so the two can never disagree. The semantics are gitignore's,
 * case-insensitive (ripgrep `--iglob`):
 * - a glob without `/` matches a single path component, so it hides a file of that name and
 *   everything under a directory of that name (`.ssh` hides `.ssh/config`);
 * - a glob with a slash starts with `**` + `/` and matches that run of components at any depth;
 * - only `*` (any characters within one component) is used as a wildcard.
 *
 * Deliberate choices (and their known false positives / negatives):
 * - dotenv: `.env`, `.envrc`, `*.env` (`prod.env`, docker `env_file`s), `.env.*.local` and a fixed
 *   list of environment suffixes (`.env.production`, `.env.local`, `.env.bak`…). Templates such as
 *   `.env.example`, `.env.sample`, `.env.template`, `.env.dist` stay visible; that is why `.env.*`
 *   as a whole is not a glob (a gitignore exclusion cannot be re-included without turning it into
 *   an include-only filter). An unknown suffix (`.env.foo`) is therefore not secret-like, and
 *   `example.env` is (it matches `*.env`). A directory named `.env` (an old virtualenv habit) is
 *   hidden with its content.
 * - private keys and key stores: the OpenSSH default key names (their `.pub` halves are public),
 *   `*.pem`, `*.key` (also hides Keynote decks), `*.p8`, `*.p12`, `*.pfx`, `*.ppk`, `*.jks`,
 *   `*.keystore`, and the whole `.ssh` and `.gnupg` directories. `*.asc` is NOT included: it is
 *   mostly public keys and detached signatures.
 * - credential and registry files: `.npmrc`, `.pypirc`, `.netrc`/`_netrc`, `.git-credentials`,
 *   `.pgpass`, `.htpasswd`, `.vault-token`, Terraform CLI credentials and state (`*.tfstate`
 *   holds resource secrets in plain text), kubeconfigs, Docker/GitHub CLI/RubyGems/Cargo/Composer
 *   credential files, Google OAuth client and ADC files, `credentials.json`, `secrets.{json,yml,
 *   yaml,toml}`, and the whole `.aws` and `.azure` directories plus `.config/gcloud` (their caches
 *   hold live tokens). `auth.json`, `config.json` or `credentials` are only secret-like in the
 *   directory that gives them that meaning.
 */

const ENV_SUFFIXES = [
  "local", "development", "dev", "production", "prod", "prd", "staging", "stage", "test", "testing", "ci",
  "preview", "qa", "uat", "live", "private", "secret", "secrets", "keys", "me", "backup", "bak", "old", "save",
] as const;

/** ripgrep/gitignore-style globs (lowercase; match them case-insensitively) for every secret-like path. */
export const SECRET_FILE_GLOBS: readonly string[] = Object.freeze([
  // dotenv files (templates such as .env.example are deliberately absent)
  ".env",
  ".envrc",
  "*.env",
  ".env.*.local",
  ...ENV_SUFFIXES.map((suffix) => `.env.${suffix}`),
  // private keys, certificates with keys, key stores
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ecdsa_sk",
  "id_ed25519",
  "id_ed25519_sk",
  "*.pem",
  "*.key",
  "*.p8",
  "*.p12",
  "*.pfx",
  "*.ppk",
  "*.jks",
  "*.keystore",
  ".ssh",
  ".gnupg",
  // credential, token and package-registry files
  ".npmrc",
  ".pypirc",
  ".netrc",
  "_netrc",
  ".git-credentials",
  ".pgpass",
  ".htpasswd",
  ".vault-token",
  ".terraformrc",
  "terraform.rc",
  "credentials.tfrc.json",
  "*.tfstate",
  "*.tfstate.backup",
  "kubeconfig",
  "kubeconfig.yaml",
  "kubeconfig.yml",
  "*.kubeconfig",
  "credentials.json",
  "client_secret*.json",
  "application_default_credentials.json",
  "secrets.json",
  "secrets.yml",
  "secrets.yaml",
  "secrets.toml",
  ".aws",
  ".azure",
  "**/.config/gcloud",
  "**/.kube/config",
  "**/.docker/config.json",
  "**/.config/gh/hosts.yml",
  "**/.gem/credentials",
  "**/.cargo/credentials",
  "**/.cargo/credentials.toml",
  "**/.composer/auth.json",
  "**/.config/composer/auth.json",
]);

/** A glob as a regex over `/`-joined components: `*` never crosses a `/`. */
function globSource(glob: string): string {
  const rest = glob.startsWith("**/") ? glob.slice(3) : glob;
  return rest
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^/]*");
}

/**
 * One regex for a list of globs over `/`-joined components: some glob must match a run of whole
 * components, starting and ending at component boundaries (a leading `**` + `/`: at any depth).
 */
export function componentGlobPattern(globs: readonly string[]): RegExp {
  return new RegExp(`(?:^|/)(?:${globs.map(globSource).join("|")})(?:/|$)`);
}

// One regex for the whole list (a single test per path, as find checks every path it reports).
// Immutable and derived from the constant list, so it is no ambient state.
const SECRET_PATH = componentGlobPattern(SECRET_FILE_GLOBS);

/**
 * True when the path, or a directory it lies in, has a secret-like name. Judged on the text of
 * the path (no file system access), case-insensitively; give it the canonical path that will
 * really be opened, so a symlink named `notes.txt` pointing at `.env` is judged by its target.
 */
export function isSecretLikePath(path: string): boolean {
  const normalized = path
    .toLowerCase()
    .split("/")
    .filter((component) => component !== "" && component !== ".")
    .join("/");
  return SECRET_PATH.test(normalized);
}
