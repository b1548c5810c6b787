// The newest entries of the index ranges that REQs read most, kept between REQs: the first chunk
// a REQ's cursor reads of a range (an author's notes, a hashtag, a feed's author × kind pairs)
// comes from here when another REQ read it since the range last changed.
//
// Why: a read of a range through lmdb-js costs a positioning in LMDB and its range iterator
// (~1 µs however few entries it returns), and the same ranges are read REQ after REQ: the
// profiles, feeds and threads of the accounts many clients follow. A 100-author home feed reads
// 200 ranges (docs/performance.md, "Index ranges read once").
//
// Exact: a range's entries change only when the REQ indexes' consumer applies a batch, and the
// runner tells the consumer once each batch's apply is over (`forgetBatch`), so every range the
// batch touched is forgotten. But a read can see a batch on disk (the indexes' watermark, read in
// the same read transaction as the entries) before the runner hears that it is applied. So each
// range kept carries the batch number its read saw (`gen`), and a reader whose transaction sees
// batch G takes it only if every batch after `gen` up to G was heard of (and so forgot what it
// touched); a read is kept only if its transaction is not behind what was heard of. Entries
// after a reader's snapshot are skipped by every reader anyway. An event removed since keeps its
// entry here as on disk until the batch that removes it; readers skip it, as on disk, since its
// stored record is gone.
import type { TailIndex } from "./tail.ts";

/** The newest entries of one range, newest first; `complete`: the range holds no more. */
export interface Head {
  times: number[];
  serials: number[];
  complete: boolean;
  /** the indexes' batch number in the read transaction these were read in */
  gen: number;
}

/**
 * A range's name: a string and a number, so that a REQ names its ranges with the strings its
 * filter already holds (an author's hex, hashed once however many kinds it is asked with)
 * instead of a new string per range. The string is "" for the kind and time ranges.
 */
export interface RangeName {
  at: string;
  n: number;
}

const PUBKEY = -1;
const TAG = -2;
const TIME = -3;

/** Range names, as the planner names the ranges it scans and a batch's view names what it adds. */
export const rangeName = {
  pubkey: (pubkey: string): RangeName => ({ at: pubkey, n: PUBKEY }),
  kind: (kind: number): RangeName => ({ at: "", n: kind }),
  pubkind: (pubkey: string, kind: number): RangeName => ({ at: pubkey, n: kind }),
  /** the view's tag key, `letter value` */
  tag: (letterValue: string): RangeName => ({ at: letterValue, n: TAG }),
  time: (): RangeName => ({ at: "", n: TIME }),
};

export class Heads {
  /** by the name's string, then its number */
  private readonly heads = new Map<string, Map<number, Head>>();
  /** every range kept, in the order kept (the oldest goes first), with its name */
  private readonly order = new Map<Head, RangeName>();
  /** entries held, over all ranges */
  private held = 0;
  /** the newest batch whose apply the runner told of (forgetBatch) */
  private heard = 0;
  hits = 0;
  misses = 0;

  constructor(
    /** most entries held; the oldest ranges kept go first */
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.order.size;
  }

  /**
   * Range (at, n)'s newest entries if kept and at least `want` of them (or the whole range),
   * for a read transaction that sees batch `gen`.
   */
  get(at: string, n: number, want: number, gen: number): Head | undefined {
    const h = this.heads.get(at)?.get(n);
    if (h !== undefined && (h.complete || h.times.length >= want) && gen <= Math.max(h.gen, this.heard)) {
      this.hits++;
      return h;
    }
    this.misses++;
    return undefined;
  }

  /** Keeps a range's newest entries as just read in a transaction that sees batch `gen`. */
  put(
    at: string,
    n: number,
    times: readonly number[],
    serials: readonly number[],
    complete: boolean,
    gen: number,
  ): void {
    if (times.length > this.maxEntries || gen < this.heard) return;
    this.forget(at, n);
    this.held += times.length;
    for (const name of this.order.values()) {
      if (this.held <= this.maxEntries) break;
      this.forget(name.at, name.n);
    }
    const h: Head = { times: times.slice(), serials: serials.slice(), complete, gen };
    const byN = this.heads.get(at) ?? new Map<number, Head>();
    if (byN.size === 0) this.heads.set(at, byN);
    byN.set(n, h);
    this.order.set(h, { at, n });
  }

  forget(at: string, n: number): void {
    const byN = this.heads.get(at);
    const h = byN?.get(n);
    if (h === undefined) return;
    byN!.delete(n);
    if (byN!.size === 0) this.heads.delete(at);
    this.order.delete(h);
    this.held -= h.times.length;
  }

  /** Forgets every range; `heard`: the newest batch applied (its number) when known. */
  clear(heard = this.heard): void {
    this.heads.clear();
    this.order.clear();
    this.held = 0;
    this.heard = heard;
  }

  /** Batch `gen`'s apply is over: forgets every range it adds to or removes from (its view says which). */
  forgetBatch(t: TailIndex, gen: number): void {
    this.heard = Math.max(this.heard, gen);
    if (this.order.size === 0) return;
    this.forget("", TIME);
    for (const events of [t.events, t.removed])
      for (const e of events.values()) {
        this.forget(e.pubkey, PUBKEY);
        this.forget("", e.kind);
        this.forget(e.pubkey, e.kind);
      }
    // A removed event's tags are not in the view: its entries stay kept until the range changes
    // otherwise, and readers skip them (its record is gone), as they do on disk until then.
    for (const k of t.byTag.keys()) this.forget(k, TAG);
  }
}
