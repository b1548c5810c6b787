// `relay delete --filter JSON`: removes matching stored events with every index entry they own
// (and the replaceable pointer when it points at them), in write transactions of a chunk each.

import { scanOldestFirst, storedId } from "../../indexes/scan.ts";
import { removeBySerial } from "../../store/lifecycle.ts";
import { writeTxn } from "../../store/serials.ts";
import { UsageError } from "../args.ts";
import { commandArgs, filterFromFlags } from "../command-args.ts";
import { fmtInt, guarded, StdoutSink } from "../output.ts";
import { openForWrite } from "./open-store.ts";
import { progressEvery } from "./progress.ts";

export const help = `relay delete --filter JSON [--since T] [--until T] [--dry-run] [--batch N] [--progress-every S] [--data DIR] [--config FILE]

Removes every stored event matching the filter (one NIP-01 filter, no limit or search; '{}'
matches everything), with all its index entries, in write transactions of N events (--batch,
default 1,000), oldest first. Each transaction is atomic: an interrupted delete leaves whole
batches deleted, and running it again finishes the job.
Prints the id of each deleted event on stdout, oldest first, and the count on stderr.

  --dry-run   delete nothing; print the ids and the count that would be deleted
  --progress-every S   a line on stderr at most every S seconds with how many are deleted and
              committed so far
  --since T, --until T   narrow the filter (unix seconds or an ISO date)

This is an operator's removal, not a NIP-09 deletion: no tombstone is kept, so the same
event can be published or imported again. Safe while 'relay serve' runs on the same data
directory: the relay stops serving the deleted events within a second.`;

/** Events removed per write transaction, by default. */
const CHUNK = 1000;

export async function run(argv: string[]): Promise<number> {
  return guarded("delete", async () => {
    const { flags, config } = commandArgs(argv, {
      booleans: ["dry-run"],
      options: ["filter", "since", "until", "batch", "progress-every"],
      positional: 0,
    });
    if (flags.filter === undefined) throw new UsageError("needs --filter JSON ('{}' matches every event)");
    const batch = flags.batch === undefined ? CHUNK : Number(flags.batch);
    if (!Number.isSafeInteger(batch) || batch < 1)
      throw new UsageError(`--batch must be a positive integer, got '${flags.batch}'`);
    const filter = filterFromFlags(flags);
    const dryRun = flags["dry-run"] !== undefined;
    const { store, finish, close, relayPid } = openForWrite(config, true, "delete");
    const out = new StdoutSink();
    let matched = 0;
    let removed = 0;
    let chunk: number[] = [];
    const every = progressEvery(flags);
    let reported = 0;
    const commit = async () => {
      const serials = chunk;
      chunk = [];
      const n = await writeTxn(store, () => {
        store.arena.reset();
        let gone = 0;
        for (const serial of serials) if (removeBySerial(store, serial)) gone++;
        return gone;
      });
      removed += n;
      // Counted after the commit: what a line says is deleted stays deleted if the run is killed.
      if (every !== undefined && performance.now() - reported >= every * 1000) {
        reported = performance.now();
        process.stderr.write(`delete: ${fmtInt(removed)} deleted and committed\n`);
      }
    };
    try {
      for (const ev of scanOldestFirst(store, filter)) {
        matched++;
        await out.write(`${storedId(ev.json)}\n`);
        if (dryRun) continue;
        chunk.push(ev.serial);
        if (chunk.length >= batch) await commit();
      }
      if (chunk.length > 0) await commit();
      finish();
      await out.end();
    } finally {
      await close();
    }
    console.error(
      dryRun
        ? `dry run: ${fmtInt(matched)} events match; nothing deleted`
        : `deleted ${fmtInt(removed)} events${relayPid === undefined ? "" : ` (the relay, pid ${relayPid}, stops serving them within a second)`}`,
    );
    return 0;
  });
}
