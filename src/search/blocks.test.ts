// The block layout of the search index: what goes in comes out, across block boundaries,
// serial gaps too wide for one block's offsets, continued heads and purges.
import { describe, expect, test } from "bun:test";
import type { FlatPostings, Posting } from "./blocks.ts";
import {
  decodeBlock,
  encodeBlocks,
  filterBlock,
  HEADER,
  NARROW,
  POSTING_FIELDS,
  readBase,
  readHeader,
  WIDE,
} from "./blocks.ts";

const flat = (ps: Posting[]): FlatPostings =>
  ps.flatMap((p) => [p.serial, p.tf, p.length, p.kind, p.createdAt]);
const all = (blocks: { bytes: Uint8Array }[]): Posting[] => blocks.flatMap((b) => decodeBlock(b.bytes));

function postings(n: number, seed: number): Posting[] {
  let x = seed;
  const rnd = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  let serial = 1;
  return Array.from({ length: n }, () => {
    // Mostly small steps, now and then a gap wider than a block's 32-bit offsets.
    serial += rnd() < 0.02 ? 2 ** 32 + Math.floor(rnd() * 1000) : 1 + Math.floor(rnd() * 50);
    return {
      serial,
      tf: 1 + Math.floor(rnd() * 70_000) * (rnd() < 0.1 ? 1 : 0),
      length: Math.floor(rnd() * 2 ** 32),
      kind: Math.floor(rnd() * 65_536),
      // Mostly within days of each other, now and then further than a block's 32-bit offsets.
      createdAt: 1_700_000_000 + Math.floor(rnd() * 1e6) + (rnd() < 0.01 ? 2 ** 33 : 0),
    };
  });
}

const capped = (ps: Posting[]): Posting[] =>
  ps.map((p) => ({ ...p, tf: Math.min(p.tf, 0xffff), length: Math.min(p.length, 0xffff) }));

describe("search blocks", () => {
  test("postings come back exactly, in order, whatever the gaps between serials", () => {
    const ps = postings(1000, 3);
    const blocks = encodeBlocks(flat(ps), 1000, undefined, 400);
    expect(blocks.length).toBeGreaterThan(10);
    expect(all(blocks)).toEqual(capped(ps));
    for (const b of blocks) {
      const h = readHeader(b.bytes);
      const got = decodeBlock(b.bytes);
      expect(h.lastSerial).toBe(got.at(-1)!.serial);
      expect(b.firstSerial).toBe(got[0]!.serial);
      expect(readBase(b.bytes)).toBe(got[0]!.serial);
      expect(got.at(-1)!.serial - got[0]!.serial).toBeLessThan(2 ** 32);
    }
  });

  test("a head that is not full is continued; a full one is left as it is (wide blocks)", () => {
    const ps = postings(30, 5).map((p, i) => ({ ...p, serial: 1 + 3 * i, createdAt: 1_700_000_000 + i }));
    const [head] = encodeBlocks(flat(ps.slice(0, 5)), 5, undefined, 400, WIDE);
    const more = encodeBlocks(
      flat(ps.slice(5)),
      30,
      { ...head!, header: readHeader(head!.bytes) },
      400,
      WIDE,
    );
    expect(more[0]!.firstSerial).toBe(head!.firstSerial);
    expect(all(more)).toEqual(capped(ps));
    expect(readHeader(more.at(-1)!.bytes).df).toBe(30);

    const perBlock = Math.floor((400 - 40) / 14);
    for (const n of [perBlock, perBlock - 3]) {
      const full = encodeBlocks(flat(ps.slice(0, n)), n, undefined, 400, WIDE);
      const last = full.at(-1)!;
      const next = encodeBlocks(
        flat(ps.slice(n)),
        30,
        { ...last, header: readHeader(last.bytes) },
        400,
        WIDE,
      );
      const whole = readHeader(last.bytes).count === perBlock;
      expect(whole).toBe(n === perBlock);
      expect(next[0]!.firstSerial === last.firstSerial).toBe(!whole);
      expect(all([...full.slice(0, whole ? full.length : -1), ...next])).toEqual(capped(ps));
    }
  });

  test("postings too far from a head's base start a block of their own", () => {
    const ps = postings(6, 11).map((p, i) => ({ ...p, serial: i < 3 ? i + 1 : 2 ** 32 + 10 + i }));
    const [head] = encodeBlocks(flat(ps.slice(0, 3)), 3, undefined, 4000);
    const more = encodeBlocks(flat(ps.slice(3)), 6, { ...head!, header: readHeader(head!.bytes) }, 4000);
    expect(more.map((b) => b.firstSerial)).toEqual([ps[3]!.serial]);
    expect(all([head!, ...more])).toEqual(capped(ps));
  });

  test("postings dated too far from a head's base time start a block of their own", () => {
    const ps = postings(6, 13).map((p, i) => ({
      ...p,
      serial: i + 1,
      createdAt:
        i < 3 ? 3_000_000_000 + i : i === 3 ? 3_000_000_000 - 2 ** 31 - 1 : 3_000_000_000 + 2 ** 31 + i,
    }));
    const [head] = encodeBlocks(flat(ps.slice(0, 3)), 3, undefined, 4000);
    const more = encodeBlocks(flat(ps.slice(3)), 6, { ...head!, header: readHeader(head!.bytes) }, 4000);
    expect(more.map((b) => b.firstSerial)).toEqual([4, 5]);
    expect(all([head!, ...more])).toEqual(capped(ps));
  });

  test("a purge keeps every other posting and the block's base", () => {
    const ps = postings(15, 9);
    const [b] = encodeBlocks(flat(ps), 15, undefined, 4000);
    const drop = new Set([ps[0]!.serial, ps[7]!.serial, ps[14]!.serial]);
    const kept = filterBlock(b!.bytes, (s) => drop.has(s))!;
    expect(decodeBlock(kept)).toEqual(capped(ps).filter((p) => !drop.has(p.serial)));
    expect(readHeader(kept).lastSerial).toBe(ps[13]!.serial);
    expect(filterBlock(b!.bytes, () => false)).toBeUndefined();
    const empty = filterBlock(b!.bytes, () => true)!;
    expect(readHeader(empty)).toEqual({ count: 0, df: 15, lastSerial: 0 });
    expect(flat(ps).length).toBe(15 * POSTING_FIELDS);
  });

  // Two postings one step inside and one step outside each narrow column's range.
  const pair = (over: Partial<Posting>): Posting[] => [
    { serial: 10, tf: 1, length: 1, kind: 1, createdAt: 1_700_000_000 },
    { serial: 11, tf: 1, length: 1, kind: 1, createdAt: 1_700_000_000, ...over },
  ];
  const EDGES: [string, Partial<Posting>, Partial<Posting>, number][] = [
    ["serial", { serial: 10 + 0xffff }, { serial: 10 + 0x10000 }, 2],
    ["time ahead", { createdAt: 1_700_000_000 + 0x7fff }, { createdAt: 1_700_000_000 + 0x8000 }, 2],
    ["time behind", { createdAt: 1_700_000_000 - 0x8000 }, { createdAt: 1_700_000_000 - 0x8001 }, 2],
    ["length", { length: 255 }, { length: 256 }, 1],
    ["tf", { tf: 255 }, { tf: 256 }, 1],
    ["kind", { kind: 255 }, { kind: 256 }, 1],
  ];

  test.each(EDGES)(
    "a narrow block's %s column is narrow exactly while every posting fits it",
    (_, inside, outside, extra) => {
      const narrowest = HEADER + 2 * 7;
      const [a, ...restA] = encodeBlocks(flat(pair(inside)), 2);
      const [b, ...restB] = encodeBlocks(flat(pair(outside)), 2);
      expect([restA.length, restB.length]).toEqual([0, 0]);
      expect([a!.bytes.length, b!.bytes.length]).toEqual([narrowest, narrowest + 2 * extra]);
      expect([a!.bytes[0], b!.bytes[0]]).toEqual([NARROW, NARROW]);
      expect(decodeBlock(a!.bytes)).toEqual(pair(inside));
      expect(decodeBlock(b!.bytes)).toEqual(pair(outside));
    },
  );

  test("a narrow head is continued at its widths; a posting that needs wider columns starts a block", () => {
    const ps = Array.from({ length: 8 }, (_, i) => ({
      serial: 100 + i,
      tf: 1 + i,
      length: 10 + i,
      kind: 1,
      createdAt: 1_700_000_000 + i,
    }));
    const [head] = encodeBlocks(flat(ps.slice(0, 3)), 3);
    const cont = encodeBlocks(flat(ps.slice(3, 6)), 6, { ...head!, header: readHeader(head!.bytes) });
    expect(cont.map((b) => b.firstSerial)).toEqual([100]);
    expect(cont[0]!.bytes.length).toBe(HEADER + 6 * 7);
    expect(decodeBlock(cont[0]!.bytes)).toEqual(ps.slice(0, 6));
    const wider = { ...ps[6]!, kind: 30023 };
    const next = encodeBlocks(flat([wider, ps[7]!]), 8, { ...cont[0]!, header: readHeader(cont[0]!.bytes) });
    expect(next.map((b) => b.firstSerial)).toEqual([106]);
    expect(next[0]!.bytes.length).toBe(HEADER + 2 * 8);
    expect(all([cont[0]!, ...next])).toEqual([...ps.slice(0, 6), wider, ps[7]!]);
    expect(readHeader(next[0]!.bytes).df).toBe(8);
  });

  test("a wide head written before narrow blocks existed is left as it is; the postings after it are narrow", () => {
    const ps = postings(40, 17).map((p, i) => ({ ...p, serial: 1 + i, createdAt: 1_700_000_000 + i }));
    const [head] = encodeBlocks(flat(ps.slice(0, 10)), 10, undefined, 4000, WIDE);
    const more = encodeBlocks(flat(ps.slice(10)), 40, { ...head!, header: readHeader(head!.bytes) });
    expect(more.map((b) => b.firstSerial)).toEqual([11]);
    expect(more.map((b) => b.bytes[0])).toEqual([NARROW]);
    expect(all([head!, ...more])).toEqual(capped(ps));
  });

  test("a purge keeps a narrow block narrow, at the widths of what is left", () => {
    const ps = pair({ kind: 30023 });
    const [b] = encodeBlocks(flat(ps), 2);
    const kept = filterBlock(b!.bytes, (s) => s === 11)!;
    expect([kept[0], kept.length]).toEqual([NARROW, HEADER + 7]);
    expect(decodeBlock(kept)).toEqual([ps[0]!]);
  });
});
