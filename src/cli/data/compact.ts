// `relay compact DEST`: an online, compacted copy of the log's LMDB environment, every database
// rewritten in key order from one read transaction (lmdb/copy.ts says why not LMDB's own
// compacting copy), then checked: the copy opens as a relay store and holds exactly the
// snapshot's entries in every database. What is derived from the log (derived/: REQ indexes,
// search, counters) is not copied: the relay builds it from the copy.

import { compactCopy } from "../../lmdb/copy.ts";
import { chooseMapSize } from "../../lmdb/map-size.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded } from "../output.ts";
import { dataFileSize } from "./open-store.ts";
import { stagedCopy } from "./staged-copy.ts";
import { type DbStats, databaseStats } from "./stats.ts";

export const help = `relay compact DEST [--json] [--data DIR] [--config FILE]

Writes a compacted copy of the data directory to the directory DEST (created if missing; it
must hold no data.mdb), usable as a backup or as the data directory of a relay. The copy is one
consistent snapshot taken from a read transaction, so it is safe while 'relay serve' runs; every
database is rewritten in key order into densely filled pages and free pages are left out, so it
is usually smaller.

Then DEST is opened and checked: every database must hold exactly the snapshot's entries, and
the log must pass 'relay check' (every event with its id, pointers and tombstones in order). Exit status: 0 when the copy checks out, 1 when it cannot
be written or does not match, 2 on bad arguments.

The derived indexes (DEST/derived/) are not copied: a relay started on DEST builds them from
the events first, which takes a while on a large store.

The copy is written to DEST/incomplete/ and becomes DEST/data.mdb (one rename) only once it
checks out: a compact that is interrupted or killed leaves no DEST/data.mdb, and running it
again starts over.

To restore, stop the relay and point --data at DEST (or move DEST/data.mdb into place).`;

const counts = (dbs: Record<string, DbStats>): Record<string, number> =>
  Object.fromEntries(Object.entries(dbs).map(([k, v]) => [k, v.entries]));

/** Databases of the log that hold exactly one entry per stored event. */
const PER_EVENT = ["events", "ids"] as const;

export async function run(argv: string[]): Promise<number> {
  return guarded("compact", async () => {
    const { positional, flags, config } = commandArgs(argv, { booleans: ["json"], positional: 1 });
    const r = await stagedCopy(
      config,
      positional[0],
      (env, staging) => compactCopy(env, staging, chooseMapSize(config["store.mapSizeGb"]).gb * 2 ** 30),
      (copy, before, problems) => {
        // Every database holds exactly the snapshot's entries, and the per-event ones agree.
        const got = counts(databaseStats(copy.env));
        for (const name of new Set([...Object.keys(before), ...Object.keys(got)]))
          if (before[name] !== got[name])
            problems.push(
              `${name}: ${got[name] ?? "missing"} entries in the copy, ${before[name] ?? "none"} in the source`,
            );
        const perEvent = PER_EVENT.map((n) => got[n] ?? 0);
        if (perEvent.some((n) => n !== perEvent[0]))
          problems.push(
            `the copy's per-event databases disagree: ${PER_EVENT.map((n, i) => `${n} ${perEvent[i]}`).join(", ")}`,
          );
        return got;
      },
    );
    const { dest, seconds, problems, verified: got } = r;
    const src = dataFileSize(config.data);
    const dst = dataFileSize(r.at);
    if (flags.json !== undefined) {
      console.log(
        JSON.stringify({
          dest,
          seconds,
          sourceBytes: src.bytes,
          copyBytes: dst.bytes,
          entries: got,
          ok: problems.length === 0,
          problems,
        }),
      );
    } else {
      const lines = [
        `copied ${config.data} to ${dest} in ${seconds.toFixed(2)} s: data.mdb ${fmtBytes(src.bytes)} → ${fmtBytes(dst.bytes)}`,
        "database          entries",
        ...Object.entries(got).map(([k, n]) => `${k.padEnd(14)} ${fmtInt(n).padStart(10)}`),
      ];
      lines.push(
        problems.length === 0
          ? "check: the copy opens, its counts match and it is consistent"
          : "check FAILED:",
      );
      for (const p of problems) lines.push(`  ${p}`);
      console.log(lines.join("\n"));
    }
    return problems.length === 0 ? 0 : 1;
  });
}
