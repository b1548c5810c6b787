// Property tests for the binary key layouts: LMDB orders keys bytewise, so every layout must make
// byte order equal tuple order, and the integer fields must round-trip. A seeded PRNG drives them;
// set KEYS_SEED to replay another seed.
import { describe, expect, test } from "bun:test";
import { Gen as BaseGen } from "../../test/gen.ts";
import {
  hexBytes,
  indexKey,
  keySerial,
  keyTime,
  kindBytes,
  pubkindPrefix,
  readReplaceable,
  readU64,
  replaceableKey,
  replaceableValue,
  serialKey,
  TIME_PREFIX,
  tagPrefix,
} from "./keys.ts";

const SEED = Number(process.env.KEYS_SEED ?? 0x6b657973);
const N = 4000;

class Gen extends BaseGen {
  /** Any integer in [0, 2^53-1], biased towards byte and word boundaries. */
  u53(): number {
    switch (this.int(4)) {
      case 0:
        return this.pick(BOUNDARIES);
      case 1:
        return this.int(1 << 16);
      case 2:
        return this.int(2 ** 21) * 2 ** 32 + this.int(2 ** 32);
      default: {
        const b = this.pick(BOUNDARIES);
        return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, b + this.int(5) - 2));
      }
    }
  }
  /** A tag value: ASCII, multi-byte, hex-looking and exactly-hex strings, up to 255 UTF-8 bytes. */
  tagValue(): string {
    switch (this.int(9)) {
      case 0:
        return this.hex(64);
      case 1:
        return this.hex(64).toUpperCase();
      case 2:
        return this.hex(this.pick([63, 65, 32, 0, 1]));
      case 3:
        return `${this.hex(63)}g`;
      case 4:
        return this.pick([
          "",
          "a",
          "b",
          "ab",
          "ba",
          "aa",
          "nostr",
          "\u0000",
          "\u007f",
          "\u0080",
          "é",
          "€",
          "😀",
        ]);
      case 5:
        return "x".repeat(this.pick([31, 32, 33, 254, 255]));
      case 6:
        return "é".repeat(this.int(128)); // 2 bytes each: up to 254
      default: {
        let s = "";
        const len = this.int(12);
        for (let i = 0; i < len; i++)
          s += this.pick(["a", "b", "z", "A", "0", ":", " ", "é", "€", "😀", "\u00ff"]);
        return s;
      }
    }
  }
}

const BOUNDARIES = [
  0,
  1,
  0xff,
  0x100,
  0xffff,
  0x10000,
  0x7fffffff,
  0x80000000,
  0xffffffff,
  0x1_0000_0000,
  0x1_0000_0001,
  0xff_ffff_ffff,
  0x1_0000_0000_0000,
  1_700_000_000,
  2 ** 52,
  Number.MAX_SAFE_INTEGER - 1,
  Number.MAX_SAFE_INTEGER,
];

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const cmpNum = (a: number, b: number): number => sign(a - b);
const cmpStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const utf8 = (s: string): Buffer => Buffer.from(s, "utf8");
const isLowerHex64 = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);

/** Lexicographic tuple comparison from per-field comparisons, evaluated lazily. */
const lex = (...cmps: (() => number)[]): number => {
  for (const c of cmps) {
    const r = c();
    if (r !== 0) return r;
  }
  return 0;
};

/** The documented order of tag values within one letter: plain values (by UTF-8 length, then bytes), then hex. */
function cmpTagValue(a: string, b: string): number {
  const ha = isLowerHex64(a);
  const hb = isLowerHex64(b);
  if (ha !== hb) return ha ? 1 : -1;
  if (ha) return cmpStr(a, b); // lowercase hex order equals the order of the decoded bytes
  const ba = utf8(a);
  const bb = utf8(b);
  return lex(
    () => cmpNum(ba.length, bb.length),
    () => sign(Buffer.compare(ba, bb)),
  );
}

interface Layout<T> {
  name: string;
  gen: (g: Gen) => T;
  key: (t: T) => Buffer;
  cmp: (a: T, b: T) => number;
}

interface Tail {
  t: number;
  s: number;
}

const tail = (g: Gen, times: number[], serials: number[]): Tail => ({
  // small pools make ties on created_at (and on serial) common
  t: g.int(3) === 0 ? g.u53() : g.pick(times),
  s: g.int(3) === 0 ? g.u53() : g.pick(serials),
});
const cmpTail = (a: Tail, b: Tail) => [() => cmpNum(a.t, b.t), () => cmpNum(a.s, b.s)];

function layouts(g0: Gen): Layout<unknown>[] {
  // Pools shared by every tuple so equal prefixes are frequent. Pubkeys include near-neighbours
  // that differ only in their last byte.
  const base = g0.hex(62);
  const pubkeys = [
    g0.hex(64),
    g0.hex(64),
    `${base}00`,
    `${base}01`,
    `${base}ff`,
    "0".repeat(64),
    "f".repeat(64),
  ];
  const kinds = [0, 1, 3, 7, 255, 256, 10002, 30023, 65535];
  const times = [0, 1, 255, 256, 1_700_000_000, 1_700_000_001, Number.MAX_SAFE_INTEGER];
  const serials = [1, 2, 255, 256, 65536, Number.MAX_SAFE_INTEGER];
  const values = Array.from({ length: 24 }, () => g0.tagValue());

  type PK = Tail & { pk: string };
  type K = Tail & { kind: number };
  type PKK = Tail & { pk: string; kind: number };
  type TG = Tail & { v: string };

  const pubkey: Layout<PK> = {
    name: "pubkey | created_at | serial",
    gen: (g) => ({ pk: g.pick(pubkeys), ...tail(g, times, serials) }),
    key: (x) => indexKey(Buffer.from(x.pk, "hex"), x.t, x.s),
    cmp: (a, b) => lex(() => cmpStr(a.pk, b.pk), ...cmpTail(a, b)),
  };
  const kind: Layout<K> = {
    name: "kind | created_at | serial",
    gen: (g) => ({ kind: g.int(4) === 0 ? g.int(65536) : g.pick(kinds), ...tail(g, times, serials) }),
    key: (x) => indexKey(kindBytes(x.kind), x.t, x.s),
    cmp: (a, b) => lex(() => cmpNum(a.kind, b.kind), ...cmpTail(a, b)),
  };
  const pubkind: Layout<PKK> = {
    name: "pubkey | kind | created_at | serial",
    gen: (g) => ({ pk: g.pick(pubkeys), kind: g.pick(kinds), ...tail(g, times, serials) }),
    key: (x) => indexKey(pubkindPrefix(hexBytes(x.pk), x.kind), x.t, x.s),
    cmp: (a, b) =>
      lex(
        () => cmpStr(a.pk, b.pk),
        () => cmpNum(a.kind, b.kind),
        ...cmpTail(a, b),
      ),
  };
  const tag: Layout<TG> = {
    name: "tag (one letter) | value | created_at | serial",
    gen: (g) => ({ v: g.int(4) === 0 ? g.tagValue() : g.pick(values), ...tail(g, times, serials) }),
    key: (x) => indexKey(tagPrefix("e", x.v)!, x.t, x.s),
    cmp: (a, b) => lex(() => cmpTagValue(a.v, b.v), ...cmpTail(a, b)),
  };
  const time: Layout<Tail> = {
    name: "created_at | serial",
    gen: (g) => tail(g, times, serials),
    key: (x) => indexKey(TIME_PREFIX, x.t, x.s),
    cmp: (a, b) => lex(...cmpTail(a, b)),
  };
  return [pubkey, kind, pubkind, tag, time] as Layout<unknown>[];
}

const withSeed = (seed: number, fn: () => void): void => {
  try {
    fn();
  } catch (e) {
    console.error(`keys.test.ts failed with KEYS_SEED=${seed}`);
    throw e;
  }
};

describe("index key layouts", () => {
  for (const layout of layouts(new Gen(SEED))) {
    test(`byte order of ${layout.name} keys equals tuple order`, () => {
      withSeed(SEED, () => {
        const g = new Gen(SEED ^ 0x1234);
        const tuples = Array.from({ length: N }, () => layout.gen(g));
        const bad: string[] = [];
        const check = (a: unknown, b: unknown) => {
          const want = layout.cmp(a, b);
          const got = sign(Buffer.compare(layout.key(a), layout.key(b)));
          if (want !== got && bad.length < 5)
            bad.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: tuple ${want}, bytes ${got}`);
        };
        // Random pairs, then every neighbour in tuple order (which with transitivity covers all pairs).
        for (let i = 0; i < N; i++) check(tuples[i], tuples[g.int(N)]);
        const sorted = [...tuples].sort(layout.cmp);
        for (let i = 1; i < sorted.length; i++) check(sorted[i - 1], sorted[i]);
        const byBytes = [...tuples]
          .map((t) => ({ t, k: layout.key(t) }))
          .sort((a, b) => Buffer.compare(a.k, b.k));
        for (let i = 1; i < byBytes.length; i++) check(byBytes[i - 1]!.t, byBytes[i]!.t);
        expect(bad).toEqual([]);
      });
    });
  }

  test("tag prefixes of different (letter, value) pairs are never prefixes of one another", () => {
    withSeed(SEED, () => {
      const g = new Gen(SEED ^ 0x7a67);
      const letters = ["a", "d", "e", "p", "t", "E", "P", "Z"];
      const bad: string[] = [];
      for (let i = 0; i < N; i++) {
        const a = { l: g.pick(letters), v: g.tagValue() };
        const b = g.int(3) === 0 ? { l: a.l, v: g.tagValue() } : { l: g.pick(letters), v: g.tagValue() };
        if (a.l === b.l && a.v === b.v) continue;
        const pa = tagPrefix(a.l, a.v)!;
        const pb = tagPrefix(b.l, b.v)!;
        const n = Math.min(pa.length, pb.length);
        // Neither is a prefix of the other, so their key ranges cannot interleave whatever the tails.
        if (pa.subarray(0, n).equals(pb.subarray(0, n)) && bad.length < 5)
          bad.push(
            `${JSON.stringify(a)} / ${JSON.stringify(b)}: ${pa.toString("hex")} / ${pb.toString("hex")}`,
          );
      }
      expect(bad).toEqual([]);
    });
  });
});

describe("integer fields", () => {
  test("readU64, keyTime and keySerial round-trip every value up to 2^53-1", () => {
    withSeed(SEED, () => {
      const g = new Gen(SEED ^ 0x7536);
      const values = [...BOUNDARIES, ...Array.from({ length: N }, () => g.u53())];
      const prefixes = [
        Buffer.alloc(0),
        kindBytes(7),
        Buffer.from(g.hex(64), "hex"),
        tagPrefix("t", "nostr")!,
      ];
      const bad: string[] = [];
      for (const v of values) {
        const s = g.pick(values);
        const k = indexKey(g.pick(prefixes), v, s);
        const tk = indexKey(TIME_PREFIX, v, s);
        const got = [readU64(serialKey(v), 0), keyTime(k), keySerial(k), keyTime(tk), keySerial(tk)];
        if (got.join() !== [v, v, s, v, s].join() && bad.length < 5) bad.push(`${v}/${s} → ${got.join()}`);
        const id = g.hex(64);
        const r = readReplaceable(replaceableValue(s, v, id));
        if ((r.serial !== s || r.createdAt !== v || r.id !== id) && bad.length < 5)
          bad.push(`replaceable ${s}/${v}/${id} → ${JSON.stringify(r)}`);
      }
      expect(bad).toEqual([]);
    });
  });

  test("serial keys sort in numeric order", () => {
    withSeed(SEED, () => {
      const g = new Gen(SEED ^ 0x7365);
      for (let i = 0; i < N; i++) {
        const a = g.u53();
        const b = g.int(4) === 0 ? a : g.u53();
        expect(sign(Buffer.compare(serialKey(a), serialKey(b)))).toBe(cmpNum(a, b));
      }
    });
  });
});

describe("tag values", () => {
  test("a 64-char lowercase hex value is stored as 32 raw bytes under the letter with its high bit set", () => {
    const v = "0123456789abcdef".repeat(4);
    expect(tagPrefix("e", v)).toEqual(Buffer.concat([Buffer.from([0x65 | 0x80, 32]), Buffer.from(v, "hex")]));
    expect(tagPrefix("e", v.toUpperCase())).toEqual(
      Buffer.concat([Buffer.from([0x65, 64]), utf8(v.toUpperCase())]),
    );
  });

  test("the prefix of a 64-char hex value never collides with the prefix of any other value", () => {
    withSeed(SEED, () => {
      const g = new Gen(SEED ^ 0x6878);
      const bad: string[] = [];
      for (let i = 0; i < N; i++) {
        const hex = g.hex(64);
        // Other strings, including ones whose UTF-8 is exactly the 32 bytes the hex decodes to.
        const raw = Buffer.from(hex, "hex").toString("latin1");
        const other = g.pick([
          g.tagValue(),
          hex.toUpperCase(),
          hex.slice(1),
          `${hex}0`,
          "x".repeat(32),
          raw,
          Buffer.from(hex, "hex").toString("utf8"),
          g.hex(64),
        ]);
        if (other === hex) continue;
        const a = tagPrefix("p", hex)!;
        const b = tagPrefix("p", other);
        if (b?.equals(a) && bad.length < 5) bad.push(`${hex} collides with ${JSON.stringify(other)}`);
      }
      expect(bad).toEqual([]);
    });
  });

  test("distinct tag values of one letter never share a prefix, even with lone surrogates", () => {
    // NIP-01 tag values are JSON strings, and JSON.parse turns "\ud800" into a lone surrogate.
    // Two different strings must not be indexed under the same key, or the tag index returns
    // events for a value they do not carry.
    const values = ["\ud800", "\udc00", "\ufffd", "a\ud83d", "a\ude00", "a\ufffd", "\ud83d\ude00"];
    const seen = new Map<string, string>();
    const collisions: string[] = [];
    for (const v of values) {
      const key = tagPrefix("t", v);
      // Values with lone surrogates are left unindexed (queried through another index instead).
      if (key === undefined) {
        expect(v.isWellFormed()).toBe(false);
        continue;
      }
      const p = key.toString("hex");
      const prev = seen.get(p);
      if (prev !== undefined) collisions.push(`${JSON.stringify(prev)} and ${JSON.stringify(v)} share ${p}`);
      seen.set(p, v);
    }
    expect(collisions).toEqual([]);
  });

  test("values over 255 UTF-8 bytes are not indexed and values up to 255 bytes are", () => {
    const cases: [string, boolean][] = [
      ["", true],
      ["x".repeat(255), true],
      ["x".repeat(256), false],
      ["é".repeat(127) + "x", true], // 255 bytes, 128 chars
      ["é".repeat(128), false], // 256 bytes, 128 chars
      ["€".repeat(85), true], // 255 bytes, 85 chars
      ["€".repeat(85) + "x", false],
      ["😀".repeat(63) + "xxx", true], // 255 bytes
      ["😀".repeat(64), false], // 256 bytes, 128 UTF-16 units
      ["a".repeat(64), true], // hex: 32 bytes
      ["A".repeat(64), true], // not hex: 64 bytes
    ];
    for (const [v, indexed] of cases) {
      const p = tagPrefix("t", v);
      expect({ bytes: utf8(v).length, indexed: p !== undefined }).toEqual({ bytes: utf8(v).length, indexed });
      if (p && !isLowerHex64(v))
        expect(p).toEqual(Buffer.concat([Buffer.from([0x74, utf8(v).length]), utf8(v)]));
    }
    const g = new Gen(SEED ^ 0x6c6e);
    for (let i = 0; i < 500; i++) {
      const v = g.pick(["x", "é", "€", "😀"]).repeat(60 + g.int(100));
      expect(tagPrefix("t", v) !== undefined).toBe(utf8(v).length <= 255);
    }
  });

  test("replaceable keys of different d values differ, including d values over 255 bytes", () => {
    const pk = "ab".repeat(32);
    const ds = [
      "",
      "a",
      "A",
      "x".repeat(255),
      "x".repeat(256),
      "x".repeat(300),
      `${"x".repeat(299)}y`,
      "€".repeat(200),
    ];
    const keys = new Set(ds.map((d) => replaceableKey(pk, 30023, d).toString("hex")));
    expect(keys.size).toBe(ds.length);
    expect(replaceableKey(pk, 30023, "a")).not.toEqual(replaceableKey(pk, 30024, "a"));
    expect(replaceableKey(pk, 0, "")).toEqual(Buffer.concat([Buffer.from(pk, "hex"), kindBytes(0)]));
  });
});
