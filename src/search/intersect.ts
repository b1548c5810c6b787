// Every match of a search: the rarest word's postings walked in serial order and the other
// words' postings intersected with them, block by block (blocks whose last serial is below the
// next candidate are skipped undecoded), then the views' documents.
import type { QueryOptions } from "../indexes/query.ts";
import { yieldTurn } from "../indexes/query.ts";
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
    const streams = this.streams;
    const lead = streams[0]!;
    const k = streams.length;
    for (const s of streams) s.blocksRead = 0;
    let read = 0;
    let sinceCount = 0;
    while (this.more && read < blocks) {
      let target = lead.serial;
      let i = 1;
      if (k === 2) {
        if (!lead.meet(streams[1]!)) return this.done();
        target = lead.serial;
        i = 2;
      }
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
