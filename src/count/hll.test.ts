// NIP-45 HyperLogLog against nostr-tools' implementation (nostr-tools/nip45), and which COUNT
// requests are eligible for it.
import { describe, expect, test } from "bun:test";
import { computeOffset, estimateCount, feedPubkey, hllEncode, newHll } from "nostr-tools/nip45";
import { Hll, hllOffset } from "./hll.ts";
import { hllShape } from "./shapes.ts";

const rand = (bytes: number): string =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");

/** Random pubkeys, some with runs of zero bytes at every position so long zero counts occur. */
function pubkeys(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    // Derived, not random: estimates checked against bounds must not depend on the run.
    const b = new Uint8Array(new Bun.CryptoHasher("sha256").update(`pk-${i}`).digest());
    if (i % 3 === 0) b.fill(0, i % 30, (i % 30) + 1 + (i % 9));
    return Buffer.from(b).toString("hex");
  });
}

describe("offset", () => {
  test("matches nostr-tools for hex ids, addresses and other strings", () => {
    const values = [
      ...Array.from({ length: 50 }, () => rand(32)),
      ...Array.from({ length: 20 }, () => `30023:${rand(32)}:my-article`),
      "hello",
      "",
      "nostr",
      "30023:nothex:d",
      "ABCDEF".repeat(10) + "ABCD",
    ];
    for (const v of values) expect(hllOffset(v)).toBe(computeOffset(v));
    for (const v of values) expect(hllOffset(v)).toBeWithin(8, 24);
  });
});

describe("registers", () => {
  test("match nostr-tools for every offset the NIP can produce", () => {
    const keys = pubkeys(2000);
    for (let offset = 8; offset <= 23; offset++) {
      const ours = new Hll(offset);
      let theirs = newHll();
      for (const pk of keys) {
        ours.add(pk);
        theirs = feedPubkey(theirs, pk, offset);
      }
      expect(ours.hex()).toBe(hllEncode(theirs));
    }
  });

  test("a pubkey read in place from a longer string gives the same registers", () => {
    const pk = pubkeys(1)[0]!;
    const a = new Hll(12);
    const b = new Hll(12);
    a.add(pk);
    b.add(`{"id":"${"0".repeat(64)}","pubkey":"${pk}"`, 83);
    expect(b.hex()).toBe(a.hex());
  });

  test("zero bytes after the register byte count 8 bits each, up to 7 bytes", () => {
    const h = new Hll(8);
    h.add(`${"11".repeat(8)}05${"00".repeat(7)}${"ff".repeat(16)}`);
    expect(h.registers[5]).toBe(57);
    h.add(`${"11".repeat(8)}06${"00".repeat(2)}20${"ff".repeat(20)}`);
    expect(h.registers[6]).toBe(16 + 2 + 1);
  });

  test("the estimate is near the number of distinct pubkeys; repeats do not count", () => {
    const keys = pubkeys(5000);
    const h = new Hll(16);
    for (const pk of [...keys, ...keys]) h.add(pk);
    expect(Math.abs(estimateCount(h.registers) - 5000) / 5000).toBeLessThan(0.2);
    expect(h.hex()).toMatch(/^[0-9a-f]{512}$/);
  });

  test("offsets outside 0..24 are refused", () => {
    expect(() => new Hll(25)).toThrow();
    expect(() => new Hll(-1)).toThrow();
  });
});

describe("eligible COUNT requests", () => {
  const id = rand(32);
  const eligible: [string, Record<string, unknown>][] = [
    ["reactions", { "#e": [id], kinds: [7] }],
    ["reposts", { "#e": [id], kinds: [6] }],
    ["replies", { "#e": [id], kinds: [1] }],
    ["quotes, kinds in any order", { "#q": [id], kinds: [1111, 1] }],
    ["comments", { "#E": [id], kinds: [1111] }],
    ["followers", { "#p": [id], kinds: [3] }],
    ["with a limit, which COUNT ignores", { "#p": [id], kinds: [3], limit: 5 }],
  ];
  const toFilter = (raw: Record<string, unknown>) => {
    const tags = Object.entries(raw)
      .filter(([k]) => k.startsWith("#"))
      .map(([k, v]) => [k.slice(1), v] as [string, string[]]);
    const { kinds, limit, authors, since } = raw as Record<string, never>;
    return { kinds, limit, authors, since, ...(tags.length ? { tags } : {}) };
  };
  for (const [name, raw] of eligible)
    test(`${name}: ${JSON.stringify(raw).replace(id, "<id>")}`, () => {
      expect(hllShape([toFilter(raw)])?.offset).toBe(computeOffset(id));
    });

  const not: [string, Record<string, unknown>][] = [
    ["two values", { "#e": [id, rand(32)], kinds: [7] }],
    ["another kind", { "#e": [id], kinds: [9735] }],
    ["extra kind", { "#e": [id], kinds: [7, 6] }],
    ["no kinds", { "#e": [id] }],
    ["wrong tag for the kind", { "#p": [id], kinds: [7] }],
    ["with authors", { "#e": [id], kinds: [7], authors: [rand(32)] }],
    ["with since", { "#p": [id], kinds: [3], since: 5 }],
  ];
  for (const [name, raw] of not)
    test(`not ${name}`, () => {
      expect(hllShape([toFilter(raw)])).toBeUndefined();
    });
  test("not two filters", () => {
    const f = { kinds: [7], tags: [["e", [id]]] as [string, string[]][] };
    expect(hllShape([f, f])).toBeUndefined();
  });
});
