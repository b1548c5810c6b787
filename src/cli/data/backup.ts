// `relay backup DEST`: a consistent online copy of the log's LMDB environment (LMDB's plain
// copy, from one read transaction: store/copy.ts), then checked with `relay check`'s checks.
// The derived indexes (derived/) are not copied: a relay started on the copy rebuilds them from
// its events (why: docs/operations.md, "Backups").

import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { checkStore } from "../../store/check.ts";
import { holdsData, plainCopy, publishCopy, stagingDir } from "../../store/copy.ts";
import type { Store } from "../../store/store.ts";
import { closeStore } from "../../store/store.ts";
import { UsageError } from "../args.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded, IoError } from "../output.ts";
import { dataFileSize, openExisting } from "./open-store.ts";

export const help = `relay backup DEST [--json] [--data DIR] [--config FILE]

Writes a consistent copy of the data directory's event log to the directory DEST (created if
missing; it must hold no data.mdb): LMDB's own copy of every page, taken from one read
transaction, so it is safe while 'relay serve' runs and writes. The derived indexes (derived/)
are not copied: a relay started on DEST rebuilds them from the events first.

Then DEST is opened and checked like 'relay check' checks the log. Exit status: 0 when the
copy checks out, 1 when it cannot be written or does not, 2 on bad arguments.

The copy is written to DEST/incomplete/ and becomes DEST/data.mdb (one rename) only once it
checks out: a backup that is interrupted or killed leaves no DEST/data.mdb, and running it
again starts over.

To restore, stop the relay and point --data at DEST.`;

export async function run(argv: string[]): Promise<number> {
  return guarded("backup", async () => {
    const { positional, flags, config } = commandArgs(argv, { booleans: ["json"], positional: 1 });
    const dest = positional[0];
    if (dest === undefined) throw new UsageError("needs DEST, the directory to write the copy to");
    if (resolve(dest) === resolve(config.data)) throw new UsageError("DEST is the data directory itself");
    const source = openExisting(config.data, config["store.mapSizeGb"]);
    const started = performance.now();
    // Written and checked in DEST/incomplete/, then moved to DEST/data.mdb in one rename.
    let staging = dest;
    try {
      try {
        mkdirSync(dest, { recursive: true });
        if (holdsData(dest)) throw new Error("it already holds a data.mdb");
        staging = stagingDir(dest);
      } catch (e) {
        throw new IoError(`cannot write to ${dest}: ${(e as Error).message}`);
      }
      try {
        await plainCopy(source.env, staging);
      } catch (e) {
        throw new IoError(`copy to ${dest} failed: ${(e as Error).message}`);
      }
    } finally {
      await closeStore(source);
    }
    const seconds = (performance.now() - started) / 1000;
    let copy: Store;
    try {
      copy = openExisting(staging, config["store.mapSizeGb"]);
    } catch (e) {
      throw new IoError(`the copy in ${dest} does not open: ${(e as Error).message}`);
    }
    let problems: string[];
    let events: number;
    try {
      const r = checkStore(copy);
      events = r.events;
      problems = [...r.problems].map(([what, f]) => `${what}: ${f.count} (${f.examples[0] ?? ""})`);
    } finally {
      await closeStore(copy);
    }
    // Only a copy that checks out becomes DEST/data.mdb; one that does not stays in the staging
    // directory for inspection (the next run starts over).
    if (problems.length === 0) publishCopy(dest);
    else problems.push(`the copy is left in ${staging}, not in ${dest}`);
    const bytes = dataFileSize(problems.length === 0 ? dest : staging).bytes;
    if (flags.json !== undefined)
      console.log(
        JSON.stringify({ dest, seconds, events, copyBytes: bytes, ok: problems.length === 0, problems }),
      );
    else {
      const lines = [
        `copied ${config.data} to ${dest} in ${seconds.toFixed(2)} s: ${fmtInt(events)} events, data.mdb ${fmtBytes(bytes)}`,
        problems.length === 0 ? "check: the copy opens and is consistent" : "check FAILED:",
        ...problems.map((p) => `  ${p}`),
      ];
      console.log(lines.join("\n"));
    }
    return problems.length === 0 ? 0 : 1;
  });
}
