// Serials and removal seqs. Several processes write one log (the relay and `relay import` or
// `relay delete` beside it), so neither is taken from a counter a process keeps: each write
// transaction reads the high-water marks from disk when it opens and writes them back when it
// took new ones, and LMDB's one write lock orders the transactions of every process.
//
//   meta   "high-water" → serial 8 | removal seq 8
//
// The marks are the highest ever assigned, not the highest still stored: deleting the newest
// event must not hand its serial out again, or a consumer whose watermark already passed it
// would skip the event that got it.
import { readWatermark } from "./consumer.ts";
import { readU64, serialKey } from "./keys.ts";
import { syncLog, syncLogSync } from "./log-sync.ts";
import { lastRemovalSeq } from "./removals.ts";
import type { Store } from "./types.ts";

export interface HighWater {
  /** highest event serial ever assigned */
  serial: number;
  /** highest removal seq ever assigned */
  removal: number;
}

const KEY = Buffer.from("high-water");

/** The marks on disk: one read (in the write transaction when called inside one). */
export function readHighWater(s: Store, txn?: unknown): HighWater {
  const o = (txn === undefined ? {} : { transaction: txn }) as never;
  const v = s.meta.get(KEY, o);
  if (v !== undefined && v.length >= 16) return { serial: readU64(v, 0), removal: readU64(v, 8) };
  return fromOlderStore(s, txn);
}

/**
 * A store written before the marks were kept: the highest serial and seq still on disk or
 * covered by a consumer's watermark (a trimmed removal log, a deleted newest event).
 */
function fromOlderStore(s: Store, txn?: unknown): HighWater {
  const o = (txn === undefined ? {} : { transaction: txn }) as object;
  let serial = 0;
  for (const k of s.events.getKeys({ ...o, reverse: true, limit: 1 })) serial = readU64(k as Buffer, 0);
  let removal = lastRemovalSeq(s.removals, txn);
  for (const { key } of s.state.getRange({})) {
    const name = (key as Buffer).toString("latin1");
    if (!name.startsWith("consumer:")) continue;
    const w = readWatermark(s, name.slice("consumer:".length));
    if (!w) continue;
    serial = Math.max(serial, w.serial);
    removal = Math.max(removal, w.removal);
  }
  return { serial, removal };
}

function highWaterValue(h: HighWater): Buffer {
  return Buffer.concat([serialKey(h.serial), serialKey(h.removal)]);
}

/** The body of a write transaction that takes serials or removal seqs (see writeTxn). */
function withMarks<T>(s: Store, body: (before: HighWater) => T): () => T {
  return () => {
    const before = readHighWater(s);
    s.lastSerial = before.serial;
    s.lastRemoval = before.removal;
    const out = body(before);
    if (s.lastSerial !== before.serial || s.lastRemoval !== before.removal)
      s.meta.put(KEY, highWaterValue({ serial: s.lastSerial, removal: s.lastRemoval }));
    return out;
  };
}

/**
 * Runs `body` in a write transaction of the log, with `s.lastSerial` and `s.lastRemoval` read
 * from disk first (the writer assigns `lastSerial + 1`, removeEvent `++lastRemoval`) and
 * written back at its end if they moved. `body` gets the marks as they were when it opened,
 * i.e. including every other process's commits. Resolves once the commit is durable.
 */
export async function writeTxn<T>(s: Store, body: (before: HighWater) => T): Promise<T> {
  const out = await commitTxn(s, body);
  await syncLog(s);
  return out;
}

/**
 * writeTxn resolving once the commit is visible to readers, before the sync that makes it
 * durable: for the writer, which hands a batch to readers and live subscribers at once and
 * answers its OKs after `syncLog`.
 */
export function commitTxn<T>(s: Store, body: (before: HighWater) => T): Promise<T> {
  return s.env.transaction(withMarks(s, body));
}

/** writeTxn, synchronously (for data commands that hold the directory alone: `relay check --repair`). */
export function writeTxnSync<T>(s: Store, body: (before: HighWater) => T): T {
  const out = s.env.transactionSync(withMarks(s, body));
  syncLogSync(s);
  return out;
}

/**
 * The marks on disk now. lmdb-js reads outside a transaction through a read transaction it
 * keeps until the end of the current turn of the event loop, so another process's commit may
 * be missing from it: start a fresh one.
 */
export function currentHighWater(s: Store): HighWater {
  s.env.resetReadTxn();
  return readHighWater(s);
}
