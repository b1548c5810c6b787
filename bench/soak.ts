// A long mixed run against one relay: half the load tool's dataset first, then, for the given
// minutes, rounds of new events, REQs, COUNTs and searches. The relay's VmRSS, RssAnon and
// RssFile are read after every minute, so memory that grows with time (a leak, a cache without
// a bound) shows as a slope and not as one number. Usage:
//   bun bench/soak.ts --url ws://127.0.0.1:7777 --pid PID [--minutes 10]
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { buildCounts, runCounts } from "./load/count.ts";
import { datasetCatalog, loadDataset, readEvents } from "./load/dataset.ts";
import { runIngest } from "./load/ingest.ts";
import { buildQueries, runQueries } from "./load/query.ts";
import { MemSampler } from "./load/rss.ts";
import { buildSearches, runSearches } from "./load/search.ts";

const { values: v } = parseArgs({
  options: { url: { type: "string" }, pid: { type: "string" }, minutes: { type: "string" } },
});
if (!v.url || !v.pid) {
  console.error("usage: bun bench/soak.ts --url ws://HOST:PORT --pid PID [--minutes M]");
  process.exit(64);
}
const url = v.url;
const minutes = Number(v.minutes ?? 10);
const root = join(dirname(import.meta.path), "..");
const d = await loadDataset(root, { events: 50_000, authors: 1_000, seed: 1 }, console.log);
const catalog = await datasetCatalog(d);
const list = await readEvents(d);
const mem = new MemSampler(Number(v.pid));
const pool = { connections: 4, inflight: 1, timeoutMs: 120_000 };

const half = list.length / 2;
await runIngest(url, list.slice(0, half), { connections: 8, window: 100, timeoutMs: 600_000 });
mem.mark("0 min");
console.log(`ingested ${half} events; mixed rounds for ${minutes} min`);

// What is left of the dataset, spread over the rounds so new events keep coming to the end.
const perRound = 100;
let next = half;
let round = 0;
let minute = 0;
const start = performance.now();
const rows: string[] = [];
for (;;) {
  const elapsed = (performance.now() - start) / 60_000;
  if (elapsed >= minutes) break;
  const seed = ++round;
  const fresh = list.slice(next, next + perRound);
  next += fresh.length;
  if (fresh.length > 0) await runIngest(url, fresh, { connections: 2, window: 50, timeoutMs: 120_000 });
  await runQueries(url, buildQueries(catalog, 200, seed), pool);
  await runCounts(url, buildCounts(catalog, 200, seed), pool);
  await runSearches(url, buildSearches(catalog, 50, seed), pool);
  if (Math.floor((performance.now() - start) / 60_000) > minute) {
    minute = Math.floor((performance.now() - start) / 60_000);
    mem.mark(`${minute} min`);
    const m = mem.marks[`${minute} min`]!;
    rows.push(`| ${minute} | ${round} | ${next} | ${m.rssMB} | ${m.anonMB} | ${m.fileMB} |`);
    console.log(rows.at(-1));
  }
}
console.log("| minute | rounds | events sent | VmRSS MiB | RssAnon MiB | RssFile MiB |");
console.log("|---:|---:|---:|---:|---:|---:|");
const m0 = mem.marks["0 min"]!;
console.log(`| 0 | 0 | ${half} | ${m0.rssMB} | ${m0.anonMB} | ${m0.fileMB} |`);
for (const r of rows) console.log(r);
process.exit(0);
