// How the REQ indexes (pubkey, kind, pubkind, tag, time) sit in LMDB. An index entry is
// `prefix | created_at 8 | serial 8` (keys.ts); it is stored as one of the prefix's sorted
// duplicates: the prefix is the LMDB key, the 16-byte `created_at | serial` tail a value of a
// MDB_DUPSORT | MDB_DUPFIXED database. Why: stored as whole keys, every entry repeated its prefix
// (32 bytes of pubkey or tag value) and carried an 8-byte node header, and random inserts left
// pages about half full: at a million events the tag index took 108 bytes an entry. Duplicates
// of one key are packed 16 bytes apiece, in pages of their own, so an author's or a tag's
// entries cost 16 bytes each and append at the newest end. The order is the same (prefix, then
// created_at, then serial), so a scan of a prefix between since and until is a range of its
// values, newest first in reverse.
import { indexKey, readU64, TAIL } from "./keys.ts";
import type { BinDb } from "./types.ts";

/**
 * The REQ indexes' consumer (indexes/indexes.ts): its watermark says up to which serial the
 * entries are on disk, for the writer's own walks over them (lifecycle.ts) and `relay check`.
 */
export const INDEXES = "indexes";

/**
 * Values are handed out as lmdb-js's read buffer itself, valid until the next read: every
 * reader here takes the two numbers at once, from its first 16 bytes. Not cut to size (a
 * view per entry was 4% of a REQ's time): the buffer is larger than the value, so a reader
 * that copies one copies those 16 bytes (see allEntries).
 */
const TAIL_ENCODER = {
  encode: (v: Uint8Array): Uint8Array => v,
  decode: (bytes: Uint8Array): Uint8Array => bytes,
  needsStableBuffer: false,
};

/** lmdb-js options of an index database (`encoder` is an option its types do not declare). */
export const INDEX_DB = {
  keyEncoding: "binary",
  encoder: TAIL_ENCODER,
  dupSort: true,
  dupFixed: true,
} as const;

const MAX_SERIAL = Number.MAX_SAFE_INTEGER;

const NONE = new Uint8Array(0);

/** The value `created_at | serial`. */
export const tailValue = (createdAt: number, serial: number): Buffer => indexKey(NONE, createdAt, serial);

const prefixOf = (k: Uint8Array): Uint8Array => k.subarray(0, k.length - TAIL);
const tailOf = (k: Uint8Array): Uint8Array => k.subarray(k.length - TAIL);

/** Adds the entry `k` (prefix | created_at | serial): in a write transaction, or as an asynchronous write. */
export function putEntry(db: BinDb, k: Uint8Array): void {
  db.put(prefixOf(k) as Buffer, tailOf(k) as Buffer);
}

export function removeEntry(db: BinDb, k: Uint8Array): void {
  db.remove(prefixOf(k) as Buffer, tailOf(k) as never);
}

/** Whether the entry `k` is stored (read in `txn` when given). */
export function hasEntry(db: BinDb, k: Uint8Array, txn?: unknown): boolean {
  const o = { start: tailOf(k), end: nextValue(tailOf(k)), transaction: txn };
  return (db.getValuesCount(prefixOf(k) as Buffer, o as never) as number) > 0;
}

/** The value just above `v` (the end of a one-value range). */
function nextValue(v: Uint8Array): Buffer {
  const n = Buffer.from(v);
  for (let i = n.length - 1; i >= 0; i--) {
    if (n[i] !== 0xff) {
      n[i]!++;
      return n;
    }
    n[i] = 0;
  }
  return Buffer.alloc(TAIL + 1, 0xff);
}

/** Every entry of the index, as whole keys (prefix | created_at | serial), in order. */
export function* allEntries(db: BinDb, txn?: unknown): Generator<Buffer> {
  for (const { key, value } of db.getRange({ transaction: txn } as never)) {
    const p = key as Buffer;
    const k = Buffer.allocUnsafe(p.length + TAIL);
    k.set(p, 0);
    k.set((value as Uint8Array).subarray(0, TAIL), p.length);
    yield k;
  }
}

/** Bounds of the values with created_at in [since, until], for a reverse (newest first) read. */
function bounds(since: number, until: number): { start: Buffer; end: Buffer } {
  // Most filters have neither: one pair for them all (lmdb-js copies the bounds it is given).
  if (since === 0 && until === MAX_TIME) return ALL_TIME;
  // Serials start at 1, so serial 0 at `since` is below every entry of that second.
  return { start: tailValue(until, MAX_SERIAL), end: tailValue(since, 0) };
}

const MAX_TIME = Number.MAX_SAFE_INTEGER;
const ALL_TIME = { start: tailValue(MAX_TIME, MAX_SERIAL), end: tailValue(0, 0) };

/**
 * Up to `limit` entries of one prefix with created_at in [since, until], as pairs of numbers
 * (`times[i]`, `serials[i]`), newest first (`reverse`) or oldest first, starting after the
 * pair `after` when given (the last one of the previous chunk).
 */
export function readEntries(
  db: BinDb,
  prefix: Uint8Array,
  since: number,
  until: number,
  reverse: boolean,
  limit: number,
  after: { time: number; serial: number } | undefined,
  out: { times: number[]; serials: number[] },
): void {
  // Only the bounds that narrow the range are given: lmdb-js encodes each bound it is handed on
  // every call, a quarter of a short read's cost (a 100-author feed reads 200 prefixes a few
  // entries each). A range with one end open needs only the other.
  let newest: Buffer | undefined = until === MAX_TIME ? undefined : tailValue(until, MAX_SERIAL);
  let oldest: Buffer | undefined = since === 0 ? undefined : tailValue(since, 0);
  if (after) {
    if (reverse) newest = tailValue(after.time, after.serial - 1);
    else oldest = tailValue(after.time, after.serial + 1);
  }
  const from = reverse ? newest : oldest;
  const to = reverse ? oldest : newest;
  const o: { reverse: boolean; limit: number; start?: Buffer; end?: Buffer } = { reverse, limit };
  if (from !== undefined || to !== undefined) {
    o.start = from ?? (reverse ? ALL_TIME.start : ALL_TIME.end);
    if (to !== undefined) o.end = to;
  }
  for (const v of db.getValues(prefix as Buffer, o as never)) {
    const x = v as Uint8Array;
    out.times.push(readU64(x, 0));
    out.serials.push(readU64(x, 8));
  }
}

/** Entries of one prefix with created_at in [since, until] (read in `txn` when given). */
export function countEntries(
  db: BinDb,
  prefix: Uint8Array,
  since: number,
  until: number,
  txn?: unknown,
): number {
  const b = bounds(since, until);
  // Forwards: from the lower bound (inclusive) to just above the upper one.
  const o = { start: b.end, end: nextValue(b.start), transaction: txn };
  return db.getValuesCount(prefix as Buffer, o as never) as number;
}

/** The entries of one prefix with created_at in [since, until], newest first. */
export function* entriesOf(
  db: BinDb,
  prefix: Uint8Array,
  since = 0,
  until = Number.MAX_SAFE_INTEGER,
): Generator<{ time: number; serial: number }> {
  const b = bounds(since, until);
  for (const v of db.getValues(prefix as Buffer, { start: b.start, end: b.end, reverse: true } as never)) {
    const x = v as Uint8Array;
    yield { time: readU64(x, 0), serial: readU64(x, 8) };
  }
}
