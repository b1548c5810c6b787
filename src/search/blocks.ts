// Byte layouts of the search index: postings packed in blocks, one key per block, not per
// posting. A batch of the event log appends its postings of a token to the token's last block
// (or starts new ones), so indexing costs a few LMDB writes per distinct token per batch.
//
//   search_blocks  len 1 | token ≤160 | first serial 8          → block
//   search_high    len 1 | token ≤160 | first serial 8          → block of its high-impact
//                                                                 postings (impact.ts)
//   search_gone    serial 8                                    → its tokens, NUL-separated
//   search_meta    "stats"                                     → documents 8 | total length 8
//                  "impact"                                    → reference length f64 |
//                                                                 documents then f64
//
//   block:  format 1 (=3) | count 4 | df 4 | last serial 8 | base serial 8 | base time 8 | 0 × 7
//           (40 bytes), then count postings as columns, each little-endian:
//           created_at − base time i32 × count | serial − base u32 × count |
//           document length u16 × count | tf u16 × count | kind u16 × count      (14 bytes each)
//     count        postings in this block
//     df           documents containing the token over all its blocks; kept in its last block
//     last serial  the block's highest serial (blocks are skipped without decoding)
//     base serial  what the serial column counts from
//     base time    what the created_at column counts from (the block's first posting's; a
//                  posting more than 68 years away from it starts a block of its own)
//
// Format 2 kept created_at as f64 and the length as u32: 20 bytes a posting, the largest
// derived database at a million events (362 MiB); 14 bytes hold the same.
// Why columns of fixed width, where the first format packed varints: a search walks tens of
// thousands of postings, and decoding five varints per posting to step past it was most of
// its time. Here a step reads one u32; the other fields are read only for the documents that
// hold every word, and a seek inside a block is a binary search. The header keeps the columns
// 8-byte aligned, so a reader that copies a block to an aligned offset reads them through typed
// arrays (little-endian, as are all the platforms Bun runs on). Postings are in serial order
// within a block and blocks in serial order under a token; the first-serial in a key is a lower
// bound of the block's serials (a purge may remove its first posting). Document lengths are
// capped at 65,535 tokens when a document is analysed, like tf. A removed document
// leaves its postings in place, listed in search_gone (readers skip them) until a purge
// rewrites the blocks that hold them, many removed documents at a time. A token is at most
// MAX_TOKEN code points (≤ 160 UTF-8 bytes), so one length byte suffices, and the length prefix
// keeps `nost` from being a key prefix of `nostr`. tf is capped at 65,535 when a document is
// analysed (fields.ts), on both the indexed and the not-yet-indexed path.
import { readU64, serialKey } from "../store/keys.ts";

export const FORMAT = 3;
export const HEADER = 40;
/** bytes of one posting over the five columns */
export const POSTING_BYTES = 14;
/** A block is closed once appending would take it past this many bytes. */
export const BLOCK_BYTES = 4000;
/** the largest serial − base a block holds */
const MAX_OFFSET = 0xffffffff;
export const MAX_TF = 0xffff;
/** the longest document length a posting holds (longer ones are counted as this long) */
export const MAX_LENGTH = 0xffff;
/** created_at − base time must fit an i32 */
const MIN_DT = -0x80000000;
const MAX_DT = 0x7fffffff;

export interface Posting {
  serial: number;
  tf: number;
  length: number;
  kind: number;
  createdAt: number;
}

const encoder = new TextEncoder();

/** `len | token`: the key prefix of all of a token's blocks. */
export function tokenPrefix(token: string): Buffer {
  const t = encoder.encode(token);
  const k = Buffer.allocUnsafe(1 + t.length);
  k[0] = t.length;
  k.set(t, 1);
  return k;
}

export function blockKey(prefix: Uint8Array, firstSerial: number): Buffer {
  const k = Buffer.allocUnsafe(prefix.length + 8);
  k.set(prefix, 0);
  serialKey(firstSerial).copy(k, prefix.length);
  return k;
}

export const keyFirstSerial = (k: Uint8Array): number => readU64(k, k.length - 8);

/** Bounds of every block of a token (forward: start inclusive, end exclusive). */
export function tokenBounds(prefix: Uint8Array): { start: Buffer; end: Buffer } {
  return { start: blockKey(prefix, 0), end: blockKey(prefix, Number.MAX_SAFE_INTEGER) };
}

export interface BlockHeader {
  count: number;
  df: number;
  lastSerial: number;
}

export function readHeader(v: Uint8Array): BlockHeader {
  return {
    count: ((v[1]! << 24) | (v[2]! << 16) | (v[3]! << 8) | v[4]!) >>> 0,
    df: ((v[5]! << 24) | (v[6]! << 16) | (v[7]! << 8) | v[8]!) >>> 0,
    lastSerial: readU64(v, 9),
  };
}

/** The base serial of a block (its serial column counts from it). */
export const readBase = (v: Uint8Array): number => readU64(v, 17);

/** The base time of a block (its created_at column counts from it). */
export const readBaseTime = (v: Uint8Array): number => readU64(v, 25);

/** Where each column of a block of `count` postings starts, from the block's first byte. */
export function columns(count: number): {
  time: number;
  serial: number;
  length: number;
  tf: number;
  kind: number;
} {
  const time = HEADER;
  const serial = time + 4 * count;
  const length = serial + 4 * count;
  const tf = length + 2 * count;
  return { time, serial, length, tf, kind: tf + 2 * count };
}

/** Postings to encode, flat: serial, tf, length, kind, created_at for each, ascending serials. */
export type FlatPostings = number[];
export const POSTING_FIELDS = 5;

/** Typed views of a block's columns (its bytes must start 4-byte aligned). */
function views(v: Uint8Array, n: number) {
  const c = columns(n);
  const buf = v.buffer;
  const at = v.byteOffset;
  return {
    time: new Int32Array(buf, at + c.time, n),
    serial: new Uint32Array(buf, at + c.serial, n),
    length: new Uint16Array(buf, at + c.length, n),
    tf: new Uint16Array(buf, at + c.tf, n),
    kind: new Uint16Array(buf, at + c.kind, n),
  };
}

/** A new block's header: count, df, last serial, base serial and base time. */
function header(b: Buffer, count: number, df: number, last: number, base: number, baseTime: number): void {
  b[0] = FORMAT;
  b.writeUInt32BE(count, 1);
  b.writeUInt32BE(Math.max(0, Math.min(df, 0xffffffff)), 5);
  serialKey(last).copy(b, 9);
  serialKey(base).copy(b, 17);
  serialKey(baseTime).copy(b, 25);
}

/** Whether the posting at `at` of `p` fits a block counting from `base` and `baseTime`. */
function fits(p: FlatPostings, at: number, base: number, baseTime: number): boolean {
  const dt = p[at + 4]! - baseTime;
  return p[at]! - base <= MAX_OFFSET && dt >= MIN_DT && dt <= MAX_DT;
}

/** Writes posting `at` of `p` as row `i` of a block's columns. */
function setRow(
  col: ReturnType<typeof views>,
  i: number,
  p: FlatPostings,
  at: number,
  base: number,
  baseTime: number,
): void {
  col.serial[i] = p[at]! - base;
  col.tf[i] = Math.min(p[at + 1]!, MAX_TF);
  col.length[i] = Math.min(p[at + 2]!, MAX_LENGTH);
  col.kind[i] = p[at + 3]!;
  col.time[i] = p[at + 4]! - baseTime;
}

/** One block of `n` postings taken from flat postings `p` at `from`. */
function encodeBlock(p: FlatPostings, from: number, n: number, df: number): Buffer {
  // A buffer of its own, so the columns are aligned for typed arrays.
  const b = Buffer.from(new ArrayBuffer(HEADER + n * POSTING_BYTES));
  const base = p[from]!;
  const baseTime = p[from + 4]!;
  header(b, n, df, p[from + (n - 1) * POSTING_FIELDS]!, base, baseTime);
  const col = views(b, n);
  for (let i = 0, at = from; i < n; i++, at += POSTING_FIELDS) setRow(col, i, p, at, base, baseTime);
  return b;
}

/** A block's postings, flat (the inverse of encodeBlock). */
export function flatten(v: Uint8Array, out: FlatPostings = []): FlatPostings {
  const n = readHeader(v).count;
  const base = readBase(v);
  const baseTime = readBaseTime(v);
  const col = views(v.byteOffset % 4 === 0 ? v : v.slice(), n);
  for (let i = 0; i < n; i++)
    out.push(base + col.serial[i]!, col.tf[i]!, col.length[i]!, col.kind[i]!, baseTime + col.time[i]!);
  return out;
}

/**
 * Encodes postings into blocks of at most about `blockBytes`, continuing `head` (an existing
 * block, whose postings all precede these) when given: its postings and these are written
 * again as one run. Every block gets `df` in its header; only the last one's counts. The first
 * block returned starts at `head`'s first serial.
 */
export function encodeBlocks(
  postings: FlatPostings,
  df: number,
  head?: { firstSerial: number; bytes: Uint8Array; header: BlockHeader },
  blockBytes = BLOCK_BYTES,
): { firstSerial: number; bytes: Buffer }[] {
  const perBlock = Math.max(1, Math.floor((blockBytes - HEADER) / POSTING_BYTES));
  const total = postings.length / POSTING_FIELDS;
  const out: { firstSerial: number; bytes: Buffer }[] = [];
  let i = 0;
  // A head with room takes what fits; a full head stays as it is (only the last block's df is
  // read) and the postings start a block.
  if (head && head.header.count < perBlock) {
    const had = head.header.count;
    const base = readBase(head.bytes);
    const baseTime = readBaseTime(head.bytes);
    while (i < total && had + i < perBlock && fits(postings, i * POSTING_FIELDS, base, baseTime)) i++;
    if (i > 0)
      out.push({ firstSerial: head.firstSerial, bytes: extendBlock(head.bytes, had, base, postings, i, df) });
  }
  while (i < total) {
    const base = postings[i * POSTING_FIELDS]!;
    const baseTime = postings[i * POSTING_FIELDS + 4]!;
    let n = 0;
    while (i + n < total && n < perBlock && fits(postings, (i + n) * POSTING_FIELDS, base, baseTime)) n++;
    out.push({ firstSerial: base, bytes: encodeBlock(postings, i * POSTING_FIELDS, n, df) });
    i += n;
  }
  return out;
}

/**
 * A block holding `head`'s `had` postings (copied column by column) and then the first `n` of
 * `p`, all counted from `base`: appending a batch to a token's last block costs a copy of it
 * plus the new postings, not a decode and encode of every posting it held.
 */
function extendBlock(
  head: Uint8Array,
  had: number,
  base: number,
  p: FlatPostings,
  n: number,
  df: number,
): Buffer {
  const count = had + n;
  const b = Buffer.from(new ArrayBuffer(HEADER + count * POSTING_BYTES));
  const baseTime = readBaseTime(head);
  header(b, count, df, p[(n - 1) * POSTING_FIELDS]!, base, baseTime);
  const col = views(b, count);
  const old = views(head.byteOffset % 4 === 0 ? head : head.slice(), had);
  col.time.set(old.time);
  col.serial.set(old.serial);
  col.length.set(old.length);
  col.tf.set(old.tf);
  col.kind.set(old.kind);
  for (let i = 0, at = 0; i < n; i++, at += POSTING_FIELDS) setRow(col, had + i, p, at, base, baseTime);
  return b;
}

/** A copy of a block with another document frequency in its header. */
export function withDf(v: Uint8Array, df: number): Buffer {
  const b = Buffer.from(v);
  b.writeUInt32BE(Math.max(0, Math.min(df, 0xffffffff)), 5);
  return b;
}

/**
 * A copy of a block without the postings whose serial `drop` names, or undefined when it holds
 * none of them. The copy keeps the block's base serial; an emptied block keeps only its header.
 */
export function filterBlock(v: Uint8Array, drop: (serial: number) => boolean): Buffer | undefined {
  const h = readHeader(v);
  const all = flatten(v);
  const kept: FlatPostings = [];
  for (let i = 0; i < all.length; i += POSTING_FIELDS)
    if (!drop(all[i]!)) for (let f = 0; f < POSTING_FIELDS; f++) kept.push(all[i + f]!);
  if (kept.length === all.length) return undefined;
  if (kept.length === 0) {
    const b = Buffer.from(v.subarray(0, HEADER));
    b.writeUInt32BE(0, 1);
    serialKey(0).copy(b, 9);
    return b;
  }
  return encodeBlock(kept, 0, kept.length / POSTING_FIELDS, h.df);
}

/** Every posting of a block (for tests and tools; searches read the columns in place). */
export function decodeBlock(v: Uint8Array): Posting[] {
  const flat = flatten(v);
  const out: Posting[] = [];
  for (let i = 0; i < flat.length; i += POSTING_FIELDS)
    out.push({
      serial: flat[i]!,
      tf: flat[i + 1]!,
      length: flat[i + 2]!,
      kind: flat[i + 3]!,
      createdAt: flat[i + 4]!,
    });
  return out;
}

export const STATS_KEY = Buffer.from("stats");

export function statsValue(docs: number, totalLength: number): Buffer {
  const v = Buffer.alloc(16);
  serialKey(Math.max(0, docs)).copy(v, 0);
  serialKey(Math.max(0, totalLength)).copy(v, 8);
  return v;
}

export const readStats = (v: Uint8Array | undefined): { docs: number; totalLength: number } =>
  v ? { docs: readU64(v, 0), totalLength: readU64(v, 8) } : { docs: 0, totalLength: 0 };
