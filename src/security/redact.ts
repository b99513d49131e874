/**
 * Conservative, high-confidence secret redaction for text that tools return (file reads, search
 * results, command output) before it reaches the model, progress events, diffs or text artifacts.
 *
 * One pass finds candidates: a single combined scan for trigger literals (provider prefixes such
 * as `ghp_`, `-----BEGIN`, `://`, and secret-ish names such as `token` or `password`). Each hit
 * runs only its own anchored, bounded check, so text without triggers costs one regex pass and
 * no rule can backtrack across the whole input. Matches become spans; overlapping spans merge
 * (the most specific kind names the result), and each span is replaced by `[REDACTED:<kind>]`
 * plus the line breaks it covered, so the line count never changes.
 *
 * Context rules mirror gitleaks too: `private-key`, `curl-auth-header` (Authorization), and
 * `generic-api-key` with its allowlist (secret-named assignments; a value must look random, not
 * like a word, a path, a reference or a placeholder); URL userinfo follows secretlint's basicauth
 * and database-connection-string rules.
 *
 * Decisions:
 * - Whole tokens are dropped, prefix included: the kind already says what it was, and keeping
 *   `sk-proj-…` style prefixes would leak routing data for no debugging gain.
 * - Private keys keep their BEGIN/END lines; the body becomes one marker line plus empty lines.
 *   A block with no END line (truncated output) is redacted over the base64/PEM-header lines
 *   that follow BEGIN (at most 200 lines), stopping at the first other line; a bare mention of
 *   `-----BEGIN PRIVATE KEY-----` in code has no body and is left alone.
 * - Authorization headers keep the header name and scheme (`Authorization: Bearer [REDACTED:…]`).
 * - Credential URLs keep scheme, user and host; only the password goes
 *   (`postgres://app:[REDACTED:url-credentials]@db:5432`). A userinfo with no password is
 *   redacted only when it looks like a token (`https://<token>@host`).
 * - Strong provider prefixes are redacted on shape alone, so a full-length doc placeholder such as
 *   `ghp_xxxx…` is redacted too (harmless); weak prefixes (`SK`, `dapi`, bare `sk-`) need entropy.
 * - Redaction is idempotent: markers never match a rule again.
 */
import {
  CONTEXT_TRIGGERS,
  type RedactionKind,
  TOKEN_RULES,
  type TokenRule,
  isPlaceholder,
  isSecretName,
  looksLikeCredential,
  looksLikeSecretValue,
  nameWords,
  shannonEntropy,
} from "./redact-rules.ts";

export type { RedactionKind } from "./redact-rules.ts";
export type Redaction = { text: string; count: number; kinds: Record<RedactionKind, number> };
export type Redactor = {
  redact(text: string): Redaction;
  /** Cheap check used on hot paths: false means `redact` would return the text unchanged. */
  mayContainSecrets(text: string): boolean;
};

/** Known secrets shorter than this are ignored: they would redact ordinary words. */
export const MIN_KNOWN_SECRET_LENGTH = 8;
/** Longest private-key body (chars) searched for an END line, and lines kept for a truncated one. */
const MAX_KEY_CHARS = 16_384;
const MAX_KEY_LINES = 200;
const MAX_NAME_LENGTH = 80;
const MAX_VALUE_LENGTH = 1024;
const MAX_AUTHORITY_LENGTH = 512;

export function redactionMarker(kind: RedactionKind): string {
  return `[REDACTED:${kind}]`;
}

/** Lower priority number wins the kind when spans overlap. */
type Span = { start: number; end: number; kind: RedactionKind; priority: number };
const TOKEN = 0;
const STRUCTURAL = 1;
const ASSIGNMENT = 2;
const KNOWN = 3;

/** Per-redactor compiled state. Sticky/global RegExps carry lastIndex, so they are never module-level. */
type Compiled = {
  scan: RegExp;
  byTrigger: Map<string, { rule: TokenRule; sticky: RegExp; tail: RegExp }[]>;
  known: readonly string[];
  keyHeader: RegExp;
  keyFooter: RegExp;
  assignment: RegExp;
  authSeparator: RegExp;
  authScheme: RegExp;
};

const LEFT_EDGE = /[A-Za-z0-9_\-.+/]/; // a token glued to one of these is part of a longer word
const DEFAULT_TAIL = /[A-Za-z0-9_-]/;
const NAME_CHAR = /[A-Za-z0-9_.-]/;
const SCHEME_CHAR = /[A-Za-z0-9+.-]/;
const AUTHORITY_STOP = /[\s/?#"'`<>\\{}|^)]/;
const VALUE_CHAR = /[^\s"'`;,&#(){}[\]<>\\|=]/;
const VALUE_END = /[\s"'`;,&#)}\]<>\\|]/;
const CREDENTIAL_CHAR = /[A-Za-z0-9._~+/=@!$%*-]/;
const BASE64_LINE = /^[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*$/;
const PEM_HEADER_LINE = /^[ \t]*[A-Za-z][A-Za-z0-9-]{1,40}:.*$/;
const PARAMETER_SCHEMES = new Set(["digest", "oauth", "aws4-hmac-sha256"]);

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

function caseInsensitive(word: string): string {
  return [...word].map((char) => (/[a-z]/.test(char) ? `[${char}${char.toUpperCase()}]` : escapeRegExp(char))).join("");
}

function compile(knownSecrets: readonly string[]): Compiled {
  const byTrigger: Compiled["byTrigger"] = new Map();
  for (const rule of TOKEN_RULES) {
    const entry = { rule, sticky: new RegExp(rule.pattern.source, `${rule.pattern.flags}y`), tail: rule.tail ?? DEFAULT_TAIL };
    for (const trigger of rule.triggers) byTrigger.set(trigger, [...(byTrigger.get(trigger) ?? []), entry]);
  }
  const alternatives = [
    ...[...byTrigger.keys(), "-----BEGIN", "://"].map(escapeRegExp),
    ...CONTEXT_TRIGGERS.map(caseInsensitive),
  ].sort((a, b) => b.length - a.length); // longest first, so a longer literal wins at one position
  const known = [...new Set(knownSecrets.filter((secret) => secret.length >= MIN_KNOWN_SECRET_LENGTH))]
    .sort((a, b) => b.length - a.length);
  return {
    scan: new RegExp(alternatives.join("|"), "g"),
    byTrigger,
    known,
    keyHeader: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/y,
    keyFooter: /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/y,
    // Optional closing quote (or `"]` of `env["KEY"]`), the operator, an optional opening quote.
    assignment: /(?:\\{0,2}["'`]\]?)?[ \t]{0,8}(?::=|=>|\?=|[:=])[ \t]{0,8}(\\{0,2}["'`])?/y,
    authSeparator: /(?:\\{0,2}["'`]\]?)?[ \t]{0,8}(?:=>|[:=,])[ \t]{0,8}(\\{0,2}["'`])?[ \t]{0,4}/y,
    authScheme: /(Bearer|Basic|Token|Bot|Digest|Negotiate|NTLM|OAuth|ApiKey|Api-Key|JWT|SSWS|AWS4-HMAC-SHA256|Key)[ \t]+/iy,
  };
}

/** True when a token may start at `at`: not glued to a longer word (a `\n`/`\t` escape counts as a break). */
function atWordStart(text: string, at: number): boolean {
  const before = text[at - 1];
  if (before === undefined || !LEFT_EDGE.test(before)) return true;
  return (before === "n" || before === "r" || before === "t") && text[at - 2] === "\\";
}

function matchToken(text: string, at: number, entries: NonNullable<ReturnType<Compiled["byTrigger"]["get"]>>, spans: Span[]): number {
  for (const { rule, sticky, tail } of entries) {
    if (rule.anywhere !== true && !atWordStart(text, at)) continue;
    sticky.lastIndex = at;
    const match = sticky.exec(text);
    if (match === null) continue;
    const end = at + match[0].length;
    const after = text[end];
    if (after !== undefined && tail.test(after)) continue; // longer than the shape: not this token
    const secret = match[1] ?? match[0];
    if (rule.minEntropy !== undefined && shannonEntropy(secret) < rule.minEntropy) continue;
    if (rule.validate !== undefined && !rule.validate(secret)) continue;
    spans.push({ start: end - secret.length, end, kind: rule.kind, priority: TOKEN });
    return end;
  }
  return 0;
}

/** Scan state local to one redact call: the last name examined and the cached next `-----END`. */
type ScanState = { nameStart: number; footerAt: number };

function matchPrivateKey(text: string, at: number, compiled: Compiled, state: ScanState, spans: Span[]): number {
  compiled.keyHeader.lastIndex = at;
  const header = compiled.keyHeader.exec(text);
  if (header === null) return 0;
  const bodyStart = at + header[0].length;
  if (state.footerAt !== -1 && state.footerAt < bodyStart) state.footerAt = text.indexOf("-----END", bodyStart);
  const footerAt = state.footerAt;
  const nextHeader = footerAt === -1 ? -1 : text.indexOf("-----BEGIN", bodyStart);
  compiled.keyFooter.lastIndex = footerAt;
  if (footerAt !== -1 && footerAt - bodyStart <= MAX_KEY_CHARS && (nextHeader === -1 || nextHeader > footerAt)
    && compiled.keyFooter.test(text)) {
    let end = footerAt;
    while (end > bodyStart && (text[end - 1] === " " || text[end - 1] === "\t")) end--; // keep the END line's indent
    if (hasKeyMaterial(text.slice(bodyStart, end))) spans.push({ start: bodyStart, end, kind: "private-key", priority: TOKEN });
    return compiled.keyFooter.lastIndex;
  }
  const end = truncatedKeyEnd(text, bodyStart);
  if (hasKeyMaterial(text.slice(bodyStart, end))) spans.push({ start: bodyStart, end, kind: "private-key", priority: TOKEN });
  return end;
}

/** A key body has base64 runs with digits; prose or a regex between BEGIN and END on one line does not. */
function hasKeyMaterial(body: string): boolean {
  return (body.match(/[A-Za-z0-9+/]{20,}/g) ?? []).some((run) => /[0-9+/]/.test(run));
}

/** End of a key body with no END line: a JSON-escaped run, or base64/PEM-header lines after BEGIN. */
function truncatedKeyEnd(text: string, bodyStart: number): number {
  if (text.startsWith("\\n", bodyStart) || text.startsWith("\\r\\n", bodyStart)) {
    let index = bodyStart;
    while (index < text.length && index - bodyStart < MAX_KEY_CHARS) {
      if (text[index] === "\\" && (text[index + 1] === "n" || text[index + 1] === "r")) index += 2;
      else if (/[A-Za-z0-9+/=]/.test(text[index] ?? "")) index++;
      else break;
    }
    return index;
  }
  let position = bodyStart;
  while (text[position] === " " || text[position] === "\t" || text[position] === "\r") position++;
  if (text[position] !== "\n") return bodyStart;
  position++;
  let end = bodyStart;
  let sawBase64 = false;
  let sawHeader = false;
  for (let lines = 0; lines < MAX_KEY_LINES && position < text.length; lines++) {
    let lineEnd = text.indexOf("\n", position);
    if (lineEnd === -1) lineEnd = text.length;
    if (lineEnd - position > 4096) break;
    const line = text.slice(position, text[lineEnd - 1] === "\r" ? lineEnd - 1 : lineEnd);
    if (BASE64_LINE.test(line)) sawBase64 = true;
    else if (!sawBase64 && PEM_HEADER_LINE.test(line)) sawHeader = true; // Proc-Type:, DEK-Info:
    else if (!(sawHeader && !sawBase64 && line.trim() === "")) break;
    end = position + line.length;
    position = lineEnd + 1;
  }
  return end;
}

/** `scheme://user:password@host`: redacts the password (or a token-looking user with no password). */
function matchUrl(text: string, at: number, spans: Span[]): void {
  let schemeStart = at;
  while (schemeStart > 0 && at - schemeStart < 32 && SCHEME_CHAR.test(text[schemeStart - 1] ?? "")) schemeStart--;
  if (schemeStart === at || !/[A-Za-z]/.test(text[schemeStart] ?? "")) return;
  const authorityStart = at + 3;
  let index = authorityStart;
  while (index < text.length && !AUTHORITY_STOP.test(text[index] ?? "")) {
    if (++index - authorityStart > MAX_AUTHORITY_LENGTH) return;
  }
  const userinfo = text.slice(authorityStart, index);
  const atSign = userinfo.lastIndexOf("@");
  if (atSign <= 0 || userinfo.includes("[REDACTED:")) return; // already redacted
  const colon = userinfo.indexOf(":");
  if (colon !== -1 && colon < atSign) {
    const password = userinfo.slice(colon + 1, atSign);
    if (password.length === 0 || (password.length > 1 && isPlaceholder(password)) || password === "*") return;
    spans.push({ start: authorityStart + colon + 1, end: authorityStart + atSign, kind: "url-credentials", priority: STRUCTURAL });
    return;
  }
  const user = userinfo.slice(0, atSign);
  if (user.length >= 20 && /\d/.test(user) && !isPlaceholder(user) && shannonEntropy(user) >= 3.5) {
    spans.push({ start: authorityStart, end: authorityStart + atSign, kind: "url-credentials", priority: STRUCTURAL });
  }
}

function isNameCharBefore(text: string, index: number): boolean {
  const char = text[index] ?? "";
  if (!NAME_CHAR.test(char)) return false;
  return !((char === "n" || char === "r" || char === "t") && text[index - 1] === "\\");
}

/** A context word hit: find the surrounding name, then an Authorization header or a secret assignment. */
function matchContext(text: string, at: number, compiled: Compiled, state: ScanState, spans: Span[]): void {
  let start = at;
  while (start > 0 && isNameCharBefore(text, start - 1)) if (at - --start > MAX_NAME_LENGTH) return;
  let end = at;
  while (end < text.length && NAME_CHAR.test(text[end] ?? "")) if (++end - start > MAX_NAME_LENGTH) return;
  if (start === state.nameStart) return; // another trigger inside a name already examined
  state.nameStart = start;
  if (text[start - 1] === "$" || (text[start - 1] === "{" && text[start - 2] === "$")) return; // $X, ${X:-default}
  const name = text.slice(start, end);
  if (name === "PWD") return; // the shell's working directory, not a password (`env` output)
  if (name.toLowerCase().endsWith("authorization")) {
    matchAuthorization(text, end, compiled, spans);
    return;
  }
  const words = nameWords(name);
  if (isSecretName(words)) matchAssignment(text, end, words, compiled, spans);
}

function matchAssignment(text: string, nameEnd: number, words: readonly string[], compiled: Compiled, spans: Span[]): void {
  compiled.assignment.lastIndex = nameEnd;
  const separator = compiled.assignment.exec(text);
  if (separator === null) return;
  const valueStart = nameEnd + separator[0].length;
  const quote = separator[1]?.at(-1);
  let index = valueStart;
  if (quote !== undefined) {
    while (index < text.length && index - valueStart <= MAX_VALUE_LENGTH) {
      const char = text[index] ?? "";
      if (char === quote || char === "\\" || /\s/.test(char)) break;
      index++;
    }
    const closing = text[index] === "\\" ? text[index + 1] : text[index];
    if (closing !== quote) return;
  } else {
    while (index < text.length && index - valueStart <= MAX_VALUE_LENGTH && VALUE_CHAR.test(text[index] ?? "")) index++;
    while (text[index] === "=") index++; // base64 padding
    if (index < text.length && !VALUE_END.test(text[index] ?? "")) return; // a call, index or object: code
  }
  const value = text.slice(valueStart, index);
  if (!looksLikeSecretValue(value)) return;
  const aws = (words.includes("aws") || (words.includes("secret") && words.includes("access")))
    && /^[A-Za-z0-9/+]{40}$/.test(value);
  spans.push({ start: valueStart, end: index, kind: aws ? "aws-secret-key" : "secret-assignment", priority: ASSIGNMENT });
}

function matchAuthorization(text: string, nameEnd: number, compiled: Compiled, spans: Span[]): void {
  compiled.authSeparator.lastIndex = nameEnd;
  const separator = compiled.authSeparator.exec(text);
  if (separator === null) return;
  let start = nameEnd + separator[0].length;
  compiled.authScheme.lastIndex = start;
  const scheme = compiled.authScheme.exec(text);
  if (scheme !== null) start += scheme[0].length;
  let end = start;
  if (scheme !== null && PARAMETER_SCHEMES.has((scheme[1] ?? "").toLowerCase())) {
    const quote = separator[1]?.at(-1);
    while (end < text.length && end - start <= 4096 && !/[\r\n\\]/.test(text[end] ?? "") && text[end] !== quote) end++;
    const params = text.slice(start, end);
    if (params.length < 8 || !params.includes("=") || isPlaceholder(params)) return;
  } else {
    while (end < text.length && end - start <= 4096 && CREDENTIAL_CHAR.test(text[end] ?? "")) end++;
    const credential = text.slice(start, end);
    if (scheme !== null ? !looksLikeCredential(credential, 8) : !looksLikeSecretValue(credential)) return;
  }
  spans.push({ start, end, kind: "authorization-header", priority: STRUCTURAL });
}

function findSpans(text: string, compiled: Compiled): Span[] {
  const spans: Span[] = [];
  const state: ScanState = { nameStart: -1, footerAt: 0 };
  const { scan } = compiled;
  scan.lastIndex = 0;
  for (let hit = scan.exec(text); hit !== null; hit = scan.exec(text)) {
    const at = hit.index;
    const trigger = hit[0];
    let next = at + trigger.length;
    const entries = compiled.byTrigger.get(trigger);
    if (entries !== undefined) next = Math.max(next, matchToken(text, at, entries, spans));
    else if (trigger === "-----BEGIN") next = Math.max(next, matchPrivateKey(text, at, compiled, state, spans));
    else if (trigger === "://") matchUrl(text, at, spans);
    else matchContext(text, at, compiled, state, spans);
    scan.lastIndex = next;
  }
  for (const secret of compiled.known) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + secret.length)) {
      spans.push({ start: at, end: at + secret.length, kind: "known-secret", priority: KNOWN });
    }
  }
  return spans;
}

/** The marker for a span, keeping every line break the span covered. */
function replacement(covered: string, kind: RedactionKind): string {
  const marker = redactionMarker(kind);
  const breaks = covered.match(/\r\n|\r|\n/g);
  if (breaks === null) return marker;
  return /^[\r\n]/.test(covered) ? `${breaks[0]}${marker}${breaks.slice(1).join("")}` : `${marker}${breaks.join("")}`;
}

/** Merges overlapping spans (union; the most specific kind wins) and splices in the markers. */
function applySpans(text: string, spans: Span[]): Redaction {
  spans.sort((a, b) => a.start - b.start || a.priority - b.priority);
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last !== undefined && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
      if (span.priority < last.priority) Object.assign(last, { kind: span.kind, priority: span.priority });
    } else {
      merged.push({ ...span });
    }
  }
  const parts: string[] = [];
  const kinds: Record<RedactionKind, number> = {};
  let cursor = 0;
  for (const span of merged) {
    parts.push(text.slice(cursor, span.start), replacement(text.slice(span.start, span.end), span.kind));
    kinds[span.kind] = (kinds[span.kind] ?? 0) + 1;
    cursor = span.end;
  }
  parts.push(text.slice(cursor));
  return { text: parts.join(""), count: merged.length, kinds };
}

/** A full-width PEM body line: exactly 64 base64 characters. */
const PEM_BODY_LINE = /^[ \t]*[A-Za-z0-9+/]{64}[ \t]*\r?$/;
const PUBLIC_PEM_BEGIN = /-----BEGIN (?!.*PRIVATE)[A-Z0-9 ]+-----/;

/** Whether the lines before a body (skipping blanks and armor headers like `Version:`) open a public block. */
function opensPublicBlock(lines: string[], bodyStart: number): boolean {
  for (let index = bodyStart - 1; index >= 0 && index >= bodyStart - 6; index--) {
    const line = lines[index] ?? "";
    if (PUBLIC_PEM_BEGIN.test(line)) return true;
    if (line.trim() !== "" && !/^[A-Za-z-]+: /.test(line)) return false;
  }
  return false;
}

/**
 * Key material seen without its BEGIN line (a read window that starts mid-key, a search
 * hit): two or more consecutive full-width PEM body lines are redacted, unless the line
 * right before them opens a public block (a certificate, a public key).
 */
function redactOrphanPemBodies(result: Redaction): Redaction {
  if (!/[A-Za-z0-9+/]{64}/.test(result.text)) return result;
  const lines = result.text.split("\n");
  let count = 0;
  for (let index = 0; index < lines.length; ) {
    if (!PEM_BODY_LINE.test(lines[index] ?? "")) {
      index++;
      continue;
    }
    let end = index;
    while (end < lines.length && PEM_BODY_LINE.test(lines[end] ?? "")) end++;
    if (end - index >= 2 && !opensPublicBlock(lines, index)) {
      lines[index] = redactionMarker("private-key");
      for (let blank = index + 1; blank < end; blank++) lines[blank] = "";
      count++;
    }
    index = end;
  }
  if (count === 0) return result;
  const kinds = { ...result.kinds, "private-key": (result.kinds["private-key"] ?? 0) + count };
  return { text: lines.join("\n"), count: result.count + count, kinds };
}

export function createRedactor(options: { knownSecrets?: readonly string[] } = {}): Redactor {
  const compiled = compile(options.knownSecrets ?? []);
  return {
    redact(text: string): Redaction {
      const spans = findSpans(text, compiled);
      return redactOrphanPemBodies(spans.length === 0 ? { text, count: 0, kinds: {} } : applySpans(text, spans));
    },
    mayContainSecrets(text: string): boolean {
      compiled.scan.lastIndex = 0;
      const hit = compiled.scan.test(text);
      compiled.scan.lastIndex = 0;
      return hit || compiled.known.some((secret) => text.includes(secret));
    },
  };
}
