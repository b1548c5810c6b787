// Merge of many index scans, newest first (queries) or oldest first (exports and deletes). Each
// cursor reads its prefix's range in growing chunks (so a scan never holds a read transaction
// across turns; index-db.ts reads them), and a binary heap merges the heads by
// (created_at, serial). A newest-first merge may be told, per range, a created_at that none of
// its entries is above (newest.ts): such a range is opened only once the merge reaches that
// second, so a scan that stops at its limit never opens the ranges too old to hold an answer.
import { readEntries } from "../store/index-db.ts";
import type { BinDb } from "../store/types.ts";

class Cursor {
  private buf = { times: [] as number[], serials: [] as number[] };
  private pos = 0;
  private done = false;
  private chunk: number;
  private last: { time: number; serial: number } | undefined;
  head = false;
  headTime = 0;
  headSerial = 0;

  constructor(
    private readonly db: BinDb,
    private readonly prefix: Buffer,
    private readonly since: number,
    private readonly until: number,
    firstChunk: number,
    private readonly reverse: boolean,
  ) {
    this.chunk = firstChunk;
    this.advance();
  }

  /**
   * The newest created_at of the whole range, when the first chunk tells it (newest first, no
   * upper bound): -1 for a range with no entry at all, undefined when the chunk cannot tell.
   */
  newestSeen(): number | undefined {
    if (!this.reverse || this.until !== Number.MAX_SAFE_INTEGER) return undefined;
    if (this.head) return this.headTime;
    return this.since === 0 ? -1 : undefined;
  }

  advance(): void {
    if (this.pos >= this.buf.times.length) this.refill();
    const i = this.pos++;
    this.head = i < this.buf.times.length;
    if (this.head) {
      this.headTime = this.buf.times[i]!;
      this.headSerial = this.buf.serials[i]!;
    }
  }

  private refill(): void {
    this.buf.times.length = 0;
    this.buf.serials.length = 0;
    this.pos = 0;
    if (this.done) return;
    const { chunk } = this;
    readEntries(this.db, this.prefix, this.since, this.until, this.reverse, chunk, this.last, this.buf);
    const n = this.buf.times.length;
    if (n < chunk) this.done = true;
    else this.last = { time: this.buf.times[n - 1]!, serial: this.buf.serials[n - 1]! };
    this.chunk = Math.min(this.chunk * 2, 4096);
  }
}

export type Order = "newest" | "oldest";

/**
 * What a newest-first merge knows of its ranges' newest entries (newest.ts): `above[i]`, when
 * given, is a created_at that no entry of range i is above; `seen` hears a range's newest
 * created_at as its first read tells it (-1: the range is empty).
 */
export interface NewestBounds {
  above: readonly (number | undefined)[];
  seen?: (i: number, newest: number) => void;
}

export class MergedScan {
  private heap: Cursor[] = [];
  private readonly before: (a: Cursor, b: Cursor) => boolean;
  /** ranges not opened yet, newest bound last (opened from the end) */
  private deferred: { i: number; above: number }[] = [];
  private readonly first: number;

  constructor(
    private readonly db: BinDb,
    private readonly prefixes: readonly Buffer[],
    private readonly since: number,
    private readonly until: number,
    firstChunk: number,
    private readonly order: Order = "newest",
    private readonly bounds?: NewestBounds,
  ) {
    this.before =
      order === "newest"
        ? (a, b) => a.headTime > b.headTime || (a.headTime === b.headTime && a.headSerial > b.headSerial)
        : (a, b) => a.headTime < b.headTime || (a.headTime === b.headTime && a.headSerial < b.headSerial);
    // Many ranges share the first chunk's worth between them: each starts with its share (twice
    // over, so a busier range is not refilled at once), and doubles as it is drained.
    this.first = Math.min(firstChunk, Math.max(4, 2 * Math.ceil(firstChunk / prefixes.length)));
    const above = order === "newest" ? bounds?.above : undefined;
    for (let i = 0; i < prefixes.length; i++) {
      const a = above?.[i];
      // A range whose every entry is older than `since` is never opened.
      if (a === undefined) this.open(i);
      else if (a >= since) this.deferred.push({ i, above: a });
    }
    if (this.deferred.length > 1) this.deferred.sort((x, y) => x.above - y.above);
  }

  private open(i: number): void {
    const c = new Cursor(
      this.db,
      this.prefixes[i]!,
      this.since,
      this.until,
      this.first,
      this.order === "newest",
    );
    const seen = this.bounds?.seen;
    if (seen) {
      const newest = c.newestSeen();
      if (newest !== undefined) seen(i, newest);
    }
    if (c.head) this.push(c);
  }

  /**
   * Opens the deferred ranges that may hold an entry at or above the heap's head: one whose
   * bound is below the head cannot come before it, nor before anything after it.
   */
  private openReached(): void {
    const d = this.deferred;
    while (d.length > 0) {
      const top = this.heap[0];
      const next = d[d.length - 1]!;
      if (top && next.above < top.headTime) return;
      d.pop();
      this.open(next.i);
    }
  }

  /** The next (created_at, serial) newest first, or undefined when every range is exhausted. */
  next(): { time: number; serial: number } | undefined {
    if (this.deferred.length > 0) this.openReached();
    const top = this.heap[0];
    if (!top) return undefined;
    const out = { time: top.headTime, serial: top.headSerial };
    top.advance();
    if (top.head) this.siftDown(0);
    else {
      const last = this.heap.pop()!;
      if (this.heap.length > 0) {
        this.heap[0] = last;
        this.siftDown(0);
      }
    }
    return out;
  }

  private push(c: Cursor): void {
    const h = this.heap;
    h.push(c);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/**
 * The merged scan of a plan's index ranges between the filter's since and until: every reader
 * of a planned filter (REQ, COUNT, export, negentropy) walks its candidates this way.
 */
export function scanPlan(
  plan: { db: BinDb; prefixes: readonly Buffer[] },
  f: { since?: number; until?: number },
  firstChunk: number,
  order: Order = "newest",
  bounds?: NewestBounds,
): MergedScan {
  return new MergedScan(
    plan.db,
    plan.prefixes,
    f.since ?? 0,
    f.until ?? Number.MAX_SAFE_INTEGER,
    firstChunk,
    order,
    bounds,
  );
}
