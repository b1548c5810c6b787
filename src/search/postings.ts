// One word's postings as a search walks them: in serial order, read from the index a group of
// blocks at a time (no read transaction is held between groups, so a search can yield between
// them), decoded in place. `seek` skips whole blocks by their header's last serial, undecoded:
// that is what makes intersecting a rare word with a common one cheap.
import type { BinDb } from "../store/store.ts";
import { blockKey, HEADER, keyFirstSerial, readHeader, tokenBounds } from "./blocks.ts";

export class PostingStream {
  /** blocks read at a time (tests lower it to cross group boundaries with little data) */
  static groupSize = 32;

  /** the current posting (valid after next() or seek() returned true) */
  serial = 0;
  tf = 0;
  length = 0;
  kind = 0;
  createdAt = 0;
  /** blocks read from the index so far (the caller yields its turn now and then) */
  blocksRead = 0;

  private group: Uint8Array[] = [];
  private gi = 0;
  private start: Buffer;
  private readonly end: Buffer;
  private exhausted = false;
  private v: Uint8Array = new Uint8Array(0);
  private at = 0;
  private left = 0;
  private last = -1;

  constructor(
    private readonly db: BinDb,
    private readonly prefix: Uint8Array,
  ) {
    ({ start: this.start, end: this.end } = tokenBounds(prefix));
  }

  /** The next posting; false when there is none. */
  next(): boolean {
    while (this.left === 0) if (!this.nextBlock(0)) return false;
    this.left--;
    this.serial += this.varint();
    this.tf = this.varint();
    this.length = this.varint();
    this.kind = this.varint();
    this.createdAt = this.varint();
    return true;
  }

  /**
   * The first posting at or after `target`, from the current one on (which is kept if it
   * qualifies, so call next() first to start); false when there is none.
   */
  seek(target: number): boolean {
    if (this.serial >= target) return true;
    // Blocks that end below the target are skipped without decoding.
    if (this.last < target && !this.nextBlock(target)) return false;
    for (;;) {
      if (!this.next()) return false;
      if (this.serial >= target) return true;
    }
  }

  /** Enters the next block ending at or after `atLeast`; false when there is none. */
  private nextBlock(atLeast: number): boolean {
    for (;;) {
      if (this.gi === this.group.length && !this.read()) return false;
      const v = this.group[this.gi++]!;
      const h = readHeader(v);
      if (h.lastSerial < atLeast || h.count === 0) continue;
      this.v = v;
      this.at = HEADER;
      this.left = h.count;
      this.last = h.lastSerial;
      this.serial = 0;
      return true;
    }
  }

  /** Reads the next group of blocks; false at the end of the token. */
  private read(): boolean {
    if (this.exhausted) return false;
    // lmdb-js hands binary range values out as copies, so they outlive the iteration.
    const got: Uint8Array[] = [];
    let lastFirst = -1;
    for (const { key, value } of this.db.getRange({
      start: this.start,
      end: this.end,
      limit: PostingStream.groupSize,
    })) {
      got.push(value as Uint8Array);
      lastFirst = keyFirstSerial(key as Uint8Array);
    }
    this.blocksRead += got.length;
    if (got.length < PostingStream.groupSize) this.exhausted = true;
    else this.start = blockKey(this.prefix, lastFirst + 1);
    this.group = got;
    this.gi = 0;
    return got.length > 0;
  }

  private varint(): number {
    const v = this.v;
    let b = v[this.at++]!;
    if (b < 0x80) return b;
    let n = b & 0x7f;
    let mul = 0x80;
    for (;;) {
      b = v[this.at++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
    }
  }
}
