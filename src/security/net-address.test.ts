import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { classifyAddress, classifyIPv4, classifyIPv6, formatIPv4, formatIPv6, parseIPv4, parseIPv6 } from "./net-address.ts";
import { checkDestination, checkUrl, type Resolve } from "./net-target.ts";

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u128 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
const v4 = (text: string) => parseIPv4(text)!;
const v6 = (text: string) => parseIPv6(text)!;

/** An address inside base/bits. */
const inV4Range = (base: string, bits: number) =>
  fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((offset) => (v4(base) + offset) >>> 0);

const NON_PUBLIC_V4: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF"],
  ["192.0.2.0", 24, "documentation"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

describe("IPv4", () => {
  test("every address of every non-public range is refused, naming the range", () => {
    for (const [base, bits, kind] of NON_PUBLIC_V4) {
      fc.assert(
        fc.property(inV4Range(base, bits), (address) => {
          const verdict = classifyIPv4(address);
          expect(verdict.public).toBe(false);
          if (!verdict.public && !verdict.reason.includes("cloud metadata")) expect(verdict.reason).toContain(kind);
        }),
        { numRuns: 200 },
      );
    }
  });

  test("cloud metadata addresses are refused, including Azure's inside public space", () => {
    for (const address of ["169.254.169.254", "168.63.129.16", "100.100.100.200"]) {
      expect(classifyAddress(address)).toEqual({ public: false, reason: `${address} is cloud metadata` });
    }
    expect(classifyAddress("168.63.129.17").public).toBe(true);
  });

  test("well-known public addresses and the edges just outside private ranges are public", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255", "192.169.0.0", "223.255.255.255"]) {
      expect(classifyAddress(address)).toEqual({ public: true });
    }
  });

  test("numeric spellings (decimal, hex, octal, short forms) parse as URL parsers read them", () => {
    const spellings = (a: number): string[] => {
      const b = [24, 16, 8, 0].map((s) => (a >>> s) & 0xff);
      return [
        String(a),
        `0x${a.toString(16)}`,
        `0${a.toString(8)}`,
        b.map((x) => `0x${x.toString(16)}`).join("."),
        b.map((x) => `0${x.toString(8)}`).join("."),
        `${b[0]}.${(a & 0xffffff) >>> 0}`,
        `${b[0]}.${b[1]}.${a & 0xffff}`,
        `${b.join(".")}.`,
      ];
    };
    fc.assert(
      fc.property(u32, (address) => {
        for (const spelling of spellings(address)) {
          expect(parseIPv4(spelling)).toBe(address);
          expect(new URL(`http://${spelling}/`).hostname).toBe(formatIPv4(address));
        }
      }),
      { numRuns: 300 },
    );
  });

  test("texts that are not IPv4 numbers are names, as for URL parsers", () => {
    for (const text of ["example.com", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "08.1.1.1", "0x", "1e1", "", "1..1", "4294967296"]) {
      const parsed = parseIPv4(text);
      if (text === "0x") expect(parsed).toBe(0);
      else expect(parsed).toBeUndefined();
    }
  });
});

describe("IPv6", () => {
  test("format is the canonical text a URL parser prints, and parse reads it back", () => {
    fc.assert(
      fc.property(u128, (address) => {
        const text = formatIPv6(address);
        expect(parseIPv6(text)).toBe(address);
        expect(new URL(`http://[${text}]/`).hostname).toBe(`[${text}]`);
      }),
      { numRuns: 500 },
    );
  });

  test("zero runs near the edges (the shapes a random address rarely has) round-trip too", () => {
    const words = fc.array(fc.constantFrom(0, 0, 0, 1, 0xffff), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(words, (list) => {
        const address = list.reduce((acc, w) => (acc << 16n) | BigInt(w), 0n);
        expect(new URL(`http://[${formatIPv6(address)}]/`).hostname).toBe(`[${formatIPv6(address)}]`);
        expect(parseIPv6(list.map((w) => w.toString(16)).join(":"))).toBe(address);
      }),
    );
  });

  test("malformed texts and zone ids are not addresses", () => {
    for (const text of ["1:2:3:4:5:6:7:8:9", "1:::2", "1::2::3", "12345::", "fe80::1%eth0", "::ffff:1.2.3", "::ffff:1.2.3.256", "g::1", ":", "1:2:3:4:5:6:7"]) {
      expect(parseIPv6(text)).toBeUndefined();
    }
    expect(parseIPv6("::ffff:1.2.3.4")).toBe(v6("::ffff:102:304"));
    expect(parseIPv6("[::1]")).toBe(1n);
  });

  const embed = {
    mapped: (a: number) => (0xffffn << 32n) | BigInt(a),
    compatible: (a: number) => BigInt(a),
    nat64: (a: number) => v6("64:ff9b::") | BigInt(a),
    sixToFour: (a: number) => v6("2002::") | (BigInt(a) << 80n),
    teredoClient: (a: number) => v6("2001::") | (BigInt(v4("8.8.8.8")) << 64n) | (~BigInt(a) & 0xffffffffn),
    teredoServer: (a: number) => v6("2001::") | (BigInt(a) << 64n) | (~BigInt(v4("8.8.4.4")) & 0xffffffffn),
  };

  test("IPv4-carrying forms are judged by the IPv4 address they carry", () => {
    for (const [name, wrap] of Object.entries(embed)) {
      fc.assert(
        fc.property(fc.oneof(u32, ...NON_PUBLIC_V4.map(([base, bits]) => inV4Range(base, bits))), (address) => {
          const inner = classifyIPv4(address).public;
          const outer = classifyIPv6(wrap(address));
          if (outer.public !== inner) throw new Error(`${name} ${formatIPv4(address)}: IPv4 ${inner}, IPv6 ${JSON.stringify(outer)}`);
        }),
        { numRuns: 300 },
      );
    }
  });

  test("the named non-public ranges are refused", () => {
    const cases: Array<[string, string]> = [
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["fd00:ec2::254", "cloud metadata"],
      ["fc00::1", "unique local"],
      ["fdff:ffff::1", "unique local"],
      ["fe80::1", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "documentation"],
      ["3fff::1", "documentation"],
      ["64:ff9b:1::1", "local-use NAT64"],
      ["2001:2::1", "IETF protocol assignments"],
      ["100::1", "reserved"],
      ["4000::1", "reserved"],
      ["::ffff:169.254.169.254", "cloud metadata"],
      ["::ffff:10.0.0.1", "private"],
    ];
    for (const [text, kind] of cases) {
      const verdict = classifyAddress(text);
      expect(verdict.public).toBe(false);
      if (!verdict.public) expect(verdict.reason).toContain(kind);
    }
  });

  test("global unicast outside the special blocks is public", () => {
    const globalUnicast = u128.map((a) => (a & ((1n << 125n) - 1n)) | (1n << 125n)); // 2000::/3
    fc.assert(
      fc.property(globalUnicast, (address) => {
        const special = ["2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20"].some((cidr) => {
          const [base, bits] = cidr.split("/") as [string, string];
          return address >> BigInt(128 - Number(bits)) === v6(base) >> BigInt(128 - Number(bits));
        });
        fc.pre(!special);
        expect(classifyIPv6(address)).toEqual({ public: true });
      }),
      { numRuns: 500 },
    );
    for (const text of ["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e"]) expect(classifyAddress(text).public).toBe(true);
  });
});

describe("URLs", () => {
  const refusedUrls: Array<[string, string]> = [
    ["file:///etc/passwd", "only http and https"],
    ["ftp://example.com/", "only http and https"],
    ["gopher://example.com/", "only http and https"],
    ["https://user:pw@example.com/", "credentials"],
    ["https://user@example.com/", "credentials"],
    ["http://localhost:8080/", "local name"],
    ["http://LOCALHOST./", "local name"],
    ["http://localhost../", "local name"],
    ["http://printer.local../", "local name"],
    ["http://api.localhost/", "local name"],
    ["http://printer.local/", "local name"],
    ["http://metadata.google.internal/computeMetadata/v1/", "local name"],
    ["http://router.home.arpa/", "local name"],
    ["http://intranet/", "single-label"],
    ["http://127.0.0.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://0/", "unspecified"],
    ["http://0x0a.0.0.1/", "private"],
    ["http://169.254.169.254/latest/meta-data/", "cloud metadata"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://[::127.0.0.1]/", "loopback"],
    ["http://[64:ff9b::7f00:1]/", "loopback"],
    ["http://[2002:7f00:1::]/", "loopback"],
    ["http://[2002:a9fe:a9fe::]/", "cloud metadata"],
    ["http://[2001:0:808:808::80ff:fefe]/", "loopback"],
    ["http://[fd00:ec2::254]/", "cloud metadata"],
    ["http://[fe80::1]/", "link-local"],
    ["not a url", "not a valid URL"],
    ["http://[fe80::1%25eth0]/", "not a valid URL"],
  ];

  test("refused before any DNS lookup, with the reason", async () => {
    let lookups = 0;
    const resolve: Resolve = async () => {
      lookups += 1;
      return ["8.8.8.8"];
    };
    for (const [url, why] of refusedUrls) {
      const result = await checkDestination(url, resolve);
      if (result.ok) throw new Error(`${url} was allowed`);
      expect(result.reason).toContain(why);
    }
    expect(lookups).toBe(0);
  });

  test("public literals and names pass; the trailing dot of a name is dropped", () => {
    expect(checkUrl("https://8.8.8.8/x")).toMatchObject({ ok: true, hostname: "8.8.8.8", literal: true });
    expect(checkUrl("https://[2606:4700::1111]/")).toMatchObject({ ok: true, hostname: "2606:4700::1111", literal: true });
    expect(checkUrl("https://Example.COM./a?b#c")).toMatchObject({ ok: true, hostname: "example.com", literal: false });
  });

  test("a name is refused when ANY of its addresses is not public, and when it does not resolve", async () => {
    const answers: Record<string, string[]> = {
      "mixed.example": ["93.184.216.34", "10.0.0.7"],
      "mixed6.example": ["2606:4700::1111", "::1"],
      "mapped.example": ["::ffff:169.254.169.254"],
      "public.example": ["93.184.216.34", "2606:4700::1111"],
      "empty.example": [],
    };
    const resolve: Resolve = async (host) => {
      const found = answers[host];
      if (found === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return found;
    };
    expect(await checkDestination("http://mixed.example/", resolve)).toEqual({ ok: false, reason: "mixed.example resolves to 10.0.0.7 is private: not a public address" });
    expect(await checkDestination("http://mixed6.example/", resolve)).toMatchObject({ ok: false, reason: expect.stringContaining("loopback") });
    expect(await checkDestination("http://mapped.example/", resolve)).toMatchObject({ ok: false, reason: expect.stringContaining("cloud metadata") });
    expect(await checkDestination("http://empty.example/", resolve)).toEqual({ ok: false, reason: "empty.example did not resolve" });
    expect(await checkDestination("http://nowhere.example/", resolve)).toEqual({ ok: false, reason: "nowhere.example did not resolve (ENOTFOUND)" });
    const ok = await checkDestination("https://public.example/page", resolve);
    expect(ok).toMatchObject({ ok: true, hostname: "public.example", addresses: ["93.184.216.34", "2606:4700::1111"] });
  });
});
