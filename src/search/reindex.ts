// Rebuilds the search index from the stored events: clears it, then indexes every event in
// serial order, `batch` events per write transaction. Used by `relay reindex`, and at start-up
// when the postings were built by another tokenizer version or while search was disabled.
// Safe next to a running writer (the indexer's calls are idempotent and each batch reads the
// events inside its own write transaction), but searches see a partial index until it is done.
import type { Store } from "../store/store.ts";
import { replayStored } from "../store/store.ts";
import type { SearchIndex } from "./indexer.ts";

export interface ReindexReport {
  events: number;
  docs: number;
  ms: number;
}

export function reindex(
  s: Store,
  ix: SearchIndex,
  batch = 10_000,
  progress?: (events: number) => void,
): ReindexReport {
  const started = performance.now();
  ix.markStale();
  ix.postings.clearSync();
  ix.df.clearSync();
  ix.meta.clearSync();
  const events = replayStored(
    s,
    1,
    batch,
    (e, serial) => ix.put(s, e, serial),
    () => ix.flush(s),
    progress,
  );
  ix.markCurrent();
  return { events, docs: ix.stats().docs, ms: performance.now() - started };
}
