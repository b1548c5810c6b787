// Merge of many index scans, newest first (queries) or oldest first (exports and deletes). Each
// cursor reads its prefix's range in growing chunks (so a scan never holds a read transaction
// across turns; index-db.ts reads them), and a binary heap merges the heads by
// (created_at, serial).
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

export class MergedScan {
  private heap: Cursor[] = [];
  private readonly before: (a: Cursor, b: Cursor) => boolean;

  constructor(
    db: BinDb,
    prefixes: readonly Buffer[],
    since: number,
    until: number,
    firstChunk: number,
    order: Order = "newest",
  ) {
    this.before =
      order === "newest"
        ? (a, b) => a.headTime > b.headTime || (a.headTime === b.headTime && a.headSerial > b.headSerial)
        : (a, b) => a.headTime < b.headTime || (a.headTime === b.headTime && a.headSerial < b.headSerial);
    // Many ranges share the first chunk's worth between them: each starts with its share (twice
    // over, so a busier range is not refilled at once), and doubles as it is drained.
    const first = Math.min(firstChunk, Math.max(4, 2 * Math.ceil(firstChunk / prefixes.length)));
    for (const p of prefixes) {
      const c = new Cursor(db, p, since, until, first, order === "newest");
      if (c.head) this.push(c);
    }
  }

  /** The next (created_at, serial) newest first, or undefined when every range is exhausted. */
  next(): { time: number; serial: number } | undefined {
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
): MergedScan {
  return new MergedScan(
    plan.db,
    plan.prefixes,
    f.since ?? 0,
    f.until ?? Number.MAX_SAFE_INTEGER,
    firstChunk,
    order,
  );
}
