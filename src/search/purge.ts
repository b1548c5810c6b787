// Taking removed documents' postings out of the blocks. A removed document's postings stay in
// place, listed in search_gone (readers skip them), until a purge rewrites the blocks that hold
// them, each block once however many of them it holds. Two ways to find those blocks:
//
// - by token (`purgeByToken`): for each token of each removed document, the block holding it.
//   A lookup per token and document: right when few documents went from a large index (the
//   replaced profiles and contact lists of an ordinary day);
// - in key order (`SweepPurge`): every block once, a slice per batch of the consumers. Right
//   when the removed documents' tokens span much of the index, as when the disk budget or a
//   retention rule takes thousands of notes: 3,290 removed notes of ~440 distinct words each
//   made 1.4 million lookups, 12 s in one transaction (bench/flood.ts), where one walk of the
//   ~40 MiB of blocks reads each once. In slices, so that no transaction rewrites the whole
//   index: the pages a transaction rewrites are fresh ones while it runs, and on a small disk
//   budget a whole-index rewrite doubled the derived file (docs/operations.md, the slack).
//
// A document leaves search_gone only once every block has been swept past it: until then
// readers still skip it wherever it is left. Sweeping a block twice (a restart forgets the
// cursor and starts again) takes nothing more out of it.
import type { BinDb } from "../store/types.ts";
import { blockKey, filterBlock, keyFirstSerial, readHeader, tokenBounds, tokenPrefix } from "./blocks.ts";

/** Rewrites a token's blocks that hold any of `serials` without them, each block once. */
function purgeToken(b: BinDb, prefix: Buffer, serials: Set<number>, sorted: readonly number[]): void {
  const { start, end } = tokenBounds(prefix);
  // Only the blocks that hold a removed document are read: a common word's postings span
  // hundreds of blocks, and reading them all for each purge (a copy of each) cost seconds a
  // purge at a million events, every OK waiting meanwhile.
  for (let i = 0; i < sorted.length; ) {
    const s = sorted[i]!;
    // The block holding s, if any: the last one whose first serial is at most s.
    let key: Buffer | undefined;
    let value: Buffer | undefined;
    for (const e of b.getRange({ start: blockKey(prefix, s), end: start, reverse: true, limit: 1 })) {
      key = Buffer.from(e.key as Buffer);
      value = Buffer.from(e.value as Buffer);
    }
    const to = value ? readHeader(value).lastSerial : -1;
    if (!key || !value || to < s) {
      i++;
      continue;
    }
    while (i < sorted.length && sorted[i]! <= to) i++;
    const kept = filterBlock(value, (serial) => serials.has(serial));
    if (!kept) continue;
    // An emptied block goes, but for the token's last one, whose header carries its df.
    let isLast = true;
    for (const _ of b.getKeys({ start: blockKey(prefix, keyFirstSerial(key) + 1), end, limit: 1 }))
      isLast = false;
    if (readHeader(kept).count === 0 && !isLast) b.remove(key);
    else b.put(key, kept);
  }
}

/** Purges `serials` from every token in `byToken`, in `dbs`, at once (one lookup per token and document). */
export function purgeByToken(dbs: readonly BinDb[], byToken: Map<string, Set<number>>): void {
  for (const [t, serials] of byToken) {
    const prefix = tokenPrefix(t);
    const sorted = [...serials].sort((x, y) => x - y);
    for (const b of dbs) purgeToken(b, prefix, serials, sorted);
  }
}

/** Blocks read per range read: their keys compared and headers read in place, copied only when rewritten. */
const CHUNK = 512;

function samePrefix(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length - 8; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A purge of `serials` that walks every block of `dbs` in key order, a slice at a time. */
export class SweepPurge {
  readonly serials: Set<number>;
  private readonly sorted: Float64Array;
  private db = 0;
  /** the next block to read in dbs[db]; undefined: from the start */
  private cursor: Buffer | undefined;
  /** blocks rewritten or removed so far (for the log) */
  rewritten = 0;

  constructor(
    serials: Iterable<number>,
    private readonly dbs: readonly BinDb[],
    /** bytes of blocks read per step */
    private readonly sliceBytes: number,
    /** blocks per range read (tests lower it to cross chunks) */
    private readonly chunkSize = CHUNK,
  ) {
    this.serials = new Set(serials);
    this.sorted = Float64Array.from(this.serials).sort();
  }

  get done(): boolean {
    return this.db >= this.dbs.length;
  }

  /** Whether any purged serial lies in [from, to]. */
  private holds(from: number, to: number): boolean {
    const a = this.sorted;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < a.length && a[lo]! <= to;
  }

  /**
   * Sweeps on until about a slice of blocks has been read or everything has; returns whether
   * the purge is done. Runs inside the consumers' write transaction.
   */
  step(): boolean {
    let read = 0;
    while (!this.done && read < this.sliceBytes) {
      const b = this.dbs[this.db]!;
      // Read a chunk first and write after: no put while a range read is open on the database.
      const chunk: { key: Buffer; value: Buffer | undefined }[] = [];
      for (const { key, value } of b.getRange({ start: this.cursor, limit: this.chunkSize })) {
        const k = key as Buffer;
        const v = value as Buffer;
        read += k.length + v.length;
        const hit = this.holds(keyFirstSerial(k), readHeader(v).lastSerial);
        chunk.push({ key: Buffer.from(k), value: hit ? Buffer.from(v) : undefined });
      }
      const end = chunk.length < this.chunkSize;
      // The chunk's last block is decided with the next chunk, which shows whether it is its
      // token's last block; but for the database's very last one.
      const upTo = end ? chunk.length : chunk.length - 1;
      for (let i = 0; i < upTo; i++) {
        const { key, value } = chunk[i]!;
        if (!value) continue;
        const kept = filterBlock(value, (serial) => this.serials.has(serial));
        if (!kept) continue;
        this.rewritten++;
        const next = chunk[i + 1];
        const isLast = !next || !samePrefix(key, next.key);
        // An emptied block goes, but for the token's last one, whose header carries its df.
        if (readHeader(kept).count === 0 && !isLast) b.remove(key);
        else b.put(key, kept);
      }
      if (end) {
        this.db++;
        this.cursor = undefined;
      } else this.cursor = chunk[chunk.length - 1]!.key;
    }
    return this.done;
  }
}
