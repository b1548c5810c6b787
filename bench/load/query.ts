// Query phase: a seeded mix of the REQs clients really send, run over several connections at once;
// each REQ is timed from send to EOSE and then CLOSEd. The filter shapes are reused by COUNT.
import type { Catalog, WireFilter } from "./catalog.ts";
import type { PoolOptions } from "./pool.ts";
import { reqWire, runPool } from "./pool.ts";
import { Rng } from "./prng.ts";
import type { Summary } from "./stats.ts";

export const QUERY_TYPES = [
  "author",
  "kind",
  "thread #e",
  "hashtag #t",
  "home feed",
  "time window",
  "ids",
  "multi-filter",
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export interface QuerySpec {
  type: QueryType;
  filters: WireFilter[];
}

export function filtersFor(type: QueryType, c: Catalog, rng: Rng): WireFilter[] {
  const author = rng.zipf(c.authors);
  switch (type) {
    case "author":
      return [{ authors: [author], limit: 50 }];
    case "kind":
      return [{ kinds: [rng.pick([0, 1, 6, 7, 30023])], limit: 100 }];
    case "thread #e":
      return [{ "#e": [rng.zipf(c.roots.slice(0, 500))], kinds: [1, 6, 7], limit: 500 }];
    case "hashtag #t":
      return [{ "#t": [rng.zipf(c.hashtags)], limit: 50 }];
    case "home feed": {
      const follows = c.follows.get(author) ?? rng.sample(c.authors, 100);
      return [{ authors: follows.slice(0, 100), kinds: [1, 6], limit: 100 }];
    }
    case "time window": {
      const since = rng.int(c.minTime, Math.max(c.minTime, c.maxTime - 3600));
      return [{ since, until: since + 3600, limit: 200 }];
    }
    case "ids":
      return [{ ids: rng.sampleIndexes(c.notes.count, 20).map((i) => c.notes.id(i)) }];
    case "multi-filter":
      // A client opening its notifications tab: profiles, reactions, mentions, own notes.
      return [
        { kinds: [0], authors: rng.sample(c.authors, 10) },
        { kinds: [7], "#p": [author], limit: 20 },
        { kinds: [1], "#p": [author], limit: 20 },
        { kinds: [1], authors: [author], limit: 20 },
      ];
  }
}

/** `n` queries cycling through every type, with seeded targets. */
export function buildQueries(c: Catalog, n: number, seed: number): QuerySpec[] {
  const rng = new Rng(seed ^ 0x51ed);
  return Array.from({ length: n }, (_, i) => {
    const type = QUERY_TYPES[i % QUERY_TYPES.length]!;
    return { type, filters: filtersFor(type, c, rng) };
  });
}

export interface QueryTypeResult {
  type: QueryType;
  reqs: number;
  eoseMs: Summary;
  meanEvents: number;
}

export interface QueryResult {
  connections: number;
  inflightPerConnection: number;
  completed: number;
  failed: number;
  seconds: number;
  reqPerSec: number;
  eventsPerSec: number;
  eoseMs: Summary;
  byType: QueryTypeResult[];
  timedOut: boolean;
}

export async function runQueries(
  url: string,
  specs: readonly QuerySpec[],
  o: PoolOptions,
): Promise<QueryResult> {
  const jobs = specs.map((q) => ({
    type: q.type,
    frame: (id: string) => JSON.stringify(["REQ", id, ...q.filters]),
  }));
  const r = await runPool(url, jobs, QUERY_TYPES, o, reqWire);
  return {
    connections: o.connections,
    inflightPerConnection: o.inflight,
    completed: r.completed,
    failed: r.failed,
    seconds: r.seconds,
    reqPerSec: r.perSec,
    eventsPerSec: r.resultsPerSec,
    eoseMs: r.ms,
    byType: r.byType.map((t) => ({ type: t.type, reqs: t.done, eoseMs: t.ms, meanEvents: t.meanResults })),
    timedOut: r.timedOut,
  };
}
