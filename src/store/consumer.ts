// A consumer of the event log: something derived from the committed events and kept in the
// derived environment (the REQ indexes, NIP-50 search, the NIP-45 registers, the API's
// engagement counters), rebuildable from the log. The runner (consumers/runner.ts) hands it
// committed events and removals in log order, in large batches (Batch), and writes its
// watermark in the same transaction as its entries; after a crash it resumes from the watermark. Readers take a
// Snapshot (readSnapshot): the entries up to the watermark plus the in-memory views of what is
// committed but not yet applied, so nothing committed is ever missing.
import type { NostrEvent } from "../nostr/event.ts";
import { readU64, serialKey } from "./keys.ts";
import type { Store } from "./types.ts";

/** What a consumer derived from one event, tagged with the event's serial. */
export interface Prepared<P> {
  serial: number;
  p: P;
}

/**
 * What a consumer writes for one batch of the log. The applier reads the batch's events one at
 * a time and adds each to every consumer's batch as it is read, so no batch holds its events
 * (parsed, a contact list naming 150 pubkeys is ~20 KiB): each keeps only what it writes, summed
 * per key where it can. Everything runs inside the batch's write transaction of the derived
 * environment, which also writes the watermarks.
 */
export interface Batch {
  /**
   * An event committed (sign 1), or one applied by an earlier batch and removed since (sign
   * -1). A batch may write at once (entries of their own) or sum until `write`.
   */
  add(e: NostrEvent, serial: number, sign: 1 | -1): void;
  /** Writes what the events added up to. */
  write(): void;
}

export interface Consumer<P = unknown, V = unknown, Q = P> {
  readonly name: string;
  /** bumped when what it derives changes: entries written by another version are rebuilt */
  readonly version: number;
  /** What the event contributes to a view, computed without a transaction; null: nothing. */
  prepare(e: NostrEvent): P | null;
  /**
   * What a view holds of the event, when that is less than what `prepare` gives (the REQ
   * indexes' views keep a few fields, not the parsed event); default: `prepare`. `json` is the
   * event's stored JSON.
   */
  prepareView?(e: NostrEvent, json: string): Q | null;
  /**
   * Its view of a batch is built as each commit reaches the runner, from the events the writer
   * parsed, instead of when a reader first asks (which reads and parses the stored JSON): for
   * the views nearly every read needs.
   */
  readonly eagerView?: boolean;
  /** A batch to apply, inside a write transaction of the derived environment (see Batch). */
  batch(s: Store): Batch;
  /**
   * Its batch's `write` only puts and removes keys, never reading what it writes: it runs after
   * the transaction, as lmdb-js asynchronous writes issued in one turn with the watermark, which
   * lmdb-js's write thread performs in one transaction of their own beside this thread.
   */
  readonly writesOnly?: boolean;
  /** Removes every entry it wrote (before a rebuild); inside a write transaction. */
  clear(s: Store): void;
  /**
   * With no watermark yet: whether entries already on disk cover every stored event (written
   * by an earlier version that kept them otherwise), so they are adopted instead of rebuilt.
   */
  adopt?(s: Store): boolean;
  /** An empty view of a batch not yet applied. */
  newView(): V;
  /**
   * Counts `d` into (sign 1) or out of (sign -1) a view, as an add or as a removal; `d.p` is what
   * `prepareView` (else `prepare`) gave.
   */
  view(v: V, d: Prepared<Q>, sign: 1 | -1, removal: boolean): void;
}

/** How far a consumer's entries on disk go. */
export interface Watermark {
  version: number;
  /** the runner's batch number (views of later batches are not on disk yet) */
  gen: number;
  /** every event up to this serial is applied */
  serial: number;
  /** every removal record up to this seq is applied */
  removal: number;
}

/** Views of what is committed but not in a reader's snapshot of the entries. */
export interface Tail<V> {
  views(w: Watermark | undefined): V[];
}

export const noTail: Tail<never> = { views: () => [] };

/**
 * What one reader of a consumer sees: the watermark of the entries on disk and the views of the
 * batches committed after it. Entries read in the same read transaction as the watermark plus
 * these views are exactly what is committed, once each.
 */
export interface Snapshot<V> {
  w: Watermark | undefined;
  /** every event up to this serial has its entries on disk */
  through: number;
  views: V[];
}

/**
 * A consumer's snapshot, read once before its entries (every consumer's readers take it here).
 * `txn`: a read transaction of the derived environment to read the watermark in, for a reader
 * that reads the entries in it too; else the thread's current one.
 */
export function readSnapshot<V>(s: Store, c: { name: string; tail: Tail<V> }, txn?: unknown): Snapshot<V> {
  const w = readWatermark(s, c.name, txn);
  return { w, through: w?.serial ?? 0, views: c.tail.views(w) };
}

const key = (name: string): Buffer => Buffer.from(`consumer:${name}`);

/** `txn`: a read transaction of the derived environment, to read with other entries at once. */
export function readWatermark(s: Store, name: string, txn?: unknown): Watermark | undefined {
  const v = s.state.get(key(name), txn === undefined ? undefined : ({ transaction: txn } as never));
  if (!v || v.length < 28) return undefined;
  return { version: v.readUInt32BE(0), gen: readU64(v, 4), serial: readU64(v, 12), removal: readU64(v, 20) };
}

/**
 * Inside the consumer's write transaction; or, for a writes-only consumer, as an asynchronous
 * write in the same turn as its entries (then the returned promise resolves at the commit).
 */
export function writeWatermark(s: Store, name: string, w: Watermark): unknown {
  const v = Buffer.allocUnsafe(28);
  v.writeUInt32BE(w.version, 0);
  serialKey(w.gen).copy(v, 4);
  serialKey(w.serial).copy(v, 12);
  serialKey(w.removal).copy(v, 20);
  return s.state.put(key(name), v);
}

/** Forgets a consumer's entries' version, so the next start that enables it rebuilds them. */
export function markStale(s: Store, name: string): void {
  const w = readWatermark(s, name);
  if (w && w.version !== 0) s.state.putSync(key(name), Buffer.alloc(28));
}
