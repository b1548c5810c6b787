// BM25's properties the ranking relies on.
import { describe, expect, test } from "bun:test";
import { idf, termScore } from "./bm25.ts";

describe("bm25", () => {
  const avg = 10;
  test("a rarer word weighs more, and idf is never negative", () => {
    expect(idf(1000, 5)).toBeGreaterThan(idf(1000, 500));
    expect(idf(1000, 1000)).toBeGreaterThan(0);
  });

  test("more occurrences score higher, with diminishing returns", () => {
    const w = idf(1000, 10);
    const [s1, s2, s3] = [1, 2, 3].map((tf) => termScore(w, tf, avg, avg));
    expect(s2!).toBeGreaterThan(s1!);
    expect(s3!).toBeGreaterThan(s2!);
    expect(s3! - s2!).toBeLessThan(s2! - s1!);
  });

  test("the same occurrences in a shorter document score higher", () => {
    const w = idf(1000, 10);
    expect(termScore(w, 1, 5, avg)).toBeGreaterThan(termScore(w, 1, 50, avg));
  });

  test("a document of average length scores idf·tf·(k1+1)/(tf+k1)", () => {
    const w = idf(100, 10);
    expect(termScore(w, 2, avg, avg)).toBeCloseTo((w * 2 * 2.2) / (2 + 1.2), 12);
  });
});
