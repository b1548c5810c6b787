// Runs the chosen load phases in order against one relay URL and gathers their results with
// memory readings between phases, and a once-a-second series through the ingest. Knows nothing
// about how the relay was started.
import { writeFileSync } from "node:fs";
import type { BenchArgs } from "./args.ts";
import type { Cgroup } from "./cgroup.ts";
import { cgroupOf } from "./cgroup.ts";
import type { CountResult } from "./count.ts";
import { buildCounts, runCounts } from "./count.ts";
import { datasetCatalog, loadDataset, readEvents } from "./dataset.ts";
import type { IngestResult } from "./ingest.ts";
import { fileSource, runIngest } from "./ingest.ts";
import type { IngestMemory, Sustained } from "./ingest-summary.ts";
import { ingestMemory, sustainedOf } from "./ingest-summary.ts";
import type { LiveResult } from "./live.ts";
import { runLive } from "./live.ts";
import type { QueryResult } from "./query.ts";
import { buildQueries, runQueries } from "./query.ts";
import type { MemReading } from "./rss.ts";
import { MemSampler } from "./rss.ts";
import type { SearchResult } from "./search.ts";
import { buildSearches, runSearches } from "./search.ts";
import type { Series } from "./series.ts";
import { Sampler } from "./series.ts";
import type { Settled } from "./settle.ts";
import { metricsUrlOf, settle } from "./settle.ts";

export interface E2EResult {
  url: string;
  dataset: { events: number; authors: number; seed: number; signedBytes: number; file: string };
  ingest?: IngestResult;
  /** the relay's derived indexes catching up after the ingest (unless --no-settle) */
  settled?: Settled;
  /** accepted events over first EVENT → no consumer lag */
  sustained?: Sustained;
  /** the relay's memory through the ingest, the catch-up and the rest */
  ingestMemory?: IngestMemory;
  /** once a second through the ingest, the catch-up and the rest */
  series?: Series;
  /** why the phases after the ingest did not run, if they did not */
  skipped?: string;
  /** a phase that failed (the relay refused connections, say): the phases before it are kept */
  error?: string;
  query?: QueryResult;
  count?: CountResult;
  search?: SearchResult;
  live?: LiveResult;
  /** the query mix while the live subscribers get a steady stream of events */
  mixed?: { query: QueryResult; live: LiveResult };
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
  const catalog = await datasetCatalog(d);
  // The relay's cgroup only when it has a memory limit of its own: otherwise it is some
  // enclosing group (a session, a service) whose charge says nothing about the relay.
  const cg: Cgroup | undefined = pid === undefined ? undefined : cgroupOf(pid);
  const cgroup = cg?.limitBytes === undefined ? undefined : cg;
  const mem = new MemSampler(pid, cgroup);
  const out: E2EResult = {
    url,
    dataset: {
      events: d.events,
      authors: d.authors.length,
      seed: d.seed,
      signedBytes: d.signedBytes,
      file: d.files.events,
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
      log(`ingest: ${d.events} events over ${a.connections} connections, window ${a.window}`);
      const progress = { sent: 0, answered: 0, accepted: 0 };
      const sampler = new Sampler(pid, metricsUrlOf(url), cgroup, progress);
      sampler.start();
      const i = await runIngest(url, fileSource(d.files.events, d.events), {
        connections: a.connections,
        window: a.window,
        timeoutMs: a.timeoutMs,
        stallMs: a.stallMs,
        progress,
      });
      out.ingest = i;
      sampler.markAt("first EVENT", i.firstEventAt);
      sampler.markAt("last OK", i.lastOkAt);
      // No smaps_rollup while the catch-up that follows is timed.
      mem.mark("after ingest", !a.settle);
      const dead = i.closedConnections === a.connections;
      if (i.stalled) log(`ingest: stalled at ${i.answered} events (no OK for ${a.stallMs / 1000} s)`);
      if (dead) log(`ingest: the relay closed every connection after ${i.answered} events`);
      if (a.settle && !dead) {
        out.settled = await settle(url, a.timeoutMs, a.stallMs);
        if (out.settled.reported) {
          sampler.markAt("caught up", out.settled.at);
          mem.mark("after catch-up");
        }
      }
      out.sustained = sustainedOf(i, out.settled);
      if (a.restSeconds > 0 && !dead) {
        await Bun.sleep(a.restSeconds * 1000);
        mem.mark(`after ${a.restSeconds} s at rest`);
        sampler.mark("rest end");
      }
      out.series = sampler.stop();
      out.ingestMemory = ingestMemory(out.series, mem.marks, a.restSeconds, cgroup);
      if (i.stalled || dead || i.timedOut || out.settled?.unreachable) {
        out.skipped = dead || out.settled?.unreachable ? "the relay went away" : "the ingest did not finish";
        log(`${out.skipped}: no further phases`);
        return out;
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
      if (a.searchCheck) log(`search: the exact answers need all ${d.events} events parsed`);
      out.search = await runSearches(
        url,
        buildSearches(catalog, a.searches, a.seed),
        { ...pool, sample: sample("search") },
        a.searchCheck ? await readEvents(d) : undefined,
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
    if (a.phases.includes("mixed")) {
      log(
        `mixed: ${a.subscribers} subscribers get ${a.mixedRate} events/s for ${a.mixedSeconds} s while ` +
          `the query mix runs over ${a.connections} connections, ${a.inflight} in flight each`,
      );
      // Reads and writes at once: the query mix runs from the start until the live phase ends
      // (its subscribers' set-up, the publishing, the grace for late deliveries).
      let liveOver = false;
      const live = runLive(url, d, catalog, {
        subscribers: a.subscribers,
        events: a.mixedRate * a.mixedSeconds,
        rate: a.mixedRate,
        graceMs: 5_000,
        seed: a.seed + 1,
        sample: sample("mixed live"),
      }).finally(() => {
        liveOver = true;
      });
      // more REQs than the phase can answer (~1,200/s at 50k): the mix never runs dry before the end
      const query = runQueries(
        url,
        buildQueries(catalog, Math.max(a.queries, 4000 * a.mixedSeconds), a.seed + 1),
        {
          ...pool,
          sample: sample("mixed query"),
          stop: () => liveOver,
        },
      );
      out.mixed = { live: await live, query: await query };
      mem.mark("after mixed");
    }
  } catch (e) {
    out.error = (e as Error).message;
    log(`a phase failed, the ones before it are kept: ${out.error}`);
  } finally {
    mem.stop();
    out.memory.marks = mem.marks;
    if (a.timeline !== undefined)
      writeFileSync(a.timeline, timeline.length > 0 ? `${timeline.join("\n")}\n` : "");
  }
  return out;
}
