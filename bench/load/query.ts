// Query phase: a seeded mix of the REQs clients really send, run over several connections at once;
// each REQ is timed from send to EOSE and then CLOSEd.
import type { Catalog, WireFilter } from "./catalog.ts";
import type { Client } from "./client.ts";
import { closeAll, connectMany, signal, within } from "./client.ts";
import { Rng } from "./prng.ts";
import type { Summary } from "./stats.ts";
import { round, Samples } from "./stats.ts";

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

function filtersFor(type: QueryType, c: Catalog, rng: Rng): WireFilter[] {
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
      return [{ ids: rng.sample(c.noteIds, 20) }];
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

export interface QueryOptions {
  connections: number;
  inflight: number;
  timeoutMs: number;
}

export async function runQueries(
  url: string,
  specs: readonly QuerySpec[],
  o: QueryOptions,
): Promise<QueryResult> {
  const clients = await connectMany(url, o.connections);
  const all = new Samples();
  const perType = new Map(QUERY_TYPES.map((t) => [t, { s: new Samples(), events: 0 }]));
  let next = 0;
  let completed = 0;
  let failed = 0;
  let events = 0;
  const done = signal();
  const started = performance.now();

  clients.forEach((c: Client) => {
    const open = new Map<string, { spec: QuerySpec; t0: number; events: number }>();
    const issue = () => {
      if (next >= specs.length) return;
      const spec = specs[next]!;
      const subId = `q${next++}`;
      open.set(subId, { spec, t0: performance.now(), events: 0 });
      c.req(subId, spec.filters);
    };
    const finish = (subId: string, ok: boolean) => {
      const q = open.get(subId);
      if (!q) return;
      open.delete(subId);
      if (ok) {
        const ms = performance.now() - q.t0;
        all.add(ms);
        const t = perType.get(q.spec.type)!;
        t.s.add(ms);
        t.events += q.events;
        events += q.events;
        completed++;
        c.send(JSON.stringify(["CLOSE", subId]));
      } else failed++;
      if (completed + failed === specs.length) done.fire();
      issue();
    };
    c.handlers.event = (subId) => {
      const q = open.get(subId);
      if (q) q.events++;
    };
    c.handlers.eose = (subId) => finish(subId, true);
    c.handlers.closed = (subId) => finish(subId, false);
    for (let i = 0; i < o.inflight; i++) issue();
  });
  const finished = specs.length === 0 || (await within(done.promise, o.timeoutMs));
  const seconds = (performance.now() - started) / 1000;
  closeAll(clients);
  return {
    connections: o.connections,
    inflightPerConnection: o.inflight,
    completed,
    failed,
    seconds: round(seconds),
    reqPerSec: round(completed / seconds, 1),
    eventsPerSec: round(events / seconds, 1),
    eoseMs: all.summary(),
    byType: QUERY_TYPES.map((type) => {
      const t = perType.get(type)!;
      return {
        type,
        reqs: t.s.count,
        eoseMs: t.s.summary(),
        meanEvents: round(t.events / Math.max(1, t.s.count), 1),
      };
    }),
    timedOut: !finished,
  };
}
