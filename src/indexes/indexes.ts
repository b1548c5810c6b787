// The REQ indexes (pubkey, kind, pubkind, tag, time) as a consumer of the event log. The writer's
// transaction holds only what deciding an event needs (bodies, ids, replaceable pointers,
// tombstones, expiry); these five indexes, about ten random keys an event, are written in
// batches of thousands of events. Why: every key dirties a 4 KiB page for its commit, and the
// writer commits (and fsyncs) a few hundred events at a time to keep OK latency low: its
// commit wrote ~20 KiB of scattered pages per event and fsync'd them before the next batch
// could start. A batch of thousands shares most of those pages.
//
// Readers cover the indexes up to the consumer's watermark plus the events committed after it,
// held in memory by the views (tail.ts) and matched directly (query.ts), so an event is found
// the moment it is committed.
import type { NostrEvent } from "../nostr/event.ts";
import type { Consumer, Prepared, Tail } from "../store/consumer.ts";
import { noTail, readSnapshot, readWatermark } from "../store/consumer.ts";
import { INDEXES, putEntry, removeEntry } from "../store/index-db.ts";
import { Arena, readU64, serialKey } from "../store/keys.ts";
import { removalsAfter } from "../store/removals.ts";
import { forEachIndexEntry } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import type { IndexSnapshot, TailIndex, TailPart } from "./tail.ts";
import { newTail, tailPart, viewTail } from "./tail.ts";

/** A batch's arena for its entries' keys; it grows by this much when a large batch fills it. */
const ARENA_BYTES = 64 * 1024;

export class Indexes implements Consumer<NostrEvent, TailIndex, TailPart> {
  readonly name = INDEXES;
  // 2: entries kept as duplicates of their prefix (index-db.ts)
  // 3: rebuilt once, because version 2 applied in the writer's thread (`consumers.thread false`,
  //    and the data commands such as `relay import` run without a relay) could write entries
  //    whose tails were the next batch's bytes (the arena above): events missing from REQs.
  readonly version = 3;
  // Measured (50k events, batches of 1,500): as asynchronous writes 34 µs of CPU an event,
  // against 50-60 µs for the same puts inside a transaction.
  readonly writesOnly = true;
  // Every REQ reads this view: built at commit, a first REQ after a batch never parses it.
  readonly eagerView = true;
  /** set by the runner that feeds this consumer */
  tail: Tail<TailIndex> = noTail;

  constructor(private readonly s: Store) {
    attached.set(s, this);
  }

  prepare(e: NostrEvent): NostrEvent {
    return e;
  }

  prepareView(e: NostrEvent, json: string): TailPart {
    return tailPart(e, json);
  }

  apply(s: Store, adds: readonly Prepared<NostrEvent>[], removes: readonly Prepared<NostrEvent>[]): void {
    // Not the store's arena: lmdb-js copies the key of an asynchronous put or remove when it is
    // issued, but reads its value (the `created_at | serial` tail) from this buffer only when
    // its write thread performs the write. On the relay's thread (consumers.thread = false, the
    // data commands) the writer's next batch resets and refills the store's arena before that,
    // and the entries were written with its bytes. An arena of this batch's own, which lmdb-js
    // keeps alive until the writes are done.
    const a = new Arena(ARENA_BYTES);
    for (const { serial, p } of removes) forEachIndexEntry(s, p, serial, removeKey, a);
    for (const { serial, p } of adds) forEachIndexEntry(s, p, serial, putKey, a);
  }

  clear(s: Store): void {
    for (const db of [s.pubkey, s.kind, s.pubkind, s.tag, s.time]) db.clearSync();
  }

  newView(): TailIndex {
    return newTail();
  }

  view(v: TailIndex, d: Prepared<TailPart>, sign: 1 | -1, removal: boolean): void {
    viewTail(v, d.serial, d.p, sign, removal);
  }

  /**
   * The indexes' watermark and the views after it, read together; with `txn` (a read
   * transaction of the derived environment) the watermark is read in it, so that index entries
   * read in the same transaction are exactly those up to it.
   */
  snapshot(txn?: unknown): IndexSnapshot {
    return readSnapshot(this.s, this, txn);
  }
}

/** The consumer keeping each open store's indexes in this process, if any. */
const attached = new WeakMap<Store, Indexes>();

/**
 * What a reader of the indexes must add: from the consumer's views when this process runs it,
 * else (a data command reading a directory whose relay stopped before applying everything)
 * from the log on disk: the events after the watermark and the removals after its own. With
 * no watermark nothing is known to be indexed, and every stored event comes from the log.
 */
export function indexSnapshot(s: Store): IndexSnapshot {
  const ix = attached.get(s);
  if (ix && ix.tail !== noTail) return ix.snapshot();
  return fromLog(s);
}

/**
 * The snapshot read in `txn`, a read transaction of the derived environment, for a reader that
 * reads index entries in the same transaction; undefined when this process does not run the
 * consumer (then the log after the watermark is on disk, in another environment).
 */
export function indexSnapshotIn(s: Store, txn: unknown): IndexSnapshot | undefined {
  const ix = attached.get(s);
  return ix && ix.tail !== noTail ? ix.snapshot(txn) : undefined;
}

function fromLog(s: Store): IndexSnapshot {
  const w = readWatermark(s, INDEXES);
  const through = w?.serial ?? 0;
  const tail = newTail();
  for (const { key, value } of s.eventsText.getRange({ start: serialKey(through + 1) })) {
    const json = value as string;
    viewTail(tail, readU64(key as Buffer, 0), tailPart(JSON.parse(json) as NostrEvent, json), 1, false);
  }
  if (w)
    for (const r of removalsAfter(s.removals, w.removal))
      if (r.serial <= through) viewTail(tail, r.serial, tailPart(r.event, r.json), 1, true);
  return { w, through, views: [tail] };
}

const putKey = (db: BinDb, k: Buffer): void => putEntry(db, k);
const removeKey = (db: BinDb, k: Buffer): void => removeEntry(db, k);
