// High-impact postings: for each token, a second, short list of the documents where the token
// weighs most (many occurrences in a short text), so that a search whose words are common can
// stop early with the exact answer (high-walk.ts).
//
// Why: BM25 scores in short texts are flat. Two common words of a million-event relay share
// ~186,000 documents, and an exact top 20 by walking every one of them took ~200 ms; per-block
// score bounds skip nothing, since every block holds some short document
// (bench/search-prune-estimate.ts). But the best documents are the ones where some word is
// high-impact: a document outside every word's high list scores at most Σ idf × `boundOutside`,
// so once the limit-th best of the high lists' documents scores above that, no other document
// can enter the answer. On the load tool's million (0.9% of postings high) that held for 300
// searches of 300, from ~2,000 candidates each (bench/search-impact-sim.ts).
//
// A posting is high when its BM25 term weight (without idf) at the reference length `ref` is at
// least THRESHOLD. The reference is the corpus' average length when the lists were last built:
// the bound uses the current average and stays exact whatever the drift, only looser, and the
// lists are rebuilt from the postings when the average has moved by 1% and the corpus has grown
// by a quarter since (so rebuilding costs a constant share of indexing, as a growing array does).

import { MAX_LENGTH, MAX_TF } from "./blocks.ts";
import { B, K1, termScore } from "./bm25.ts";

/** of the BM25 weight's 2.2 at most (K1 + 1); 1 is one occurrence in a text of average length */
export const THRESHOLD = 1.6;
/** documents before the lists are first built (a smaller index is walked whole cheaply) */
export const FIRST_AT = 1000;
/**
 * The average's relative drift that rebuilds the lists, once the corpus has grown by GROWTH since
 * they were built (so rebuilding costs a constant multiple of indexing, as a growing array does).
 * The bound is sensitive to it: on the 50k load, lists built at 3,487 documents averaging 39.2
 * (15% below the final 45.2) decided no search; at 44.0 (2.7% below), 204 of 300; at the
 * average, 284 (bench/search-impact-sim.ts).
 */
const DRIFT = 0.01;
const GROWTH = 1.25;

/** The term weight of a posting, idf aside. */
const weight = (tf: number, length: number, avg: number): number => termScore(1, tf, length, avg);

export const isHigh = (tf: number, length: number, ref: number, threshold = THRESHOLD): boolean =>
  weight(tf, length, ref) >= threshold;

/**
 * For each tf, the shortest document length whose posting is not high at `ref` (the weight falls
 * with length, so a longer one is not high either): pairs tf, length, flat. They depend on the
 * lists, not on the corpus' current average, and are kept for the lists' (ref, threshold).
 */
function edges(ref: number, th: number): number[] {
  const out: number[] = [];
  for (let tf = 1; tf <= MAX_TF; tf++) {
    // where weight(tf, length, ref) = th, solved for length; then made exact with the predicate
    let d = Math.floor((ref / B) * ((tf * (K1 + 1 - th)) / (th * K1) - (1 - B))) + 1;
    d = Math.min(Math.max(d, 1), MAX_LENGTH + 1);
    while (d > 1 && !isHigh(tf, d - 1, ref, th)) d--;
    while (d <= MAX_LENGTH && isHigh(tf, d, ref, th)) d++;
    if (d > MAX_LENGTH) break; // this tf, and every larger one, is high at any length
    out.push(tf, d);
  }
  return out;
}

let edgesFor = { ref: Number.NaN, th: Number.NaN, edges: [] as number[] };
let memo = { avg: Number.NaN, ref: Number.NaN, th: Number.NaN, bound: 0 };

/**
 * The largest weight, at the current average, of a posting that is not high at `ref`: at each
 * tf, the weight at the shortest length that is not high. Remembered for the last average (it
 * moves once a batch), and the lengths for the lists' reference.
 */
export function boundOutside(avg: number, ref: number, th = THRESHOLD): number {
  if (memo.avg === avg && memo.ref === ref && memo.th === th) return memo.bound;
  if (edgesFor.ref !== ref || edgesFor.th !== th) edgesFor = { ref, th, edges: edges(ref, th) };
  const e = edgesFor.edges;
  let bound = 0;
  for (let i = 0; i < e.length; i += 2) bound = Math.max(bound, weight(e[i]!, e[i + 1]!, avg));
  memo = { avg, ref, th, bound };
  return bound;
}

let tfsFor = { ref: Number.NaN, th: Number.NaN, tfs: new Uint16Array(0) };

/**
 * For each document length, the largest tf whose posting is not high at `ref` (0: at that
 * length even one occurrence is high). From the edges: a tf's posting is not high from its
 * edge's length on, and the edges grow with tf.
 */
function nonHighTfs(ref: number, th: number): Uint16Array {
  if (tfsFor.ref === ref && tfsFor.th === th) return tfsFor.tfs;
  if (edgesFor.ref !== ref || edgesFor.th !== th) edgesFor = { ref, th, edges: edges(ref, th) };
  const e = edgesFor.edges;
  const tfs = new Uint16Array(MAX_LENGTH + 1);
  for (let i = 0; i < e.length; i += 2) {
    const to = i + 3 < e.length ? e[i + 3]! : MAX_LENGTH + 1;
    tfs.fill(e[i]!, e[i + 1]!, to);
  }
  tfsFor = { ref, th, tfs };
  return tfs;
}

/**
 * The largest weight, at the current average, of a posting of a document of `length` that is
 * not high at `ref`: boundOutside for one length, and lower for most (a short document's posting
 * that is not high holds the word once or twice). A document in one word's high list but not
 * the other's is bounded by it: at the million that leaves fewer of them to look up (with a hair
 * above, as boundOutside's callers add, so that rounding never lets a tie through).
 */
export function boundOutsideAt(avg: number, ref: number, th = THRESHOLD): (length: number) => number {
  const tfs = nonHighTfs(ref, th);
  return (length: number): number => {
    const tf = tfs[Math.min(length, MAX_LENGTH)]!;
    return tf === 0 ? 0 : weight(tf, length, avg) * (1 + 1e-9);
  };
}

/** Whether the high lists should be (re)built now, for a corpus of `docs` averaging `avg`. */
export function needsRebuild(at: ImpactState, docs: number, avg: number): boolean {
  if (docs < FIRST_AT) return false;
  if (at.ref === 0 || at.threshold !== THRESHOLD) return true;
  return docs >= GROWTH * at.docs && Math.abs(avg / at.ref - 1) > DRIFT;
}

/** What the high lists were built with: reference length (0: no lists), corpus size, threshold. */
export interface ImpactState {
  ref: number;
  docs: number;
  threshold: number;
}

export const IMPACT_KEY = Buffer.from("impact");

export function impactValue(s: ImpactState): Buffer {
  const v = Buffer.alloc(24);
  v.writeDoubleLE(s.ref, 0);
  v.writeDoubleLE(s.docs, 8);
  v.writeDoubleLE(s.threshold, 16);
  return v;
}

export function readImpact(v: Uint8Array | undefined): ImpactState {
  if (!v || v.length < 24) return { ref: 0, docs: 0, threshold: 0 };
  const d = new DataView(v.buffer, v.byteOffset, 24);
  return { ref: d.getFloat64(0, true), docs: d.getFloat64(8, true), threshold: d.getFloat64(16, true) };
}
