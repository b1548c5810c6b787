// Search phase (NIP-50): REQs whose `search` is two words taken from one stored kind-1 note (so
// every query has at least that note as a result), limit 20, run over several connections; each is
// timed from send to EOSE and then CLOSEd.
import type { Catalog, WireFilter } from "./catalog.ts";
import type { PoolOptions } from "./pool.ts";
import { reqWire, runPool } from "./pool.ts";
import { Rng } from "./prng.ts";
import { SearchOracle } from "./search-check.ts";
import type { Summary } from "./stats.ts";
import type { WireEvent } from "./wire.ts";

export const SEARCH_LIMIT = 20;

/** Two distinct whole words of a random note; the last word is skipped, as prose() may cut it. */
function twoWords(c: Catalog, rng: Rng): string {
  for (;;) {
    const words = [...new Set(c.notes.text(rng.index(c.notes.count)).split(" ").slice(0, -1))];
    if (words.length >= 2) return rng.sample(words, 2).join(" ");
  }
}

/** `n` search filters with seeded words. */
export function buildSearches(c: Catalog, n: number, seed: number): WireFilter[] {
  if (c.notes.count === 0) return [];
  const rng = new Rng(seed ^ 0x5ea4);
  return Array.from({ length: n }, () => ({ search: twoWords(c, rng), limit: SEARCH_LIMIT }));
}

export interface SearchResult {
  connections: number;
  inflightPerConnection: number;
  limit: number;
  completed: number;
  failed: number;
  seconds: number;
  reqPerSec: number;
  eoseMs: Summary;
  meanResults: number;
  timedOut: boolean;
  /** answers compared with the exact ranked answer (when the dataset was given) */
  checked: number;
  /** of those, answers equal to it, ids and order */
  exact: number;
  /** a few of the others: query, expected ids, answered ids */
  wrong: string[];
}

/**
 * Runs the searches; with the dataset the relay holds, every answer is then checked against the
 * exact ranked answer (after the timed run, so the check costs the relay nothing).
 */
export async function runSearches(
  url: string,
  filters: readonly WireFilter[],
  o: PoolOptions,
  dataset?: readonly WireEvent[],
): Promise<SearchResult> {
  const jobs = filters.map((f) => ({
    type: "search" as const,
    frame: (id: string) => JSON.stringify(["REQ", id, f]),
  }));
  // Ids answered per query; the pool names its subscriptions q<index of the job>.
  const answered: string[][] = filters.map(() => []);
  const r = await runPool(url, jobs, ["search"] as const, o, (c, t) => {
    reqWire(c, t);
    const count = c.handlers.event!;
    c.handlers.event = (subId, id) => {
      answered[Number(subId.slice(1))]?.push(id);
      count(subId, id);
    };
  });
  let checked = 0;
  let exact = 0;
  const wrong: string[] = [];
  if (dataset) {
    const oracle = new SearchOracle(dataset);
    filters.forEach((f, i) => {
      const want = oracle.expected(f.search!, f.limit ?? SEARCH_LIMIT);
      checked++;
      if (want.join() === answered[i]!.join()) exact++;
      else if (wrong.length < 3)
        wrong.push(`${JSON.stringify(f.search)}: expected ${want.join(",")}; got ${answered[i]!.join(",")}`);
    });
  }
  return {
    connections: o.connections,
    inflightPerConnection: o.inflight,
    limit: SEARCH_LIMIT,
    completed: r.completed,
    failed: r.failed,
    seconds: r.seconds,
    reqPerSec: r.perSec,
    eoseMs: r.ms,
    meanResults: r.byType[0]!.meanResults,
    timedOut: r.timedOut,
    checked,
    exact,
    wrong,
  };
}
