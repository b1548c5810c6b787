// The load tool's query mix as parsed filters, for the in-process benchmarks (query-mix.ts,
// readers.ts) that run it against a stopped relay's data directory: the dataset named by
// events, authors and seed must be the one the directory was loaded with (the queries name its
// authors, roots and ids).
import type { Filter } from "../../src/nostr/filter.ts";
import { parseFilter } from "../../src/nostr/filter.ts";
import { datasetCatalog, datasetFiles, openDataset } from "./dataset.ts";
import type { QueryType } from "./query.ts";
import { buildQueries } from "./query.ts";

export interface MixOptions {
  events: number;
  /** default: events/20, at most 1000 (the 50k and smaller runs) */
  authors?: number;
  seed: number;
  queries: number;
}

export async function queryMix(
  root: string,
  o: MixOptions,
): Promise<{ type: QueryType; filters: Filter[] }[]> {
  const authors = o.authors ?? Math.min(1000, Math.ceil(o.events / 20));
  const files = datasetFiles(root, { events: o.events, authors, seed: o.seed });
  const catalog = await datasetCatalog(await openDataset(files.meta));
  const limits = { maxFilterValues: Number.MAX_SAFE_INTEGER };
  return buildQueries(catalog, o.queries, o.seed).map((q) => ({
    type: q.type,
    filters: q.filters.map((f) => parseFilter(f, limits) as Filter),
  }));
}
