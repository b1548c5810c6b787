// The query mix answered in this process against a stopped relay's data directory, by runQuery in
// this thread or through reader threads (src/readers/), with the CPU each thread spent per REQ:
// what moving a REQ's stored part to another thread costs (its messages, the merge here).
//
//   bun bench/readers.ts --data DIR [--threads 0|1|2] [--inflight 8] [--passes 3] [--events 50000]
//
// The directory must hold the dataset named by --events/--authors/--seed (a kept scale run:
// bun bench/scale.ts --tree . --port 7860 --events 50000 --phases ingest --keep).

import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { indexSnapshot } from "../src/indexes/indexes.ts";
import { answerFromParts, runQuery } from "../src/indexes/query.ts";
import type { Filter } from "../src/nostr/filter.ts";
import { ReaderPool } from "../src/readers/pool.ts";
import { closeStore, openStore } from "../src/store/store.ts";
import { queryMix } from "./load/mix.ts";

const { values: v } = parseArgs({
  options: {
    data: { type: "string" },
    threads: { type: "string", default: "1" },
    inflight: { type: "string", default: "8" },
    passes: { type: "string", default: "3" },
    queries: { type: "string", default: "4000" },
    events: { type: "string", default: "50000" },
    authors: { type: "string" },
    seed: { type: "string", default: "1" },
  },
});
if (!v.data) {
  console.error("usage: bun bench/readers.ts --data DIR [--threads N] [--inflight N] [--passes N]");
  process.exit(2);
}
const mix = await queryMix(`${import.meta.dir}/..`, {
  events: Number(v.events),
  ...(v.authors ? { authors: Number(v.authors) } : {}),
  seed: Number(v.seed),
  queries: Number(v.queries),
});
const queries = mix.map((q) => q.filters);
const s = openStore(v.data);
const prefix = '["EVENT","sub",';
const limits = { defaultLimit: 500, maxLimit: 5000, yieldEvery: 512 };
const o = { hwm: Number.MAX_SAFE_INTEGER, ...limits, frame: { text: prefix, bytes: Buffer.from(prefix) } };
const threads = Number(v.threads);
const pool =
  threads > 0 ? new ReaderPool({ path: v.data, store: {}, threads, timeoutMs: 30_000 }) : undefined;

/** CPU seconds so far of this process's threads, summed by name. */
function cpu(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of readdirSync("/proc/self/task")) {
    const stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
    const name = readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim();
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / 100;
  }
  return out;
}

async function one(filters: Filter[]): Promise<void> {
  if (!pool) {
    await runQuery(s, filters, o);
    return;
  }
  const snap = indexSnapshot(s);
  const req = { filters, hwm: o.hwm, through: snap.through, ...limits, prefix, expired: false };
  const parts = await pool.parts(req, () => false);
  answerFromParts(s, filters, parts!, o, snap);
}

for (let pass = 1; pass <= Number(v.passes); pass++) {
  const before = cpu();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(v.inflight) }, async () => {
      while (next < queries.length) await one(queries[next++]!);
    }),
  );
  const wall = performance.now() - started;
  const after = cpu();
  const per = Object.entries(after)
    .map(([k, x]) => [k, ((x - (before[k] ?? 0)) / queries.length) * 1e6] as const)
    .filter(([, us]) => us >= 5)
    .sort((a, b) => b[1] - a[1]);
  const total = per.reduce((sum, [, us]) => sum + us, 0);
  console.log(
    `${threads} reader thread(s), pass ${pass}: ${Math.round((queries.length / wall) * 1000)} REQ/s, ` +
      `${Math.round(total)} us of CPU a REQ (${per.map(([k, us]) => `${k} ${Math.round(us)}`).join(", ")})`,
  );
}
await pool?.close();
await closeStore(s);
process.exit(0);
