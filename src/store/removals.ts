// The removal log. Every event the writer takes out of the store (replaced, deleted, expired,
// vanished, or by `relay delete`) leaves a record in the same transaction (store.ts
// removeEvent), so the consumers of the event log can take back what they derived from it:
//
//   removals   seq 8 → serial 8 | stored event JSON (UTF-8)
//
// seq counts removals from 1. Records are written only while some consumer reads them
// (`Store.logRemovals`) and are trimmed once every consumer has passed them.
import type { Database } from "lmdb";
import type { NostrEvent } from "../nostr/event.ts";
import { readU64, serialKey } from "./keys.ts";

type Log = Database<Buffer, Buffer>;

export interface Removal {
  seq: number;
  serial: number;
  event: NostrEvent;
  json: string;
}

export function removalValue(serial: number, json: string): Buffer {
  const body = Buffer.from(json, "utf8");
  const v = Buffer.allocUnsafe(8 + body.length);
  serialKey(serial).copy(v, 0);
  body.copy(v, 8);
  return v;
}

/** The highest removal seq on disk (0 when none). */
export function lastRemovalSeq(log: Log, txn?: unknown): number {
  const range = { reverse: true, limit: 1, ...(txn === undefined ? {} : { transaction: txn }) };
  for (const k of log.getKeys(range as never)) return readU64(k as Buffer, 0);
  return 0;
}

/** Removal records with seq above `after`, in order, parsed; `txn`: a read transaction to use. */
export function* removalsAfter(log: Log, after: number, txn?: unknown): Generator<Removal> {
  const range = { start: serialKey(after + 1), ...(txn === undefined ? {} : { transaction: txn }) };
  for (const { key, value } of log.getRange(range as never)) {
    const v = value as Buffer;
    const json = v.toString("utf8", 8);
    yield {
      seq: readU64(key as Buffer, 0),
      serial: readU64(v, 0),
      event: JSON.parse(json) as NostrEvent,
      json,
    };
  }
}

/** Drops the records every consumer has passed; runs inside a write transaction. */
export function trimRemovals(log: Log, through: number): void {
  const done = Array.from(log.getKeys({ end: serialKey(through + 1) }), (k) => Buffer.from(k as Buffer));
  for (const k of done) log.remove(k);
}
