// A ranked search answered from its words' high-impact lists (impact.ts), when they decide it.
import type { QueryOptions } from "../indexes/query.ts";
import { yieldTurn } from "../yield-turn.ts";
import { termScore } from "./bm25.ts";
import type { Candidates } from "./candidates.ts";
import { BestScores, grown, kthScore } from "./candidates.ts";
import type { SearchIndex } from "./consumer.ts";
import { boundOutside, boundOutsideAt } from "./impact.ts";
import type { Setup } from "./plan.ts";
import { addViews, InOrder } from "./plan.ts";
import { PostingLookup, PostingStream } from "./postings.ts";

/** Most documents in some but not all of a search's high lists before it walks everything instead. */
const HIGH_MAX = 200_000;

/**
 * Documents in some of a search's high lists but not all, as parallel typed arrays (`n` of
 * them), taken from a small pool and given back as Candidates are: a search at the million
 * keeps ~3,500, and growing five arrays of numbers for each was a good part of the collector's
 * work (150 µs of its helper threads a search).
 */
class Partial {
  private static readonly pool: Partial[] = [];
  n = 0;
  serial = new Float64Array(1024);
  most = new Float64Array(1024);
  length = new Float64Array(1024);
  time = new Float64Array(1024);
  /** k per document, in word order: the tf from the word's high list, 0 when not in it */
  tfs: Float64Array;

  private constructor(private readonly k: number) {
    this.tfs = new Float64Array(1024 * k);
  }

  static take(k: number): Partial {
    const pool = Partial.pool;
    for (let i = pool.length - 1; i >= 0; i--)
      if (pool[i]!.k === k) {
        const p = pool.splice(i, 1)[0]!;
        p.n = 0;
        return p;
      }
    return new Partial(k);
  }

  /** Back to the pool (a few, none that grew past a few megabytes). */
  release(): void {
    if (Partial.pool.length < 8 && this.serial.length <= 1 << 17) Partial.pool.push(this);
  }

  /** Adds a document and returns its place; its k tfs start at 0, the caller sets those it knows. */
  push(serial: number, most: number, length: number, time: number): number {
    if (this.n === this.serial.length) {
      this.serial = grown(this.serial);
      this.most = grown(this.most);
      this.length = grown(this.length);
      this.time = grown(this.time);
      this.tfs = grown(this.tfs);
    }
    const i = this.n++;
    this.serial[i] = serial;
    this.most[i] = most;
    this.length[i] = length;
    this.time[i] = time;
    // a loop, not fill(): a native call per document cost more than the two stores it makes
    for (let w = i * this.k; w < (i + 1) * this.k; w++) this.tfs[w] = 0;
    return i;
  }
}

/**
 * The merge of the words' high lists in serial order (highCandidates), a bounded number of
 * steps at a time. A class of its own, as Intersection, so that its loop is compiled early.
 */
class HighMerge {
  private readonly alive: boolean[];
  private readonly tfs: number[];
  private readonly seen: InOrder;
  /**
   * Partial documents that cannot reach its floor are not kept: the best `limit` scores of the
   * full documents so far, whose lowest is a lower bound of the final cut and rises from the
   * first full document on.
   */
  private readonly best = new BestScores();

  constructor(
    private readonly streams: PostingStream[],
    /** the weight bound of a word whose posting is in no high list, per idf, by document length */
    private readonly outside: (length: number) => number,
    private readonly u: Setup,
    limit: number,
  ) {
    this.alive = streams.map((st) => st.next());
    this.tfs = new Array<number>(streams.length).fill(0);
    this.seen = new InOrder(u);
    this.best.reset(Math.max(1, limit));
  }

  /** Up to `steps` documents of the merge: full ones into `c`, partial ones into `p`; true when done. */
  step(c: Candidates, p: Partial, steps: number): boolean {
    if (this.streams.length === 2) return this.stepPair(c, p, steps);
    const { streams, alive, tfs } = this;
    const { idfs, avg } = this.u;
    const k = streams.length;
    const stored = this.u.stored;
    for (let n = 0; n < steps; n++) {
      let at = Number.POSITIVE_INFINITY;
      for (let w = 0; w < k; w++) if (alive[w] && streams[w]!.serial < at) at = streams[w]!.serial;
      if (at > stored) return true;
      let all = true;
      let length = 0;
      let kind = 0;
      let time = 0;
      for (let w = 0; w < k; w++) {
        const st = streams[w]!;
        if (alive[w] && st.serial === at) {
          tfs[w] = st.tf;
          length = st.length;
          kind = st.kind;
          time = st.createdAt;
          alive[w] = st.next();
        } else {
          tfs[w] = 0;
          all = false;
        }
      }
      let score = 0;
      let rest = 0;
      for (let w = 0; w < k; w++) {
        if (tfs[w]! > 0) score += termScore(idfs[w]!, tfs[w]!, length, avg);
        else rest += idfs[w]! * this.outside(length);
      }
      // below the floor nothing more is needed of it, not even whether the reader may see it
      if (!all && score + rest < this.best.floor) continue;
      if (!this.seen.visible(at, kind, time)) continue;
      if (all) {
        c.push(at, time, score);
        this.best.offer(score);
      } else {
        const i = p.push(at, score + rest, length, time);
        for (let w = 0; w < k; w++) p.tfs[i * k + w] = tfs[w]!;
      }
    }
    return false;
  }

  /**
   * step() for two words (the common search), without its loops over the words: a
   * document's fields are read only once its score can reach the floor. The sums are the same
   * as step()'s, term by term in word order, so the scores are equal to the last bit.
   */
  private stepPair(c: Candidates, p: Partial, steps: number): boolean {
    const a = this.streams[0]!;
    const b = this.streams[1]!;
    const { idfs, avg, stored } = this.u;
    const ia = idfs[0]!;
    const ib = idfs[1]!;
    const best = this.best;
    let aliveA = this.alive[0]!;
    let aliveB = this.alive[1]!;
    let n = 0;
    for (; n < steps; n++) {
      const sa = aliveA ? a.serial : Number.POSITIVE_INFINITY;
      const sb = aliveB ? b.serial : Number.POSITIVE_INFINITY;
      if (sa === sb) {
        if (sa > stored) break;
        const length = a.length;
        const tfA = a.tf;
        const tfB = b.tf;
        const kind = b.kind;
        const time = b.createdAt;
        aliveA = a.next();
        aliveB = b.next();
        if (!this.seen.visible(sa, kind, time)) continue;
        const score = termScore(ia, tfA, length, avg) + termScore(ib, tfB, length, avg);
        c.push(sa, time, score);
        best.offer(score);
        continue;
      }
      const one = sa < sb ? a : b;
      const at = Math.min(sa, sb);
      if (at > stored) break;
      const length = one.length;
      const tf = one.tf;
      const score = termScore(one === a ? ia : ib, tf, length, avg);
      // what the word the document lacks in the lists can add at most
      const rest = (one === a ? ib : ia) * this.outside(length);
      const kept = score + rest >= best.floor;
      const kind = kept ? one.kind : 0;
      const time = kept ? one.createdAt : 0;
      if (one === a) aliveA = a.next();
      else aliveB = b.next();
      if (!kept || !this.seen.visible(at, kind, time)) continue;
      const i = p.push(at, score + rest, length, time);
      p.tfs[2 * i + (one === a ? 0 : 1)] = tf;
    }
    this.alive[0] = aliveA;
    this.alive[1] = aliveB;
    return n < steps;
  }
}

/**
 * Whether a search tries the high lists at all. Walking every match costs in proportion to the
 * rarest word's postings: below a few tens of thousands that is about a millisecond, less than
 * the lists' merge plus a walk when they do not decide (the 50k load: search p50 7 ms without
 * them, 21 with them). Asked before a walk is sent to the other thread too, so that a search
 * the lists cannot answer never crosses for nothing.
 */
export function highListsTried(ix: SearchIndex, u: Setup): boolean {
  return u.snap.impact.ref > 0 && u.words[0]!.df >= ix.highFrom;
}

/**
 * The candidates a ranked search needs when its words have high-impact lists (impact.ts), by
 * the threshold algorithm. The words' high lists are merged in serial order: a document in
 * every one of them is scored from the lists alone; a document in some of them gets the most it
 * can score (the known words' weights, the bound for the others) and is scored later, best
 * possible first, only while that could still reach the limit-th best score (its other words
 * looked up by serial, a few hundred at most on the load tool's million). The views' documents
 * are all scored. Returns the score no document left out can reach, undefined when the lists
 * cannot help (none built, too many documents in them), or false if cancelled.
 */
export async function highCandidates(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
  limit: number,
): Promise<number | undefined | false> {
  if (!highListsTried(ix, u)) return undefined;
  const { ref, threshold } = u.snap.impact;
  const k = u.words.length;
  const { idfs, avg } = u;
  // A hair above the bound, so that rounding in a sum of scores never lets a tie through.
  const outside = boundOutside(avg, ref, threshold) * (1 + 1e-9);
  const some = Partial.take(k);
  try {
    const streams = u.words.map((w) => new PostingStream(ix.highView, w.prefix));
    try {
      const merge = new HighMerge(streams, boundOutsideAt(avg, ref, threshold), u, limit);
      while (!merge.step(c, some, 4096)) {
        if (some.n >= HIGH_MAX) return undefined;
        await yieldTurn();
        if (o.cancelled?.()) return false;
      }
    } finally {
      for (const st of streams) st.close();
    }
    addViews(u, c);
    // Best possible first, of those that can still reach the limit-th best score.
    let kth = kthScore(c, limit);
    const order: number[] = [];
    for (let i = 0; i < some.n; i++) if (some.most[i]! >= kth) order.push(i);
    order.sort((a, b) => some.most[b]! - some.most[a]!);
    const lookups = u.words.map((w) => new PostingLookup(ix.blocksView, w.prefix));
    let stop = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < order.length; j++) {
      const i = order[j]!;
      if ((j & 63) === 63) {
        kth = kthScore(c, limit);
        await yieldTurn();
        if (o.cancelled?.()) return false;
      }
      // Ties at the cut are ordered by time: a document that can only tie is still scored.
      if (some.most[i]! < kth) {
        stop = some.most[i]!;
        break;
      }
      const serial = some.serial[i]!;
      const length = some.length[i]!;
      let score = 0;
      let all = true;
      for (let w = 0; w < k; w++) {
        const tf = some.tfs[i * k + w] || lookups[w]!.tf(serial);
        if (tf === 0) {
          all = false;
          break;
        }
        score += termScore(idfs[w]!, tf, length, avg);
      }
      if (all) c.push(serial, some.time[i]!, score);
    }
    for (const l of lookups) l.close();
    // Lists rebuilt at another reference while this read them (between its reads) bound nothing.
    const now = ix.impact();
    if (now.ref !== ref || now.threshold !== threshold) return undefined;
    return Math.max(stop, outside * sum(idfs));
  } finally {
    some.release();
  }
}

const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);
