// The REQ indexes' consumer (indexes.ts) writes its entries as lmdb-js asynchronous writes, and
// lmdb-js copies a key when the write is issued but reads the value (the `created_at | serial`
// tail) from the caller's buffer only when its write thread gets to it. In a relay whose
// consumers run on the main thread (consumers.thread = false, and the data commands), the
// writer's next batch reuses the store's arena meanwhile: entries built there were written with
// the next batch's bytes (garbage serials in the indexes, events missing from REQ and export,
// removals that removed nothing). Seen as cluster nodes whose exports differed.
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

test("entries written asynchronously keep their serials when the store's arena is reused before the commit", async () => {
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
  ix.apply(s, adds, []);
  // What the writer's next transaction does on the same thread before these writes commit.
  s.arena.reset();
  s.arena.take(1 << 16).fill(0xab);
  await s.derived.put(Buffer.from("flush"), Buffer.from([1]));
  expect(timeSerials()).toEqual(adds.map((a) => a.serial));

  // Removals too: each removes the entry it names, and nothing else.
  const gone = adds.filter((a) => a.serial % 3 === 0);
  ix.apply(s, [], gone);
  s.arena.reset();
  s.arena.take(1 << 16).fill(0xcd);
  await s.derived.put(Buffer.from("flush"), Buffer.from([2]));
  expect(timeSerials()).toEqual(adds.filter((a) => a.serial % 3 !== 0).map((a) => a.serial));
});
