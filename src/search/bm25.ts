// Okapi BM25 with the usual constants. Scores are summed over the query words in a fixed order
// (rarest first, then by token), so equal documents get bit-identical scores and tie cleanly.

export const K1 = 1.2;
export const B = 0.75;

/** Inverse document frequency, the BM25 (Lucene) form that is never negative. */
export const idf = (docs: number, df: number): number => Math.log(1 + (docs - df + 0.5) / (df + 0.5));

/** One word's contribution: tf occurrences in a document of `length` tokens. */
export function termScore(idfValue: number, tf: number, length: number, avgLength: number): number {
  const norm = K1 * (1 - B + (B * length) / (avgLength || 1));
  return (idfValue * (tf * (K1 + 1))) / (tf + norm);
}
