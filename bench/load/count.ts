// Count phase (NIP-45): COUNT requests with the query mix's filter shapes plus the two shapes NIP-45
// answers with HyperLogLog registers (reactions to a note, followers of a pubkey), run over several
// connections; each is timed from send to its ["COUNT", id, {...}] answer.
import type { Catalog, WireFilter } from "./catalog.ts";
import type { PoolOptions } from "./pool.ts";
import { runPool } from "./pool.ts";
import { Rng } from "./prng.ts";
import { filtersFor, QUERY_TYPES } from "./query.ts";
import type { Summary } from "./stats.ts";

export const COUNT_TYPES = [...QUERY_TYPES, "author notes", "reactions (hll)", "followers (hll)"] as const;
export type CountType = (typeof COUNT_TYPES)[number];

export interface CountSpec {
  type: CountType;
  filters: WireFilter[];
}

function countFilters(type: CountType, c: Catalog, rng: Rng): WireFilter[] {
  switch (type) {
    case "reactions (hll)":
      return [{ "#e": [rng.zipf(c.roots.slice(0, 500))], kinds: [7] }];
    case "followers (hll)":
      return [{ "#p": [rng.zipf(c.authors)], kinds: [3] }];
    case "author notes":
      return [{ authors: [rng.zipf(c.authors)], kinds: [1] }];
    default:
      return filtersFor(type, c, rng);
  }
}

/** `n` COUNTs cycling through `types` (default every type), with seeded targets. */
export function buildCounts(
  c: Catalog,
  n: number,
  seed: number,
  types: readonly CountType[] = COUNT_TYPES,
): CountSpec[] {
  const rng = new Rng(seed ^ 0xc0c0);
  return Array.from({ length: n }, (_, i) => {
    const type = types[i % types.length]!;
    return { type, filters: countFilters(type, c, rng) };
  });
}

export interface CountTypeResult {
  type: CountType;
  counts: number;
  ms: Summary;
  meanCount: number;
  withHll: number;
}

export interface CountResult {
  connections: number;
  inflightPerConnection: number;
  completed: number;
  failed: number;
  seconds: number;
  countPerSec: number;
  ms: Summary;
  /** answers that carried `hll` */
  withHll: number;
  byType: CountTypeResult[];
  timedOut: boolean;
}

export async function runCounts(
  url: string,
  specs: readonly CountSpec[],
  o: PoolOptions,
): Promise<CountResult> {
  const jobs = specs.map((q) => ({
    type: q.type,
    frame: (id: string) => JSON.stringify(["COUNT", id, ...q.filters]),
  }));
  const r = await runPool(url, jobs, COUNT_TYPES, o, (c, t) => {
    c.handlers.count = (subId, n, hll) => {
      t.add(subId, n, hll !== undefined);
      t.finish(subId, true);
    };
    c.handlers.closed = (subId) => t.finish(subId, false);
  });
  return {
    connections: o.connections,
    inflightPerConnection: o.inflight,
    completed: r.completed,
    failed: r.failed,
    seconds: r.seconds,
    countPerSec: r.perSec,
    ms: r.ms,
    withHll: r.flagged,
    byType: r.byType.map((t) => ({
      type: t.type,
      counts: t.done,
      ms: t.ms,
      meanCount: t.meanResults,
      withHll: t.flagged,
    })),
    timedOut: r.timedOut,
  };
}
