// Byte layouts of the search index: postings packed in blocks, one key per block, not per
// posting. A batch of the event log appends its postings of a token to the token's last block
// (or starts new ones), so indexing costs a few LMDB writes per distinct token per batch.
//
//   search_blocks  len 1 | token ≤160 | first serial 8          → block
//   search_gone    serial 8                                    → its tokens, NUL-separated
//   search_meta    "stats"                                     → documents 8 | total length 8
//
//   block:  format 1 (=1) | count 4 | df 4 | last serial 8 | postings…
//     count        postings in this block
//     df           documents containing the token over all its blocks; kept in its last block
//     last serial  the block's highest serial (blocks are skipped without decoding)
//     posting      varint(serial − previous serial) varint(tf) varint(document length)
//                  varint(kind) varint(created_at); "previous" is 0 at the start of a block
//
// Varints are unsigned LEB128 (7 bits a byte, low group first), exact up to 2^53. Postings are
// in serial order within a block and blocks in serial order under a token; the first-serial in
// a key is a lower bound of the block's serials (a purge may remove its first posting).
// A removed document leaves its postings in place, listed in search_gone (readers skip them)
// until a purge rewrites the blocks that hold them, many removed documents at a time.
// A token is at most MAX_TOKEN code points (≤ 160 UTF-8 bytes), so one length byte suffices,
// and the length prefix keeps `nost` from being a key prefix of `nostr`.
import { readU64, serialKey } from "../store/keys.ts";

export const FORMAT = 1;
export const HEADER = 17;
/** A block is closed once appending would take it past this many bytes. */
export const BLOCK_BYTES = 4000;

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

function writeHeader(b: Buffer, h: BlockHeader): void {
  b[0] = FORMAT;
  b.writeUInt32BE(h.count, 1);
  b.writeUInt32BE(Math.min(h.df, 0xffffffff), 5);
  serialKey(h.lastSerial).copy(b, 9);
}

/** Growable byte output for varints. */
class Out {
  buf: Buffer;
  at: number;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 64));
    this.at = 0;
  }
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }
  varint(n: number): void {
    this.room(8);
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.at++] = n;
  }
}

/** Upper bound of a posting's encoded size: 5 varints, serial delta and created_at up to 8 bytes. */
const MAX_POSTING = 8 + 5 + 5 + 3 + 8;

/** Postings to encode, flat: serial, tf, length, kind, created_at for each, ascending serials. */
export type FlatPostings = number[];
export const POSTING_FIELDS = 5;

/**
 * Encodes postings into blocks of at most about BLOCK_BYTES, continuing `head` (an existing
 * block, whose postings all precede these) when given. Every block gets `df` in its header; only
 * the last one's counts. The first block returned is `head`.
 */
export function encodeBlocks(
  postings: FlatPostings,
  df: number,
  head?: { firstSerial: number; bytes: Uint8Array; header: BlockHeader },
  blockBytes = BLOCK_BYTES,
): { firstSerial: number; bytes: Buffer }[] {
  const out: { firstSerial: number; bytes: Buffer }[] = [];
  const n = postings.length / POSTING_FIELDS;
  let o = new Out(Math.min(blockBytes + MAX_POSTING, (head ? head.bytes.length : HEADER) + n * 12));
  let count = 0;
  let prev = 0;
  let first = -1;
  if (head) {
    o.bytes(head.bytes);
    count = head.header.count;
    prev = head.header.lastSerial;
    first = head.firstSerial;
  } else o.at = HEADER;
  const close = () => {
    const b = o.buf.subarray(0, o.at);
    writeHeader(b, { count, df, lastSerial: prev });
    out.push({ firstSerial: first, bytes: b });
  };
  for (let i = 0; i < postings.length; i += POSTING_FIELDS) {
    const serial = postings[i]!;
    if (o.at > HEADER && o.at + MAX_POSTING > blockBytes) {
      close();
      o = new Out(Math.min(blockBytes + MAX_POSTING, HEADER + (postings.length - i) * 3));
      o.at = HEADER;
      count = 0;
      prev = 0;
      first = -1;
    }
    if (first < 0) first = serial;
    o.varint(serial - prev);
    o.varint(postings[i + 1]!);
    o.varint(postings[i + 2]!);
    o.varint(postings[i + 3]!);
    o.varint(postings[i + 4]!);
    prev = serial;
    count++;
  }
  if (count > 0 || head) close();
  return out;
}

/** A copy of a block with another document frequency in its header. */
export function withDf(v: Uint8Array, df: number): Buffer {
  const b = Buffer.from(v);
  b.writeUInt32BE(Math.max(0, Math.min(df, 0xffffffff)), 5);
  return b;
}

/**
 * A copy of a block without the postings whose serial `drop` names (their bytes copied, the
 * serial deltas of the kept ones re-encoded), or undefined when it holds none of them.
 */
export function filterBlock(v: Uint8Array, drop: (serial: number) => boolean): Buffer | undefined {
  const h = readHeader(v);
  const o = new Out(v.length);
  o.at = HEADER;
  let at = HEADER;
  let serial = 0;
  let prevKept = 0;
  let kept = 0;
  let lastKept = 0;
  const skip = () => {
    while (v[at++]! >= 0x80);
  };
  for (let i = 0; i < h.count; i++) {
    let b = v[at++]!;
    let delta = b & 0x7f;
    for (let mul = 0x80; b >= 0x80; mul *= 0x80) {
      b = v[at++]!;
      delta += (b & 0x7f) * mul;
    }
    serial += delta;
    const from = at;
    skip();
    skip();
    skip();
    skip();
    if (drop(serial)) continue;
    o.varint(serial - prevKept);
    o.bytes(v.subarray(from, at));
    prevKept = serial;
    lastKept = serial;
    kept++;
  }
  if (kept === h.count) return undefined;
  const b = o.buf.subarray(0, o.at);
  writeHeader(b, { count: kept, df: h.df, lastSerial: kept > 0 ? lastKept : 0 });
  return b;
}

/** Walks the postings of one block without allocating: fields are updated by next(). */
export class BlockCursor {
  serial = 0;
  tf = 0;
  length = 0;
  kind = 0;
  createdAt = 0;
  private at = HEADER;
  private left: number;

  constructor(private readonly v: Uint8Array) {
    this.left = readHeader(v).count;
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

  next(): boolean {
    if (this.left === 0) return false;
    this.left--;
    this.serial += this.varint();
    this.tf = this.varint();
    this.length = this.varint();
    this.kind = this.varint();
    this.createdAt = this.varint();
    return true;
  }
}

/** Every posting of a block (for tests and tools; readers walk a BlockCursor). */
export function decodeBlock(v: Uint8Array): Posting[] {
  const c = new BlockCursor(v);
  const out: Posting[] = [];
  while (c.next())
    out.push({ serial: c.serial, tf: c.tf, length: c.length, kind: c.kind, createdAt: c.createdAt });
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
