// The load tool's query mix run in this process against a stopped relay's data directory: per
// shape, the event bodies read against the events returned, and µs per REQ of `runQuery` alone
// (no sockets, no frames). What a REQ costs in the query engine, and whether it reads more than
// it returns.
//
//   bun bench/query-mix.ts --data DIR [--events 50000] [--authors 1000] [--seed 1] [--queries 8000] [--passes 3] [--no-newest]
//
// The dataset (events, authors, seed) must be the one the directory was loaded with: the
// queries name its authors, roots and ids. The last pass is reported (the first warm the JIT).

import { parseArgs } from "node:util";
import { keepNewest } from "../src/indexes/newest.ts";
import { runQuery } from "../src/indexes/query.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { queryMix } from "./load/mix.ts";

const { values: v } = parseArgs({
  allowNegative: true,
  options: {
    data: { type: "string" },
    events: { type: "string", default: "50000" },
    authors: { type: "string" },
    seed: { type: "string", default: "1" },
    queries: { type: "string", default: "8000" },
    passes: { type: "string", default: "3" },
    // the relay's bounds of the pubkind ranges' newest entries (indexes/newest.ts); safe here
    // because the directory's relay is stopped: nothing writes while this reads
    newest: { type: "boolean", default: true },
  },
});
if (!v.data) {
  console.error(
    "usage: bun bench/query-mix.ts --data DIR [--events N] [--authors N] [--seed N] [--queries N] [--passes N]",
  );
  process.exit(2);
}
const queries = await queryMix(`${import.meta.dir}/..`, {
  events: Number(v.events),
  ...(v.authors ? { authors: Number(v.authors) } : {}),
  seed: Number(v.seed),
  queries: Number(v.queries),
});
const s = openStore(v.data);
if (v.newest) keepNewest(s);

// Every body read goes through one of these two (indexes/query.ts): count them.
let reads = 0;
const text = s.eventsText.get.bind(s.eventsText);
const bytes = s.events.getBinaryFast.bind(s.events);
s.eventsText.get = ((k: Buffer) => {
  reads++;
  return text(k);
}) as typeof s.eventsText.get;
s.events.getBinaryFast = ((k: Buffer) => {
  reads++;
  return bytes(k);
}) as typeof s.events.getBinaryFast;

const options = { hwm: Number.MAX_SAFE_INTEGER, defaultLimit: 500, maxLimit: 5000, yieldEvery: 1e9 };

interface Tally {
  reqs: number;
  reads: number;
  returned: number;
  ms: number;
}
let by = new Map<string, Tally>();
let total = 0;
for (let pass = 0; pass < Number(v.passes); pass++) {
  by = new Map();
  const start = performance.now();
  for (const q of queries) {
    const r0 = reads;
    const t0 = performance.now();
    const out = (await runQuery(s, q.filters, options)) ?? [];
    const t = by.get(q.type) ?? { reqs: 0, reads: 0, returned: 0, ms: 0 };
    t.reqs++;
    t.reads += reads - r0;
    t.returned += out.length;
    t.ms += performance.now() - t0;
    by.set(q.type, t);
  }
  total = performance.now() - start;
}
const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
console.log(row(["shape", "REQs", "bodies read / REQ", "events returned / REQ", "µs / REQ"]));
console.log(row(["---", "---:", "---:", "---:", "---:"]));
for (const [type, t] of by)
  console.log(
    row([
      type,
      t.reqs,
      (t.reads / t.reqs).toFixed(1),
      (t.returned / t.reqs).toFixed(1),
      ((t.ms * 1000) / t.reqs).toFixed(0),
    ]),
  );
console.log(row(["all", queries.length, "", "", ((total * 1000) / queries.length).toFixed(0)]));
await closeStore(s);
