// `relay export`: every stored event (or those matching a filter) as JSONL on stdout, the stored
// bytes verbatim, oldest first, read from the planner's index in chunks.

import { scanOldestFirst } from "../../indexes/scan.ts";
import { closeStore } from "../../store/store.ts";
import { commandArgs, filterFromFlags } from "../command-args.ts";
import { fmtInt, guarded, StdoutSink } from "../output.ts";
import { openExisting } from "./open-store.ts";

export const help = `relay export [--filter JSON] [--since T] [--until T] [--quiet] [--data DIR] [--config FILE]

Writes stored events to standard output as JSONL, one event per line, exactly the bytes the
relay stores and sends. Oldest first, like 'strfry export': by created_at, events with the same
created_at in the order the relay received them, so 'relay import' of the output into an empty
relay and a new export give the same bytes.

  --filter JSON  one NIP-01 filter, e.g. '{"kinds":[0,3],"authors":["<hex>"]}' or
                 '{"#t":["nostr"]}' (no limit or search)
  --since T      created_at at or after T; T is unix seconds or an ISO date (2024-05-01)
  --until T      created_at at or before T
  --quiet        no summary line on stderr

Safe while 'relay serve' runs on the same data: each stored event is written once, as
committed when the export started (events stored during the export are left out).`;

export async function run(argv: string[]): Promise<number> {
  return guarded("export", async () => {
    const { flags, config } = commandArgs(argv, {
      booleans: ["quiet"],
      options: ["filter", "since", "until"],
      positional: 0,
    });
    const filter = filterFromFlags(flags);
    const store = openExisting(config.data, config["store.mapSizeGb"]);
    const out = new StdoutSink();
    const started = performance.now();
    let n = 0;
    const NL = Buffer.from("\n");
    try {
      for (const ev of scanOldestFirst(store, filter)) {
        await out.write(ev.json);
        await out.write(NL);
        n++;
        if (out.closed) break;
      }
      await out.end();
    } finally {
      await closeStore(store);
    }
    if (flags.quiet === undefined && !out.closed) {
      const secs = (performance.now() - started) / 1000;
      const rate = secs > 0 ? Math.round(n / secs) : 0;
      console.error(`exported ${fmtInt(n)} events in ${secs.toFixed(2)} s (${fmtInt(rate)} events/s)`);
    }
    return 0;
  });
}
