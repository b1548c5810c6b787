// Byte layouts of the aggregate databases the API reads (all integers big-endian):
//
//   api_note    note id 32          → likes 4 | reactions 4 | reposts 4 | replies 4 | zaps 4
//                                     | zap msats 8                              (28 bytes)
//   api_pubkey  pubkey 32           → followers 4 | notes 4                     (8 bytes)
//   api_relay   relay URL ≤ 255     → lists naming it 4
//                 the URL normalised by normalizeRelayUrl, UTF-8; longer URLs are not counted
//
// Their version and progress are the consumer's watermark (store/consumer.ts); the api_meta
// database of the first version is cleared by EngagementCounters.clear.
// A key whose counters are all zero is removed, so the databases hold only what was seen.
// Counters are clamped at zero and at 2^32 - 1 (zap msats at 2^64 - 1).

/** Engagement of one note. msats is a bigint: invoice amounts can exceed 2^53 msat. */
export interface NoteCounts {
  likes: number;
  reactions: number;
  reposts: number;
  replies: number;
  zaps: number;
  msats: bigint;
}

export interface PubkeyCounts {
  followers: number;
  notes: number;
}

export const zeroNote = (): NoteCounts => ({
  likes: 0,
  reactions: 0,
  reposts: 0,
  replies: 0,
  zaps: 0,
  msats: 0n,
});

export const zeroPubkey = (): PubkeyCounts => ({ followers: 0, notes: 0 });

const MAX_U32 = 0xffffffff;
const MAX_U64 = (1n << 64n) - 1n;
const clamp32 = (n: number): number => Math.max(0, Math.min(n, MAX_U32));
const clamp64 = (n: bigint): bigint => (n < 0n ? 0n : n > MAX_U64 ? MAX_U64 : n);

export const NOTE_FIELDS = ["likes", "reactions", "reposts", "replies", "zaps"] as const;

export function noteValue(c: NoteCounts): Buffer {
  const v = Buffer.allocUnsafe(28);
  let at = 0;
  for (const f of NOTE_FIELDS) {
    v.writeUInt32BE(clamp32(c[f]), at);
    at += 4;
  }
  v.writeBigUInt64BE(clamp64(c.msats), at);
  return v;
}

export function readNote(v: Uint8Array | undefined): NoteCounts {
  if (v === undefined || v.length < 28) return zeroNote();
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return {
    likes: b.readUInt32BE(0),
    reactions: b.readUInt32BE(4),
    reposts: b.readUInt32BE(8),
    replies: b.readUInt32BE(12),
    zaps: b.readUInt32BE(16),
    msats: b.readBigUInt64BE(20),
  };
}

export const isZeroNote = (c: NoteCounts): boolean =>
  c.likes <= 0 && c.reactions <= 0 && c.reposts <= 0 && c.replies <= 0 && c.zaps <= 0 && c.msats <= 0n;

export function pubkeyValue(c: PubkeyCounts): Buffer {
  const v = Buffer.allocUnsafe(8);
  v.writeUInt32BE(clamp32(c.followers), 0);
  v.writeUInt32BE(clamp32(c.notes), 4);
  return v;
}

export function readPubkey(v: Uint8Array | undefined): PubkeyCounts {
  if (v === undefined || v.length < 8) return zeroPubkey();
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return { followers: b.readUInt32BE(0), notes: b.readUInt32BE(4) };
}

export const MAX_RELAY_URL_BYTES = 255;

/** The key of a normalised relay URL, or undefined when it is too long to count. */
export function relayKey(url: string): Buffer | undefined {
  const k = Buffer.from(url, "utf8");
  return k.length > MAX_RELAY_URL_BYTES ? undefined : k;
}

export const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(clamp32(n), 0);
  return b;
};

export const readU32 = (v: Uint8Array | undefined): number =>
  v === undefined || v.length < 4 ? 0 : ((v[0]! << 24) | (v[1]! << 16) | (v[2]! << 8) | v[3]!) >>> 0;

export const VERSION_KEY = Buffer.from("version");
