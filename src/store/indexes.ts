// The REQ indexes (pubkey, kind, pubkind, tag, time) as a consumer of the event log. The writer's
// transaction holds only what deciding an event needs (bodies, ids, replaceable pointers,
// tombstones, expiry); these five indexes, about ten random keys an event, are written in
// batches of thousands of events. Why: every key dirties a 4 KiB page for its commit, and the
// writer commits (and fsyncs) a few hundred events at a time to keep OK latency low: its
// commit wrote ~20 KiB of scattered pages per event and fsync'd them before the next batch
// could start. A batch of thousands shares most of those pages.
//
// Readers cover the indexes up to the consumer's watermark plus the events committed after it,
// held in memory by the views (TailIndex) and matched directly (query.ts), so an event is
// found the moment it is committed.
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter, SearchMatcher } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import type { Consumer, Derived, Tail, Watermark } from "./consumer.ts";
import { noTail, readWatermark } from "./consumer.ts";
import { readU64, serialKey } from "./keys.ts";
import { removalsAfter } from "./removals.ts";
import type { BinDb, Store } from "./store.ts";
import { EMPTY, forEachIndexEntry } from "./store.ts";

/**
 * Events committed and not yet in the indexes, and indexed events removed since; and, so that a
 * reader picks its candidates among them as it would on disk instead of matching every one,
 * their serials by pubkey, by kind and by tag (`letter value`), in commit order. An event
 * dropped from the view stays in those lists; readers look it up in `events`.
 */
export interface TailIndex {
  events: Map<number, NostrEvent>;
  removed: Map<number, NostrEvent>;
  byAuthor: Map<string, number[]>;
  byKind: Map<number, number[]>;
  byTag: Map<string, number[]>;
}

function listIn<K>(m: Map<K, number[]>, k: K, serial: number): void {
  const l = m.get(k);
  if (l === undefined) m.set(k, [serial]);
  // A tag repeated in one event is listed once.
  else if (l[l.length - 1] !== serial) l.push(serial);
}

/** What one reader sees beyond the indexes' watermark, read once before it scans. */
export interface IndexSnapshot {
  /** every event up to this serial has its index entries on disk */
  through: number;
  /** the views after `through` */
  tails: TailIndex[];
  /** events after `through`, by serial */
  events: Map<number, NostrEvent>[];
  /** indexed events removed since (by serial): their entries may still be on disk */
  removed: Map<number, NostrEvent>[];
}

export const INDEXES = "indexes";

export class Indexes implements Consumer<NostrEvent, TailIndex> {
  readonly name = INDEXES;
  readonly version = 1;
  // Measured (50k events, batches of 1,500): as asynchronous writes 34 µs of CPU an event,
  // against 50-60 µs for the same puts inside a transaction.
  readonly writesOnly = true;
  /** set by the runner that feeds this consumer */
  tail: Tail<TailIndex> = noTail;

  constructor(private readonly s: Store) {
    attached.set(s, this);
  }

  prepare(e: NostrEvent): NostrEvent {
    return e;
  }

  apply(s: Store, adds: readonly Derived<NostrEvent>[], removes: readonly Derived<NostrEvent>[]): void {
    // lmdb-js copies each key when the put or remove is issued, so the arena can be reused.
    s.arena.reset();
    for (const { serial, p } of removes) forEachIndexEntry(s, p, serial, removeKey);
    for (const { serial, p } of adds) forEachIndexEntry(s, p, serial, putKey);
  }

  clear(s: Store): void {
    for (const db of [s.pubkey, s.kind, s.pubkind, s.tag, s.time]) db.clearSync();
  }

  /** A store whose writer kept these indexes itself (earlier versions) has them complete. */
  adopt(s: Store): boolean {
    for (const _ of s.pubkey.getKeys({ limit: 1 })) return true;
    return false;
  }

  newView(): TailIndex {
    return {
      events: new Map(),
      removed: new Map(),
      byAuthor: new Map(),
      byKind: new Map(),
      byTag: new Map(),
    };
  }

  view(v: TailIndex, d: Derived<NostrEvent>, sign: 1 | -1, removal: boolean): void {
    if (removal) {
      if (sign > 0) v.removed.set(d.serial, d.p);
      else v.removed.delete(d.serial);
    } else if (sign > 0) {
      const e = d.p;
      v.events.set(d.serial, e);
      listIn(v.byAuthor, e.pubkey, d.serial);
      listIn(v.byKind, e.kind, d.serial);
      for (const t of e.tags) {
        const value = t[1];
        if (value !== undefined && t[0]!.length === 1) listIn(v.byTag, `${t[0]} ${value}`, d.serial);
      }
    } else v.events.delete(d.serial);
  }

  /**
   * The indexes' watermark and the views after it, read together; with `txn` (a read
   * transaction of the derived environment) the watermark is read in it, so that index entries
   * read in the same transaction are exactly those up to it.
   */
  snapshot(txn?: unknown): IndexSnapshot {
    const w: Watermark | undefined = readWatermark(this.s, this.name, txn);
    const views = this.tail.views(w);
    return {
      through: w?.serial ?? 0,
      tails: views,
      events: views.map((v) => v.events),
      removed: views.map((v) => v.removed),
    };
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
  const tail: TailIndex = Indexes.prototype.newView();
  for (const { key, value } of s.events.getRange({ start: serialKey(through + 1) })) {
    const e = JSON.parse((value as Buffer).toString("utf8")) as NostrEvent;
    Indexes.prototype.view(tail, { serial: readU64(key as Buffer, 0), p: e }, 1, false);
  }
  if (w)
    for (const r of removalsAfter(s.removals, w.removal))
      if (r.serial <= through) tail.removed.set(r.serial, r.event);
  return { through, tails: [tail], events: [tail.events], removed: [tail.removed] };
}

const putKey = (db: BinDb, k: Buffer): void => {
  db.put(k, EMPTY);
};
const removeKey = (db: BinDb, k: Buffer): void => {
  db.remove(k);
};

/** Whether a serial was removed since the snapshot's indexes were written. */
export function removedIn(snap: IndexSnapshot, serial: number): boolean {
  for (const r of snap.removed) if (r.has(serial)) return true;
  return false;
}

/** The events after the watermark (not removed since), for a reader to match itself. */
export function* tailEvents(snap: IndexSnapshot): Generator<[number, NostrEvent]> {
  for (const m of snap.events) for (const entry of m) if (!removedIn(snap, entry[0])) yield entry;
}

/**
 * The events after the watermark (not removed since) that match `f`, in commit order per view:
 * candidates come from the view's lists by author, else by the filter's first tag, else by kind
 * (as the planner would pick on disk), so a reader never walks the whole backlog for a narrow
 * filter.
 */
export function* tailMatches(
  snap: IndexSnapshot,
  f: Filter,
  search?: SearchMatcher,
): Generator<[number, NostrEvent]> {
  for (const t of snap.tails) {
    const lists = candidateLists(t, f);
    if (lists === undefined) {
      for (const entry of t.events)
        if (!removedIn(snap, entry[0]) && matchFilter(f, entry[1], search)) yield entry;
      continue;
    }
    // One list per value of the field: an event may be in two of them.
    const seen = lists.length > 1 ? new Set<number>() : undefined;
    for (const list of lists)
      for (const serial of list) {
        if (seen) {
          if (seen.has(serial)) continue;
          seen.add(serial);
        }
        const e = t.events.get(serial);
        if (e !== undefined && !removedIn(snap, serial) && matchFilter(f, e, search)) yield [serial, e];
      }
  }
}

const NONE: number[] = [];

/** The view's lists a filter's candidates are in, or undefined: every event is one. */
function candidateLists(t: TailIndex, f: Filter): number[][] | undefined {
  if (f.authors) return f.authors.map((a) => t.byAuthor.get(a) ?? NONE);
  const tag = f.tags?.[0];
  if (tag) return tag[1].map((v) => t.byTag.get(`${tag[0]} ${v}`) ?? NONE);
  if (f.kinds) return f.kinds.map((k) => t.byKind.get(k) ?? NONE);
  return undefined;
}
