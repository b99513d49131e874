import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { MIN_KNOWN_SECRET_LENGTH, createRedactor } from "./redact.ts";
import { CONTEXT_TRIGGERS, TOKEN_RULES, isPlaceholder, shannonEntropy } from "./redact-rules.ts";

const TESTDATA = join(import.meta.dir, "testdata");
const lineCount = (text: string): number => text.split("\n").length;

// --- The fake-secret corpus: templates expanded with a fixed seed (no literal tokens committed) ---

const ALPHABETS: Record<string, string> = {
  alnum: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
  hex: "0123456789abcdef",
  HEX: "0123456789ABCDEF",
  digits: "0123456789",
  upper: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  b64: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
  b64url: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
  base32: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
  bech32: "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
};

/** mulberry32: a tiny deterministic PRNG, so the expanded corpus is the same on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Case = { kind: string; text: string; generated: string[]; template: string };

function expandCorpus(source: string, seed: number): { cases: Case[]; known: string } {
  const random = seededRandom(seed);
  const draw = (alphabet: string, length: number): string =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
  const known = draw(ALPHABETS.alnum ?? "", 32);
  const cases: Case[] = [];
  for (const line of source.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const separator = line.indexOf(" | ");
    const kind = line.slice(0, separator);
    const template = line.slice(separator + 3);
    const generated: string[] = [];
    const text = template
      .replace(/\\(n|\\)/g, (_, escaped: string) => (escaped === "n" ? "\n" : "\\"))
      .replace(/\{\{(\w+)(?:\*(\d+))?\}\}/g, (_, name: string, count: string | undefined) => {
        const n = Number(count ?? 0);
        let value: string;
        if (name === "known") value = known;
        else if (name === "pem" || name === "pemesc") {
          const lines = Array.from({ length: n }, () => draw(ALPHABETS.b64 ?? "", 64));
          generated.push(...lines);
          return lines.join(name === "pem" ? "\n" : "\\n");
        } else {
          const alphabet = ALPHABETS[name];
          if (alphabet === undefined) throw new Error(`unknown alphabet ${name} in: ${line}`);
          value = draw(alphabet, n);
        }
        generated.push(value);
        return value;
      });
    cases.push({ kind, text, generated, template });
  }
  return { cases, known };
}

const corpus = expandCorpus(readFileSync(join(TESTDATA, "secrets.txt"), "utf8"), 0x5eed);
const redactor = createRedactor({ knownSecrets: [corpus.known] });

describe("fake-secret corpus (testdata/secrets.txt)", () => {
  test("has a case for every token rule and every structural kind", () => {
    const kinds = new Set(corpus.cases.map((entry) => entry.kind));
    for (const rule of TOKEN_RULES) expect(kinds).toContain(rule.kind);
    for (const kind of ["private-key", "authorization-header", "url-credentials", "secret-assignment", "aws-secret-key", "known-secret"]) {
      expect(kinds).toContain(kind);
    }
    expect(corpus.cases.length).toBeGreaterThan(100);
  });

  test.each(corpus.cases.map((entry) => [entry.template.slice(0, 70), entry] as const))("%s", (_, entry) => {
    const result = redactor.redact(entry.text);
    expect({ count: result.count, kinds: result.kinds }).toEqual({ count: 1, kinds: { [entry.kind]: 1 } });
    for (const part of entry.generated) if (part.length >= 8) expect(result.text).not.toContain(part);
    expect(lineCount(result.text)).toBe(lineCount(entry.text));
    expect(redactor.mayContainSecrets(entry.text)).toBe(true);
    const again = redactor.redact(result.text);
    expect(again.text).toBe(result.text);
    expect(again.count).toBe(0);
  });

  test("the whole file at once: every secret redacted, kinds counted", () => {
    const text = corpus.cases.map((entry) => entry.text).join("\n\n");
    const expected: Record<string, number> = {};
    for (const entry of corpus.cases) expected[entry.kind] = (expected[entry.kind] ?? 0) + 1;
    const result = redactor.redact(text);
    expect(result.kinds).toEqual(expected);
    expect(result.count).toBe(corpus.cases.length);
    expect(lineCount(result.text)).toBe(lineCount(text));
    for (const entry of corpus.cases) for (const part of entry.generated) if (part.length >= 8) expect(result.text).not.toContain(part);
  });
});

describe("clean corpus (testdata/clean)", () => {
  const files = readdirSync(join(TESTDATA, "clean"));
  test("is a few hundred lines of ordinary code, lockfiles, hashes and data URIs", () => {
    const lines = files.reduce((sum, file) => sum + lineCount(readFileSync(join(TESTDATA, "clean", file), "utf8")), 0);
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(lines).toBeGreaterThan(500);
  });
  test.each(files)("%s: nothing is redacted", (file) => {
    const text = readFileSync(join(TESTDATA, "clean", file), "utf8");
    const result = redactor.redact(text);
    expect(result.kinds).toEqual({});
    expect(result.text).toBe(text);
  });
});

describe("replacement decisions", () => {
  const r = createRedactor();
  const gh = `ghp_${"aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}`;

  test("tokens are dropped whole, prefix included", () => {
    expect(r.redact(`token ${gh} end`).text).toBe("token [REDACTED:github-token] end");
  });

  test("Authorization keeps the header name and scheme", () => {
    expect(r.redact("Authorization: Bearer abc123DEF456ghi789").text).toBe("Authorization: Bearer [REDACTED:authorization-header]");
    expect(r.redact('-H "authorization: Basic dXNlcjpwYXNzd29yZA=="').text).toBe('-H "authorization: Basic [REDACTED:authorization-header]"');
  });

  test("credential URLs keep scheme, user, host and path", () => {
    expect(r.redact("postgres://app:s3cr3t-Pw9@db:5432/app").text).toBe("postgres://app:[REDACTED:url-credentials]@db:5432/app");
    expect(r.redact("see https://u:p@h").text).toBe("see https://u:[REDACTED:url-credentials]@h");
    expect(r.redact("ssh://git@github.com/acme/app.git").count).toBe(0);
  });

  test("private keys keep BEGIN/END lines; the body becomes one marker line and empty lines", () => {
    const body = ["MIIEowIBAAKCAQEAx1y2z3a4b5c6d7e8f9g0h1i2j3k4l5m6", "n7o8p9q0r1s2t3u4v5w6x7y8z9A0B1C2D3E4F5G6H7I8J9K0"];
    const key = ["-----BEGIN RSA PRIVATE KEY-----", ...body, "-----END RSA PRIVATE KEY-----", "next"].join("\r\n");
    const result = r.redact(key);
    expect(result.text).toBe(["-----BEGIN RSA PRIVATE KEY-----", "[REDACTED:private-key]", "", "-----END RSA PRIVATE KEY-----", "next"].join("\r\n"));
  });

  test("a truncated key block is redacted over its base64 lines, up to the first other line", () => {
    const text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAABAAAAMwAAAAtzc2gtZW\n$ echo done";
    expect(r.redact(text).text).toBe("-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED:private-key]\n\n$ echo done");
  });

  test("a PEM header with no body, and public blocks, are left alone", () => {
    for (const text of ['const h = "-----BEGIN PRIVATE KEY-----";\nconst x = 1;', "-----BEGIN PRIVATE KEY-----",
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ3Jx0lZz\n-----END CERTIFICATE-----"]) {
      expect(r.redact(text).count).toBe(0);
    }
  });

  test("assignments redact the value only, keeping quotes and the name", () => {
    expect(r.redact('{"api_key": "Zx9Qw8Er7Ty6Ui5Op4As"}').text).toBe('{"api_key": "[REDACTED:secret-assignment]"}');
    expect(r.redact("export DB_PASSWORD=Zx9Qw8Er7Ty6 # prod").text).toBe("export DB_PASSWORD=[REDACTED:secret-assignment] # prod");
  });

  test("overlapping matches merge into one marker of the most specific kind", () => {
    const result = r.redact(`GITHUB_TOKEN=${gh}`);
    expect(result).toEqual({ text: "GITHUB_TOKEN=[REDACTED:github-token]", count: 1, kinds: { "github-token": 1 } });
  });

  test("text without secrets comes back as the same string", () => {
    const text = "plain output\nwith two lines";
    expect(r.redact(text)).toEqual({ text, count: 0, kinds: {} });
    expect(r.redact("")).toEqual({ text: "", count: 0, kinds: {} });
  });
});

describe("placeholders and code are not secrets", () => {
  const r = createRedactor();
  test.each([
    "OPENAI_API_KEY=sk-test", "apiKey: process.env.OPENAI_API_KEY", 'token = os.environ["TOKEN"]', "password: changeme",
    'password = "********"', "API_KEY=${API_KEY}", "API_KEY=$API_KEY", "secret: <your-secret>", 'token: "{{ .Values.token }}"',
    "Authorization: Bearer ${token}", "Authorization: Bearer <token>", "Authorization: Bearer YOUR_API_KEY", "Authorization: Bearer myAccessToken", "Authorization: Basic",
    "postgres://user:password@localhost/db", "https://user:${PASSWORD}@host", "const token = lexer.next();", "token: string | undefined",
    'const FAKE_KEY = "sk-provider-key-123";', 'const SECRET = "TOP-SECRET-CONTENT-42";', "password: hunter2", "max_tokens: 4096",
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "PWD=/home/dev/src/app",
    ': "${GITHUB_TOKEN:?GITHUB_TOKEN must be set}"', "SESSION_SECRET=xxxxxxxxxxxxxxxxxxxx", "public_key = 'a1b2c3d4e5f6a7b8c9d0'",
    "cache_key = 'a1b2c3d4e5f6a7b8c9d0e1f2'", '"integrity": "sha512-RdJUflcE3cUzKiMqQgsCu06FPu9UdIJO0beYbPhHN4k6apgJtifcoCtT9bcxOpYBtpD2kCM6Sbzg4CausW/PKQ=="',
  ])("%s", (text) => {
    expect(r.redact(text).count).toBe(0);
  });

  test("isPlaceholder and entropy helpers", () => {
    expect(isPlaceholder("<your-key>")).toBe(true);
    expect(isPlaceholder("Zx9Qw8Er7Ty6")).toBe(false);
    expect(shannonEntropy("aaaa")).toBe(0);
    expect(shannonEntropy("abcd")).toBe(2);
  });
});

describe("known secrets", () => {
  test("exact occurrences are redacted; short values are ignored", () => {
    const r = createRedactor({ knownSecrets: ["Brv-9f8e7d6c5b4a", "short", "Brv-9f8e7d6c5b4a"] });
    const result = r.redact("a Brv-9f8e7d6c5b4a b Brv-9f8e7d6c5b4a short");
    expect(result).toEqual({ text: "a [REDACTED:known-secret] b [REDACTED:known-secret] short", count: 2, kinds: { "known-secret": 2 } });
    expect(r.mayContainSecrets("x Brv-9f8e7d6c5b4a")).toBe(true);
    expect(MIN_KNOWN_SECRET_LENGTH).toBe(8);
  });

  test("a known secret that also has a provider shape is named by the provider", () => {
    const key = `sk-proj-${"Zx9Qw8Er7Ty6Ui5Op4AsDf3Gh2Jk1Lz0"}`;
    expect(createRedactor({ knownSecrets: [key] }).redact(`key ${key}`).kinds).toEqual({ "openai-key": 1 });
  });
});

describe("rule table invariants", () => {
  test("no trigger is a prefix of another, so one scan hit selects its rules unambiguously", () => {
    const triggers = [...new Set(TOKEN_RULES.flatMap((rule) => rule.triggers)), "-----BEGIN", "://"];
    for (const a of triggers) for (const b of triggers) if (a !== b) expect(b.startsWith(a)).toBe(false);
    for (const word of CONTEXT_TRIGGERS) for (const trigger of triggers) expect(trigger.toLowerCase().startsWith(word)).toBe(false);
  });

  test("patterns carry no stateful flags and every kind names a gitleaks rule or vendor format", () => {
    for (const rule of TOKEN_RULES) {
      expect(rule.pattern.global || rule.pattern.sticky).toBe(false);
      expect(rule.mirrors.length).toBeGreaterThan(0);
    }
  });

  test("mayContainSecrets is false for prose and true whenever redact finds something", () => {
    const r = createRedactor();
    expect(r.mayContainSecrets("The quick brown fox jumps over the lazy dog.\n".repeat(100))).toBe(false);
    for (const entry of corpus.cases) if (entry.kind !== "known-secret") expect(r.mayContainSecrets(entry.text)).toBe(true);
  });
});

describe("performance", () => {
  const time = (run: () => void): number => {
    const start = performance.now();
    run();
    return performance.now() - start;
  };
  const r = createRedactor({ knownSecrets: ["Brv-9f8e7d6c5b4a"] });

  test("10 MB of clean source and command output", () => {
    const clean = readdirSync(join(TESTDATA, "clean")).map((file) => readFileSync(join(TESTDATA, "clean", file), "utf8")).join("\n");
    const text = clean.repeat(Math.ceil(10_000_000 / clean.length)).slice(0, 10_000_000);
    let count = -1;
    const ms = time(() => (count = r.redact(text).count));
    const prose = "2024-06-11T09:12:44Z INFO request served in 12ms status=200 path=/v1/models\n".repeat(130_000);
    const proseMs = time(() => r.redact(prose));
    console.log(`redact: 10 MB clean code ${ms.toFixed(0)} ms; ${(prose.length / 1e6).toFixed(1)} MB log lines ${proseMs.toFixed(0)} ms`);
    expect(count).toBe(0);
    expect(ms).toBeLessThan(5000);
  });

  test("10 MB dense with secrets", () => {
    const block = corpus.cases.map((entry) => entry.text).join("\n\n");
    const copies = Math.ceil(10_000_000 / block.length);
    const text = `${block}\n\n`.repeat(copies);
    let count = 0;
    const ms = time(() => (count = redactor.redact(text).count));
    console.log(`redact: ${(text.length / 1e6).toFixed(1)} MB with ${count} secrets ${ms.toFixed(0)} ms`);
    expect(count).toBe(corpus.cases.length * copies);
    expect(ms).toBeLessThan(10_000);
  });

  test.each([
    ["repeated prefixes", " sk-".repeat(250_000)],
    ["a prefix before a 1 MB run", `sk-proj-${"a".repeat(1_000_000)}`],
    ["JWT-looking runs", `eyJ${"a".repeat(500_000)}.eyJ${"b".repeat(500_000)}`],
    ["glued slash triggers", "/glc_+".repeat(200_000)],
    ["PEM headers without END", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n".repeat(25_000)],
    ["PEM headers, END far away", `${"-----BEGIN PRIVATE KEY-----".repeat(30_000)}${"x".repeat(100_000)}-----END PRIVATE KEY-----`],
    ["URL separators", "a://b:c@".repeat(150_000)],
    ["assignment chains", "token=token=".repeat(100_000)],
    ["long secret-named identifiers", `${"password_".repeat(100_000)}=x`],
    ["quotes without closing", `password="${"A1".repeat(500_000)}`],
    ["Authorization chains", "Authorization: Bearer ".repeat(50_000)],
    ["letter-only key bodies", `-----BEGIN PRIVATE KEY-----\n${"abcdefgh".repeat(2000)}\n-----END PRIVATE KEY-----\n`.repeat(60)],
  ])("pathological input finishes quickly: %s", (_, text) => {
    const ms = time(() => r.redact(text));
    expect(ms).toBeLessThan(2000);
  });
});

test("key material without its BEGIN line (a window that starts mid-key) is still redacted", () => {
  const body = Array.from({ length: 3 }, (_, i) => `MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC${i}${"Qx9+/".repeat(2)}AB`.slice(0, 64));
  const text = ["  key: |", ...body, "  rest: 1"].join("\n");
  const result = createRedactor().redact(text);
  for (const line of body) expect(result.text).not.toContain(line);
  expect(result.text.split("\n")).toHaveLength(5);
  expect(result.kinds["private-key"]).toBe(1);
  // A public block's body stays, even with a blank or header line after BEGIN.
  const cert = ["-----BEGIN CERTIFICATE-----", ...body, "-----END CERTIFICATE-----"].join("\n");
  expect(createRedactor().redact(cert).count).toBe(0);
});
