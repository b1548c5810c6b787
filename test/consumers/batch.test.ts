// The writer applies a batch in one transaction. These check the cases where an event of a batch
// is removed by a later one of the same batch (replaced, deleted, vanished): none of its entries
// stay, and the search consumer sees the same removals. And the one-time restore of entries an
// earlier version (which deferred index puts to a second commit) may have lost.
import { afterEach, expect, test } from "bun:test";
import { loadConfig } from "../../src/config/load.ts";
import type { Consumers } from "../../src/consumers/registry.ts";
import { openConsumers } from "../../src/consumers/registry.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import { hasEntry } from "../../src/store/index-db.ts";
import { hexBytes } from "../../src/store/keys.ts";
import { closeStore, EMPTY, indexEntries, openStore } from "../../src/store/store.ts";
import type { Store } from "../../src/store/types.ts";
import type { WriterOptions } from "../../src/store/writer.ts";
import { Writer } from "../../src/store/writer.ts";
import { tempDir } from "../harness.ts";

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await closeStore(s);
});

const config = loadConfig();
function open(
  dir = tempDir("deferred-"),
  log: (line: string) => void = () => {},
): { s: Store; d: Consumers; dir: string } {
  const s = openStore(dir);
  const d = openConsumers(s, config, { log });
  stores.push(s);
  return { s, d, dir };
}
const writer = (s: Store, d: Consumers, o: WriterOptions) =>
  new Writer(s, o, (stored, removed) => d.runner.committed(stored, removed));
/** Documents in the search index once the consumer has applied everything. */
async function searchDocs(d: Consumers): Promise<number> {
  await d.runner.settle();
  return d.search!.snapshot().docs;
}

const PK = "ab".repeat(32);
let n = 0;
function ev(t: Partial<NostrEvent>): NostrEvent {
  n++;
  return {
    id: n.toString(16).padStart(64, "0"),
    pubkey: PK,
    created_at: 1_700_000_000,
    kind: 1,
    tags: [],
    content: "",
    sig: "cd".repeat(64),
    ...t,
  };
}

/** Every index entry of `e` at `serial` is present (true) or absent (false). */
function entriesPresent(s: Store, e: NostrEvent, serial: number): boolean[] {
  return indexEntries(s, e, serial).map(([db, key]) => hasEntry(db, key));
}

test("an event replaced in its own batch leaves none of its entries behind", async () => {
  const { s, d } = open();
  const w = writer(s, d, { maxBatch: 2048 });
  const older = ev({ kind: 30023, tags: [["d", "x"]], content: "alpha", created_at: 1_700_000_000 });
  const newer = ev({ kind: 30023, tags: [["d", "x"]], content: "beta", created_at: 1_700_000_001 });
  const [a, b] = await Promise.all([w.submit(older, storedJson(older)), w.submit(newer, storedJson(newer))]);
  expect(a).toEqual({ status: "stored", serial: 1, replaced: false });
  expect(b).toEqual({ status: "stored", serial: 2, replaced: true });
  expect(s.ids.get(hexBytes(older.id))).toBeUndefined();
  expect(await searchDocs(d)).toBe(1); // every consumer has applied the batch
  expect(entriesPresent(s, older, 1)).toEqual([false, false, false, false, false]);
  expect(entriesPresent(s, newer, 2)).toEqual([true, true, true, true, true]);
});

test("a deletion in the same batch removes the entries of the event it names", async () => {
  const { s, d } = open();
  const w = writer(s, d, { maxBatch: 2048 });
  const note = ev({ content: "gamma" });
  const del = ev({ kind: 5, tags: [["e", note.id]] });
  await Promise.all([w.submit(note, storedJson(note)), w.submit(del, storedJson(del))]);
  expect(await searchDocs(d)).toBe(0);
  expect(entriesPresent(s, note, 1)).toEqual([false, false, false, false]);
});

test("a vanish request sees the events queued before it in its batch", async () => {
  const { s, d } = open();
  const w = writer(s, d, { maxBatch: 2048, isOwnUrl: () => true });
  const note = ev({ content: "delta", created_at: 1_700_000_000 });
  const vanish = ev({ kind: 62, tags: [["relay", "ALL_RELAYS"]], created_at: 1_700_000_005 });
  const [stored] = await Promise.all([
    w.submit(note, storedJson(note)),
    w.submit(vanish, storedJson(vanish)),
  ]);
  expect(stored).toMatchObject({ status: "stored", serial: 1 });
  expect(s.events.get(Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]))).toBeUndefined();
  expect(await searchDocs(d)).toBe(0);
  expect(entriesPresent(s, note, 1)).toEqual([false, false, false, false]);
});

test("databases an earlier layout kept in the log's environment are dropped and built again in derived/", async () => {
  const first = open();
  const e1 = ev({ content: "kept words", tags: [["t", "nostr"]] });
  const w = writer(first.s, first.d, { maxBatch: 16 });
  await w.submit(e1, storedJson(e1));
  await first.d.runner.stop();
  // What the earlier layout left: an index and search postings next to the events.
  first.s.env
    .openDB({ name: "pubkey", keyEncoding: "binary", encoding: "binary" })
    .putSync(Buffer.from("x"), EMPTY);
  first.s.env
    .openDB({ name: "search", keyEncoding: "binary", encoding: "binary" })
    .putSync(Buffer.from("x"), EMPTY);
  await closeStore(first.s);
  stores.splice(stores.indexOf(first.s), 1);

  const { s, d } = open(first.dir);
  const names = Array.from(s.env.getKeys({}), String);
  expect(names).not.toContain("pubkey");
  expect(names).not.toContain("search");
  expect(entriesPresent(s, e1, 1).every(Boolean)).toBe(true);
  expect(await searchDocs(d)).toBe(1);
});
