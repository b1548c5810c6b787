// `relay stats`: what is in a data directory: events in total and by kind, the time span, and per
// named database its entry count and size from LMDB's own statistics, for the log's environment
// and for the derived one (derived/: REQ indexes, search, counters).

import type { RootDatabase } from "lmdb";
import { countByKind, timeBounds } from "../../store/scan.ts";
import type { Store } from "../../store/store.ts";
import { closeStore } from "../../store/store.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded, isoTime } from "../output.ts";
import { dataFileSize, openExisting } from "./open-store.ts";

export const help = `relay stats [--json] [--data DIR] [--config FILE]

Prints the number of stored events, by kind, the oldest and newest created_at, each LMDB
database's entry count, depth and size (pages × page size), those of the log and those derived
from it (derived/), and the size of data.mdb (its length, the space allocated on disk, and the
part in use). Safe while 'relay serve' runs.

  --json   one JSON object instead of the table`;

interface LmdbStat {
  pageSize: number;
  treeDepth: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  entryCount: number;
  overflowPages: number;
}

interface EnvStat extends LmdbStat {
  mapSize: number;
  lastPageNumber: number;
  maxReaders: number;
  numReaders: number;
}

export interface DbStats {
  entries: number;
  bytes: number;
  depth: number;
  pages: { branch: number; leaf: number; overflow: number };
}

export interface Stats {
  data: string;
  events: number;
  oldest: number | null;
  newest: number | null;
  kinds: Record<string, number>;
  /** the log's databases */
  databases: Record<string, DbStats>;
  /** the derived environment's databases (derived/) */
  derived: Record<string, DbStats>;
  file: { bytes: number; onDisk: number; used: number; mapSize: number; pageSize: number };
  readers: number;
}

const dbStats = (st: LmdbStat): DbStats => ({
  entries: st.entryCount,
  bytes: (st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages) * st.pageSize,
  depth: st.treeDepth,
  pages: { branch: st.treeBranchPageCount, leaf: st.treeLeafPageCount, overflow: st.overflowPages },
});

/** Every named database of the environment (their names are the keys of the root database). */
export function databaseNames(env: RootDatabase): string[] {
  const names: string[] = [];
  for (const k of env.getKeys()) if (typeof k === "string") names.push(k);
  return names.sort();
}

/** Per named database statistics, opened read-only by name (binary keys and values). */
export function databaseStats(env: RootDatabase): Record<string, DbStats> {
  const out: Record<string, DbStats> = {};
  for (const name of databaseNames(env)) {
    try {
      const db = env.openDB({ name, keyEncoding: "binary", encoding: "binary" });
      out[name] = dbStats(db.getStats() as LmdbStat);
    } catch {
      // A database opened by its owner with other flags (dupSort...) cannot be opened plainly.
    }
  }
  return out;
}

export function collectStats(store: Store, dir: string): Stats {
  const env = store.env.getStats() as EnvStat;
  const bounds = timeBounds(store);
  const kinds: Record<string, number> = {};
  for (const [k, n] of [...countByKind(store)].sort((a, b) => a[0] - b[0])) kinds[String(k)] = n;
  const file = dataFileSize(dir);
  return {
    data: dir,
    events: (store.events.getStats() as LmdbStat).entryCount,
    oldest: bounds?.oldest ?? null,
    newest: bounds?.newest ?? null,
    kinds,
    databases: databaseStats(store.env),
    derived: databaseStats(store.derived),
    file: {
      ...file,
      used: (env.lastPageNumber + 1) * env.pageSize,
      mapSize: env.mapSize,
      pageSize: env.pageSize,
    },
    readers: env.numReaders,
  };
}

export async function run(argv: string[]): Promise<number> {
  return guarded("stats", async () => {
    const { flags, config } = commandArgs(argv, { booleans: ["json"], positional: 0 });
    const store = openExisting(config.data, config["store.mapSizeGb"]);
    let s: Stats;
    try {
      s = collectStats(store, config.data);
    } finally {
      await closeStore(store);
    }
    console.log(flags.json !== undefined ? JSON.stringify(s) : table(s));
    return 0;
  });
}

function table(s: Stats): string {
  const when = (t: number | null) => (t === null ? "-" : `${t} (${isoTime(t)})`);
  const lines = [
    `data      ${s.data}`,
    `file      data.mdb ${fmtBytes(s.file.bytes)}, ${fmtBytes(s.file.onDisk)} on disk, ${fmtBytes(s.file.used)} in use (map ${fmtBytes(s.file.mapSize)}, page ${s.file.pageSize} B)`,
    `events    ${fmtInt(s.events)}`,
    `oldest    ${when(s.oldest)}`,
    `newest    ${when(s.newest)}`,
    "",
    "kind          events",
    ...Object.entries(s.kinds).map(([k, n]) => `${k.padEnd(8)} ${fmtInt(n).padStart(11)}`),
    "",
    "database          entries  depth        size",
  ];
  const row = (name: string, d: DbStats) =>
    `${name.padEnd(14)} ${fmtInt(d.entries).padStart(10)} ${String(d.depth).padStart(6)} ${fmtBytes(d.bytes).padStart(11)}`;
  for (const [name, d] of Object.entries(s.databases)) lines.push(row(name, d));
  lines.push("", "derived/          entries  depth        size");
  for (const [name, d] of Object.entries(s.derived)) lines.push(row(name, d));
  return lines.join("\n");
}
