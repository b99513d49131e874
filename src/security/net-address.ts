/**
 * Which network destinations the agent may reach: the SSRF guard behind URL reads.
 *
 * A destination is allowed only when it is public: every address a name resolves to must be a
 * globally routable unicast address. IPv6 forms that carry an IPv4 address (mapped, compatible,
 * NAT64, 6to4, Teredo) are judged by the address they carry, and numeric host spellings
 * (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) are read the way URL parsers read them, so no
 * spelling of a private address passes as a name.
 */

export type AddressVerdict = { public: true } | { public: false; reason: string };

const PUBLIC: AddressVerdict = { public: true };
const refused = (reason: string): AddressVerdict => ({ public: false, reason });

// ---- IPv4 ----

/** Non-public IPv4 ranges (IANA special-purpose registry, plus cloud metadata endpoints). */
const IPV4_BLOCKED: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "unspecified (this network)"],
  ["10.0.0.0", 8, "private"],
  ["100.100.100.200", 32, "cloud metadata"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.169.254", 32, "cloud metadata"],
  ["169.254.0.0", 16, "link-local"],
  ["168.63.129.16", 32, "cloud metadata"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
  ["255.255.255.255", 32, "broadcast"],
];

const IPV4_RANGES = IPV4_BLOCKED.map(([base, bits, reason]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (parseIPv4(base)! & mask) >>> 0, mask, reason };
});

/**
 * An IPv4 address in any spelling a URL host parser accepts (WHATWG "IPv4 parser"): one to four
 * dot-separated parts, each decimal, `0x` hex or `0`-prefixed octal, the last part filling the
 * remaining bytes. A single trailing dot is allowed. Undefined when the text is not such a number.
 */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length > 1 && parts.at(-1) === "") parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = parseIPv4Part(part);
    if (value === undefined) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let address = last;
  numbers.forEach((n, i) => (address += n * 256 ** (3 - i)));
  return address >>> 0;
}

function parseIPv4Part(part: string): number | undefined {
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
  } else if (part.length > 1 && part.startsWith("0")) {
    digits = part.slice(1);
    radix = 8;
  }
  if (digits === "") return radix === 10 ? undefined : 0; // "0x" alone reads as 0, as in URL parsers
  const pattern = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return undefined;
  const value = Number.parseInt(digits, radix);
  return Number.isSafeInteger(value) && value <= 0xffffffff ? value : Number.POSITIVE_INFINITY;
}

export function formatIPv4(address: number): string {
  return [24, 16, 8, 0].map((shift) => (address >>> shift) & 0xff).join(".");
}

/** What a non-public IPv4 address is ("loopback", "private", ...); undefined when it is public. */
function ipv4Kind(address: number): string | undefined {
  return IPV4_RANGES.find((range) => ((address & range.mask) >>> 0) === range.base)?.reason;
}

export function classifyIPv4(address: number): AddressVerdict {
  const kind = ipv4Kind(address);
  return kind === undefined ? PUBLIC : refused(`${formatIPv4(address)} is ${kind}`);
}

// ---- IPv6 ----

/** An IPv6 address as a 128-bit integer; brackets allowed; zone ids (`%eth0`) are refused. */
export function parseIPv6(text: string): bigint | undefined {
  let body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (body.includes("%") || !/^[0-9a-f:.]+$/i.test(body)) return undefined;
  const lastColon = body.lastIndexOf(":");
  const quad = body.slice(lastColon + 1);
  if (quad.includes(".")) {
    // A trailing dotted quad stands for the last two words.
    if (lastColon === -1 || !/^\d{1,3}(\.\d{1,3}){3}$/.test(quad)) return undefined;
    const bytes = quad.split(".").map(Number);
    if (bytes.some((b) => b > 255)) return undefined;
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    body = `${body.slice(0, lastColon + 1)}${hex(bytes[0]!, bytes[1]!)}:${hex(bytes[2]!, bytes[3]!)}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  const given = head.length + rest.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  const words = [...head.map((g) => Number.parseInt(g, 16)), ...Array(8 - given).fill(0), ...rest.map((g) => Number.parseInt(g, 16))];
  return words.reduce((acc: bigint, word: number) => (acc << 16n) | BigInt(word), 0n);
}

function ipv6Range(base: string, bits: number) {
  const mask = bits === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - bits)) - 1n);
  return { base: parseIPv6(base)! & mask, mask };
}
const inRange = (address: bigint, range: { base: bigint; mask: bigint }) => (address & range.mask) === range.base;

/** Forms that carry an IPv4 address: judged by that address. */
const IPV6_EMBEDDING: ReadonlyArray<{ range: { base: bigint; mask: bigint }; name: string; extract: (a: bigint) => number[] }> = [
  { range: ipv6Range("::ffff:0:0", 96), name: "IPv4-mapped", extract: (a) => [Number(a & 0xffffffffn)] },
  { range: ipv6Range("::", 96), name: "IPv4-compatible", extract: (a) => [Number(a & 0xffffffffn)] },
  { range: ipv6Range("64:ff9b::", 96), name: "NAT64", extract: (a) => [Number(a & 0xffffffffn)] },
  { range: ipv6Range("2002::", 16), name: "6to4", extract: (a) => [Number((a >> 80n) & 0xffffffffn)] },
  // Teredo: the server's address in bits 32–63, the client's inverted in the last 32 bits.
  { range: ipv6Range("2001::", 32), name: "Teredo", extract: (a) => [Number((a >> 64n) & 0xffffffffn), Number(~a & 0xffffffffn)] },
];

/** Non-public IPv6 ranges checked after the embedding forms; anything outside 2000::/3 is refused too. */
const IPV6_BLOCKED = [
  { range: ipv6Range("64:ff9b:1::", 48), reason: "local-use NAT64" },
  { range: ipv6Range("2001::", 23), reason: "IETF protocol assignments" },
  { range: ipv6Range("2001:db8::", 32), reason: "documentation" },
  { range: ipv6Range("3fff::", 20), reason: "documentation" },
];
const IPV6_GLOBAL_UNICAST = ipv6Range("2000::", 3);
const IPV6_NAMED = [
  { range: ipv6Range("fd00:ec2::254", 128), reason: "cloud metadata" },
  { range: ipv6Range("::", 128), reason: "unspecified" },
  { range: ipv6Range("::1", 128), reason: "loopback" },
  { range: ipv6Range("fc00::", 7), reason: "unique local (private)" },
  { range: ipv6Range("fe80::", 10), reason: "link-local" },
  { range: ipv6Range("fec0::", 10), reason: "site-local" },
  { range: ipv6Range("ff00::", 8), reason: "multicast" },
];

/** RFC 5952 text: lowercase, the longest run of two or more zero words shortened to `::`. */
export function formatIPv6(address: bigint): string {
  const words = Array.from({ length: 8 }, (_, i) => Number((address >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && words[j] === 0) j += 1;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = (list: number[]) => list.map((w) => w.toString(16)).join(":");
  if (best.start === -1) return hex(words);
  return `${hex(words.slice(0, best.start))}::${hex(words.slice(best.start + best.length))}`;
}

export function classifyIPv6(address: bigint): AddressVerdict {
  const shown = formatIPv6(address);
  for (const named of IPV6_NAMED) if (inRange(address, named.range)) return refused(`${shown} is ${named.reason}`);
  for (const form of IPV6_EMBEDDING) {
    if (!inRange(address, form.range)) continue;
    for (const embedded of form.extract(address)) {
      const kind = ipv4Kind(embedded >>> 0);
      if (kind !== undefined) return refused(`${shown} is ${form.name} for ${formatIPv4(embedded >>> 0)}, which is ${kind}`);
    }
    return PUBLIC; // judged by what it carries (Teredo, inside 2001::/23, included)
  }
  for (const blocked of IPV6_BLOCKED) if (inRange(address, blocked.range)) return refused(`${shown} is ${blocked.reason}`);
  if (!inRange(address, IPV6_GLOBAL_UNICAST)) return refused(`${shown} is reserved (outside global unicast 2000::/3)`);
  return PUBLIC;
}

/** An address literal as a resolver returns it (IPv4 dotted or IPv6, brackets allowed). */
export function classifyAddress(text: string): AddressVerdict {
  const v6 = text.includes(":") ? parseIPv6(text) : undefined;
  if (v6 !== undefined) return classifyIPv6(v6);
  const v4 = text.includes(":") ? undefined : parseIPv4(text);
  if (v4 !== undefined) return classifyIPv4(v4);
  return refused(`${JSON.stringify(text)} is not an IP address`);
}
