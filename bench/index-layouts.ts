// What the REQ index consumer's puts cost in LMDB under three layouts, on the index keys of a
// real stored log: the keys as the consumer writes them (one B-tree key per entry, in event
// order), the same keys sorted per batch before the puts, and a dupsort/dupfixed layout (the
// prefix as the key, created_at|serial as a fixed-size duplicate value). CPU per event of the
// puts and commits into a fresh environment, batches of N events (the consumer's batch).
//
//   bun bench/index-layouts.ts --data DIR [--batch 2500] [--runs 2]
//
// DIR is a relay's data directory (one a load run left, or `relay import` made).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import type { NostrEvent } from "../src/nostr/event.ts";
import { readU64 } from "../src/store/keys.ts";
import { closeStore, indexEntries, openStore } from "../src/store/store.ts";
import type { BinDb } from "../src/store/types.ts";

const arg = (name: string, dflt?: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const data = arg("data");
if (!data) {
  console.error("usage: bun bench/index-layouts.ts --data DIR [--batch N] [--runs N]");
  process.exit(2);
}
const batch = Number(arg("batch", "2500"));
const runs = Number(arg("runs", "2"));

// The index keys of every stored event, grouped in batches; database 3 is `time` (16-byte keys).
const s = openStore(data);
const order = new Map<BinDb, number>([s.pubkey, s.kind, s.pubkind, s.time, s.tag].map((d, i) => [d, i]));
const batches: [number, Buffer][][] = [];
let events = 0;
let current: [number, Buffer][] = [];
let inBatch = 0;
for (const { key, value } of s.events.getRange({})) {
  const e = JSON.parse((value as Buffer).toString("utf8")) as NostrEvent;
  for (const [db, k] of indexEntries(s, e, readU64(key as Buffer, 0))) current.push([order.get(db)!, k]);
  events++;
  if (++inBatch === batch) {
    batches.push(current);
    current = [];
    inBatch = 0;
  }
}
if (current.length > 0) batches.push(current);
await closeStore(s);
const puts = batches.reduce((n, b) => n + b.length, 0);
console.log(
  `${events} events, ${puts} index keys (${(puts / events).toFixed(1)} an event), batches of ${batch}`,
);

type Layout = "as written" | "sorted" | "dupsort";
const byKey = (a: [number, Buffer], b: [number, Buffer]) => a[0] - b[0] || Buffer.compare(a[1], b[1]);

function run(layout: Layout): void {
  const dir = mkdtempSync(join(tmpdir(), "index-layouts-"));
  const env = open({ path: dir, maxDbs: 8, compression: false, noSubdir: false, mapSize: 2 ** 36 });
  const dup = layout === "dupsort";
  const dbs = ["pubkey", "kind", "pubkind", "time", "tag"].map((name) =>
    env.openDB({ name, keyEncoding: "binary", encoding: "binary", dupSort: dup, dupFixed: dup } as never),
  ) as unknown as BinDb[];
  const EMPTY = Buffer.alloc(0);
  let sortUs = 0;
  const c0 = process.cpuUsage();
  for (const b of batches) {
    let items = b;
    if (layout === "sorted") {
      const t = process.cpuUsage();
      items = b.slice().sort(byKey);
      const d = process.cpuUsage(t);
      sortUs += d.user + d.system;
    }
    env.transactionSync(() => {
      for (const [d, k] of items) {
        if (!dup) dbs[d]!.put(k, EMPTY);
        else {
          const cut = k.length - (d === 3 ? 8 : 16);
          dbs[d]!.put(k.subarray(0, cut), k.subarray(cut));
        }
      }
    });
  }
  const c = process.cpuUsage(c0);
  const mb = statSync(join(dir, "data.mdb")).size / 1e6;
  void env.close();
  rmSync(dir, { recursive: true, force: true });
  const us = (c.user + c.system) / events;
  console.log(
    `${layout.padEnd(11)} ${us.toFixed(1)} µs CPU an event (of it sorting ${(sortUs / events).toFixed(1)}), file ${mb.toFixed(1)} MB`,
  );
}

for (let r = 0; r < runs; r++) for (const layout of ["as written", "sorted", "dupsort"] as const) run(layout);
