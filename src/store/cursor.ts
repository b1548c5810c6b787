// Newest-first merge of many reverse index scans. Each cursor reads its range in growing chunks
// (so a scan never holds a read transaction across turns), and a binary heap merges the heads
// by (created_at, serial) descending.
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
    for (const k of this.db.getKeys({ start: this.start, end: this.end, reverse: true, limit: this.chunk }))
      this.keys.push(k as Buffer);
    if (this.keys.length < this.chunk) this.done = true;
    else this.start = predecessor(this.keys[this.keys.length - 1]!);
    this.chunk = Math.min(this.chunk * 2, 4096);
  }
}

/** The key just below k among keys of the same length (start bounds are inclusive). */
function predecessor(k: Buffer): Buffer {
  const p = Buffer.from(k);
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i]! > 0) {
      p[i]!--;
      return p;
    }
    p[i] = 0xff;
  }
  return p;
}

const before = (a: Cursor, b: Cursor): boolean =>
  a.headTime > b.headTime || (a.headTime === b.headTime && a.headSerial > b.headSerial);

export class MergedScan {
  private heap: Cursor[] = [];

  constructor(db: BinDb, prefixes: Buffer[], since: number, until: number, firstChunk: number) {
    for (const p of prefixes) {
      const { start, end } = rangeFor(p, since, until);
      const c = new Cursor(db, start, end, firstChunk);
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
      if (!before(h[i]!, h[parent]!)) break;
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
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
