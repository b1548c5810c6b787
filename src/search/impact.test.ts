// The bounds of a posting that is not in a word's high list, which let a search stop early
// (high-walk.ts): never below the weight of such a posting, whatever the document's length and
// the corpus' average since the lists were built, and the per-length one exactly the largest.
import { expect, test } from "bun:test";
import { MAX_LENGTH } from "./blocks.ts";
import { termScore } from "./bm25.ts";
import { boundOutside, boundOutsideAt, isHigh, THRESHOLD } from "./impact.ts";

const weight = (tf: number, length: number, avg: number) => termScore(1, tf, length, avg);

/** The largest tf whose posting is not high at `ref` for a document of `length` (0: none). */
function largestNotHigh(length: number, ref: number, th: number): number {
  let tf = 0;
  while (tf < 0xffff && !isHigh(tf + 1, length, ref, th)) tf++;
  return tf;
}

const LENGTHS = [
  ...Array.from({ length: 400 }, (_, i) => i + 1),
  450,
  777,
  1024,
  4096,
  20_000,
  MAX_LENGTH - 1,
  MAX_LENGTH,
];

test.each([
  [45, 45, THRESHOLD],
  [45, 39.2, THRESHOLD],
  [45, 52.7, THRESHOLD],
  [12, 12.5, THRESHOLD],
  [45, 45, 1.3],
  [200, 180, 1.9],
])(
  "ref %p, average %p, threshold %p: per length, the largest weight a posting outside the list can have",
  (ref, avg, th) => {
    const at = boundOutsideAt(avg, ref, th);
    const all = boundOutside(avg, ref, th);
    for (const length of LENGTHS) {
      const tf = largestNotHigh(length, ref, th);
      const want = tf === 0 ? 0 : weight(tf, length, avg);
      const got = at(length);
      // exactly the largest (the hair above aside), and under the bound for every length
      expect([length, got >= want, got <= want * (1 + 2e-9)]).toEqual([length, true, true]);
      expect([length, got <= all * (1 + 1e-9)]).toEqual([length, true]);
      // a posting one occurrence above it is high
      if (tf < 0xffff) expect([length, isHigh(tf + 1, length, ref, th)]).toEqual([length, true]);
    }
  },
);
