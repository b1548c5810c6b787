// The record layout of the NIP-45 registers: what is written reads back, counts past one byte
// included, and the registers are the highest value each register still holds.
import { describe, expect, test } from "bun:test";
import { Gen } from "../../test/gen.ts";
import { decodeRecord, mergeRecord, registersOf } from "./registers.ts";

describe("NIP-45 register records", () => {
  test("count, expiring and the histogram come back; empty entries are dropped", () => {
    const held = new Map([
      [5 * 64 + 3, 1],
      [5 * 64 + 9, 300],
      [255 * 64 + 57, 2 ** 40],
      [7 * 64 + 2, 0],
    ]);
    const r = decodeRecord(mergeRecord(undefined, { count: 2 ** 45, expiring: 3, held })!);
    expect(r.count).toBe(2 ** 45);
    expect(r.expiring).toBe(3);
    expect([...r.held]).toEqual([
      [5 * 64 + 3, 1],
      [5 * 64 + 9, 300],
      [255 * 64 + 57, 2 ** 40],
    ]);
  });

  test("merging deltas into a stored record equals adding them up", () => {
    const g = new Gen(5);
    for (let round = 0; round < 200; round++) {
      const want = new Map<number, number>();
      let stored: Uint8Array | undefined;
      let count = 0;
      for (let step = 0; step < 6; step++) {
        const d = { count: 0, expiring: 0, held: new Map<number, number>() };
        for (let k = g.int(12); k > 0; k--) {
          const rv = g.int(256) * 64 + 1 + g.int(57);
          const have = (want.get(rv) ?? 0) + (d.held.get(rv) ?? 0);
          const delta = have > 0 && g.chance(0.4) ? -1 - g.int(have) : 1 + g.int(200);
          d.held.set(rv, (d.held.get(rv) ?? 0) + delta);
          d.count += delta;
        }
        for (const [rv, n] of d.held) want.set(rv, (want.get(rv) ?? 0) + n);
        count += d.count;
        const merged = mergeRecord(stored, d);
        if (count <= 0) {
          expect(merged).toBeUndefined();
          break;
        }
        stored = merged;
        const got = decodeRecord(merged!);
        expect(got.count).toBe(count);
        expect([...got.held]).toEqual([...want].filter(([, n]) => n > 0).sort((x, y) => x[0] - y[0]));
      }
    }
  });

  test("a register is the highest value some event still holds", () => {
    const regs = registersOf(
      new Map([
        [1 * 64 + 4, 2],
        [1 * 64 + 9, 0],
        [2 * 64 + 1, 1],
      ]),
    );
    expect([regs[0], regs[1], regs[2]]).toEqual([0, 4, 1]);
  });
});
