// The shape of an open store: its two LMDB environments, their named databases and the
// writer's state. Declared apart from store.ts (which opens it) so that the modules store.ts
// itself needs (serials.ts, index-db.ts, consumer.ts) can name it without an import loop.
import type { Database, RootDatabase } from "lmdb";
import type { OpenGate } from "../lmdb/open-gate.ts";
import type { DerivedRoom } from "../lmdb/room.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Arena } from "./keys.ts";
import type { Removal } from "./removals.ts";

export type BinDb = Database<Buffer, Buffer>;

/**
 * The log's environment (data.mdb): the events and what deciding an event needs, written only
 * by the writer (store/writer.ts) under LMDB's one write lock.
 */
export interface LogEnv {
  /** the data directory */
  path: string;
  env: RootDatabase;
  /**
   * A descriptor of the log's data file, to sync it: the log's commits leave their meta page
   * to the next sync (log-sync.ts), and every acknowledgement waits for one.
   */
  logFd: number;
  /** the directory's lock between openings and commits, as this thread holds it (open-gate.ts) */
  gate: OpenGate;
  /** the highest serial whose commit a completed `syncLog` covers */
  syncedSerial: number;
  events: BinDb;
  /** the same `events` database read as text: one UTF-8 decode, no intermediate Buffer */
  eventsText: Database<string, Buffer>;
  ids: BinDb;
  replaceable: BinDb;
  /** NIP-09 tombstones: `id 32 | deleter pubkey 32` → (empty) */
  deleted: BinDb;
  /** NIP-09 address tombstones: replaceable key → created_at 8 of the latest `a` deletion */
  deletedAddr: BinDb;
  /** NIP-62: `pubkey 32` → created_at 8 up to which everything was removed */
  vanished: BinDb;
  /** the high-water marks of serials and removal seqs (serials.ts) */
  meta: BinDb;
  /** the removal log (removals.ts) */
  removals: BinDb;
}

/**
 * The derived environment (derived/data.mdb): what the consumers of the log build from it, all
 * rebuildable from the log, written only by the consumers' runner. Its REQ index databases are
 * opened here because the writer walks two of them (NIP-62 and NIP-86 removals of a whole
 * author, lifecycle.ts); the consumer that fills them is indexes/indexes.ts.
 */
export interface DerivedEnv {
  derived: RootDatabase;
  pubkey: BinDb;
  kind: BinDb;
  pubkind: BinDb;
  tag: BinDb;
  time: BinDb;
  /** the consumers' watermarks (consumer.ts) */
  state: BinDb;
  /**
   * the room its filesystem must have for each write transaction, when it is written through a
   * writable memory map (room.ts); use `derivedWrite` (store.ts) for its transactions
   */
  room: DerivedRoom | undefined;
  /**
   * its commits are not synced (the relay's writable map, lmdb/unsynced.ts): a clean stop of
   * the process that applies the consumers syncs it (`syncDerived`)
   */
  derivedUnsynced: boolean;
  /**
   * it was removed at this opening, to be rebuilt from the log: it had been written without
   * syncing in a boot before this one (the machine went down), and may have lost pages
   */
  derivedTorn: boolean;
}

/** What the writer of this process keeps between and inside its transactions. */
export interface WriterState {
  /**
   * highest serial ever assigned: read from disk at open and at the start of every write
   * transaction (serials.ts writeTxn), advanced by the writer inside it
   */
  lastSerial: number;
  /** indexes that deciding an event needs (NIP-40 expiry), kept in the writer's transaction */
  indexers: Indexer[];
  /** highest removal seq ever assigned (read and advanced like lastSerial) */
  lastRemoval: number;
  /** removal records are written only while a consumer of the event log reads them */
  logRemovals: boolean;
  /** what the transaction being applied removed, handed to the consumers after its commit */
  removedInTxn: Removal[];
  /** scratch bytes for the keys and values of the write transaction being applied */
  arena: Arena;
}

/** An open data directory: both environments and this process's writer state. */
export interface Store extends LogEnv, DerivedEnv, WriterState {}

/**
 * An index the writer keeps in its own transaction, because deciding an event needs it.
 * Everything else derived from events (REQ indexes, search, NIP-45 counts, API counters) is a
 * consumer of the event log.
 */
export interface Indexer {
  readonly name: string;
  put(s: Store, e: NostrEvent, serial: number): void;
  remove(s: Store, e: NostrEvent, serial: number): void;
  /** Another process stored (`added`) or removed the event: update what is kept in memory. */
  seen(e: NostrEvent, serial: number, added: boolean): void;
}
