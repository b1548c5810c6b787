// The REQ indexes' consumer (indexes.ts) builds each event's entries in one arena, reused for
// the next event once they are written. That holds only while every entry is written, key and
// value copied, when it is issued: an lmdb-js asynchronous write copies the key at once but
// reads the value (the `created_at | serial` tail) from the caller's buffer only when its write
// thread gets to it, and entries built in a reused buffer were once written with later bytes
// (garbage serials in the indexes, events missing from REQ and export, removals that removed
// nothing; seen as cluster nodes whose exports differed).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import type { NostrEvent } from "../nostr/event.ts";
import { INDEX_DB } from "../store/index-db.ts";
import { readU64, TIME_PREFIX } from "../store/keys.ts";
import { closeStore, openStore } from "../store/store.ts";
import { Indexes } from "./indexes.ts";

const dir = mkdtempSync(join(tmpdir(), "indexes-"));
const s = openStore(dir);
afterAll(async () => {
  await closeStore(s);
  rmSync(dir, { recursive: true, force: true });
});

/** The serials the time index lists, in its order. */
function timeSerials(): number[] {
  const out: number[] = [];
  for (const v of s.time.getValues(TIME_PREFIX) as Iterable<Uint8Array>) out.push(readU64(v, 8));
  return out;
}

test("a batch's entries keep their serials though its arena is reused for every event", () => {
  expect(INDEX_DB.dupSort).toBe(true);
  const sk = generateSecretKey();
  const events = Array.from(
    { length: 50 },
    (_, i) =>
      finalizeEvent(
        { kind: 1, created_at: 1_700_000_000 + i, tags: [["t", "x"]], content: `n ${i}` },
        sk,
      ) as NostrEvent,
  );
  const ix = new Indexes(s);
  const adds = events.map((p, i) => ({ serial: i + 1, p }));
  s.derived.transactionSync(() => {
    const b = ix.batch(s);
    for (const a of adds) b.add(a.p, a.serial, 1);
    b.write();
  });
  expect(timeSerials()).toEqual(adds.map((a) => a.serial));

  // Removals too: each removes the entry it names, and nothing else.
  const gone = adds.filter((a) => a.serial % 3 === 0);
  s.derived.transactionSync(() => {
    const b = ix.batch(s);
    for (const a of gone) b.add(a.p, a.serial, -1);
    b.write();
  });
  expect(timeSerials()).toEqual(adds.filter((a) => a.serial % 3 !== 0).map((a) => a.serial));
});
