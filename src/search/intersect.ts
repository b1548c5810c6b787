// Every match of a search: the rarest word's postings walked in serial order and the other
// words' postings intersected with them, block by block (blocks whose last serial is below the
// next candidate are skipped undecoded), then the views' documents.
import type { QueryOptions } from "../indexes/query.ts";
import { yieldTurn } from "../yield-turn.ts";
import { termScore } from "./bm25.ts";
import type { Candidates } from "./candidates.ts";
import type { SearchIndex } from "./consumer.ts";
import type { Setup } from "./plan.ts";
import { addViews, InOrder } from "./plan.ts";
import { PostingStream } from "./postings.ts";

/**
 * Leapfrog intersection of the words' postings: the rarest word leads; every other word seeks to
 * its serial, and a word that overshoots moves the lead on to where it landed. Kept out of the
 * async code so that its loop is compiled early (it is most of a search's time).
 */
class Intersection {
  private more: boolean;
  private readonly seen: InOrder;

  constructor(
    private readonly streams: PostingStream[],
    private readonly u: Setup,
  ) {
    this.more = streams[0]!.next();
    this.seen = new InOrder(u);
  }

  /** Adds matches to `c` until `blocks` index blocks were read; true when done. */
  step(c: Candidates, blocks: number): boolean {
    if (this.streams.length === 2) return this.stepPair(c, blocks);
    const streams = this.streams;
    const lead = streams[0]!;
    const k = streams.length;
    for (const s of streams) s.blocksRead = 0;
    let read = 0;
    let sinceCount = 0;
    while (this.more && read < blocks) {
      let target = lead.serial;
      let i = 1;
      while (i < k) {
        const s = streams[i]!;
        if (!s.seek(target)) return this.done();
        if (s.serial === target) i++;
        else if (!lead.seek(s.serial)) return this.done();
        else {
          target = lead.serial;
          i = 1;
        }
      }
      if (target > this.u.stored) return this.done();
      if (this.seen.visible(target, lead.kind, lead.createdAt)) {
        const { idfs, avg } = this.u;
        let score = 0;
        for (let w = 0; w < k; w++) score += termScore(idfs[w]!, streams[w]!.tf, lead.length, avg);
        c.push(target, lead.createdAt, score);
      }
      this.more = lead.next();
      // Blocks read so far, summed now and then: a block holds up to ~200 postings.
      if (++sinceCount === 64) {
        sinceCount = 0;
        read = 0;
        for (let w = 0; w < k; w++) read += streams[w]!.blocksRead;
      }
    }
    return !this.more;
  }

  /**
   * The two-word walk (the common search): both blocks' serials merged in one loop over local
   * arrays, leaving it only at the end of a block. Leaving the merge for each match (a method
   * that met the two streams, then `next`) cost more than the merge itself.
   */
  private stepPair(c: Candidates, blocks: number): boolean {
    const a = this.streams[0]!;
    const b = this.streams[1]!;
    if (!this.more) return true;
    if (b.n === 0 && !b.seek(a.serial)) return this.done();
    const { idfs, avg, stored } = this.u;
    const ia = idfs[0]!;
    const ib = idfs[1]!;
    let A = a.ser;
    let an = a.n;
    let ai = a.i;
    let B = b.ser;
    let bn = b.n;
    let bi = b.i;
    a.blocksRead = b.blocksRead = 0;
    for (;;) {
      while (ai < an && bi < bn) {
        const x = A[ai]!;
        const y = B[bi]!;
        if (x < y) ai++;
        else if (x > y) bi++;
        else {
          if (x > stored) return this.done();
          a.i = ai;
          b.i = bi;
          // The score first: most matches of a ranked search fall below the floor.
          const length = a.length;
          const score = termScore(ia, a.tf, length, avg) + termScore(ib, b.tf, length, avg);
          if (score >= c.floor) {
            const time = a.createdAt;
            if (this.seen.visible(x, a.kind, time)) c.push(x, time, score);
          }
          ai++;
          bi++;
        }
      }
      // A block ended: the next one of that word that reaches the other's serial.
      if (ai === an) {
        if (!a.enter(bi < bn ? B[bi]! : 0)) return this.done();
        A = a.ser;
        an = a.n;
        ai = 0;
      }
      if (bi === bn) {
        if (!b.enter(A[ai]!)) return this.done();
        B = b.ser;
        bn = b.n;
        bi = 0;
      }
      if (a.blocksRead + b.blocksRead >= blocks) {
        a.i = ai;
        b.i = bi;
        return false;
      }
    }
  }

  private done(): boolean {
    this.more = false;
    return true;
  }
}

/**
 * Adds every event containing all words to `c`, scored; false if cancelled. `hwm` bounds what
 * is visible; removed documents and events `hidden` (expired) are left out.
 */
export async function allCandidates(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
): Promise<boolean> {
  const streams = u.words.map((w) => new PostingStream(ix.blocksView, w.prefix));
  try {
    const walk = new Intersection(streams, u);
    // Two groups of blocks per word between yields of the turn.
    while (!walk.step(c, 2 * PostingStream.groupSize)) {
      await yieldTurn();
      if (o.cancelled?.()) return false;
    }
  } finally {
    for (const s of streams) s.close();
  }
  addViews(u, c);
  return true;
}
