// The consumers' thread reads a generation's events from the log inside the derived
// transaction that applies them. A read transaction of the log pins its snapshot, and while it
// does LMDB gives the log's writer no page freed after it: held for the whole apply (seconds
// for a large generation), the log's file grew by what the writer freed meanwhile. So the
// reading takes a fresh snapshot every so often and drops it once done, before the batches
// write; every event must still be read.
import { expect, test } from "bun:test";
import { applyGeneration } from "../../src/consumers/apply.ts";
import type { GenPayload } from "../../src/consumers/messages.ts";
import { storedJson } from "../../src/nostr/canonical.ts";
import type { NostrEvent } from "../../src/nostr/event.ts";
import type { Consumer } from "../../src/store/consumer.ts";
import { closeStore, openStore } from "../../src/store/store.ts";
import { Writer } from "../../src/store/writer.ts";
import { cleanup, newKey, now, signed, tempDir } from "../harness.ts";

/** This process's reader slots in the log's lock file that pin a snapshot (txnid not "-"). */
function pinned(list: string): string[] {
  return list
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 3 && Number(f[0]) === process.pid && f[2] !== "-")
    .map((f) => f[2]!);
}

test("a generation's reading renews the log's snapshot and drops it before the writes", async () => {
  const dir = tempDir("consumers-log-snapshot-");
  const s = openStore(dir);
  cleanup(() => closeStore(s));
  const writer = new Writer(s, 500, () => {});
  // The writer stores what it is given (ingest verifies before it): unsigned copies of one
  // signed note, each with an id of its own, spare signing 2,500 events.
  const base = signed(newKey(), { created_at: now(), content: "n" });
  const events: NostrEvent[] = Array.from({ length: 2500 }, (_, i) => ({
    ...base,
    id: (i + 1).toString(16).padStart(64, "0"),
    created_at: base.created_at - i,
  }));
  const outcomes = await writer.submitMany(events.map((e) => ({ event: e, json: storedJson(e) })));
  const serials = outcomes.map((o) => (o.status === "stored" ? o.serial : 0));
  expect(serials.every((x) => x > 0)).toBe(true);

  const seen: string[] = [];
  const pinnedWhileAdding: string[][] = [];
  let pinnedAtWrite: string[] | undefined;
  const probe: Consumer = {
    name: "probe",
    version: 1,
    prepare: () => null,
    clear: () => {},
    newView: () => null,
    view: () => {},
    batch: () => ({
      add(e: NostrEvent, _serial: number, sign: 1 | -1) {
        if (sign === 1) seen.push(e.id);
        if (seen.length % 500 === 1) pinnedWhileAdding.push(pinned(s.env.readerList()));
      },
      write() {
        pinnedAtWrite = pinned(s.env.readerList());
      },
    }),
  };
  const g: GenPayload = {
    n: 1,
    maxSerial: Math.max(...serials),
    maxSeq: s.lastRemoval,
    adds: Float64Array.from(serials),
    removes: new Float64Array(0),
    bytes: 0,
  };
  await applyGeneration(s, [probe], g);

  expect(new Set(seen)).toEqual(new Set(events.map((e) => e.id)));
  expect(seen.length).toBe(events.length);
  // While reading, the thread holds a snapshot of the log (it reads through it)...
  expect(pinnedWhileAdding.every((p) => p.length >= 1)).toBe(true);
  // ...and none once the reading is done.
  expect(pinnedAtWrite).toEqual([]);
}, 30_000);
