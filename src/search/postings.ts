// One word's postings as a search walks them: in serial order, read from the index a group of
// blocks at a time (no read transaction is held between groups, so a search can yield between
// them). Blocks are copied into an aligned arena the stream reuses; a block's serials are
// decoded to one array when it is entered (`ser`), its other columns (blocks.ts, wide or
// narrow) read in place through typed arrays only for the posting the caller stops at, and
// `seek` skips whole blocks by their last serial and searches inside a block by galloping.
// That is what makes intersecting a rare word with a common one cheap.
import type { Database } from "lmdb";
import {
  blockKey,
  columns,
  HEADER,
  isNarrow,
  keyFirstSerial,
  readBase,
  readBaseTime,
  readFlags,
  readHeader,
  tokenBounds,
} from "./blocks.ts";

/**
 * The blocks database read without a copy per value: `decode` hands out lmdb-js's own view of
 * the value (into its read buffer or the memory map), valid only until the next read, which
 * the stream copies into its arena at once. Everything else reads the blocks through the
 * ordinary binary handle.
 */
export type BlockView = Database<Uint8Array, Uint8Array>;
export const VIEW_ENCODER = {
  encode: (v: Uint8Array): Uint8Array => v,
  // lmdb-js's reusable read buffer overrides `length`, so the view is always cut to `size`.
  decode: (bytes: Uint8Array, size?: number): Uint8Array => bytes.subarray(0, size ?? bytes.length),
  needsStableBuffer: false,
};

/** A stream's copy of its current group of blocks, with typed views of the whole of it. */
interface Arena {
  u8: Uint8Array;
  i16: Int16Array;
  u16: Uint16Array;
  i32: Int32Array;
  u32: Uint32Array;
}

const arenaOf = (bytes: number): Arena => {
  const b = new ArrayBuffer(bytes);
  return {
    u8: new Uint8Array(b),
    i16: new Int16Array(b),
    u16: new Uint16Array(b),
    i32: new Int32Array(b),
    u32: new Uint32Array(b),
  };
};

/**
 * Arenas of streams that are closed, for the next search: a search makes a stream per word,
 * and a fresh, zeroed 128 KiB per stream cost more than the copying it holds.
 */
const arenas: Arena[] = [];
const EMPTY_ARENA = arenaOf(0);

/** An arena of at least `bytes`, from the pool when one there is large enough. */
function takeArena(bytes: number): Arena {
  const a = arenas.pop();
  if (a && a.u8.length >= bytes) return a;
  if (a) arenas.push(a);
  return arenaOf(Math.max(bytes, 4096));
}

/** Back to the pool (a few are kept, none over 1 MiB). */
function giveArena(a: Arena): void {
  if (a !== EMPTY_ARENA && arenas.length < 16 && a.u8.length <= 1 << 20) arenas.push(a);
}

export class PostingStream {
  /** blocks read at a time (tests lower it to cross group boundaries with little data) */
  static groupSize = 32;

  /** the current posting's serial (valid after next() or seek() returned true) */
  serial = 0;
  /** blocks read from the index so far (the caller yields its turn now and then) */
  blocksRead = 0;

  private start: Buffer;
  private readonly end: Buffer;
  private exhausted = false;
  /** the group of blocks read last, copied one after another at 8-byte aligned offsets */
  private a: Arena = EMPTY_ARENA;
  /** per block of the group: where it starts in the arena, its count, last and base serial */
  private blkAt: number[] = [];
  private blkCount: number[] = [];
  private blkLast: number[] = [];
  private blkBase: number[] = [];
  private blkBaseTime: number[] = [];
  private blkFlags: number[] = [];
  private gi = 0;
  /** the current block: where its columns start (in elements of their views), and which are narrow */
  private timeAt = 0;
  private lengthAt = 0;
  private tfAt = 0;
  private kindAt = 0;
  private time16 = false;
  /**
   * The current block's serials, absolute, decoded when the block is entered (its first `n`):
   * the steps of a merge then read one array of one type. Reading the stored column in place,
   * u16 in one block and u32 in the next, made every step's load polymorphic and cost
   * two-thirds of a two-word search at 50k events.
   */
  ser = new Float64Array(1024);
  private length8 = false;
  private tf8 = false;
  private kind8 = false;
  private base = 0;
  private baseTime = 0;
  /** postings in the current block, the current one's place in it, and the block's last serial */
  n = 0;
  i = 0;
  last = -1;

  constructor(
    private readonly db: BlockView,
    private readonly prefix: Uint8Array,
  ) {
    ({ start: this.start, end: this.end } = tokenBounds(prefix));
  }

  /** Fields of the current posting. */
  get tf(): number {
    return this.tf8 ? this.a.u8[this.tfAt + this.i]! : this.a.u16[this.tfAt + this.i]!;
  }
  get length(): number {
    return this.length8 ? this.a.u8[this.lengthAt + this.i]! : this.a.u16[this.lengthAt + this.i]!;
  }
  get kind(): number {
    return this.kind8 ? this.a.u8[this.kindAt + this.i]! : this.a.u16[this.kindAt + this.i]!;
  }
  get createdAt(): number {
    return (
      this.baseTime + (this.time16 ? this.a.i16[this.timeAt + this.i]! : this.a.i32[this.timeAt + this.i]!)
    );
  }

  /** The next posting; false when there is none. */
  next(): boolean {
    if (++this.i >= this.n && !this.enter(0)) return false;
    this.serial = this.ser[this.i]!;
    return true;
  }

  /**
   * The first posting at or after `target`, from the current one on (which is kept if it
   * qualifies, so call next() first to start); false when there is none.
   */
  seek(target: number): boolean {
    if (this.serial >= target) return true;
    // Blocks that end below the target are skipped without reading their columns; the block
    // entered then holds a posting at or above it.
    if (this.last < target && !this.enter(target)) return false;
    const o = this.ser;
    let lo = this.i;
    if (o[lo]! < target) {
      // Gallop from the current posting (targets are usually near), then bisect.
      let step = 1;
      let hi = lo + step;
      while (hi < this.n && o[hi]! < target) {
        lo = hi;
        step *= 2;
        hi = lo + step;
      }
      if (hi >= this.n) hi = this.n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (o[mid]! < target) lo = mid + 1;
        else hi = mid;
      }
    }
    this.i = lo;
    this.serial = o[lo]!;
    return true;
  }

  /** Enters the next block ending at or after `atLeast`, at its first posting; false at the end. */
  enter(atLeast: number): boolean {
    for (;;) {
      if (this.gi === this.blkAt.length && !this.read()) return false;
      const j = this.gi++;
      const n = this.blkCount[j]!;
      if (this.blkLast[j]! < atLeast || n === 0) continue;
      const flags = this.blkFlags[j]!;
      const c = columns(n, flags);
      const at = this.blkAt[j]!;
      this.time16 = isNarrow(flags, "time");
      const serial16 = isNarrow(flags, "serial");
      this.length8 = isNarrow(flags, "length");
      this.tf8 = isNarrow(flags, "tf");
      this.kind8 = isNarrow(flags, "kind");
      this.timeAt = (at + c.time) / (this.time16 ? 2 : 4);
      this.lengthAt = this.length8 ? at + c.length : (at + c.length) / 2;
      this.tfAt = this.tf8 ? at + c.tf : (at + c.tf) / 2;
      this.kindAt = this.kind8 ? at + c.kind : (at + c.kind) / 2;
      this.base = this.blkBase[j]!;
      this.baseTime = this.blkBaseTime[j]!;
      this.n = n;
      this.i = 0;
      this.last = this.blkLast[j]!;
      if (this.ser.length < n) this.ser = new Float64Array(Math.max(n, this.ser.length * 2));
      const ser = this.ser;
      const base = this.base;
      if (serial16) {
        const col = this.a.u16;
        const from = (at + c.serial) / 2;
        for (let k = 0; k < n; k++) ser[k] = base + col[from + k]!;
      } else {
        const col = this.a.u32;
        const from = (at + c.serial) / 4;
        for (let k = 0; k < n; k++) ser[k] = base + col[from + k]!;
      }
      this.serial = ser[0]!;
      return true;
    }
  }

  /** Room for `bytes` in the arena, keeping what is there. */
  private reserve(bytes: number): void {
    if (bytes <= this.a.u8.length) return;
    if (this.a === EMPTY_ARENA) this.a = arenas.pop() ?? EMPTY_ARENA;
    if (bytes <= this.a.u8.length) return;
    const next = arenaOf(Math.max(bytes, this.a.u8.length * 2, 128 * 1024));
    next.u8.set(this.a.u8);
    this.a = next;
  }

  /** Gives the arena back for the next stream. */
  close(): void {
    giveArena(this.a);
    this.a = EMPTY_ARENA;
    this.exhausted = true;
    this.n = this.i = 0;
    this.blkAt.length = 0;
    this.gi = 0;
  }

  /** Reads the next group of blocks into the arena; false at the end of the token. */
  private read(): boolean {
    this.blkAt.length = this.blkCount.length = this.blkLast.length = this.blkBase.length = 0;
    this.blkBaseTime.length = this.blkFlags.length = 0;
    this.gi = 0;
    if (this.exhausted) return false;
    let used = 0;
    let lastFirst = -1;
    for (const { key, value } of this.db.getRange({
      start: this.start,
      end: this.end,
      limit: PostingStream.groupSize,
    })) {
      // `value` is lmdb-js's view, valid until the next step of this loop: copy it now.
      const v = value as Uint8Array;
      this.reserve(used + v.length);
      this.a.u8.set(v, used);
      const h = readHeader(v);
      this.blkAt.push(used);
      this.blkCount.push(v.length >= HEADER ? h.count : 0);
      this.blkLast.push(h.lastSerial);
      this.blkBase.push(readBase(v));
      this.blkBaseTime.push(readBaseTime(v));
      this.blkFlags.push(readFlags(v));
      used += (v.length + 7) & ~7;
      lastFirst = keyFirstSerial(key as Uint8Array);
    }
    const got = this.blkAt.length;
    this.blocksRead += got;
    if (got < PostingStream.groupSize) this.exhausted = true;
    else this.start = blockKey(this.prefix, lastFirst + 1);
    return got > 0;
  }
}

/**
 * One word's postings looked up by serial, for a few hundred documents scattered over its
 * whole list: each lookup positions on the block that may hold the serial (one cursor step
 * back from the serial's key) instead of reading every block before it, as a stream would.
 * The block read last is kept, as lookups usually come several to a block.
 */
export class PostingLookup {
  /** the block read last, copied to an aligned buffer, with views of all of it (made once) */
  private a: Arena = EMPTY_ARENA;
  /** its postings, where its serial and tf columns start (in elements of their views), and their widths */
  private n = 0;
  private serialAt = 0;
  private tfAt = 0;
  private serial16 = false;
  private tf8 = false;
  private first = 1;
  private last = 0;
  private base = 0;
  private readonly lowest: Buffer;

  constructor(
    private readonly db: BlockView,
    private readonly prefix: Uint8Array,
  ) {
    this.lowest = tokenBounds(prefix).start;
  }

  /** The word's tf in the document `serial`, or 0 when the document does not hold it. */
  tf(serial: number): number {
    if (serial < this.first || serial > this.last) this.load(serial);
    if (serial < this.first || serial > this.last) return 0;
    const rel = serial - this.base;
    const col = this.serial16 ? this.a.u16 : this.a.u32;
    const from = this.serialAt;
    let lo = from;
    let hi = from + this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (col[mid]! < rel) lo = mid + 1;
      else hi = mid;
    }
    if (lo === from + this.n || col[lo] !== rel) return 0;
    const at = lo - from;
    return this.tf8 ? this.a.u8[this.tfAt + at]! : this.a.u16[this.tfAt + at]!;
  }

  /** Gives the buffer back for the next stream or lookup. */
  close(): void {
    giveArena(this.a);
    this.a = EMPTY_ARENA;
    this.first = 1;
    this.last = 0;
  }

  /** Reads the block whose first serial is the highest at or below `serial`. */
  private load(serial: number): void {
    this.first = 1;
    this.last = 0;
    for (const { key, value } of this.db.getRange({
      start: blockKey(this.prefix, serial),
      end: this.lowest,
      reverse: true,
      limit: 1,
    })) {
      const v = value as Uint8Array;
      if (v.length < HEADER) return;
      const h = readHeader(v);
      const n = h.count;
      if (n === 0) return;
      // `value` is lmdb-js's view, valid until its next read: copied to an aligned buffer,
      // whose views are made when it grows, not per block (a lookup reads a block each).
      if (this.a.u8.length < v.length) this.a = takeArena(v.length);
      this.a.u8.set(v);
      const flags = readFlags(v);
      const c = columns(n, flags);
      this.serial16 = isNarrow(flags, "serial");
      this.tf8 = isNarrow(flags, "tf");
      this.serialAt = c.serial / (this.serial16 ? 2 : 4);
      this.tfAt = this.tf8 ? c.tf : c.tf / 2;
      this.n = n;
      this.base = readBase(v);
      this.first = keyFirstSerial(key as Uint8Array);
      this.last = h.lastSerial;
    }
  }
}
