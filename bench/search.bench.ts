// NIP-50 search and its cost, on generated notes (Zipf-distributed words, some URLs, a few
// articles and profiles). Run: bun bench/search.bench.ts [events=50000] [queries=2000]
//  1. ingest: the real Writer committing batches of 10,000 events, then the search consumer
//     applying them (one transaction per batch), search off vs on
//  2. index size: bytes per event of the search databases, and of the whole file, off vs on
//  3. search latency: two-word queries with limit 20 through runQuery (the REQ path, bodies
//     loaded): words taken from one stored note (so there is a hit) and random vocabulary pairs
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.ts";
import type { Consumers } from "../src/consumers/registry.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { runQuery } from "../src/indexes/query.ts";
import { storedJson } from "../src/nostr/canonical.ts";
import type { NostrEvent } from "../src/nostr/event.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import type { BinDb, Store } from "../src/store/types.ts";
import { Writer } from "../src/store/writer.ts";
import { mulberry32 } from "../test/gen.ts";

const EVENTS = Number(process.argv[2] ?? 50_000);
const QUERIES = Number(process.argv[3] ?? 2000);
const BATCH = 10_000;
const VOCAB = 20_000;

const rnd = mulberry32(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

const SYL = [
  "ka",
  "lo",
  "mi",
  "nu",
  "re",
  "sa",
  "to",
  "vi",
  "ze",
  "qu",
  "bra",
  "str",
  "en",
  "or",
  "el",
  "an",
];
const vocab = Array.from({ length: VOCAB }, (_, i) => {
  let w = "";
  for (let n = 2 + (i % 3); n > 0; n--) w += pick(SYL);
  return `${w}${i % 7 === 0 ? i : ""}`;
});
// Zipf(1.0) over the vocabulary by inverse CDF on a precomputed table
const cdf: number[] = [];
let acc = 0;
for (let r = 1; r <= VOCAB; r++) {
  acc += 1 / r;
  cdf.push(acc);
}
const zipf = (): string => {
  const x = rnd() * acc;
  let lo = 0;
  let hi = VOCAB - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return vocab[lo]!;
};

const pubkeys = Array.from({ length: 2000 }, (_, i) => i.toString(16).padStart(64, "0"));
function generate(n: number): NostrEvent[] {
  const base = 1_700_000_000;
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 8 + Math.floor(rnd() * 40) }, zipf);
    if (rnd() < 0.1) words.push(`https://${pick(vocab)}.com/${pick(vocab)}/${i}`);
    const r = rnd();
    const kind = r < 0.9 ? 1 : r < 0.95 ? 30023 : 0;
    const pubkey = pick(pubkeys);
    const content =
      kind === 0
        ? JSON.stringify({ name: `${zipf()} ${zipf()}`, about: words.slice(0, 12).join(" ") })
        : words.join(" ");
    const tags =
      kind === 30023
        ? [
            ["d", `a${i}`],
            ["title", words.slice(0, 4).join(" ")],
          ]
        : [];
    const id = new Bun.CryptoHasher("sha256").update(`${i}`).digest("hex");
    return { id, pubkey, created_at: base + i, kind, tags, content, sig: "0".repeat(128) };
  });
}

function dbBytes(db: BinDb): number {
  const st = db.getStats() as {
    pageSize: number;
    treeBranchPageCount: number;
    treeLeafPageCount: number;
    overflowPages: number;
  };
  return (st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages) * st.pageSize;
}

async function ingest(
  events: NostrEvent[],
  search: boolean,
): Promise<{ store: Store; dir: string; consumers: Consumers; commitMs: number[]; totalMs: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "search-bench-"));
  const store = openStore(dir);
  const config = loadConfig({ flags: { "search.enabled": String(search), "api.enabled": "false" } });
  const consumers = openConsumers(store, config, { log: () => {} });
  const writer = new Writer(store, BATCH, (st, rm) => consumers.runner.committed(st, rm));
  const commitMs: number[] = [];
  const totalMs: number[] = [];
  for (let i = 0; i < events.length; i += BATCH) {
    const batch = events.slice(i, i + BATCH);
    const t0 = performance.now();
    await Promise.all(batch.map((e) => writer.submit(e, storedJson(e))));
    await writer.drain();
    await consumers.runner.settle();
    totalMs.push(performance.now() - t0);
    commitMs.push(writer.lastCommitMs + (consumers.runner.lag()[0]?.lastApplyMs ?? 0));
  }
  return { store, dir, consumers, commitMs, totalMs };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number): string => `${x.toFixed(2)} ms`;
const median = (xs: number[]) => pct(xs, 50);

const events = generate(EVENTS);
console.log(`${EVENTS.toLocaleString("en-US")} generated events, ${VOCAB} words, batches of ${BATCH}\n`);

const off = await ingest(events, false);
const on = await ingest(events, true);
console.log(
  "ingest (Writer and search consumer, a transaction each per 10,000 events), median over batches:",
);
console.log(`  search off: commit ${ms(median(off.commitMs))}, submit→applied ${ms(median(off.totalMs))}`);
console.log(`  search on:  commit ${ms(median(on.commitMs))}, submit→applied ${ms(median(on.totalMs))}`);
console.log(
  `  per event:  +${((median(on.commitMs) - median(off.commitMs)) / BATCH).toFixed(3)} ms commit with search\n`,
);

const ix = on.consumers.search!;
const searchBytes = dbBytes(ix.blocks) + dbBytes(ix.meta);
const blocks = (ix.blocks.getStats() as { entryCount: number }).entryCount;
const fileOff = statSync(join(off.dir, "data.mdb")).size;
const fileOn = statSync(join(on.dir, "data.mdb")).size;
console.log("index size:");
console.log(`  search databases: ${(searchBytes / EVENTS).toFixed(0)} bytes/event (${blocks} blocks)`);
console.log(`  data.mdb: ${(fileOff / EVENTS).toFixed(0)} → ${(fileOn / EVENTS).toFixed(0)} bytes/event\n`);

const stored = events.filter((e) => e.kind === 1);
const opts = {
  hwm: on.store.lastSerial,
  defaultLimit: 500,
  maxLimit: 5000,
  yieldEvery: 512,
  search: on.consumers.searcher,
};
async function latency(label: string, query: () => string, print = true): Promise<void> {
  const times: number[] = [];
  let results = 0;
  for (let i = 0; i < QUERIES; i++) {
    const q = query();
    const t0 = performance.now();
    const r = await runQuery(on.store, [{ search: q, limit: 20 }], opts);
    times.push(performance.now() - t0);
    results += r?.length ?? 0;
  }
  if (print)
    console.log(
      `  ${label.padEnd(34)} p50 ${ms(pct(times, 50))}  p99 ${ms(pct(times, 99))}  max ${ms(Math.max(...times))}  (avg ${(results / QUERIES).toFixed(1)} results)`,
    );
}
const fromNote = () => {
  const words = pick(stored).content.split(" ");
  return `${pick(words)} ${pick(words)}`;
};
await latency("warm-up", fromNote, false);
console.log(`search latency, ${QUERIES} two-word queries, limit 20:`);
await latency("two words from one note", fromNote);
await latency("two random vocabulary words", () => `${pick(vocab)} ${pick(vocab)}`);
await latency("two Zipf words (common pairs)", () => `${zipf()} ${zipf()}`);

for (const r of [off, on]) {
  await r.consumers.runner.stop();
  await closeStore(r.store);
  rmSync(r.dir, { recursive: true, force: true });
}
