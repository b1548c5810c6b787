// Opens the LMDB environment and its named databases, and knows which index entries an event
// owns. Reading and writing policies live in writer.ts and query.ts.
import type { Database, RootDatabase } from "lmdb";
import { open } from "lmdb";
import type { NostrEvent } from "../nostr/event.ts";
import {
  hexBytes,
  indexKey,
  isIndexableTagName,
  kindBytes,
  pubkindPrefix,
  readU64,
  serialKey,
  tagPrefix,
  timeKey,
} from "./keys.ts";
import type { Removal } from "./removals.ts";
import { lastRemovalSeq, removalValue } from "./removals.ts";

export type BinDb = Database<Buffer, Buffer>;

export interface Store {
  env: RootDatabase;
  events: BinDb;
  /** the same `events` database read as text: one UTF-8 decode, no intermediate Buffer */
  eventsText: Database<string, Buffer>;
  ids: BinDb;
  pubkey: BinDb;
  kind: BinDb;
  pubkind: BinDb;
  tag: BinDb;
  time: BinDb;
  replaceable: BinDb;
  /** NIP-09 tombstones: `id 32 | deleter pubkey 32` → (empty) */
  deleted: BinDb;
  /** NIP-09 address tombstones: replaceable key → created_at 8 of the latest `a` deletion */
  deletedAddr: BinDb;
  /** NIP-62: `pubkey 32` → created_at 8 up to which everything was removed */
  vanished: BinDb;
  /** `indexed` → serial 8: every event up to it has all its index entries on disk */
  state: BinDb;
  /** highest serial ever assigned (from disk at open, then advanced by the writer) */
  lastSerial: number;
  /** the writer's deferred index puts while a batch is being applied, else null (write now) */
  later: LaterWrites | null;
  /** indexes that deciding an event needs (NIP-40 expiry), kept in the writer's transaction */
  indexers: Indexer[];
  /** the removal log (removals.ts) */
  removals: BinDb;
  /** highest removal seq ever assigned */
  lastRemoval: number;
  /** removal records are written only while a consumer of the event log reads them */
  logRemovals: boolean;
  /** what the transaction being applied removed, handed to the consumers after its commit */
  removedInTxn: Removal[];
}

/**
 * An index the writer keeps in its own transaction, because deciding an event needs it.
 * Everything else derived from events (search, counters) is a consumer of the event log.
 */
export interface Indexer {
  readonly name: string;
  put(s: Store, e: NostrEvent, serial: number): void;
  remove(s: Store, e: NostrEvent, serial: number): void;
}

/** Ends a write transaction's index work; every writer of the store calls it before commit. */
export function endTransaction(s: Store): void {
  // Written last, after every entry of the events it covers (deferred or not).
  putIndex(s, s.state, INDEXED_KEY, serialKey(s.lastSerial));
}

/**
 * Index puts the writer defers. Deciding an event (duplicate? replaces what? deleted?) needs
 * a write transaction on the main thread; the bulk of its index entries and search postings
 * does not. Those are queued here while a batch is applied, then handed to lmdb-js as
 * asynchronous writes, which its own write thread performs in order, after the transaction
 * that decided them and before any later one. The OK waits for them.
 *
 * Only puts are deferred, and only of keys nothing in the write path reads back, except an
 * event of the same batch being removed (removeEvent applies the queue first) and the vanish
 * scan (applies it first too). The bodies, `ids`, replaceable pointers, tombstones and search
 * counts are written in the transaction itself, so a crash between the two commits can only
 * lose idempotent puts of events above the `indexed` mark, which restoreIndexes re-creates.
 */
export interface LaterWrites {
  /** first serial assigned in this batch */
  readonly firstSerial: number;
  dbs: BinDb[];
  keys: Buffer[];
  values: Buffer[];
}

const INDEXED_KEY = Buffer.from("indexed");

/** Puts an index entry now, or queues it when the writer defers index writes. */
export function putIndex(s: Store, db: BinDb, key: Buffer, value: Buffer = EMPTY): void {
  const later = s.later;
  if (later === null) db.put(key, value);
  else {
    later.dbs.push(db);
    later.keys.push(key);
    later.values.push(value);
  }
}

/** Writes the queued puts inside the current transaction (for readers of the index in it). */
export function applyLater(s: Store): void {
  const later = s.later;
  if (later === null) return;
  for (let i = 0; i < later.dbs.length; i++) later.dbs[i]!.put(later.keys[i]!, later.values[i]!);
  later.dbs.length = later.keys.length = later.values.length = 0;
}

/** Hands queued puts to lmdb-js's write thread; resolves once they are committed. */
export function issueLater(later: LaterWrites): Promise<unknown> {
  let last: Promise<unknown> = Promise.resolve();
  for (let i = 0; i < later.dbs.length; i++) last = later.dbs[i]!.put(later.keys[i]!, later.values[i]!);
  return last;
}

/** The serial up to which every event's index entries are known to be on disk. */
export function indexedThrough(s: Store): number {
  const v = s.state.get(INDEXED_KEY);
  return v === undefined ? 0 : readU64(v, 0);
}

/**
 * After a crash between a batch's commit and its deferred puts: re-creates the index entries of
 * the events above the `indexed` mark (puts are idempotent; counts were committed with the
 * events). Call once the indexers are registered, before the writer starts.
 */
export function restoreIndexes(s: Store): number {
  const from = indexedThrough(s) + 1;
  if (from > s.lastSerial) return 0;
  return replayStored(
    s,
    from,
    Number.MAX_SAFE_INTEGER,
    (e, serial) => {
      for (const [db, k] of indexEntries(s, e, serial)) db.put(k, EMPTY);
    },
    () => s.state.put(INDEXED_KEY, serialKey(s.lastSerial)),
  );
}

/**
 * Feeds every stored event from serial `from` on, in serial order, to `apply`, `batch` events
 * per write transaction, calling `endBatch` at the end of each (inside it). For rebuilding and
 * restoring indexes; returns how many events it read.
 */
export function replayStored(
  s: Store,
  from: number,
  batch: number,
  apply: (e: NostrEvent, serial: number) => void,
  endBatch: () => void = () => {},
  progress?: (events: number) => void,
): number {
  let next = from;
  let events = 0;
  for (;;) {
    let n = 0;
    s.env.transactionSync(() => {
      for (const { key, value } of s.events.getRange({ start: serialKey(next), limit: batch })) {
        const serial = readU64(key as Buffer, 0);
        apply(JSON.parse((value as Buffer).toString("utf8")) as NostrEvent, serial);
        next = serial + 1;
        n++;
      }
      endBatch();
    });
    events += n;
    if (n > 0) progress?.(events);
    if (n < batch) return events;
  }
}

export function openStore(path: string): Store {
  // noSubdir: false, or lmdb-js takes a path with a dot in its last part (tmp.XYZ, data.v2) for
  // a file name and fails on an existing directory or creates a file instead of a directory.
  const env = open({ path, maxDbs: 32, compression: false, noSubdir: false });
  const db = (name: string): BinDb => env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
  const events = db("events");
  const state = db("state");
  let lastSerial = 0;
  for (const k of events.getKeys({ reverse: true, limit: 1 })) lastSerial = readU64(k, 0);
  // A store written before the mark existed was fully indexed in each transaction.
  if (state.get(INDEXED_KEY) === undefined) state.putSync(INDEXED_KEY, serialKey(lastSerial));
  const removals = db("removals");
  const store: Store = {
    env,
    events,
    eventsText: env.openDB({ name: "events", keyEncoding: "binary", encoding: "string" }) as Database<
      string,
      Buffer
    >,
    ids: db("ids"),
    pubkey: db("pubkey"),
    kind: db("kind"),
    pubkind: db("pubkind"),
    tag: db("tag"),
    time: db("time"),
    replaceable: db("replaceable"),
    deleted: db("deleted"),
    deletedAddr: db("deleted_addr"),
    vanished: db("vanished"),
    state,
    lastSerial,
    later: null,
    indexers: [],
    removals,
    lastRemoval: 0,
    logRemovals: false,
    removedInTxn: [],
  };
  store.lastRemoval = lastRemovalSeq(removals);
  return store;
}

export const EMPTY = Buffer.alloc(0);

/** The (database, key) pairs of every index entry an event has, besides `ids`. */
export function indexEntries(s: Store, e: NostrEvent, serial: number): [BinDb, Buffer][] {
  const t = e.created_at;
  const pk = hexBytes(e.pubkey);
  const out: [BinDb, Buffer][] = [
    [s.pubkey, indexKey(pk, t, serial)],
    [s.kind, indexKey(kindBytes(e.kind), t, serial)],
    [s.pubkind, indexKey(pubkindPrefix(e.pubkey, e.kind), t, serial)],
    [s.time, timeKey(t, serial)],
  ];
  const seen = new Set<string>();
  for (const tag of e.tags) {
    const name = tag[0];
    const value = tag[1];
    if (!isIndexableTagName(name) || value === undefined) continue;
    const p = tagPrefix(name, value);
    if (!p) continue;
    const dedupe = p.toString("latin1");
    if (seen.has(dedupe)) continue;
    seen.add(dedupe);
    out.push([s.tag, indexKey(p, t, serial)]);
  }
  return out;
}

/** The stored JSON of an event by serial, or undefined. */
export function readEvent(s: Store, serial: number): string | undefined {
  return s.eventsText.get(serialKey(serial));
}

/**
 * Removes an event and every index entry it owns, and logs the removal for the consumers.
 * Must run inside a write transaction.
 */
export function removeEvent(s: Store, e: NostrEvent, serial: number, json: string): void {
  // An event of the batch being applied may still have its entries queued: write them first.
  if (s.later !== null && serial >= s.later.firstSerial) applyLater(s);
  s.events.remove(serialKey(serial));
  s.ids.remove(hexBytes(e.id));
  for (const [db, key] of indexEntries(s, e, serial)) db.remove(key);
  for (const ix of s.indexers) ix.remove(s, e, serial);
  if (s.logRemovals) {
    const seq = ++s.lastRemoval;
    s.removals.put(serialKey(seq), removalValue(serial, json));
    s.removedInTxn.push({ seq, serial, event: e, json });
  }
}

/** Stores an event and every index entry it owns. Must run inside a write transaction. */
export function putEvent(s: Store, e: NostrEvent, json: string, serial: number): void {
  s.events.put(serialKey(serial), Buffer.from(json, "utf8"));
  s.ids.put(hexBytes(e.id), serialKey(serial));
  for (const [db, key] of indexEntries(s, e, serial)) putIndex(s, db, key);
  for (const ix of s.indexers) ix.put(s, e, serial);
}

/** Opens a further named database in the store's environment (for indexers). */
export function openDb(s: Store, name: string): BinDb {
  return s.env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
}
