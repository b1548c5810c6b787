// Opens the store: two LMDB environments and their named databases. The log (`env`) holds the
// events and what deciding an event needs, written by the writer; the derived environment
// (`derived`, in the data directory's derived/) holds what the consumers of the log build from
// it: the REQ indexes, search, counters and their watermarks. Two environments, two writers:
// a consumer's batch never makes the writer (and the OKs) wait for LMDB's one write lock, and
// everything in derived/ can be rebuilt from the log. Also knows which index entries an event
// owns. Reading and writing policies live in writer.ts and query.ts.
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Database, RootDatabase } from "lmdb";
import { open } from "lmdb";
import { chooseMapSize, writeMapSize } from "../lmdb/map-size.ts";
import type { OpenGate } from "../lmdb/open-gate.ts";
import { openGate, shareGateInWrites } from "../lmdb/open-gate.ts";
import { DerivedRoom } from "../lmdb/room.ts";
import { bootId, markSynced, markUnsynced, mayBeTorn, removeEnvironment } from "../lmdb/unsynced.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { INDEX_DB } from "./index-db.ts";
import { Arena, isIndexableTagName, readU64, serialKey, serialProbe } from "./keys.ts";
import { syncLogSync } from "./log-sync.ts";
import { removalValue } from "./removals.ts";
import { readHighWater } from "./serials.ts";
import type { BinDb, Store } from "./types.ts";

/**
 * Databases earlier versions kept in the log's environment; their consumers rebuild them in
 * the derived one, so they are dropped once at open.
 */
const MOVED_TO_DERIVED = [
  "pubkey",
  "kind",
  "pubkind",
  "tag",
  "time",
  "state",
  "search",
  "search_df",
  "search_meta",
  "search_blocks",
  "search_gone",
  "api_note",
  "api_pubkey",
  "api_relay",
  "api_meta",
];

/**
 * The REQ indexes as whole keys, before they were kept as duplicates of their prefix
 * (index-db.ts): the index consumer of that version is rebuilt into the new databases.
 */
const OLD_INDEXES = ["pubkey", "kind", "pubkind", "tag", "time"];

function dropOldIndexes(derived: RootDatabase): void {
  const present = new Set(Array.from(derived.getKeys({}), String));
  for (const name of OLD_INDEXES) {
    if (!present.has(name)) continue;
    derived.openDB({ name, keyEncoding: "binary", encoding: "binary" }).dropSync();
  }
}

function dropMoved(env: RootDatabase): void {
  const present = new Set(Array.from(env.getKeys({}), String));
  for (const name of MOVED_TO_DERIVED) {
    if (!present.has(name)) continue;
    env.openDB({ name, keyEncoding: "binary", encoding: "binary" }).dropSync();
  }
}

/**
 * Feeds every stored event from serial `from` through `through`, in serial order, to `apply`,
 * `batch` events per write transaction of the derived environment, calling `endBatch` at the
 * end of each (inside it). For building derived indexes from the log; returns how many events
 * it read.
 */
export function replayStored(
  s: Store,
  from: number,
  through: number,
  batch: number,
  apply: (e: NostrEvent, serial: number) => void,
  endBatch: () => void = () => {},
  progress?: (events: number) => void,
): number {
  let next = from;
  let events = 0;
  for (;;) {
    let n = 0;
    // The bytes a batch adds are known once it is read: taken as 2 KiB an event, for the events
    // it can hold (a start that catches up on a few events needs room for a few, not a batch).
    const most = Math.max(1, Math.min(batch, through - next + 1));
    derivedWrite(
      s,
      () => {
        const range = { start: serialKey(next), end: serialKey(through + 1), limit: batch };
        for (const { key, value } of s.events.getRange(range)) {
          const serial = readU64(key as Buffer, 0);
          apply(JSON.parse((value as Buffer).toString("utf8")) as NostrEvent, serial);
          next = serial + 1;
          n++;
        }
        endBatch();
      },
      most * 2048,
    );
    events += n;
    if (n > 0) progress?.(events);
    if (n < batch) return events;
  }
}

export interface StoreOptions {
  /** size of each environment's memory map in GiB (store.mapSizeGb; 0 or absent: map-size.ts) */
  mapSizeGb?: number;
  /** let the kernel read ahead around each page fault (default false: MDB_NORDAHEAD) */
  readAhead?: boolean;
  /**
   * write the derived environment through a writable memory map (room.ts), as the relay
   * does: only the process that writes the derived indexes, and one at a time (see
   * map-size.ts writeMapSize); default false
   */
  writeMap?: boolean;
}

export function openStore(path: string, o: StoreOptions = {}): Store {
  // One memory map of a fixed size, reserved once: lmdb-js otherwise starts with a small map and
  // maps the file again each time it grows, and the old maps stay resident (measured: 340 MiB of
  // file-backed RSS for 130 MB of data files after the 50k-event ingest, 185 MiB with one map).
  // The size is address space, not memory or disk; the files grow with the data. By default it
  // is sized from the address space this machine offers (map-size.ts).
  // noSubdir: false, or lmdb-js takes a path with a dot in its last part (tmp.XYZ, data.v2) for
  // a file name and fails on an existing directory or creates a file instead of a directory.
  const mapSize = chooseMapSize(o.mapSizeGb).gb * 2 ** 30;
  // No read-ahead (MDB_NORDAHEAD): index updates and reads touch pages all over the files, and
  // each page fault read up to 128 KiB around the page. Once the data outgrew the page cache
  // (a million events in a 1 GiB cgroup) that read 1 GB/s from disk to write a few MB/s,
  // evicting the pages the next batch needed.
  const noReadAhead = !(o.readAhead ?? false);
  // `noReadAhead` is an lmdb-js option its types do not declare.
  const options = {
    maxDbs: 32,
    compression: false,
    noSubdir: false,
    mapSize,
    noReadAhead,
  };
  const gate = openGate(path);
  const env = openLog(path, options, gate);
  const derivedDir = join(path, DERIVED_DIR);
  const writeMap = o.writeMap === true;
  const { derived, unsynced, torn } = openDerived(derivedDir, options, gate, writeMap);
  dropMoved(env);
  dropOldIndexes(derived);
  const db = (name: string): BinDb => env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
  const ddb = (name: string): BinDb => derived.openDB({ name, keyEncoding: "binary", encoding: "binary" });
  const idx = (name: string): BinDb => derived.openDB({ name, ...INDEX_DB } as never) as BinDb;
  const events = db("events");
  const removals = db("removals");
  const s: Store = {
    path,
    env,
    logFd: openSync(join(path, "data.mdb"), "r+"),
    gate,
    syncedSerial: 0,
    derived,
    events,
    eventsText: env.openDB({ name: "events", keyEncoding: "binary", encoding: "string" }) as Database<
      string,
      Buffer
    >,
    ids: db("ids"),
    pubkey: idx("ix_pubkey"),
    kind: idx("ix_kind"),
    pubkind: idx("ix_pubkind"),
    tag: idx("ix_tag"),
    time: idx("ix_time"),
    replaceable: db("replaceable"),
    deleted: db("deleted"),
    deletedAddr: db("deleted_addr"),
    vanished: db("vanished"),
    state: ddb("state"),
    room: writeMap ? new DerivedRoom(derived, derivedDir, pageSizeOf(derived)) : undefined,
    derivedUnsynced: unsynced,
    derivedTorn: torn,
    meta: db("meta"),
    lastSerial: 0,
    indexers: [],
    removals,
    lastRemoval: 0,
    logRemovals: false,
    removedInTxn: [],
    arena: new Arena(),
  };
  const high = readHighWater(s);
  s.lastSerial = high.serial;
  s.lastRemoval = high.removal;
  return s;
}

type EnvOptions = {
  maxDbs: number;
  compression: boolean;
  noSubdir: boolean;
  mapSize: number;
  noReadAhead: boolean;
};

/**
 * The log's commits leave their meta page to the next sync (MDB_NOMETASYNC, log-sync.ts): a
 * commit is visible, and goes to live subscribers, after one sync instead of two (~1.3 ms
 * instead of ~2.0 at the median here), and what acknowledges a write waits for `syncLog`.
 * The derived environment keeps LMDB's default: nothing but the consumers waits on its
 * commits, and the log rebuilds it.
 * Each opening waits for the other processes' commits in flight and holds their next ones
 * (open-gate.ts: an opening can lose a commit made meanwhile).
 */
function openLog(path: string, options: EnvOptions, gate: OpenGate): RootDatabase {
  const env = gate.whileOpening(() => open({ path, ...options, noMetaSync: true } as never) as RootDatabase);
  shareGateInWrites(env, gate);
  return env;
}

/**
 * The relay writes the derived environment through a writable memory map (MDB_WRITEMAP): a
 * write transaction changes pages in the page cache, where otherwise LMDB copies every page
 * it changes into the C heap first and keeps the copies for the next transaction. A consumer
 * batch changes most pages of the random-keyed trees (at a million events ~190 MiB of copies,
 * the largest part of the relay's anonymous memory); with the map they are file pages, which
 * the kernel writes back and reclaims like any other. A write transaction starts only where
 * the filesystem has room for it then (room.ts). The log keeps LMDB's copies: its
 * transactions are small.
 * Written through the map, its commits are not synced either, where this boot of the machine
 * can be told apart from the next (lmdb/unsynced.ts): the log rebuilds it, and a process that
 * dies loses none of its pages. Whoever opens it after the machine went down in the middle of
 * such writes removes it, and the consumers rebuild it.
 */
function openDerived(
  derivedDir: string,
  options: EnvOptions,
  gate: OpenGate,
  writeMap: boolean,
): { derived: RootDatabase; unsynced: boolean; torn: boolean } {
  const boot = bootId();
  const unsynced = writeMap && boot !== undefined;
  let torn = false;
  const derived = gate.whileOpening(() => {
    if (mayBeTorn(derivedDir, boot)) {
      removeEnvironment(derivedDir);
      torn = true;
    }
    const env = open({
      path: derivedDir,
      ...options,
      ...(writeMap ? { useWritemap: true, mapSize: writeMapSize(derivedDir, options.mapSize) } : {}),
      ...(unsynced ? { noSync: true } : {}),
    } as never) as RootDatabase;
    if (unsynced) markUnsynced(derivedDir, boot);
    return env;
  });
  shareGateInWrites(derived, gate);
  return { derived, unsynced, torn };
}

/** The derived environment's directory inside the data directory. */
export const DERIVED_DIR = "derived";

export const EMPTY = Buffer.alloc(0);

/** The page size of an environment. */
const pageSizeOf = (env: RootDatabase): number =>
  (env as unknown as { env: { stat(): { pageSize: number } } }).env.stat().pageSize;

/**
 * A write transaction of the derived environment, synchronous. Written through a writable map,
 * it starts only where the filesystem has room for the most it could grow the file (room.ts),
 * and a full disk throws here (ENOSPC) instead of killing the process: `adding` is the stored
 * JSON bytes of the events it adds, or "few" for a transaction of a few keys (watermarks, a
 * cleared database's root), which LMDB's own free pages take, so that a relay starts on a
 * nearly full disk and says so when a batch cannot get its room.
 */
export function derivedWrite<T>(s: Store, fn: () => T, adding: number | "few"): T {
  if (adding !== "few") s.room?.check(adding);
  return s.derived.transactionSync(fn);
}

/**
 * Makes the derived environment durable and says so (lmdb/unsynced.ts): for the process that
 * applies the consumers, once they have stopped. A process that handed them over leaves it to
 * the one that took them.
 */
export function syncDerived(s: Store): void {
  if (s.derivedUnsynced) markSynced(join(s.path, DERIVED_DIR));
}

/** Closes both environments (the derived one first: nothing writes it once the log is shut). */
export async function closeStore(s: Store): Promise<void> {
  await s.derived.close();

  // What was committed since the last acknowledgement (a data command's last commits) is
  // durable once closed.
  try {
    syncLogSync(s);
  } finally {
    closeSync(s.logFd);
    await s.env.close();
    s.gate.close();
  }
}

/**
 * Visits (database, key) of every index entry an event has, besides `ids`. Keys are views of
 * `a` (the store's arena by default): valid until its next reset, so use them at once.
 */
export function forEachIndexEntry(
  s: Store,
  e: NostrEvent,
  serial: number,
  visit: (db: BinDb, key: Buffer) => void,
  a: Arena = s.arena,
): void {
  const t = e.created_at;
  visit(s.pubkey, a.pubkeyKey(e.pubkey, t, serial));
  visit(s.kind, a.kindKey(e.kind, t, serial));
  visit(s.pubkind, a.pubkindKey(e.pubkey, e.kind, t, serial));
  visit(s.time, a.timeKey(t, serial));
  // A tag repeated in one event gives the same key twice: a second put or remove is harmless.
  for (const tag of e.tags) {
    const name = tag[0];
    const value = tag[1];
    if (value === undefined || !isIndexableTagName(name)) continue;
    const k = a.tagKey(name, value, t, serial);
    if (k) visit(s.tag, k);
  }
}

/** The (database, key) pairs of every index entry an event has, besides `ids` (copies). */
export function indexEntries(s: Store, e: NostrEvent, serial: number): [BinDb, Buffer][] {
  const out: [BinDb, Buffer][] = [];
  forEachIndexEntry(s, e, serial, (db, k) => out.push([db, Buffer.from(k)]));
  return out;
}

/** The stored JSON of an event by serial, or undefined. */
export function readEvent(s: Store, serial: number): string | undefined {
  return s.eventsText.get(serialProbe(serial));
}

/**
 * Removes an event and what the writer keeps of it, and logs the removal for the consumers of
 * the log (its REQ index entries go with the index consumer's next batch, see indexes.ts).
 * Must run inside a write transaction opened by serials.ts `writeTxn` (it takes the next seq).
 */
export function removeEvent(s: Store, e: NostrEvent, serial: number, json: string): void {
  const a = s.arena;
  s.events.remove(a.serial(serial));
  s.ids.remove(a.hex32(e.id));
  for (const ix of s.indexers) ix.remove(s, e, serial);
  if (s.logRemovals) {
    const seq = ++s.lastRemoval;
    s.removals.put(a.serial(seq), removalValue(serial, json), APPEND as never);
    s.removedInTxn.push({ seq, serial, event: e, json });
  }
}

/**
 * Serials and removal seqs only ever grow (serials.ts: taken from the high-water marks inside
 * the write transaction, never reused), so bodies and removal records are appended: LMDB then
 * fills each page instead of splitting it in half (measured: 27% fewer pages for bodies of
 * 300-1,500 bytes).
 */
const APPEND = { append: true };

/**
 * Stores an event (its body, its id and the writer's own indexes); its REQ index entries are
 * written by the index consumer (indexes.ts). Must run inside a write transaction opened by
 * serials.ts `writeTxn`, under a serial it took there.
 */
export function putEvent(s: Store, e: NostrEvent, json: string, serial: number): void {
  const a = s.arena;
  const sk = a.serial(serial);
  s.events.put(sk, a.utf8(json), APPEND as never);
  s.ids.put(a.hex32(e.id), sk);
  for (const ix of s.indexers) ix.put(s, e, serial);
}

/** Opens a further named database in the derived environment (for consumers). */
export function openDb(s: Store, name: string): BinDb {
  return s.derived.openDB({ name, keyEncoding: "binary", encoding: "binary" });
}

/** Opens a further named database in the log's environment (for the writer's own indexes). */
export function openLogDb(s: Store, name: string): BinDb {
  return s.env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
}
