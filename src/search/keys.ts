// Byte layouts of the search databases (all integers big-endian):
//
//   search      len 1 | token ≤160 | created_at 8 | serial 8  → tf 2 | doc length 4 | kind 2
//   search_df   len 1 | token                                 → documents containing it 4
//   search_meta "stats"                                       → documents 8 | total length 8
//               "version"                                     → tokenizer version 4
//
// A token is at most MAX_TOKEN code points (≤ 160 UTF-8 bytes), so one length byte suffices; the
// length prefix keeps `nost` from being a key prefix of `nostr`. Postings end in
// `created_at | serial` like every other index, so since/until are range bounds.
import { indexKey, rangeFor, readU64 } from "../store/keys.ts";

const encoder = new TextEncoder();

export function tokenPrefix(token: string): Buffer {
  const t = encoder.encode(token);
  const k = Buffer.allocUnsafe(1 + t.length);
  k[0] = t.length;
  k.set(t, 1);
  return k;
}

export const postingKey = (prefix: Uint8Array, createdAt: number, serial: number): Buffer =>
  indexKey(prefix, createdAt, serial);

/** Forward-scan bounds of one token's postings between since and until (inclusive). */
export function postingRange(
  prefix: Uint8Array,
  since: number,
  until: number,
): { start: Buffer; end: Buffer } {
  const { start, end } = rangeFor(prefix, since, until);
  return { start: end, end: start };
}

export interface Posting {
  tf: number;
  length: number;
  kind: number;
}

export function postingValue(tf: number, length: number, kind: number): Buffer {
  const v = Buffer.allocUnsafe(8);
  v.writeUInt16BE(Math.min(tf, 0xffff), 0);
  v.writeUInt32BE(Math.min(length, 0xffffffff), 2);
  v.writeUInt16BE(kind, 6);
  return v;
}

export const postingTf = (v: Uint8Array): number => (v[0]! << 8) | v[1]!;
export const postingLength = (v: Uint8Array): number =>
  ((v[2]! << 24) | (v[3]! << 16) | (v[4]! << 8) | v[5]!) >>> 0;
export const postingKind = (v: Uint8Array): number => (v[6]! << 8) | v[7]!;

export const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
};
export const readU32 = (b: Uint8Array): number =>
  ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;

export const STATS_KEY = Buffer.from("stats");
export const VERSION_KEY = Buffer.from("version");

export function statsValue(docs: number, totalLength: number): Buffer {
  const v = Buffer.alloc(16);
  v.writeBigUInt64BE(BigInt(docs), 0);
  v.writeBigUInt64BE(BigInt(totalLength), 8);
  return v;
}

export const readStats = (v: Uint8Array | undefined): { docs: number; totalLength: number } =>
  v ? { docs: readU64(v, 0), totalLength: readU64(v, 8) } : { docs: 0, totalLength: 0 };
