// `relay backup DEST`: a consistent online copy of the log's LMDB environment (LMDB's plain
// copy, from one read transaction: lmdb/copy.ts), then checked with `relay check`'s checks.
// The derived indexes (derived/) are not copied: a relay started on the copy rebuilds them from
// its events (why: docs/operations.md, "Backups").

import { plainCopy } from "../../lmdb/copy.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded } from "../output.ts";
import { dataFileSize } from "./open-store.ts";
import { stagedCopy } from "./staged-copy.ts";

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
    const r = await stagedCopy(config, positional[0], plainCopy, () => undefined);
    const { dest, seconds, events, problems } = r;
    const bytes = dataFileSize(r.at).bytes;
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
