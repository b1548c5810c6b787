// Turning search on or off for a store at start-up (relay.ts). With search on, the index is
// registered as a store indexer and rebuilt first if it is missing or was built by another
// tokenizer version; with search off, it is marked stale, since the writer no longer maintains
// it, so the next start with search on rebuilds it.
import type { Store } from "../store/store.ts";
import { SearchIndex } from "./indexer.ts";
import { reindex } from "./reindex.ts";

export function enableSearch(s: Store, log: (line: string) => void = console.log): SearchIndex {
  const ix = new SearchIndex(s);
  if (!ix.isCurrent()) {
    const r = reindex(s, ix);
    if (r.events > 0)
      log(
        `search: index rebuilt from ${r.events} stored events (${r.docs} searchable) in ${Math.round(r.ms)} ms`,
      );
  }
  s.indexers.push(ix);
  return ix;
}

export function disableSearch(s: Store): void {
  new SearchIndex(s).markStale();
}
