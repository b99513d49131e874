/**
 * What the secret-redaction pass (redact.ts) counts as a secret.
 *
 * The provider-token table mirrors gitleaks' default config (config/gitleaks.toml) and the
 * secretlint recommended preset; each entry names the gitleaks rule id it follows. Patterns are
 * kept high-confidence: a literal prefix, a bounded body and an explicit right edge, so ordinary
 * source code (hashes, UUIDs, identifiers, base64 blobs) does not match. Context rules (private
 * keys, Authorization headers, URL userinfo, `NAME=value` assignments) live in redact.ts and use
 * the word lists and value heuristics below.
 *
 * Everything here is immutable data or a pure function: RegExps carry no `g`/`y` flag, so they
 * hold no `lastIndex` state; the engine compiles its own sticky copies per redactor.
 */

/** A short, stable label for what was removed, e.g. `openai-key` or `private-key`. */
export type RedactionKind = string;

export type TokenRule = {
  readonly kind: RedactionKind;
  /** The gitleaks rule id(s) (or vendor format) this entry mirrors. */
  readonly mirrors: string;
  /** Case-sensitive literals a token starts with; the engine scans for these. No trigger may be a prefix of another. */
  readonly triggers: readonly string[];
  /** Matched at the trigger. Group 1, when present, is the secret and must be a suffix of the match. */
  readonly pattern: RegExp;
  /** The character after the match must not be one of these (the token would be longer than its shape). */
  readonly tail?: RegExp;
  /** Minimum Shannon entropy (bits/char) of the secret, only for rules whose prefix alone is weak. */
  readonly minEntropy?: number;
  /** Extra shape check, e.g. "contains a digit" or "decodes to a PEM private key". */
  readonly validate?: (secret: string) => boolean;
  /** Skip the left word-boundary check (triggers that sit inside a URL, after `/` or `.`). */
  readonly anywhere?: boolean;
};

const hasDigit = (s: string): boolean => /\d/.test(s);

/** base64 of a PEM private-key header, as in kubeconfig `client-key-data`. */
function isBase64PrivateKey(secret: string): boolean {
  try {
    return atob(secret.slice(0, 80)).includes("PRIVATE KEY");
  } catch {
    return false;
  }
}

export const TOKEN_RULES: readonly TokenRule[] = [
  // --- LLM providers (order matters within a trigger: the first rule that matches wins) ---
  { kind: "anthropic-key", mirrors: "anthropic-api-key, anthropic-admin-api-key", triggers: ["sk-"],
    pattern: /sk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_-]{32,256}/ },
  { kind: "openrouter-key", mirrors: "vendor format sk-or-v1-<64 hex>", triggers: ["sk-"],
    pattern: /sk-or-v1-[A-Za-z0-9]{32,128}/ },
  { kind: "openai-key", mirrors: "openai-api-key (plus sk-proj/svcacct/admin without the T3BlbkFJ marker)",
    triggers: ["sk-"],
    pattern: /sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,400}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})/ },
  // DeepSeek/Moonshot/legacy-style `sk-<32+ alnum>`: weak prefix, so entropy and a digit are required.
  { kind: "provider-key", mirrors: "vendor formats sk-<hex/alnum>", triggers: ["sk-"],
    pattern: /sk-[A-Za-z0-9]{32,128}/, minEntropy: 3.5, validate: hasDigit },
  { kind: "xai-key", mirrors: "vendor format xai-", triggers: ["xai-"], pattern: /xai-[A-Za-z0-9]{60,120}/ },
  { kind: "groq-key", mirrors: "vendor format gsk_", triggers: ["gsk_"], pattern: /gsk_[A-Za-z0-9]{48,64}/ },
  { kind: "perplexity-key", mirrors: "perplexity-api-key", triggers: ["pplx-"], pattern: /pplx-[A-Za-z0-9]{48,64}/ },
  { kind: "replicate-token", mirrors: "vendor format r8_", triggers: ["r8_"], pattern: /r8_[A-Za-z0-9]{37,40}/,
    validate: hasDigit },
  { kind: "huggingface-token", mirrors: "huggingface-access-token, huggingface-organization-api-token",
    triggers: ["hf_", "api_org_"], pattern: /(?:hf_|api_org_)[A-Za-z0-9]{30,40}/, minEntropy: 3 },
  // Vercel AI Gateway keys are `vck_…`; personal/integration/app tokens use vcp_/vci_/vca_/vcr_.
  { kind: "vercel-token", mirrors: "vendor format vc?_", triggers: ["vck_", "vcp_", "vci_", "vca_", "vcr_"],
    pattern: /vc[kpiar]_[A-Za-z0-9]{20,128}/, minEntropy: 3.5, validate: hasDigit },

  // --- Cloud and source hosting ---
  { kind: "aws-access-key", mirrors: "aws-access-token", triggers: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    pattern: /(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}/, tail: /[A-Za-z0-9]/, minEntropy: 3,
    validate: (secret) => !secret.endsWith("EXAMPLE") }, // AWS documentation keys end in EXAMPLE
  { kind: "github-token", mirrors: "github-pat, github-oauth, github-app-token, github-refresh-token",
    triggers: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], pattern: /gh[pousr]_[A-Za-z0-9]{36,251}/ },
  { kind: "github-token", mirrors: "github-fine-grained-pat", triggers: ["github_pat_"],
    pattern: /github_pat_[A-Za-z0-9_]{50,255}/ },
  { kind: "gitlab-token",
    mirrors: "gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-authentication-token, gitlab-ptt, " +
      "gitlab-feed-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token, gitlab-oauth-app-secret, " +
      "gitlab-scim-token, gitlab-cicd-job-token, gitlab-feature-flag-client-token",
    triggers: ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glcbt-", "glffct-"],
    pattern: /gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|soat|cbt|ffct)-[A-Za-z0-9_-]{20,300}(?:\.[A-Za-z0-9]{2,16}){0,2}/ },
  { kind: "gitlab-token", mirrors: "gitlab-rrt", triggers: ["GR1348941"], pattern: /GR1348941[A-Za-z0-9_-]{20,64}/ },
  { kind: "google-api-key", mirrors: "gcp-api-key", triggers: ["AIza"], pattern: /AIza[A-Za-z0-9_-]{35}/ },
  { kind: "google-oauth-secret", mirrors: "secretlint gcp / GitHub secret-scanning GOCSPX format", triggers: ["GOCSPX-"],
    pattern: /GOCSPX-[A-Za-z0-9_-]{28,40}/ },
  { kind: "digitalocean-token", mirrors: "digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token",
    triggers: ["dop_v1_", "doo_v1_", "dor_v1_"], pattern: /do[opr]_v1_[a-f0-9]{64}/ },
  { kind: "cloudflare-token", mirrors: "vendor scannable format cfk_/cfut_/cfat_", triggers: ["cfk_", "cfut_", "cfat_"],
    pattern: /cf(?:k|ut|at)_[A-Za-z0-9]{40,64}/ },
  { kind: "databricks-token", mirrors: "databricks-api-token", triggers: ["dapi"], pattern: /dapi[a-f0-9]{32}(?:-\d)?/,
    minEntropy: 3 },
  { kind: "heroku-key", mirrors: "heroku-api-key-v2", triggers: ["HRKU-AA"], pattern: /HRKU-AA[A-Za-z0-9_-]{58}/ },
  { kind: "vault-token", mirrors: "vault-service-token, vault-batch-token", triggers: ["hvs.", "hvb."],
    pattern: /hv[sb]\.[A-Za-z0-9_-]{90,300}/ },
  { kind: "doppler-token", mirrors: "doppler-api-token", triggers: ["dp.pt."], pattern: /dp\.pt\.[A-Za-z0-9]{43}/ },
  { kind: "planetscale-token", mirrors: "planetscale-api-token, planetscale-oauth-token, planetscale-password",
    triggers: ["pscale_"], pattern: /pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.-]{32,64}/ },
  { kind: "age-secret-key", mirrors: "age-secret-key", triggers: ["AGE-SECRET-KEY-1"],
    pattern: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/ },
  { kind: "private-key", mirrors: "private-key (base64-wrapped PEM, e.g. kubeconfig client-key-data)",
    triggers: ["LS0tLS1CRUdJTi"], pattern: /LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,65536}={0,2}/, tail: /[A-Za-z0-9+/=]/,
    validate: isBase64PrivateKey },

  // --- Collaboration, payments, packages ---
  { kind: "slack-token", mirrors: "slack-bot-token, slack-user-token, slack-legacy-*, slack-config-*",
    triggers: ["xox"], pattern: /xox(?:[abposr]|e(?:\.xox[bp])?)-[A-Za-z0-9-]{10,300}/ },
  { kind: "slack-token", mirrors: "slack-app-token", triggers: ["xapp-"], pattern: /xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+/i },
  { kind: "slack-webhook", mirrors: "slack-webhook-url", triggers: ["hooks.slack.com/"], anywhere: true,
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9+/]{20,120})/, tail: /[A-Za-z0-9+/]/ },
  { kind: "discord-webhook", mirrors: "discord webhook URL (secretlint-style)", anywhere: true,
    triggers: ["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
    pattern: /discord(?:app)?\.com\/api\/webhooks\/(\d{5,30}\/[A-Za-z0-9_-]{30,100})/ },
  { kind: "stripe-key", mirrors: "stripe-access-token", triggers: ["sk_", "rk_"],
    pattern: /[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,247}/, tail: /[A-Za-z0-9_]/ },
  { kind: "stripe-key", mirrors: "vendor format whsec_ (Stripe webhook signing secret)", triggers: ["whsec_"],
    pattern: /whsec_[A-Za-z0-9+/]{24,128}={0,2}/, tail: /[A-Za-z0-9+/=_-]/ },
  { kind: "sendgrid-key", mirrors: "sendgrid-api-token", triggers: ["SG."],
    pattern: /SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}/ },
  // Twilio API key SIDs: a weak two-letter prefix, so entropy is required as in gitleaks.
  { kind: "twilio-key", mirrors: "twilio-api-key", triggers: ["SK"], pattern: /SK[0-9a-fA-F]{32}/, tail: /[A-Za-z0-9]/,
    minEntropy: 3 },
  { kind: "npm-token", mirrors: "npm-access-token", triggers: ["npm_"], pattern: /npm_[A-Za-z0-9]{36}/ },
  { kind: "pypi-token", mirrors: "pypi-upload-token", triggers: ["pypi-"],
    pattern: /pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,1000}/ },
  { kind: "rubygems-token", mirrors: "rubygems-api-token", triggers: ["rubygems_"], pattern: /rubygems_[a-f0-9]{48}/ },
  { kind: "shopify-token", mirrors: "shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret",
    triggers: ["shpat_", "shpca_", "shppa_", "shpss_"], pattern: /shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}/ },
  { kind: "linear-key", mirrors: "linear-api-key", triggers: ["lin_api_"], pattern: /lin_api_[A-Za-z0-9]{40}/ },
  { kind: "postman-key", mirrors: "postman-api-token", triggers: ["PMAK-"], pattern: /PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}/ },
  { kind: "sentry-token", mirrors: "sentry-user-token", triggers: ["sntryu_"], pattern: /sntryu_[a-f0-9]{64}/ },
  { kind: "atlassian-token", mirrors: "atlassian-api-token (ATATT3 form)", triggers: ["ATATT3"],
    pattern: /ATATT3[A-Za-z0-9_-]{150,300}(?:=[A-Fa-f0-9]{8})?/ },
  { kind: "notion-token", mirrors: "notion-api-token", triggers: ["ntn_"], pattern: /ntn_\d{11}[A-Za-z0-9]{35}/ },
  { kind: "grafana-token", mirrors: "grafana-cloud-api-token, grafana-service-account-token", triggers: ["glc_", "glsa_"],
    pattern: /(?:glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})/, tail: /[A-Za-z0-9_+/=-]/ },
  // JWTs: header and payload are base64url JSON objects (`eyJ` = `{"`); the signature is required.
  { kind: "jwt", mirrors: "jwt", triggers: ["eyJ"],
    pattern: /eyJ[A-Za-z0-9_-]{8,2048}\.eyJ[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{16,1024}/, tail: /[A-Za-z0-9_=.-]/ },
];

/** Case-insensitive words that start a context check (a secret-looking name before `=`/`:`). */
export const CONTEXT_TRIGGERS: readonly string[] = ["key", "secret", "token", "pass", "pwd", "auth", "credential", "creds"];

/** A name whose last word is one of these names a secret (`DB_PASSWORD`, `client_secret`, `authToken`). */
const SECRET_LAST_WORDS = new Set(["password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "apikey",
  "credential", "credentials", "creds", "auth"]);
/** Fused last words (`clientsecret`, `accesstoken`, `secretkey`) are matched by suffix. */
const SECRET_SUFFIXES = ["password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "privatekey",
  "authkey", "accesskey"];
/** `…_KEY` names a secret only with one of these before it (gitleaks excludes public/primary/foreign keys). */
const KEY_QUALIFIERS = new Set(["api", "secret", "private", "access", "auth", "client", "encryption", "signing",
  "master", "app", "application", "service", "account", "session", "webhook", "shared", "consumer", "license",
  "subscription", "admin", "deploy", "write", "read", "storage", "sas", "hmac", "jwt", "x", "openai", "anthropic",
  "gateway"]);

/** Splits `AWS_SECRET_ACCESS_KEY`, `clientSecret`, `x-api-key`, `self.db.password` into lowercase words. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter((word) => word.length > 0);
}

/** True when an assignment target's name says its value is a secret. */
export function isSecretName(words: readonly string[]): boolean {
  const last = words.at(-1);
  if (last === undefined) return false;
  if (SECRET_LAST_WORDS.has(last)) return true;
  if (SECRET_SUFFIXES.some((suffix) => last.length > suffix.length && last.endsWith(suffix))) return true;
  return last === "key" && KEY_QUALIFIERS.has(words.at(-2) ?? "");
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const PLACEHOLDER_VALUES = new Set(["changeme", "change_me", "changeit", "password", "passwd", "pass", "secret",
  "token", "null", "nil", "none", "undefined", "true", "false", "example", "test", "testing", "dummy", "fake",
  "placeholder", "redacted", "todo", "string", "empty", "default", "value", "your-key", "your_key", "xxx"]);
const PLACEHOLDER_PARTS = ["example", "placeholder", "your_", "your-", "yourkey", "changeme", "redacted", "xxxxx",
  "*****", "...", "\u2026", "<", ">", "{{", "${", "$(", "%s", "%(", "[redacted"];
const ENV_REFERENCE = /^(?:\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|\{[A-Za-z_][\w.]*\}|:[A-Za-z_]\w*)$/;

/** Obvious non-secrets: `changeme`, `xxx`, `${VAR}`, `<your-key>`, `{{ secrets.X }}`, `***`, `[REDACTED:…]`. */
export function isPlaceholder(value: string): boolean {
  const lower = value.toLowerCase();
  if (PLACEHOLDER_VALUES.has(lower)) return true;
  if (PLACEHOLDER_PARTS.some((part) => lower.includes(part))) return true;
  if (ENV_REFERENCE.test(value)) return true;
  return /^(.)\1*$/.test(value); // one repeated character
}

const DOTTED_NAME = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/; // process.env.KEY, self.token, config.apiKey
const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//; // credentials inside URLs are the URL rule's job
const VERSION_LIKE = /^v?\d+(?:\.\d+)+(?:[-+][\w.-]*)?$/;
const WORDS_ONLY = /^[A-Za-z_.-]+$/; // gitleaks generic-api-key allowlist: identifiers, words, kebab/snake case
/**
 * Hand-written values (`sk-openai-999`, `TOP-SECRET-42`, `Unauthorized/`, `req?.credentials`): every
 * alphanumeric run is a lower/UPPER/camel/Pascal-case word with at most a short number after it, or a
 * short number. Random secrets put digits inside runs and switch case mid-word.
 */
const HUMAN_PART = /^(?:(?:[a-z]+|[A-Z]+|[A-Z]*[a-z]+(?:[A-Z][a-z]+)*)?\d{0,4}|\d{1,6})$/;
function isHumanMade(value: string): boolean {
  return value.replace(/%[0-9A-Fa-f]{2}/g, " ").split(/[^A-Za-z0-9]+/).every((part) => HUMAN_PART.test(part));
}

/** Minimum entropy for an assignment value: 3 bits/char, relaxed for short values that cannot reach it. */
function entropyFloor(length: number): number {
  return Math.min(3, Math.log2(length) * 0.85);
}

/** True when the value of a secret-named assignment looks like a real credential, not code or config. */
export function looksLikeSecretValue(value: string): boolean {
  if (value.length < 8 || value.length > 1024) return false;
  if (isPlaceholder(value)) return false;
  if (WORDS_ONLY.test(value) || /^\d+$/.test(value) || isHumanMade(value)) return false;
  if (DOTTED_NAME.test(value) || URL_LIKE.test(value) || VERSION_LIKE.test(value)) return false;
  return shannonEntropy(value) >= entropyFloor(value.length);
}

/** Authorization credentials: shorter than assignments allow, but still not a word or a placeholder. */
export function looksLikeCredential(value: string, minLength: number): boolean {
  if (value.length < minLength || isPlaceholder(value) || isHumanMade(value) || DOTTED_NAME.test(value)) return false;
  return shannonEntropy(value) >= Math.min(2.5, entropyFloor(value.length));
}

/**
 * An environment variable whose name says it holds a credential. One predicate for both
 * uses: such variables never reach `run` commands, and their values are scrubbed from output.
 */
export const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;
