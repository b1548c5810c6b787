// Every byte layout the store writes, in one place. All integers are big-endian so that LMDB's
// bytewise key order equals tuple order; every index key ends in `created_at 8 | serial 8`, so
// since/until are range bounds and a reverse scan yields newest first.
//
//   events       serial 8                                   → stored event JSON (UTF-8)
//   ids          id 32                                      → serial 8
//   pubkey       pubkey 32 | created_at 8 | serial 8        → (empty)
//   kind         kind 2 | created_at 8 | serial 8           → (empty)
//   pubkind      pubkey 32 | kind 2 | created_at 8 | serial 8 → (empty)
//   tag          letter 1 | len 1 | value len | created_at 8 | serial 8 → (empty)
//                  letter has its high bit set when value is 64-char lowercase hex stored as 32
//                  raw bytes; values over 255 UTF-8 bytes or with lone surrogates are not indexed
//   time         created_at 8 | serial 8                    → (empty)
//   replaceable  pubkey 32 | kind 2 | d 0..255              → serial 8 | created_at 8 | id 32
//                  d is the raw `d` value (empty for plain replaceable kinds); longer d values
//                  are replaced by 0xff | sha256(d), values with lone surrogates by
//                  0xfe | sha256(UTF-16 code units)
//   deleted      id 32 | pubkey 32                          → (empty)   NIP-09 tombstone
//   deleted_addr (replaceable key)                          → created_at 8
//   vanished     pubkey 32                                  → created_at 8   NIP-62
//   expiry       expiration 8 | serial 8                    → (empty)   NIP-40
//   meta         "high-water"                               → serial 8 | removal seq 8   (serials.ts)
//   moderation   list 1 | value UTF-8                       → reason or setting UTF-8   NIP-86
//                  value is the canonical text: lowercase hex pubkey or id, decimal kind,
//                  normalised IP address, or the name of a NIP-11 field set by an operator

import { hex64 } from "../nostr/event.ts";

export const TAIL = 16;
const MAX_U32 = 0x1_0000_0000;
const encoder = new TextEncoder();

function putU64(buf: Uint8Array, at: number, n: number): void {
  const hi = Math.floor(n / MAX_U32);
  const lo = n >>> 0;
  buf[at] = hi >>> 24;
  buf[at + 1] = (hi >>> 16) & 0xff;
  buf[at + 2] = (hi >>> 8) & 0xff;
  buf[at + 3] = hi & 0xff;
  buf[at + 4] = lo >>> 24;
  buf[at + 5] = (lo >>> 16) & 0xff;
  buf[at + 6] = (lo >>> 8) & 0xff;
  buf[at + 7] = lo & 0xff;
}

export function readU64(buf: Uint8Array, at: number): number {
  const hi = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
  const lo = ((buf[at + 4]! << 24) | (buf[at + 5]! << 16) | (buf[at + 6]! << 8) | buf[at + 7]!) >>> 0;
  return hi * MAX_U32 + lo;
}

export const keyTime = (k: Uint8Array): number => readU64(k, k.length - 16);
export const keySerial = (k: Uint8Array): number => readU64(k, k.length - 8);

/** A prefix plus the `created_at | serial` tail. */
function withTail(prefix: Uint8Array, createdAt: number, serial: number): Buffer {
  const k = Buffer.allocUnsafe(prefix.length + TAIL);
  k.set(prefix, 0);
  putU64(k, prefix.length, createdAt);
  putU64(k, prefix.length + 8, serial);
  return k;
}

export function serialKey(serial: number): Buffer {
  const k = Buffer.allocUnsafe(8);
  putU64(k, 0, serial);
  return k;
}

const PROBE = Buffer.allocUnsafe(8);

/**
 * serialKey in one buffer every caller shares, for a read lmdb-js copies the key of before it
 * returns (a get): never for a write, a range bound or a key that is kept. Readers of event
 * bodies make one such key per event they send.
 */
export function serialProbe(serial: number): Buffer {
  putU64(PROBE, 0, serial);
  return PROBE;
}

export const hexBytes = (hex: string): Buffer => Buffer.from(hex, "hex");

/** A moderation entry: `list 1 | value UTF-8` (the list is a small code, manage/moderation.ts). */
export function moderationKey(list: number, value: string): Buffer {
  const v = Buffer.from(value, "utf8");
  const k = Buffer.allocUnsafe(1 + v.length);
  k[0] = list;
  k.set(v, 1);
  return k;
}

export const readModerationKey = (k: Uint8Array): { list: number; value: string } => ({
  list: k[0]!,
  value: Buffer.from(k.buffer, k.byteOffset + 1, k.length - 1).toString("utf8"),
});

export function kindBytes(kind: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b[0] = kind >>> 8;
  b[1] = kind & 0xff;
  return b;
}

/** `pubkey 32 | kind 2`, from the pubkey's bytes (a planner decodes each author once for all its kinds). */
export function pubkindPrefix(pubkey: Uint8Array, kind: number): Buffer {
  const k = Buffer.allocUnsafe(34);
  k.set(pubkey, 0);
  k[32] = kind >>> 8;
  k[33] = kind & 0xff;
  return k;
}

/** Tag prefix `letter | len | value`, or undefined when the value is too long to index. */
export function tagPrefix(letter: string, value: string): Buffer | undefined {
  const l = letter.charCodeAt(0);
  if (hex64(value)) {
    const k = Buffer.allocUnsafe(34);
    k[0] = l | 0x80;
    k[1] = 32;
    k.write(value, 2, "hex");
    return k;
  }
  // Lone surrogates would all encode to U+FFFD and collide; such values are left unindexed.
  if (!value.isWellFormed()) return undefined;
  const v = encoder.encode(value);
  if (v.length > 255) return undefined;
  const k = Buffer.allocUnsafe(2 + v.length);
  k[0] = l;
  k[1] = v.length;
  k.set(v, 2);
  return k;
}

export const isIndexableTagName = (name: string | undefined): name is string =>
  name !== undefined && name.length === 1 && /[a-zA-Z]/.test(name);

export const indexKey = withTail;

/**
 * Scratch bytes for the keys and values a write transaction puts. A put inside a transaction
 * has lmdb-js copy its key and value before it returns, so the writer resets one buffer per
 * batch instead of allocating (and freeing) a Buffer per key: allocation churn, not LMDB, was
 * a large share of ingest CPU. A view handed out stays valid until the next reset.
 */
export class Arena {
  private buf: Buffer;
  private at = 0;

  constructor(private readonly size = 1 << 20) {
    this.buf = Buffer.allocUnsafe(size);
  }

  reset(): void {
    this.at = 0;
  }

  take(n: number): Buffer {
    if (this.at + n > this.buf.length) {
      // Views already handed out keep the old buffer alive; new ones come from a larger one.
      this.buf = Buffer.allocUnsafe(Math.max(this.size, n));
      this.at = 0;
    }
    const b = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return b;
  }

  /** The UTF-8 bytes of a string (lone surrogates become U+FFFD). */
  utf8(s: string): Buffer {
    const room = this.take(s.length * 3);
    const { written } = encoder.encodeInto(s, room);
    this.at -= room.length - written;
    return room.subarray(0, written);
  }

  serial(n: number): Buffer {
    const k = this.take(8);
    putU64(k, 0, n);
    return k;
  }

  /** 32 raw bytes of a 64-char hex string (an id or pubkey). */
  hex32(hex: string): Buffer {
    const k = this.take(32);
    k.write(hex, 0, 32, "hex");
    return k;
  }

  /** `pubkey 32 | created_at | serial` */
  pubkeyKey(pubkey: string, t: number, serial: number): Buffer {
    const k = this.take(32 + TAIL);
    k.write(pubkey, 0, 32, "hex");
    return tail(k, 32, t, serial);
  }

  /** `kind 2 | created_at | serial` */
  kindKey(kind: number, t: number, serial: number): Buffer {
    const k = this.take(2 + TAIL);
    k[0] = kind >>> 8;
    k[1] = kind & 0xff;
    return tail(k, 2, t, serial);
  }

  /** `pubkey 32 | kind 2 | created_at | serial` */
  pubkindKey(pubkey: string, kind: number, t: number, serial: number): Buffer {
    const k = this.take(34 + TAIL);
    k.write(pubkey, 0, 32, "hex");
    k[32] = kind >>> 8;
    k[33] = kind & 0xff;
    return tail(k, 34, t, serial);
  }

  /** `0 | created_at | serial` (LMDB keys are never empty: the time index has one prefix) */
  timeKey(t: number, serial: number): Buffer {
    const k = this.take(1 + TAIL);
    k[0] = 0;
    return tail(k, 1, t, serial);
  }

  /** `letter | len | value | created_at | serial`, or undefined when the value is not indexed. */
  tagKey(letter: string, value: string, t: number, serial: number): Buffer | undefined {
    const l = letter.charCodeAt(0);
    if (hex64(value)) {
      const k = this.take(34 + TAIL);
      k[0] = l | 0x80;
      k[1] = 32;
      k.write(value, 2, 32, "hex");
      return tail(k, 34, t, serial);
    }
    if (value.length > 255 || !value.isWellFormed()) return undefined;
    const v = this.utf8(value);
    if (v.length > 255) return undefined;
    const k = this.take(2 + v.length + TAIL);
    k[0] = l;
    k[1] = v.length;
    k.set(v, 2);
    return tail(k, 2 + v.length, t, serial);
  }
}

function tail(k: Buffer, at: number, createdAt: number, serial: number): Buffer {
  putU64(k, at, createdAt);
  putU64(k, at + 8, serial);
  return k;
}
/** The time index's one prefix. */
export const TIME_PREFIX = Buffer.from([0]);

export function replaceableKey(pubkey: string, kind: number, d: string): Buffer {
  const hashed = (marker: number, bytes: Uint8Array) =>
    Buffer.concat([Buffer.from([marker]), new Bun.CryptoHasher("sha256").update(bytes).digest()]);
  // Lone surrogates would all encode to U+FFFD; hash their UTF-16 code units instead.
  const dBytes = d.isWellFormed() ? encoder.encode(d) : undefined;
  const tail = !dBytes
    ? hashed(0xfe, Buffer.from(d, "utf16le"))
    : dBytes.length <= 255
      ? dBytes
      : hashed(0xff, dBytes);
  return Buffer.concat([hexBytes(pubkey), kindBytes(kind), tail]);
}

export function replaceableValue(serial: number, createdAt: number, id: string): Buffer {
  const v = Buffer.allocUnsafe(48);
  putU64(v, 0, serial);
  putU64(v, 8, createdAt);
  v.write(id, 16, "hex");
  return v;
}

export function readReplaceable(v: Uint8Array): { serial: number; createdAt: number; id: string } {
  return {
    serial: readU64(v, 0),
    createdAt: readU64(v, 8),
    id: Buffer.from(v.subarray(16, 48)).toString("hex"),
  };
}
