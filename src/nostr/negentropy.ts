// Negentropy (NIP-77, protocol version 0x61): the relay's responder over a storage of our own,
// which `relay sync` also hands to nostr-tools' codec (`nip77.Negentropy`, which can only
// initiate). Items are packed (created_at in a Float64Array, ids in one byte array) with a
// running 256-bit sum of the ids beside them, so the fingerprint of any range is one
// subtraction and one SHA-256, where nostr-tools' vector storage re-adds every id of the range
// (measured in docs/performance/2026-11.md, "Negentropy"). nostr-tools is not imported here: its index
// module would cost the relay ~100 ms at start.

type Item = { timestamp: number; id: Uint8Array };

const ID = 32;
const LIMBS = 8;

/** Compares ids as nostr-tools does: bytewise, a shorter prefix first. */
function compareIds(a: Uint8Array, ai: number, b: Uint8Array): number {
  const n = Math.min(ID, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[ai + i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return ID === b.length ? 0 : ID > b.length ? 1 : -1;
}

function varint(n: number): number[] {
  if (n === 0) return [0];
  const o: number[] = [];
  while (n !== 0) {
    o.push(n & 0x7f);
    n = Math.floor(n / 128);
  }
  o.reverse();
  for (let i = 0; i < o.length - 1; i++) o[i]! |= 0x80;
  return o;
}

/**
 * A sealed set of (created_at, id) items in negentropy order, with prefix sums of the ids.
 * Implements the methods nostr-tools' `Negentropy` calls on its storage.
 */
export class PackedStorage {
  readonly sealed = true;
  /** sums[i*8 .. i*8+8]: the sum of ids [0, i) as 8 little-endian 32-bit limbs, mod 2^256 */
  private readonly sums: Uint32Array;

  /**
   * `times[i]` and `ids[i*32 .. i*32+32]` must already be sorted by (created_at, id) with no
   * duplicates (see `sortItems`).
   */
  constructor(
    private readonly times: Float64Array,
    private readonly ids: Uint8Array,
  ) {
    const n = times.length;
    const sums = new Uint32Array((n + 1) * LIMBS);
    const dv = new DataView(ids.buffer, ids.byteOffset, ids.byteLength);
    for (let i = 0; i < n; i++) {
      let carry = 0;
      const at = i * LIMBS;
      for (let l = 0; l < LIMBS; l++) {
        const v = sums[at + l]! + dv.getUint32(i * ID + l * 4, true) + carry;
        sums[at + LIMBS + l] = v >>> 0;
        carry = v > 0xffffffff ? 1 : 0;
      }
    }
    this.sums = sums;
  }

  size(): number {
    return this.times.length;
  }

  getItem(i: number): Item {
    if (i >= this.times.length) throw new Error("out of range");
    return { timestamp: this.times[i]!, id: this.ids.subarray(i * ID, i * ID + ID) };
  }

  iterate(begin: number, end: number, cb: (item: Item, i: number) => boolean): void {
    if (begin > end || end > this.times.length) throw new Error("bad range");
    for (let i = begin; i < end; i++) if (!cb(this.getItem(i), i)) break;
  }

  /** The first index in [begin, end) whose item is not below `bound`. */
  findLowerBound(begin: number, end: number, bound: Item): number {
    let lo = begin;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.times[mid]!;
      const below =
        t < bound.timestamp || (t === bound.timestamp && compareIds(this.ids, mid * ID, bound.id) < 0);
      if (below) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** SHA-256 of (sum of the range's ids mod 2^256 | varint count), first 16 bytes. */
  fingerprint(begin: number, end: number): Uint8Array {
    const input = new Uint8Array(ID + 10);
    const dv = new DataView(input.buffer);
    let borrow = 0;
    for (let l = 0; l < LIMBS; l++) {
      let v = this.sums[end * LIMBS + l]! - this.sums[begin * LIMBS + l]! - borrow;
      borrow = v < 0 ? 1 : 0;
      if (v < 0) v += 0x1_0000_0000;
      dv.setUint32(l * 4, v, true);
    }
    const count = varint(end - begin);
    input.set(count, ID);
    const h = new Bun.CryptoHasher("sha256").update(input.subarray(0, ID + count.length)).digest();
    return new Uint8Array(h.buffer, h.byteOffset, 16);
  }
}

/** Compares the 32-byte ids at a[ai] and b[bi]. */
function compareAt(a: Uint8Array, ai: number, b: Uint8Array, bi: number): number {
  for (let i = 0; i < ID; i++) {
    const d = a[ai + i]! - b[bi + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Sorts parallel (created_at, id) arrays into negentropy order and drops repeated ids (the same
 * event reached through two filters); returns the sorted copies.
 */
export function sortItems(times: Float64Array, ids: Uint8Array): { times: Float64Array; ids: Uint8Array } {
  const n = times.length;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const byId = (a: number, b: number) => compareAt(ids, a * ID, ids, b * ID);
  let ascending = true;
  for (let i = 1; i < n && ascending; i++) ascending = times[i - 1]! <= times[i]!;
  if (ascending) {
    // One index scan gives items oldest first already: only runs of equal created_at need
    // ordering by id (measured: a third of the time of a full sort on 100,000 items).
    for (let i = 0; i < n; ) {
      let j = i + 1;
      while (j < n && times[j] === times[i]) j++;
      if (j - i > 1) order.subarray(i, j).sort(byId);
      i = j;
    }
  } else order.sort((a, b) => times[a]! - times[b]! || byId(a, b));
  const outT = new Float64Array(n);
  const outI = new Uint8Array(n * ID);
  let m = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (m > 0 && outT[m - 1] === times[i] && compareAt(outI, (m - 1) * ID, ids, i * ID) === 0) continue;
    outT[m] = times[i]!;
    outI.set(ids.subarray(i * ID, i * ID + ID), m * ID);
    m++;
  }
  return { times: outT.subarray(0, m), ids: outI.subarray(0, m * ID) };
}

const VERSION = 0x61;
const SKIP = 0;
const FINGERPRINT = 1;
const ID_LIST = 2;
/** The "infinity" timestamp of the upper bound of the whole range. */
const MAX_TIME = Number.POSITIVE_INFINITY;

/** Bytes of a client message, read front to back; any overrun is a bad message. */
class Reader {
  private at = 0;
  constructor(private readonly b: Uint8Array) {}
  get empty(): boolean {
    return this.at >= this.b.length;
  }
  byte(): number {
    if (this.at >= this.b.length) throw new Error("message ends prematurely");
    return this.b[this.at++]!;
  }
  bytes(n: number): Uint8Array {
    if (this.at + n > this.b.length) throw new Error("message ends prematurely");
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  varint(): number {
    let n = 0;
    for (;;) {
      const byte = this.byte();
      n = n * 128 + (byte & 0x7f);
      if (n > Number.MAX_SAFE_INTEGER) throw new Error("varint too large");
      if ((byte & 0x80) === 0) return n;
    }
  }
}

/**
 * The relay's side of one negentropy session (protocol V1, the responder's half of the
 * reference implementation's `reconcile`). nostr-tools' `Negentropy` implements only the
 * initiator: given an id list it records have/need and replies nothing, where a responder must
 * answer with its own ids for that range, so a client whose ranges shrink below 32 items never
 * learns what the relay holds there.
 */
export class Responder {
  private lastIn = 0;
  private lastOut = 0;

  constructor(
    private readonly storage: PackedStorage,
    private readonly frameSizeLimit: number,
  ) {}

  /** The reply to one client message (hex in, hex out); throws on a malformed message. */
  reconcile(hex: string): string {
    const q = new Reader(Buffer.from(hex, "hex"));
    this.lastIn = 0;
    this.lastOut = 0;
    const full: number[] = [VERSION];
    const version = q.byte();
    if (version < 0x60 || version > 0x6f) throw new Error("invalid protocol version byte");
    // Another version: the reply names the one spoken here, as the protocol's negotiation asks.
    if (version !== VERSION) return Buffer.from(full).toString("hex");
    const s = this.storage;
    const size = s.size();
    let prevBound: Item = { timestamp: 0, id: new Uint8Array(0) };
    let prevIndex = 0;
    let skip = false;
    while (!q.empty) {
      const o: number[] = [];
      const doSkip = () => {
        if (!skip) return;
        skip = false;
        this.bound(o, prevBound);
        push(o, varint(SKIP));
      };
      const currBound = this.decodeBound(q);
      const mode = q.varint();
      let upper = s.findLowerBound(prevIndex, size, currBound);
      const lower = prevIndex;
      if (mode === SKIP) skip = true;
      else if (mode === FINGERPRINT) {
        const theirs = q.bytes(16);
        if (Buffer.compare(Buffer.from(theirs), Buffer.from(s.fingerprint(lower, upper))) !== 0) {
          doSkip();
          this.splitRange(lower, upper, currBound, o);
        } else skip = true;
      } else if (mode === ID_LIST) {
        q.bytes(q.varint() * ID); // the client's ids: it works out have/need, we send ours
        doSkip();
        let endBound = currBound;
        const ids: number[] = [];
        for (let i = lower; i < upper; i++) {
          if (this.exceeded(full.length + o.length + ids.length)) {
            endBound = s.getItem(i);
            upper = i; // the rest of the range goes into the closing fingerprint
            break;
          }
          push(ids, s.getItem(i).id);
        }
        this.bound(o, endBound);
        push(o, varint(ID_LIST));
        push(o, varint(ids.length / ID));
        push(o, ids);
      } else throw new Error(`unexpected mode ${mode}`);
      if (this.exceeded(full.length + o.length)) {
        // Out of room: one fingerprint for everything not yet covered, the client continues.
        const rest = s.fingerprint(upper, size);
        this.bound(full, { timestamp: MAX_TIME, id: new Uint8Array(0) });
        push(full, varint(FINGERPRINT));
        push(full, rest);
        break;
      }
      push(full, o);
      prevIndex = upper;
      prevBound = currBound;
    }
    return Buffer.from(full).toString("hex");
  }

  private exceeded(n: number): boolean {
    return this.frameSizeLimit > 0 && n > this.frameSizeLimit - 200;
  }

  private splitRange(lower: number, upper: number, upperBound: Item, o: number[]): void {
    const s = this.storage;
    const n = upper - lower;
    const buckets = 16;
    if (n < buckets * 2) {
      this.bound(o, upperBound);
      push(o, varint(ID_LIST));
      push(o, varint(n));
      for (let i = lower; i < upper; i++) push(o, s.getItem(i).id);
      return;
    }
    const per = Math.floor(n / buckets);
    const extra = n % buckets;
    let curr = lower;
    for (let i = 0; i < buckets; i++) {
      const size = per + (i < extra ? 1 : 0);
      const fp = s.fingerprint(curr, curr + size);
      curr += size;
      const next = curr === upper ? upperBound : minimalBound(s.getItem(curr - 1), s.getItem(curr));
      this.bound(o, next);
      push(o, varint(FINGERPRINT));
      push(o, fp);
    }
  }

  private bound(o: number[], b: Item): void {
    if (b.timestamp === MAX_TIME) {
      this.lastOut = MAX_TIME;
      push(o, varint(0));
    } else {
      const delta = b.timestamp - this.lastOut;
      this.lastOut = b.timestamp;
      push(o, varint(delta + 1));
    }
    push(o, varint(b.id.length));
    push(o, b.id);
  }

  private decodeBound(q: Reader): Item {
    let t = q.varint();
    t = t === 0 ? MAX_TIME : t - 1;
    if (this.lastIn === MAX_TIME || t === MAX_TIME) {
      this.lastIn = MAX_TIME;
      t = MAX_TIME;
    } else {
      t += this.lastIn;
      this.lastIn = t;
    }
    const len = q.varint();
    if (len > ID) throw new Error("bound key too long");
    return { timestamp: t, id: q.bytes(len) };
  }
}

function push(o: number[], bytes: ArrayLike<number>): void {
  for (let i = 0; i < bytes.length; i++) o.push(bytes[i]!);
}

/** The shortest bound above `prev` and not above `curr`. */
function minimalBound(prev: Item, curr: Item): Item {
  if (curr.timestamp !== prev.timestamp) return { timestamp: curr.timestamp, id: new Uint8Array(0) };
  let shared = 0;
  while (shared < ID && curr.id[shared] === prev.id[shared]) shared++;
  return { timestamp: curr.timestamp, id: curr.id.subarray(0, shared + 1) };
}
