// Merge of many index scans, newest first (queries) or oldest first (exports and deletes). Each
// cursor reads its range in growing chunks (so a scan never holds a read transaction across
// turns), and a binary heap merges the heads by (created_at, serial).
import { keySerial, keyTime, rangeFor } from "./keys.ts";
import type { BinDb } from "./store.ts";

class Cursor {
  private keys: Buffer[] = [];
  private pos = 0;
  private done = false;
  private chunk: number;
  head: Buffer | undefined;
  headTime = 0;
  headSerial = 0;

  constructor(
    private readonly db: BinDb,
    private start: Buffer,
    private readonly end: Buffer,
    firstChunk: number,
    private readonly reverse: boolean,
  ) {
    this.chunk = firstChunk;
    this.advance();
  }

  advance(): void {
    if (this.pos >= this.keys.length) this.refill();
    const k = this.keys[this.pos++];
    this.head = k;
    if (k) {
      this.headTime = keyTime(k);
      this.headSerial = keySerial(k);
    }
  }

  private refill(): void {
    this.keys = [];
    this.pos = 0;
    if (this.done) return;
    const { start, end, reverse, chunk } = this;
    for (const k of this.db.getKeys({ start, end, reverse, limit: chunk })) this.keys.push(k as Buffer);
    const last = this.keys[this.keys.length - 1];
    const next = this.keys.length < chunk || !last ? undefined : step(last, reverse ? -1 : 1);
    if (next) this.start = next;
    else this.done = true;
    this.chunk = Math.min(this.chunk * 2, 4096);
  }
}

/**
 * The key just below (-1) or above (+1) k among keys of the same length, since start bounds are
 * inclusive; undefined past the end of the key space.
 */
function step(k: Buffer, dir: -1 | 1): Buffer | undefined {
  const p = Buffer.from(k);
  const edge = dir < 0 ? 0 : 0xff;
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i] !== edge) {
      p[i]! += dir;
      return p;
    }
    p[i] = 0xff - edge;
  }
  return undefined;
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
    for (const p of prefixes) {
      // rangeFor gives reverse bounds (start inclusive, end exclusive); forwards they swap, and
      // since serials 0 and 2^53-1 are never assigned both admit exactly [since, until].
      const { start, end } = rangeFor(p, since, until);
      const c =
        order === "newest"
          ? new Cursor(db, start, end, firstChunk, true)
          : new Cursor(db, end, start, firstChunk, false);
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
