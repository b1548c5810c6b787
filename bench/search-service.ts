// The load tool's search queries run in this process, one at a time, on a data directory the
// load tool filled (its 50k dataset, seed 1): what one search costs without the queueing of the
// end-to-end run. Run on a copy: bun bench/search-service.ts DATA_DIR [dataset meta .json]
import { loadConfig } from "../src/config/load.ts";
import { openConsumers } from "../src/consumers/registry.ts";
import { runQuery } from "../src/indexes/query.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { openStore } from "../src/store/store.ts";
import { datasetCatalog, openDataset } from "./load/dataset.ts";
import { buildSearches } from "./load/search.ts";

const data = process.argv[2];
if (!data) throw new Error("usage: bun bench/search-service.ts DATA_DIR [dataset meta .json]");
const d = await openDataset(process.argv[3] ?? ".bench-cache/dataset-v2-e50000-a1000-s1.json");
const filters = buildSearches(await datasetCatalog(d), 2000, 1);
const s = openStore(data);
const der = openConsumers(s, loadConfig({ flags: { data } }), { log: () => {} });
const o = { hwm: s.lastSerial, defaultLimit: 500, maxLimit: 5000, yieldEvery: 1000, search: der.searcher };
for (let round = 0; round < 3; round++) {
  const times: number[] = [];
  let results = 0;
  const t0 = performance.now();
  for (const f of filters) {
    const t = performance.now();
    const r = await runQuery(s, [f as Filter], o);
    times.push(performance.now() - t);
    results += r!.length;
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.floor(p * (times.length - 1))]!.toFixed(3);
  console.log(
    `round ${round}: total ${(performance.now() - t0).toFixed(0)} ms, mean ${((performance.now() - t0) / times.length).toFixed(3)} p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)} results ${results}`,
  );
}
process.exit(0);
