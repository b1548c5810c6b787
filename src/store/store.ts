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
  /** highest serial ever assigned (from disk at open, then advanced by the writer) */
  lastSerial: number;
  /** further indexes (search, expiration…) kept in the same write transaction as the event */
  indexers: Indexer[];
}

/**
 * A secondary index maintained by the writer. Both calls run inside the write transaction that
 * stores or removes the event, so an index can never disagree with the events it points to.
 */
export interface Indexer {
  readonly name: string;
  put(s: Store, e: NostrEvent, serial: number): void;
  remove(s: Store, e: NostrEvent, serial: number): void;
  /** Writes whatever the index aggregated over the transaction; called once at its end. */
  flush?(s: Store): void;
}

/** Ends a write transaction's index work; every writer of the store calls it before commit. */
export function flushIndexers(s: Store): void {
  for (const ix of s.indexers) ix.flush?.(s);
}

export function openStore(path: string): Store {
  // noSubdir: false, or lmdb-js takes a path with a dot in its last part (tmp.XYZ, data.v2) for
  // a file name and fails on an existing directory or creates a file instead of a directory.
  const env = open({ path, maxDbs: 32, compression: false, noSubdir: false });
  const db = (name: string): BinDb => env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
  const events = db("events");
  let lastSerial = 0;
  for (const k of events.getKeys({ reverse: true, limit: 1 })) lastSerial = readU64(k, 0);
  return {
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
    lastSerial,
    indexers: [],
  };
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

/** Removes an event and every index entry it owns. Must run inside a write transaction. */
export function removeEvent(s: Store, e: NostrEvent, serial: number): void {
  s.events.remove(serialKey(serial));
  s.ids.remove(hexBytes(e.id));
  for (const [db, key] of indexEntries(s, e, serial)) db.remove(key);
  for (const ix of s.indexers) ix.remove(s, e, serial);
}

/** Stores an event and every index entry it owns. Must run inside a write transaction. */
export function putEvent(s: Store, e: NostrEvent, json: string, serial: number): void {
  s.events.put(serialKey(serial), Buffer.from(json, "utf8"));
  s.ids.put(hexBytes(e.id), serialKey(serial));
  for (const [db, key] of indexEntries(s, e, serial)) db.put(key, EMPTY);
  for (const ix of s.indexers) ix.put(s, e, serial);
}

/** Opens a further named database in the store's environment (for indexers). */
export function openDb(s: Store, name: string): BinDb {
  return s.env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
}
