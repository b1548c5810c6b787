// `relay reindex`: rebuilds derived indexes (REQ indexes, NIP-50 search, the API counters, the
// NIP-45 registers) from the stored
// events, e.g. after a change of the tokenizer or to repair one. The relay rebuilds a derived
// index by itself at start-up when it is missing, of another version, or was turned off.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { openConsumers } from "../../consumers/registry.ts";
import { markStale } from "../../store/consumer.ts";
import { closeStore } from "../../store/store.ts";
import { UsageError } from "../args.ts";
import { commandArgs } from "../command-args.ts";
import { guarded, IoError } from "../output.ts";
import { openAlone } from "./open-store.ts";
import { Progress, progressEvery } from "./progress.ts";

export const help = `relay reindex [NAME...] [--data DIR] [--config FILE] [--batch N] [--quiet] [--progress-every S]

Rebuilds the named derived indexes from every stored event, N events per write transaction
(default 10000), with a progress bar: 'indexes' (the REQ indexes), 'search' (NIP-50),
'counters' (the HTTP API) and 'hll' (NIP-45 counts). Without a name, every one the
configuration enables. Refused while 'relay serve' runs on this data directory (exit 1): the
relay applies these indexes itself; stop it first (it also rebuilds an index at start when
the index is missing or of another version).

  --progress-every S   seconds between progress lines when not on a terminal (default 5)

Each batch is committed with the index's watermark: an interrupted (even killed) reindex leaves
the index partly rebuilt and marked so, and the next relay start or reindex continues it.`;

const NAMES = ["indexes", "search", "counters", "hll"] as const;
/** The setting that turns each on; the REQ indexes are always kept. */
const ENABLED: Record<
  (typeof NAMES)[number],
  "search.enabled" | "api.enabled" | "count.registers" | undefined
> = {
  indexes: undefined,
  search: "search.enabled",
  counters: "api.enabled",
  hll: "count.registers",
};
const enabled = (config: Record<string, unknown>, name: (typeof NAMES)[number]): boolean => {
  const key = ENABLED[name];
  return key === undefined || config[key] === true;
};

/** "a", "a and b", "a, b and c" */
const list = (xs: readonly string[]): string =>
  xs.length <= 1 ? (xs[0] ?? "") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`;

export async function run(argv: string[]): Promise<number> {
  return guarded("reindex", async () => {
    const { flags, config, positional } = commandArgs(argv, {
      booleans: ["quiet"],
      options: ["batch", "progress-every"],
      positional: NAMES.length,
    });
    const batch = flags.batch === undefined ? 10_000 : Number(flags.batch);
    if (!Number.isSafeInteger(batch) || batch < 1)
      throw new UsageError(`--batch must be a positive integer, got '${flags.batch}'`);
    for (const name of positional)
      if (!(NAMES as readonly string[]).includes(name))
        throw new UsageError(`unknown index '${name}' (known: ${NAMES.join(", ")})`);
    const named = (
      positional.length > 0 ? positional : NAMES.filter((n) => enabled(config, n))
    ) as (typeof NAMES)[number][];
    for (const name of named)
      if (!enabled(config, name))
        throw new UsageError(`${name} is turned off (${ENABLED[name]} = false): nothing to rebuild`);
    // The consumers of a running relay write these indexes; a rebuild beside them would leave
    // both with watermarks that do not describe what is on disk.
    if (!existsSync(join(config.data, "data.mdb")))
      throw new IoError(`no relay data in ${config.data} (no data.mdb)`);
    const { store, release } = openAlone(
      config,
      "reindex",
      "it keeps these indexes itself; stop it, then run reindex",
    );
    try {
      for (const name of named) markStale(store, name);
      const quiet = flags.quiet !== undefined;
      const every = progressEvery(flags);
      const bars = new Map<string, Progress>();
      const started = performance.now();
      openConsumers(store, config, {
        log: () => {},
        batch,
        progress: (name, events, total) => {
          const bar =
            bars.get(name) ?? new Progress(`reindex ${name}`, { total, unit: "events", quiet, every });
          bars.set(name, bar);
          bar.update(0, events);
        },
      });
      for (const bar of bars.values()) bar.done();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `rebuilt ${list(named) || "nothing"} from ${store.lastSerial} stored events in ${seconds} s`,
      );
      return 0;
    } finally {
      await closeStore(store);
      release();
    }
  });
}
