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
import type { Batch, Consumer, Prepared, Tail } from "../store/consumer.ts";
import { noTail, readSnapshot, readWatermark } from "../store/consumer.ts";
import { INDEXES } from "../store/index-db.ts";
import { Arena, TAIL } from "../store/keys.ts";
import { readPast } from "../store/past-watermark.ts";
import { forEachIndexEntry } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import type { IndexSnapshot, TailIndex, TailPart } from "./tail.ts";
import { newTail, tailPart, viewTail } from "./tail.ts";

/** A batch's arena for an event's keys, reused for the next event once they are written. */
const ARENA_BYTES = 64 * 1024;

export class Indexes implements Consumer<NostrEvent, TailIndex, TailPart> {
  readonly name = INDEXES;
  // 2: entries kept as duplicates of their prefix (index-db.ts)
  // 3: rebuilt once, because version 2 applied in the writer's thread (`consumers.thread false`,
  //    and the data commands such as `relay import` run without a relay) could write entries
  //    whose tails were the next batch's bytes (the arena above): events missing from REQs.
  readonly version = 3;
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

  readonly writesOnly = true;

  /**
   * Each event's entries are copied into the batch's entry log as it is added (the event is not
   * kept), and issued at `write` as asynchronous writes that lmdb-js's write thread performs
   * beside this one and commits with the watermark in one transaction.
   */
  batch(s: Store): Batch {
    const a = new Arena(ARENA_BYTES);
    const log = new EntryLog([s.pubkey, s.kind, s.pubkind, s.tag, s.time]);
    return {
      add: (e, serial, sign) => {
        a.reset();
        forEachIndexEntry(s, e, serial, (db, k) => log.push(db, k, sign), a);
      },
      write: () => log.issue(),
    };
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
  // No watermark: nothing is in the entries, and removed events are gone from the log.
  readPast(
    s,
    { serial: through, seq: w?.removal ?? 0 },
    {
      added: (serial, json) =>
        viewTail(tail, serial, tailPart(JSON.parse(json) as NostrEvent, json), 1, false),
      removed: w ? (r) => viewTail(tail, r.serial, tailPart(r.event, r.json), 1, true) : undefined,
    },
  );
  return { w, through, views: [tail] };
}

/** Bytes of an entry log's chunks: each holds thousands of entries. */
const CHUNK = 256 * 1024;

/**
 * A batch's index entries as bytes: `db 1 | sign 1 | prefix length 1 | prefix | created_at |
 * serial`, in chunks. Issued as asynchronous writes, a value is not given as a view of its own:
 * lmdb-js reads a value's bytes from `buffer` between `start` and `end` when the object it is
 * handed has them (the protocol of msgpackr's reusable buffers), and keeps that object until the
 * write is done, so one object per chunk, moved along it, keeps the chunk alive without an
 * object per entry (a contact list's 89 entries would each hold one until the commit).
 */
class EntryLog {
  /** the chunks filled so far, each with the bytes it holds */
  private readonly chunks: { bytes: Buffer; used: number }[] = [];
  private chunk = Buffer.alloc(0);
  private at = 0;

  constructor(private readonly dbs: readonly BinDb[]) {}

  push(db: BinDb, k: Buffer, sign: 1 | -1): void {
    const need = 3 + k.length;
    if (this.at + need > this.chunk.length) {
      this.close();
      this.chunk = Buffer.from(new ArrayBuffer(Math.max(CHUNK, need)));
      this.at = 0;
    }
    const c = this.chunk;
    c[this.at] = this.dbs.indexOf(db);
    c[this.at + 1] = sign > 0 ? 1 : 0;
    c[this.at + 2] = k.length - TAIL;
    c.set(k, this.at + 3);
    this.at += need;
  }

  private close(): void {
    if (this.at > 0) this.chunks.push({ bytes: this.chunk, used: this.at });
  }

  issue(): void {
    this.close();
    this.at = 0;
    for (const { bytes: c, used } of this.chunks) {
      const value = { buffer: c.buffer, start: 0, end: 0 };
      for (let at = 0; at < used; ) {
        const len = c[at + 2]!;
        const db = this.dbs[c[at]!]!;
        const put = c[at + 1] === 1;
        const prefix = c.subarray(at + 3, at + 3 + len);
        value.start = at + 3 + len;
        value.end = value.start + TAIL;
        if (put) db.put(prefix as Buffer, value as never);
        else db.remove(prefix as Buffer, value as never);
        at = value.end;
      }
    }
  }
}
