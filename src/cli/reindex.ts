// `relay reindex`: rebuilds the NIP-50 search index from the stored events, e.g. after the
// tokenizer changed or events were written while search was disabled. The relay also does this
// by itself at start-up when it finds the index missing or stale.
import { SearchIndex } from "../search/indexer.ts";
import { reindex } from "../search/reindex.ts";
import { commandArgs, guarded, openExisting } from "./data-args.ts";

export const help = `relay reindex [--data DIR] [--config FILE] [--batch N] [--quiet]

Clears the search index and indexes every stored event again, N events per write transaction
(default 10000). Best run while 'relay serve' is stopped: it is safe next to a running relay,
but searches see a partial index until it is done.`;

export async function run(argv: string[]): Promise<number> {
  return guarded("reindex", async () => {
    const { flags, config } = commandArgs(argv, { booleans: ["quiet"], options: ["batch"], positional: 0 });
    const batch = flags.batch === undefined ? 10_000 : Number(flags.batch);
    if (!Number.isSafeInteger(batch) || batch < 1) {
      console.error(`relay reindex: --batch must be a positive integer, got '${flags.batch}'`);
      return 2;
    }
    const store = openExisting(config.data);
    try {
      const ix = new SearchIndex(store);
      const say = (line: string) => flags.quiet === undefined && console.error(line);
      const r = reindex(store, ix, batch, (n) => say(`reindex: ${n} events`));
      console.log(`reindexed ${r.events} events (${r.docs} searchable) in ${(r.ms / 1000).toFixed(1)} s`);
      return 0;
    } finally {
      await store.env.close();
    }
  });
}
