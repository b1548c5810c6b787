// Rebuilds the search index from the stored events: clears it, then indexes every event in
// serial order, `batch` events per write transaction. Used by `relay reindex`, and at start-up
// when the postings were built by another tokenizer version or while search was disabled.
// Safe next to a running writer (the indexer's calls are idempotent and each batch reads the
// events inside its own write transaction), but searches see a partial index until it is done.
import type { NostrEvent } from "../nostr/event.ts";
import { readU64, serialKey } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
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
  let next = 1;
  let events = 0;
  for (;;) {
    let n = 0;
    s.env.transactionSync(() => {
      for (const { key, value } of s.events.getRange({ start: serialKey(next), limit: batch })) {
        const serial = readU64(key as Buffer, 0);
        ix.put(s, JSON.parse((value as Buffer).toString("utf8")) as NostrEvent, serial);
        next = serial + 1;
        n++;
      }
      ix.flush(s);
    });
    events += n;
    if (n > 0) progress?.(events);
    if (n < batch) break;
  }
  ix.markCurrent();
  return { events, docs: ix.stats().docs, ms: performance.now() - started };
}
