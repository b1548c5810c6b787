// `relay check [--repair]`: verifies a data directory against itself (store/check.ts) and, with
// --repair, puts back what is missing, removes what points nowhere, takes out events that
// should be gone, and rebuilds a derived index that cannot be trusted.

import { openConsumers } from "../../consumers/registry.ts";
import type { CheckResult, Fix } from "../../store/check.ts";
import { checkStore, problemCount } from "../../store/check.ts";
import { markStale } from "../../store/consumer.ts";
import { putEntry, removeEntry } from "../../store/index-db.ts";
import { removeBySerial } from "../../store/lifecycle.ts";
import { writeTxnSync } from "../../store/serials.ts";
import { closeStore, derivedWrite } from "../../store/store.ts";
import type { Store } from "../../store/types.ts";
import { commandArgs } from "../command-args.ts";
import { fmtInt, guarded } from "../output.ts";
import { openAlone, openExisting } from "./open-store.ts";

export const help = `relay check [--repair] [--json] [--data DIR] [--config FILE]

Verifies every index entry against the events and every event against its index entries: the
log's own (ids, replaceable and addressable pointers, NIP-40 expiry, NIP-09 and NIP-62
tombstones: no event they removed is still stored), the derived REQ indexes (pubkey, kind,
pubkind, tag, time) up to their consumer's watermark, and every derived index's watermark
against the last serial. Prints each kind of problem with its count and first examples.

Exit status: 0 when nothing is wrong, 1 when something is (after --repair: when something is
still wrong), 2 on bad arguments. Reading is safe while 'relay serve' runs (one read
transaction); --repair writes: stop 'relay serve' on this data directory first.

  --repair   fix what was found, then check again
  --json     one JSON object instead of the report`;

/** Consumers index problems above this share of the events: rebuild the indexes instead. */
const REBUILD_SHARE = 0.1;

interface Report {
  data: string;
  events: number;
  lastSerial: number;
  indexesThrough: number;
  ok: boolean;
  problems: Record<string, { count: number; examples: string[] }>;
}

function report(data: string, r: CheckResult): Report {
  const problems: Report["problems"] = {};
  for (const [what, f] of r.problems) problems[what] = { count: f.count, examples: f.examples };
  return {
    data,
    events: r.events,
    lastSerial: r.lastSerial,
    indexesThrough: r.indexesThrough,
    ok: r.problems.size === 0,
    problems,
  };
}

function text(rep: Report): string {
  const lines = [
    `checked ${rep.data}: ${fmtInt(rep.events)} events, last serial ${rep.lastSerial}, REQ indexes through ${rep.indexesThrough}`,
  ];
  if (rep.ok) lines.push("clean: no problems");
  for (const [what, p] of Object.entries(rep.problems)) {
    lines.push(`${what}: ${fmtInt(p.count)}`);
    for (const x of p.examples) lines.push(`  ${x}`);
  }
  return lines.join("\n");
}

/** Applies the fixes of a check; the consumers then catch up (rebuilding what was marked). */
function repair(store: Store, r: CheckResult, rebuildIndexes: boolean): { fixed: number; rebuilt: string[] } {
  const fixes: Fix[] = [];
  for (const f of r.problems.values()) fixes.push(...f.fixes);
  const rebuilt = new Set<string>();
  for (const f of fixes) if (f.op === "rebuild") rebuilt.add(f.consumer);
  if (rebuildIndexes) rebuilt.add("indexes");
  derivedWrite(
    store,
    () => {
      for (const f of fixes) {
        if (f.op === "put" && f.env === "derived" && !rebuildIndexes) f.db.putSync(f.key, f.value);
        if (f.op === "remove" && f.env === "derived" && !rebuildIndexes) f.db.removeSync(f.key);
        if (f.op === "putEntry" && !rebuildIndexes) putEntry(f.db, f.key);
        if (f.op === "removeEntry" && !rebuildIndexes) removeEntry(f.db, f.key);
      }
    },
    // each fix a key or two
    fixes.length * 256,
  );
  for (const name of rebuilt) markStale(store, name);
  const serials = new Set<number>();
  // The removal log's seqs come from the high-water marks, as every write to the log takes them.
  writeTxnSync(store, () => {
    store.arena.reset();
    for (const f of fixes) {
      if (f.op === "put" && f.env === "log") f.db.putSync(f.key, f.value);
      if (f.op === "remove" && f.env === "log") f.db.removeSync(f.key);
      if (f.op === "removeEvent" && !serials.has(f.serial)) {
        serials.add(f.serial);
        removeBySerial(store, f.serial);
      }
    }
  });
  store.removedInTxn.length = 0;
  return { fixed: fixes.length, rebuilt: [...rebuilt] };
}

export async function run(argv: string[]): Promise<number> {
  return guarded("check", async () => {
    const { flags, config } = commandArgs(argv, { booleans: ["repair", "json"], positional: 0 });
    const json = flags.json !== undefined;
    // Repairs write the log and the derived indexes: only with the directory to itself.
    const { store, release } =
      flags.repair === undefined
        ? { store: openExisting(config.data, config["store.mapSizeGb"]), release: () => {} }
        : openAlone(
            config,
            "check --repair",
            "stop it, then run check --repair (check alone is safe beside it)",
          );
    try {
      const first = checkStore(store);
      if (flags.repair === undefined || first.problems.size === 0) {
        const rep = report(config.data, first);
        console.log(json ? JSON.stringify(rep) : text(rep));
        return rep.ok ? 0 : 1;
      }
      // What the relay derives is brought up to the log first (as at its start), then checked
      // again: the fixes are those of that state. Consumers found past repair are rebuilt there.
      const stale = new Set<string>();
      for (const f of first.problems.values())
        for (const x of f.fixes) if (x.op === "rebuild") stale.add(x.consumer);
      for (const name of stale) markStale(store, name);
      const consumers = openConsumers(store, config, { log: (line) => console.error(line) });
      const found = checkStore(store);
      const derivedProblems = [...found.problems]
        .filter(([what]) => /^(pubkey|kind|pubkind|tag|time):/.test(what))
        .reduce((n, [, f]) => n + f.count, 0);
      const rebuild = derivedProblems > Math.max(1000, found.events * REBUILD_SHARE);
      const repaired = repair(store, found, rebuild);
      const fixed =
        repaired.fixed +
        [...first.problems.values()].reduce(
          (n, f) => n + (f.fixes.some((x) => x.op === "rebuild") ? f.count : 0),
          0,
        );
      const rebuilt = [...new Set([...stale, ...repaired.rebuilt])].sort();
      consumers.runner.catchUp();
      const after = checkStore(store);
      const before = report(config.data, first);
      const rep = report(config.data, after);
      if (json) console.log(JSON.stringify({ ...rep, found: before.problems, fixed, rebuilt }));
      else
        console.log(
          `${text(before)}\nrepaired: ${fmtInt(fixed)} fixes${rebuilt.length > 0 ? `, rebuilt ${rebuilt.join(", ")}` : ""}\n${text(rep)}`,
        );
      return problemCount(after) === 0 ? 0 : 1;
    } finally {
      await closeStore(store);
      release();
    }
  });
}
