// Whole-store walks for the data commands (export, delete, stats): matching events oldest first
// through the planner's indexes, removal of one stored event with its replaceable pointer, and
// per-kind counts. Every walk reads in chunks, each in its own short read transaction, so a walk
// over millions of events neither holds a snapshot open nor loads everything in memory.
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { hexBytes, keySerial, keyTime, kindBytes, rangeFor, readU64, serialKey } from "./keys.ts";
import { planFilter } from "./plan.ts";
import type { BinDb, Store } from "./store.ts";

/** One stored event: its serial, created_at and the stored JSON bytes, verbatim. */
export interface StoredEvent {
  serial: number;
  time: number;
  json: Buffer;
}

/** The id of a stored event, read at its fixed offset without parsing. */
export const storedId = (json: Buffer): string =>
  json.toString("latin1", STORED_ID_OFFSET, STORED_ID_OFFSET + 64);

/** The key just above k among keys of the same length (start bounds are inclusive). */
function successor(k: Buffer): Buffer | undefined {
  const p = Buffer.from(k);
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i]! < 0xff) {
      p[i]!++;
      return p;
    }
    p[i] = 0;
  }
  return undefined;
}

/** Ascending walk of one key range, read `chunk` keys at a time. */
class ForwardCursor {
  private keys: Buffer[] = [];
  private pos = 0;
  private done = false;
  head: Buffer | undefined;
  headTime = 0;
  headSerial = 0;

  constructor(
    private readonly db: BinDb,
    private start: Buffer,
    private readonly end: Buffer,
    private readonly chunk: number,
  ) {
    this.advance();
  }

  advance(): void {
    if (this.pos >= this.keys.length) this.refill();
    const k = this.keys[this.pos++];
    this.head = k;
    if (k) {
      this.headTime = keyTime(k);
      this.headSerial = keySerial(k);
    }
  }

  private refill(): void {
    this.keys = [];
    this.pos = 0;
    if (this.done) return;
    for (const k of this.db.getKeys({ start: this.start, end: this.end, limit: this.chunk }))
      this.keys.push(Buffer.from(k as Buffer));
    const next = this.keys.length < this.chunk ? undefined : successor(this.keys[this.keys.length - 1]!);
    if (next) this.start = next;
    else this.done = true;
  }
}

const before = (a: ForwardCursor, b: ForwardCursor): boolean =>
  a.headTime < b.headTime || (a.headTime === b.headTime && a.headSerial < b.headSerial);

/**
 * Oldest-first merge of forward scans over several prefixes of one index, between since and
 * until (inclusive): yields (created_at, serial) ascending; an event under two prefixes (two
 * values of one tag) comes out twice in a row.
 */
export class AscendingScan {
  private heap: ForwardCursor[] = [];

  constructor(db: BinDb, prefixes: readonly Buffer[], since: number, until: number, chunk = 1024) {
    for (const p of prefixes) {
      // rangeFor gives reverse-scan bounds; forwards, its (exclusive) end is the inclusive start.
      // Serial 0 and serial 2^53-1 are never assigned, so both bounds admit exactly [since, until].
      const { start, end } = rangeFor(p, since, until);
      const c = new ForwardCursor(db, end, start, chunk);
      if (c.head) this.push(c);
    }
  }

  next(): { time: number; serial: number } | undefined {
    const top = this.heap[0];
    if (!top) return undefined;
    const out = { time: top.headTime, serial: top.headSerial };
    top.advance();
    if (top.head) this.siftDown(0);
    else {
      const last = this.heap.pop()!;
      if (this.heap.length > 0) {
        this.heap[0] = last;
        this.siftDown(0);
      }
    }
    return out;
  }

  private push(c: ForwardCursor): void {
    const h = this.heap;
    h.push(c);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

function loadBytes(s: Store, serial: number): Buffer | undefined {
  return s.events.getBinary(serialKey(serial)) ?? undefined;
}

const matches = (f: Filter, json: Buffer): boolean =>
  matchFilter(f, JSON.parse(json.toString("utf8")) as NostrEvent);

/**
 * Every stored event matching the filter (`limit` and `search` ignored), oldest first: by
 * created_at, then by serial (arrival order). Uses the planner's index and checks candidates
 * against the filter only where the index does not already guarantee it.
 */
export function* scanOldestFirst(s: Store, f: Filter, chunk = 1024): Generator<StoredEvent> {
  const plan = planFilter(s, f);
  if (plan.type === "empty") return;
  if (plan.type === "ids") {
    const found: StoredEvent[] = [];
    for (const id of plan.ids) {
      const v = s.ids.get(hexBytes(id));
      if (!v) continue;
      const serial = readU64(v, 0);
      const json = loadBytes(s, serial);
      if (!json || !matches(f, json)) continue;
      found.push({ serial, time: (JSON.parse(json.toString("utf8")) as NostrEvent).created_at, json });
    }
    yield* found.sort((a, b) => a.time - b.time || a.serial - b.serial);
    return;
  }
  const scan = new AscendingScan(
    plan.db,
    plan.prefixes,
    f.since ?? 0,
    f.until ?? Number.MAX_SAFE_INTEGER,
    chunk,
  );
  let last = -1;
  for (let k = scan.next(); k; k = scan.next()) {
    if (k.serial === last) continue;
    last = k.serial;
    const json = loadBytes(s, k.serial);
    if (json === undefined) continue;
    if (plan.needsCheck && !matches(f, json)) continue;
    yield { serial: k.serial, time: k.time, json };
  }
}

/** Number of stored events per kind, from the kind index (one seek and one count per kind). */
export function countByKind(s: Store): Map<number, number> {
  const out = new Map<number, number>();
  let from = 0;
  while (from <= 0xffff) {
    let first: Buffer | undefined;
    for (const k of s.kind.getKeys({ start: kindBytes(from), limit: 1 })) first = k as Buffer;
    if (!first) break;
    const kind = (first[0]! << 8) | first[1]!;
    const end = kind < 0xffff ? kindBytes(kind + 1) : undefined;
    out.set(kind, s.kind.getKeysCount(end ? { start: kindBytes(kind), end } : { start: kindBytes(kind) }));
    from = kind + 1;
  }
  return out;
}

/** created_at of the oldest and newest stored events, from the time index. */
export function timeBounds(s: Store): { oldest: number; newest: number } | undefined {
  let oldest: number | undefined;
  let newest: number | undefined;
  for (const k of s.time.getKeys({ limit: 1 })) oldest = keyTime(k as Buffer);
  for (const k of s.time.getKeys({ reverse: true, limit: 1 })) newest = keyTime(k as Buffer);
  return oldest === undefined || newest === undefined ? undefined : { oldest, newest };
}
