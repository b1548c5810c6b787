// The secondary indexes every writer of a store must keep: NIP-40 expiry always, the NIP-50
// search postings when enabled. The server and the data commands both register them here, so
// an event written or removed by either leaves every index the same way.
import { disableCounters, enableCounters } from "../api/counters.ts";
import type { Config } from "../config/schema.ts";
import { disableSearch, enableSearch } from "../search/setup.ts";
import { Expiration } from "./expiration.ts";
import type { Store } from "./store.ts";
import { restoreIndexes } from "./store.ts";

export function registerIndexers(
  store: Store,
  config: Config,
  log: (line: string) => void = console.log,
): Expiration {
  const expiration = new Expiration(store);
  store.indexers.push(expiration);
  if (config["search.enabled"]) enableSearch(store, log);
  else disableSearch(store);
  if (config["api.enabled"]) enableCounters(store, log);
  else disableCounters(store);
  const restored = restoreIndexes(store);
  if (restored > 0) log(`store: index entries of ${restored} events restored after an unclean stop`);
  return expiration;
}
