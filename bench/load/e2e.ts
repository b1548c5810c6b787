// Runs the chosen load phases in order against one relay URL and gathers their results with
// memory readings between phases. Knows nothing about how the relay was started.
import { writeFileSync } from "node:fs";
import type { BenchArgs } from "./args.ts";
import { buildCatalog } from "./catalog.ts";
import type { CountResult } from "./count.ts";
import { buildCounts, runCounts } from "./count.ts";
import { loadDataset } from "./dataset.ts";
import type { IngestResult } from "./ingest.ts";
import { runIngest } from "./ingest.ts";
import type { LiveResult } from "./live.ts";
import { runLive } from "./live.ts";
import type { QueryResult } from "./query.ts";
import { buildQueries, runQueries } from "./query.ts";
import type { MemReading } from "./rss.ts";
import { MemSampler } from "./rss.ts";
import type { SearchResult } from "./search.ts";
import { buildSearches, runSearches } from "./search.ts";
import type { Settled } from "./settle.ts";
import { settle } from "./settle.ts";

export interface E2EResult {
  url: string;
  dataset: { events: number; authors: number; seed: number; signedBytes: number };
  ingest?: IngestResult;
  /** the relay's derived indexes catching up after the ingest (unless --no-settle) */
  settled?: Settled;
  query?: QueryResult;
  count?: CountResult;
  search?: SearchResult;
  live?: LiveResult;
  memory: { source: string; marks: Record<string, MemReading> };
}

export async function runE2E(
  url: string,
  a: BenchArgs,
  root: string,
  log: (s: string) => void,
  pid: number | undefined,
): Promise<E2EResult> {
  const d = await loadDataset(root, { events: a.events, authors: a.authors, seed: a.seed }, log);
  const catalog = buildCatalog(d);
  const mem = new MemSampler(pid);
  const out: E2EResult = {
    url,
    dataset: {
      events: d.list.length,
      authors: d.authors.length,
      seed: d.seed,
      signedBytes: d.list.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0),
    },
    memory: {
      source: pid === undefined ? "this process (relay + load tool)" : `/proc/${pid}/status`,
      marks: {},
    },
  };
  const pool = { connections: a.connections, inflight: a.inflight, timeoutMs: a.timeoutMs };
  // --timeline: every sample kept in memory and written once at the end, so no file write
  // runs inside a timed phase.
  const timeline: string[] = [];
  const sample = (phase: string) =>
    a.timeline === undefined
      ? undefined
      : (sentAt: number, ms: number) =>
          timeline.push(`${phase} ${(performance.timeOrigin + sentAt).toFixed(1)} ${ms.toFixed(2)}`);
  mem.start();
  mem.mark("start");
  try {
    if (a.phases.includes("ingest")) {
      log(`ingest: ${d.list.length} events over ${a.connections} connections, window ${a.window}`);
      out.ingest = await runIngest(url, d.list, {
        connections: a.connections,
        window: a.window,
        timeoutMs: a.timeoutMs,
      });
      mem.mark("after ingest");
      if (a.settle) {
        out.settled = await settle(url, a.timeoutMs);
        if (out.settled.reported) mem.mark("after catch-up");
      }
      if (a.restSeconds > 0) {
        await Bun.sleep(a.restSeconds * 1000);
        mem.mark(`after ${a.restSeconds} s at rest`);
      }
    }
    if (a.phases.includes("query")) {
      log(`query: ${a.queries} REQs over ${a.connections} connections, ${a.inflight} in flight each`);
      out.query = await runQueries(url, buildQueries(catalog, a.queries, a.seed), {
        ...pool,
        sample: sample("query"),
      });
      mem.mark("after query");
    }
    if (a.phases.includes("count")) {
      log(`count: ${a.counts} COUNTs over ${a.connections} connections, ${a.inflight} in flight each`);
      out.count = await runCounts(url, buildCounts(catalog, a.counts, a.seed, a.countTypes), {
        ...pool,
        sample: sample("count"),
      });
      mem.mark("after count");
    }
    if (a.phases.includes("search")) {
      log(
        `search: ${a.searches} search REQs over ${a.connections} connections, ${a.inflight} in flight each`,
      );
      out.search = await runSearches(
        url,
        buildSearches(catalog, a.searches, a.seed),
        { ...pool, sample: sample("search") },
        d.list,
      );
      mem.mark("after search");
    }
    if (a.phases.includes("live")) {
      log(`live: ${a.subscribers} subscribers, ${a.liveEvents} events at ${a.liveRate}/s`);
      out.live = await runLive(url, d, catalog, {
        subscribers: a.subscribers,
        events: a.liveEvents,
        rate: a.liveRate,
        graceMs: 5_000,
        seed: a.seed,
        sample: sample("live"),
      });
      mem.mark("after live");
    }
  } finally {
    mem.stop();
    out.memory.marks = mem.marks;
    if (a.timeline !== undefined)
      writeFileSync(a.timeline, timeline.length > 0 ? `${timeline.join("\n")}\n` : "");
  }
  return out;
}
