// NIP-45 counts as a consumer of the event log: for every tag value of the shapes NIP-45 names
// (shapes.ts), the exact number of live events of the shape and what their HyperLogLog
// registers need, so a follower or reaction count is one read instead of reading every counted
// event for its pubkey. A register is the highest value any counted event sets it to, and a
// maximum cannot forget an event that is removed (a deletion, an unfollow); so a record keeps,
// per register, how many live events set each value: a removal takes one away, and the register
// is the highest value still held by some event. Nothing is ever counted again from the events.
// A batch sums its events' contributions per record and writes each record once; the records
// a replaced contact list touches with the same pubkey on both sides are left as they are.
// Readers add the views of the batches not yet applied (the same histograms, as deltas). A
// record some event with a NIP-40 expiration counts in sends the reader back to counting the
// tag index (answer.ts), which hides expired events awaiting their purge.
//
//   count_hll  shape 1 | tag letter 1 | value length 1 | value (tagPrefix in store/keys.ts)
//              → count 6 | expiring 4 | (register 1, value 1, events varint)… in (register,
//                value) order
import type { NostrEvent } from "../nostr/event.ts";
import { expirationOf } from "../nostr/event.ts";
import type { Batch, Consumer, Prepared, Tail } from "../store/consumer.ts";
import { noTail, readSnapshot } from "../store/consumer.ts";
import { tagPrefix } from "../store/keys.ts";
import { openDb } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import { hllOffset, REGISTERS, registerOf } from "./hll.ts";
import { HLL_SHAPES } from "./shapes.ts";

export const REGISTERS_CONSUMER = "hll";

/** What one event gives one record: a register and its value there. */
interface Mark {
  /** the record's name (recordKey) */
  key: string;
  /** register * 64 + value (values are at most 57) */
  rv: number;
}

export interface HllContribution {
  /** the event carries a NIP-40 expiration */
  expiring: boolean;
  marks: Mark[];
}

/** A record: events counted, those of them that expire, and events per register value. */
export interface HllRecord {
  count: number;
  expiring: number;
  /** register * 64 + value → events setting it */
  held: Map<number, number>;
}

export type HllView = Map<string, HllRecord>;

const HEAD = 10;
/** register values (register * 64 + value) are below this */
const RV_SPAN = 256 * 64;

/** Which shapes (indexes into HLL_SHAPES) count events of each kind. */
const SHAPES_BY_KIND = new Map<number, number[]>();
HLL_SHAPES.forEach((shape, i) => {
  for (const k of shape.kinds) SHAPES_BY_KIND.set(k, [...(SHAPES_BY_KIND.get(k) ?? []), i]);
});
const newRecord = (): HllRecord => ({ count: 0, expiring: 0, held: new Map() });

/** Writes one (register value, events) entry at `at`; returns where the next one goes. */
function putEntry(out: Buffer, at: number, rv: number, n: number): number {
  out[at++] = rv >> 6;
  out[at++] = rv & 63;
  for (; n >= 128; n = Math.floor(n / 128)) out[at++] = (n % 128) | 0x80;
  out[at++] = n;
  return at;
}

/** The entry readEntry read last: its register value and its events (module scope: no allocation per entry). */
let entryRv = 0;
let entryN = 0;

/** Reads the (register value, events varint) entry at `at` into entryRv/entryN; returns where the next one starts. */
function readEntry(b: Uint8Array, at: number): number {
  entryRv = (b[at]! << 6) | b[at + 1]!;
  let k = at + 2;
  let n = 0;
  for (let mul = 1; ; mul *= 128) {
    const c = b[k++]!;
    n += (c & 0x7f) * mul;
    if (c < 0x80) break;
  }
  entryN = n;
  return k;
}

/**
 * A stored record (or none) with a batch's deltas added, entry by entry in one pass over both
 * (a record's entries are in order; `deltas` is (register value, events) pairs in register
 * value order, none zero), without building a map of the record: a popular pubkey's followers
 * touch its record in every batch. Undefined when nothing is counted any more.
 */
export function mergeSorted(
  v: Uint8Array | undefined,
  dCount: number,
  dExpiring: number,
  deltas: readonly number[],
): Buffer | undefined {
  const b = v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : undefined;
  const count = (b ? b.readUIntBE(0, 6) : 0) + dCount;
  if (count <= 0) return undefined;
  const out = Buffer.allocUnsafe((b?.length ?? HEAD) + (deltas.length / 2) * 9);
  out.writeUIntBE(count, 0, 6);
  out.writeUInt32BE((b ? b.readUInt32BE(6) : 0) + dExpiring, 6);
  let at = HEAD;
  let i = HEAD;
  let j = 0;
  const end = b?.length ?? HEAD;
  while (i < end || j < deltas.length) {
    let rv = Number.MAX_SAFE_INTEGER;
    let n = 0;
    if (i < end) {
      const k = readEntry(b!, i);
      rv = entryRv;
      n = entryN;
      if (j < deltas.length && deltas[j]! < rv) {
        if (deltas[j + 1]! > 0) at = putEntry(out, at, deltas[j]!, deltas[j + 1]!);
        j += 2;
        continue;
      }
      i = k;
      if (j < deltas.length && deltas[j] === rv) {
        n += deltas[j + 1]!;
        j += 2;
      }
    } else {
      rv = deltas[j]!;
      n = deltas[j + 1]!;
      j += 2;
    }
    if (n > 0) at = putEntry(out, at, rv, n);
  }
  return out.subarray(0, at);
}

/** mergeSorted with the deltas as a record, as readers' views hold them (the tests use it). */
export function mergeRecord(v: Uint8Array | undefined, d: HllRecord): Buffer | undefined {
  const deltas = [...d.held].filter(([, n]) => n !== 0).sort((x, y) => x[0] - y[0]);
  return mergeSorted(v, d.count, d.expiring, deltas.flat());
}

export function decodeRecord(v: Uint8Array): HllRecord {
  const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const held = new Map<number, number>();
  let at = HEAD;
  while (at < b.length) {
    at = readEntry(b, at);
    held.set(entryRv, entryN);
  }
  return { count: b.readUIntBE(0, 6), expiring: b.readUInt32BE(6), held };
}

/** The 256 registers a record's histogram gives: per register the highest value still held. */
export function registersOf(held: Map<number, number>): Uint8Array {
  const out = new Uint8Array(REGISTERS);
  for (const [rv, n] of held) {
    if (n <= 0) continue;
    const ri = rv >> 6;
    const value = rv & 63;
    if (value > out[ri]!) out[ri] = value;
  }
  return out;
}

/**
 * A record's name in batches and views: the shape (index into HLL_SHAPES), the tag letter and the
 * value, as one string (cheap to build per event; the database key is built once per batch).
 */
export const recordKey = (shape: number, tag: string, value: string): string =>
  String.fromCharCode(shape) + tag + value;

/** The database key of a record (`shape 1 | tagPrefix`), or undefined for a value not indexed. */
function dbKey(key: string): Buffer | undefined {
  const prefix = tagPrefix(key[1]!, key.slice(2));
  return prefix ? Buffer.concat([Buffer.of(key.charCodeAt(0)), prefix]) : undefined;
}

/** Adds `sign` times an event's contribution to every record it touches in `into`. */
function fold(into: HllView, p: HllContribution, sign: 1 | -1): void {
  for (const m of p.marks) {
    let r = into.get(m.key);
    if (!r) {
      r = newRecord();
      into.set(m.key, r);
    }
    r.count += sign;
    if (p.expiring) r.expiring += sign;
    r.held.set(m.rv, (r.held.get(m.rv) ?? 0) + sign);
  }
}

export class HllRegisters implements Consumer<HllContribution, HllView> {
  readonly name = REGISTERS_CONSUMER;
  readonly version = 1;
  readonly db: BinDb;
  /** set by the runner that feeds this consumer */
  tail: Tail<HllView> = noTail;

  constructor(private readonly s: Store) {
    this.db = openDb(s, "count_hll");
  }

  prepare(e: NostrEvent): HllContribution | null {
    const shapes = SHAPES_BY_KIND.get(e.kind);
    if (!shapes) return null;
    const marks: Mark[] = [];
    for (const i of shapes) {
      const tag = HLL_SHAPES[i]!.tag;
      // A value named twice in one event counts once (contact lists repeat pubkeys).
      let seen: Set<string> | undefined;
      for (const t of e.tags) {
        const value = t[1];
        if (t[0] !== tag || value === undefined) continue;
        seen ??= new Set();
        if (seen.has(value)) continue;
        seen.add(value);
        const { ri, rho } = registerOf(e.pubkey, hllOffset(value));
        marks.push({ key: recordKey(i, tag, value), rv: ri * 64 + rho });
      }
    }
    return marks.length > 0 ? { expiring: expirationOf(e) !== undefined, marks } : null;
  }

  /**
   * Sums the batch's marks per record and writes each record once. Each event's marks go into
   * one array of numbers (record, register value, sign) as it is added, sorted natively at the
   * end, so a batch's tens of thousands of marks cost no object each and no map per record
   * (measured on the 50k ingest: the maps and the sorting per record were half of this
   * method's time).
   */
  batch(_s: Store): Batch {
    const index = new Map<string, number>();
    const keys: string[] = [];
    const counts: number[] = [];
    const expiring: number[] = [];
    let marks = new Float64Array(1024);
    let n = 0;
    return {
      add: (e, _serial, sign) => {
        const p = this.prepare(e);
        if (p === null) return;
        for (const m of p.marks) {
          let r = index.get(m.key);
          if (r === undefined) {
            r = keys.length;
            index.set(m.key, r);
            keys.push(m.key);
            counts.push(0);
            expiring.push(0);
          }
          counts[r]! += sign;
          if (p.expiring) expiring[r]! += sign;
          if (n === marks.length) {
            const grown = new Float64Array(n * 2);
            grown.set(marks);
            marks = grown;
          }
          marks[n++] = (r * RV_SPAN + m.rv) * 2 + (sign > 0 ? 1 : 0);
        }
      },
      write: () => this.write(keys, counts, expiring, marks.subarray(0, n).sort()),
    };
  }

  private write(keys: string[], counts: number[], expiring: number[], sorted: Float64Array): void {
    const n = sorted.length;
    const deltas: number[] = [];
    for (let j = 0; j < n; ) {
      const r = Math.floor(sorted[j]! / (2 * RV_SPAN));
      deltas.length = 0;
      while (j < n && Math.floor(sorted[j]! / (2 * RV_SPAN)) === r) {
        const rv = Math.floor(sorted[j]! / 2) % RV_SPAN;
        let d = 0;
        for (; j < n && Math.floor(sorted[j]! / 2) === r * RV_SPAN + rv; j++)
          d += sorted[j]! % 2 === 1 ? 1 : -1;
        if (d !== 0) deltas.push(rv, d);
      }
      // A contact list replaced by one naming the same pubkeys leaves its records as they are.
      if (counts[r] === 0 && expiring[r] === 0 && deltas.length === 0) continue;
      const k = dbKey(keys[r]!);
      if (!k) continue;
      const v = this.db.get(k);
      const merged = mergeSorted(v, counts[r]!, expiring[r]!, deltas);
      if (merged) this.db.put(k, merged);
      else if (v) this.db.remove(k);
    }
  }

  clear(_s: Store): void {
    this.db.clearSync();
  }

  newView(): HllView {
    return new Map();
  }

  view(v: HllView, d: Prepared<HllContribution>, sign: 1 | -1, removal: boolean): void {
    fold(v, d.p, removal ? (-sign as 1 | -1) : sign);
  }

  /**
   * A record as a reader sees it now: the stored one plus the batches not yet applied, read with
   * the watermark in one read transaction; undefined when counting the tag index must answer
   * instead (an expiring event counts in it, or the consumer is past `hwm`).
   */
  read(key: string, hwm: number): { count: number; registers: Uint8Array } | undefined {
    const k = dbKey(key);
    if (!k) return undefined;
    const txn = this.s.derived.useReadTransaction();
    try {
      const { w, views } = readSnapshot(this.s, this, txn);
      if (!w || w.serial > hwm) return undefined;
      const v = this.db.get(k, { transaction: txn } as never);
      const r = v ? decodeRecord(v) : newRecord();
      for (const view of views) {
        const d = view.get(key);
        if (!d) continue;
        r.count += d.count;
        r.expiring += d.expiring;
        for (const [rv, n] of d.held) r.held.set(rv, (r.held.get(rv) ?? 0) + n);
      }
      return r.expiring > 0 ? undefined : { count: r.count, registers: registersOf(r.held) };
    } finally {
      (txn as { done(): void }).done();
    }
  }
}
