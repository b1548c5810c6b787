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
//   block:  format 1 | count 4 | df 4 | last serial 8 | base serial 8 | base time 8 |
//           0 | narrow columns 1 | 0 × 6 (40 bytes), then count postings as columns, each
//           little-endian, the widest first (so each is aligned for its typed array):
//     format 3 (wide; the high lists):  created_at − base time i32 | serial − base u32 |
//           document length u16 | tf u16 | kind u16                          (14 bytes each)
//     format 4 (narrow; search_blocks): the same columns, each as narrow as every posting of
//           the block allows: serial − base u16 (a span under 65,536 serials), created_at −
//           base time i16 (within ±9 hours), length, tf and kind u8 (all ≤ 255); a bit per
//           narrow column in the header's byte 33                   (7 to 14 bytes each)
//     count        postings in this block
//     df           documents containing the token over all its blocks; kept in its last block
//     last serial  the block's highest serial (blocks are skipped without decoding)
//     base serial  what the serial column counts from
//     base time    what the created_at column counts from (the block's first posting's; a
//                  posting more than 68 years away from it starts a block of its own)
//
// Why narrow columns for the postings (format 4): at a million events 96% of postings fit
// serial u16, time i16, length and tf u8 (kind u16: long-form articles share most words'
// blocks), 8 bytes instead of 14; blocks hold ~470 postings instead of ~280, and
// search_blocks took 257 MiB in format 3 (the largest derived database), 152 MiB in format 4.
// Readers walk either format in place, reading each column through the typed array of its
// width (postings.ts); widening each block to format 3's layout as it was read instead cost
// a quarter of a search's time at 50k events. The postings are rebuilt in format 4 on upgrade
// (consumer.ts); a list that mixes both formats still reads right. The high lists stay wide (format 3):
// they are a few MiB, and every posting of them a search reads is merged.
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

/** Blocks of five fixed-width columns (the high lists: read in place, never widened). */
export const WIDE = 3;
/** Blocks whose columns are as narrow as their postings allow (the postings). */
export const NARROW = 4;
export type BlockFormat = typeof WIDE | typeof NARROW;
export const HEADER = 40;
/** bytes of one posting over the five columns of a wide block (and of a widened copy) */
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

// A narrow block's column widths: header byte 33, a bit per column that is narrow. Serial and
// time take 2 bytes instead of 4, length, tf and kind 1 instead of 2.
const FLAGS_AT = 33;
const SERIAL16 = 1;
const TIME16 = 2;
const LENGTH8 = 4;
const TF8 = 8;
const KIND8 = 16;
const ALL_NARROW = 31;
type Column = "time" | "serial" | "length" | "tf" | "kind";
const COLUMNS: readonly Column[] = ["time", "serial", "length", "tf", "kind"];
const NARROW_BIT: Record<Column, number> = {
  time: TIME16,
  serial: SERIAL16,
  length: LENGTH8,
  tf: TF8,
  kind: KIND8,
};
const WIDE_BYTES: Record<Column, number> = { time: 4, serial: 4, length: 2, tf: 2, kind: 2 };

/** Whether column `c` of a block with these flags is narrow (readFlags). */
export const isNarrow = (flags: number, c: Column): boolean => (flags & NARROW_BIT[c]) !== 0;

const width = (flags: number, c: Column): number =>
  flags & NARROW_BIT[c] ? WIDE_BYTES[c] / 2 : WIDE_BYTES[c];

/** bytes of one posting in a block with these flags (14 for a wide one) */
const ROW_BYTES = Array.from({ length: 32 }, (_, f) => COLUMNS.reduce((n, c) => n + width(f, c), 0));

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
    count: readCount(v),
    df: ((v[5]! << 24) | (v[6]! << 16) | (v[7]! << 8) | v[8]!) >>> 0,
    lastSerial: readU64(v, 9),
  };
}

const readCount = (v: Uint8Array): number =>
  v.length < HEADER ? 0 : ((v[1]! << 24) | (v[2]! << 16) | (v[3]! << 8) | v[4]!) >>> 0;

/** The base serial of a block (its serial column counts from it). */
export const readBase = (v: Uint8Array): number => readU64(v, 17);

/** The base time of a block (its created_at column counts from it). */
export const readBaseTime = (v: Uint8Array): number => readU64(v, 25);

/** A block's narrow columns (0 for a wide block). */
export const readFlags = (v: Uint8Array): number => (v[0] === NARROW ? v[FLAGS_AT]! & ALL_NARROW : 0);

type Columns = Record<Column, number>;

/**
 * Where each column of a block of `count` postings starts, from the block's first byte: the
 * widest columns first, so that every column is aligned for its typed array. A wide block's
 * (`flags` 0) are time, serial, length, tf, kind, as readers of a widened copy expect.
 */
export function columns(count: number, flags = 0): Columns {
  const out = {} as Columns;
  let at = HEADER;
  for (const size of [4, 2, 1])
    for (const c of COLUMNS)
      if (width(flags, c) === size) {
        out[c] = at;
        at += size * count;
      }
  return out;
}

/** Postings to encode, flat: serial, tf, length, kind, created_at for each, ascending serials. */
export type FlatPostings = number[];
export const POSTING_FIELDS = 5;

type Ints = Int32Array | Uint32Array | Int16Array | Uint16Array | Uint8Array;

/** Typed views of a block's columns (its bytes must start 4-byte aligned). */
function views(v: Uint8Array, n: number, flags: number): Record<Column, Ints> {
  const c = columns(n, flags);
  const buf = v.buffer;
  const at = v.byteOffset;
  const narrow = (col: Column) => (flags & NARROW_BIT[col]) !== 0;
  return {
    time: narrow("time") ? new Int16Array(buf, at + c.time, n) : new Int32Array(buf, at + c.time, n),
    serial: narrow("serial")
      ? new Uint16Array(buf, at + c.serial, n)
      : new Uint32Array(buf, at + c.serial, n),
    length: narrow("length") ? new Uint8Array(buf, at + c.length, n) : new Uint16Array(buf, at + c.length, n),
    tf: narrow("tf") ? new Uint8Array(buf, at + c.tf, n) : new Uint16Array(buf, at + c.tf, n),
    kind: narrow("kind") ? new Uint8Array(buf, at + c.kind, n) : new Uint16Array(buf, at + c.kind, n),
  };
}

/** A new block's header: count, df, last serial, base serial, base time and its columns' widths. */
function header(
  b: Buffer,
  format: BlockFormat,
  flags: number,
  count: number,
  df: number,
  last: number,
  base: number,
  baseTime: number,
): void {
  b[0] = format;
  b.writeUInt32BE(count, 1);
  b.writeUInt32BE(Math.max(0, Math.min(df, 0xffffffff)), 5);
  serialKey(last).copy(b, 9);
  serialKey(base).copy(b, 17);
  serialKey(baseTime).copy(b, 25);
  b[FLAGS_AT] = flags;
}

/**
 * The columns the posting at `at` of `p` lets be narrow in a block counting from `base` and
 * `baseTime` (a NARROW_BIT per column), or -1 when it does not fit such a block at all.
 */
function narrowable(p: FlatPostings, at: number, base: number, baseTime: number): number {
  const offset = p[at]! - base;
  const dt = p[at + 4]! - baseTime;
  if (offset > MAX_OFFSET || dt < MIN_DT || dt > MAX_DT) return -1;
  return (
    (offset <= 0xffff ? SERIAL16 : 0) |
    (dt >= -0x8000 && dt <= 0x7fff ? TIME16 : 0) |
    (Math.min(p[at + 2]!, MAX_LENGTH) <= 0xff ? LENGTH8 : 0) |
    (Math.min(p[at + 1]!, MAX_TF) <= 0xff ? TF8 : 0) |
    (p[at + 3]! <= 0xff ? KIND8 : 0)
  );
}

/** Writes posting `at` of `p` as row `i` of a block's columns. */
function setRow(
  col: Record<Column, Ints>,
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
function encodeBlock(
  p: FlatPostings,
  from: number,
  n: number,
  df: number,
  format: BlockFormat,
  flags: number,
): Buffer {
  // A buffer of its own, so the columns are aligned for typed arrays.
  const b = Buffer.from(new ArrayBuffer(HEADER + n * ROW_BYTES[flags]!));
  const base = p[from]!;
  const baseTime = p[from + 4]!;
  header(b, format, flags, n, df, p[from + (n - 1) * POSTING_FIELDS]!, base, baseTime);
  const col = views(b, n, flags);
  for (let i = 0, at = from; i < n; i++, at += POSTING_FIELDS) setRow(col, i, p, at, base, baseTime);
  return b;
}

/** A copy of `v` that starts 4-byte aligned (itself when it does). */
const aligned = (v: Uint8Array): Uint8Array => (v.byteOffset % 4 === 0 ? v : v.slice());

/** A block's postings, flat (the inverse of encodeBlock). */
export function flatten(v: Uint8Array, out: FlatPostings = []): FlatPostings {
  const n = readCount(v);
  if (n === 0) return out;
  const base = readBase(v);
  const baseTime = readBaseTime(v);
  const col = views(aligned(v), n, readFlags(v));
  for (let i = 0; i < n; i++)
    out.push(base + col.serial[i]!, col.tf[i]!, col.length[i]!, col.kind[i]!, baseTime + col.time[i]!);
  return out;
}

/**
 * Encodes postings into blocks of at most about `blockBytes`, continuing `head` (an existing
 * block, whose postings all precede these) when given: its postings and these are written
 * again as one run. Every block gets `df` in its header; only the last one's counts. The first
 * block returned starts at `head`'s first serial. A narrow block's columns are as narrow as all
 * its postings allow: a block is closed where the next posting would not fit in `blockBytes`
 * at the widths it needs.
 */
export function encodeBlocks(
  postings: FlatPostings,
  df: number,
  head?: { firstSerial: number; bytes: Uint8Array; header: BlockHeader },
  blockBytes = BLOCK_BYTES,
  format: BlockFormat = NARROW,
): { firstSerial: number; bytes: Buffer }[] {
  const total = postings.length / POSTING_FIELDS;
  const allowed = format === NARROW ? ALL_NARROW : 0;
  const out: { firstSerial: number; bytes: Buffer }[] = [];
  let i = 0;
  // A head of the same format with room takes what fits at its widths; any other head stays as
  // it is (only the last block's df is read) and the postings start a block.
  if (head && head.bytes[0] === format && head.header.count > 0) {
    const had = head.header.count;
    const flags = readFlags(head.bytes);
    const row = ROW_BYTES[flags]!;
    const base = readBase(head.bytes);
    const baseTime = readBaseTime(head.bytes);
    while (i < total && HEADER + (had + i + 1) * row <= blockBytes) {
      const fits = narrowable(postings, i * POSTING_FIELDS, base, baseTime);
      if (fits < 0 || (fits & flags) !== flags) break;
      i++;
    }
    if (i > 0)
      out.push({
        firstSerial: head.firstSerial,
        bytes: extendBlock(head.bytes, had, format, flags, base, postings, i, df),
      });
  }
  while (i < total) {
    const at = i * POSTING_FIELDS;
    const base = postings[at]!;
    const baseTime = postings[at + 4]!;
    let flags = narrowable(postings, at, base, baseTime) & allowed;
    let n = 1;
    while (i + n < total) {
      const fits = narrowable(postings, (i + n) * POSTING_FIELDS, base, baseTime);
      if (fits < 0) break;
      const next = flags & fits;
      if (HEADER + (n + 1) * ROW_BYTES[next]! > blockBytes) break;
      flags = next;
      n++;
    }
    out.push({ firstSerial: base, bytes: encodeBlock(postings, at, n, df, format, flags) });
    i += n;
  }
  return out;
}

/**
 * A block holding `head`'s `had` postings (copied column by column) and then the first `n` of
 * `p`, all counted from `base` at the head's widths: appending a batch to a token's last block
 * costs a copy of it plus the new postings, not a decode and encode of every posting it held.
 */
function extendBlock(
  head: Uint8Array,
  had: number,
  format: BlockFormat,
  flags: number,
  base: number,
  p: FlatPostings,
  n: number,
  df: number,
): Buffer {
  const count = had + n;
  const b = Buffer.from(new ArrayBuffer(HEADER + count * ROW_BYTES[flags]!));
  const baseTime = readBaseTime(head);
  header(b, format, flags, count, df, p[(n - 1) * POSTING_FIELDS]!, base, baseTime);
  const col = views(b, count, flags);
  const old = views(aligned(head), had, flags);
  for (const c of COLUMNS) col[c].set(old[c]);
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
  // The block's own format, at the widths its remaining postings allow.
  const format: BlockFormat = v[0] === NARROW ? NARROW : WIDE;
  const n = kept.length / POSTING_FIELDS;
  let flags = format === NARROW ? ALL_NARROW : 0;
  for (let i = 0; i < kept.length; i += POSTING_FIELDS) flags &= narrowable(kept, i, kept[0]!, kept[4]!);
  return encodeBlock(kept, 0, n, h.df, format, flags);
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
