// `relay stats`: what is in a data directory: events in total and by kind, the time span, and per
// named database its entry count and size, for the log's environment and for the derived one
// (derived/: REQ indexes, search, counters). Sizes come from walking each data.mdb page by page
// (lmdb/page-walk.ts): LMDB's own statistics count a DUPSORT database's top tree only and say
// nothing of free pages; the JSON keeps them too (`bytes`, `pages`).

import { statSync } from "node:fs";
import { join } from "node:path";
import type { RootDatabase } from "lmdb";
import type { Config } from "../../config/schema.ts";
import { countByKind, timeBounds } from "../../indexes/scan.ts";
import { type FilePages, type TreePages, walkEnvironment } from "../../lmdb/page-walk.ts";
import { budgetSettings } from "../../retention/budget.ts";
import { closeStore, DERIVED_DIR } from "../../store/store.ts";
import type { Store } from "../../store/types.ts";
import { commandArgs } from "../command-args.ts";
import { fmtBytes, fmtInt, guarded, isoTime } from "../output.ts";
import { dataFileSize, openExisting } from "./open-store.ts";

export const help = `relay stats [--json] [--data DIR] [--config FILE]

Prints the number of stored events, by kind, the oldest and newest created_at, and for each
LMDB database, those of the log (data.mdb) and those derived from it (derived/data.mdb): its
entry count, depth, pages (every page of its tree, with a DUPSORT database's sub-databases,
found by walking the file), size (pages × page size), share of its file, and fill (the part of
those pages holding data). Each file's free pages (no tree uses them: LMDB reuses them; only
'relay compact' gives them back) get a row, LMDB's own pages (meta pages, database names, the
free list) another. Then the space by role, both files together: event bodies, the log's other
databases, REQ indexes, search, NIP-45 HLL records, API counters, consumer state, LMDB's own
pages, free pages. Also the size of data.mdb (its length, the space allocated on disk, and the
part in use). Then the disk budget (store.maxDiskGb) against what it counts, the data in use
(both files' pages less their free pages), and the free pages. Safe while 'relay serve' runs:
each file is walked in a read transaction.

  --json   one JSON object instead of the table (space, roles and each database's space
           hold what the walk found; bytes and pages are LMDB's own statistics)`;

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
  /** LMDB's statistics (a DUPSORT database: its top tree only) */
  bytes: number;
  depth: number;
  pages: { branch: number; leaf: number; overflow: number };
  /** from walking the file: every page, sub-databases included (absent if it could not be walked) */
  space?: DbSpace;
}

/** A database's pages as the walk of its file found them. */
export interface DbSpace {
  pages: number;
  bytes: number;
  /** of the file's length */
  share: number;
  /** bytes in use ÷ what those pages can hold (page less its header); 0 without pages */
  fill: number;
  branch: number;
  leaf: number;
  overflow: number;
  /** DUPSORT: sub-databases (keys whose values outgrew a sub-page inside the leaf) and their pages */
  subDatabases: number;
  subBranch: number;
  subLeaf: number;
  subOverflow: number;
}

/** One data.mdb as walked: its length, LMDB's own pages and its free pages. */
export interface FileSpace {
  /** data.mdb or derived/data.mdb */
  file: string;
  bytes: number;
  pageSize: number;
  pages: number;
  /** the 2 meta pages, the main DB (the names) and the free DB (the free lists) */
  lmdb: { pages: number; bytes: number; share: number };
  /**
   * pages no tree reaches: `listed` in LMDB's free lists (reused by later writes), `unlisted`
   * (lost until a compact), `tail` (the file's length past the snapshot's last page)
   */
  free: { pages: number; bytes: number; share: number; listed: number; unlisted: number; tail: number };
  /** false: a page did not look like what points to it; the counts are then a lower bound */
  complete: boolean;
  problems: string[];
}

export const ROLES = {
  bodies: "event bodies",
  log: "log, other",
  indexes: "REQ indexes",
  search: "search",
  hll: "NIP-45 HLL",
  api: "API counters",
  state: "consumer state",
  other: "derived, other",
  lmdb: "LMDB's own",
  free: "free pages",
} as const;
export type Role = keyof typeof ROLES;

/** What a database is for, by its environment and name. */
export function roleOf(derived: boolean, name: string): Role {
  if (!derived) return name === "events" ? "bodies" : "log";
  if (name.startsWith("ix_")) return "indexes";
  if (name === "search" || name.startsWith("search_")) return "search";
  if (name === "count_hll") return "hll";
  if (name.startsWith("api_")) return "api";
  if (name === "state") return "state";
  return "other";
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
  /** each data.mdb as walked */
  space: { log: FileSpace; derived: FileSpace };
  /** bytes by role, both files together; share of their total length */
  roles: Record<Role, { bytes: number; share: number }>;
  /**
   * the disk budget (store.maxDiskGb; 0: none) and its low-water mark, and what it counts:
   * `inUse`, both files' pages up to their last one less the pages on LMDB's free lists (lost
   * pages count as in use, as the relay's measure cannot see them); `free`, every free page;
   * `files`, both files' length. All in bytes
   */
  disk: { budget: number; lowWater: number; inUse: number; free: number; files: number };
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

const shareOf = (bytes: number, of: number): number => (of > 0 ? bytes / of : 0);

function dbSpace(t: TreePages, pageSize: number, fileBytes: number): DbSpace {
  const bytes = t.pages * pageSize;
  return {
    pages: t.pages,
    bytes,
    share: shareOf(bytes, fileBytes),
    fill: t.capacity > 0 ? t.used / t.capacity : 0,
    branch: t.branch,
    leaf: t.leaf,
    overflow: t.overflow,
    subDatabases: t.subDbs,
    subBranch: t.subBranch,
    subLeaf: t.subLeaf,
    subOverflow: t.subOverflow,
  };
}

/** Walks one environment's data.mdb: the walk, or why the file could not be walked at all. */
function walk(env: RootDatabase, dir: string, file: string): FilePages | string {
  try {
    return walkEnvironment(env, join(dir, file));
  } catch (e) {
    return `cannot walk ${file}: ${(e as Error).message}`;
  }
}

/**
 * The file's totals from its walk, and each database's `space` added to `dbs` (a database the
 * walk found but lmdb-js could not open gets its entry from the walk's record of it).
 */
function fileSpace(
  dir: string,
  file: string,
  w: FilePages | string,
  dbs: Record<string, DbStats>,
): FileSpace {
  if (typeof w === "string") {
    const none = { pages: 0, bytes: 0, share: 0 };
    let bytes = 0;
    try {
      bytes = statSync(join(dir, file)).size;
    } catch {}
    return {
      file,
      bytes,
      pageSize: 0,
      pages: 0,
      lmdb: none,
      free: { ...none, listed: 0, unlisted: 0, tail: 0 },
      complete: false,
      problems: [w],
    };
  }
  const ps = w.pageSize;
  const bytes = w.filePages * ps;
  for (const [name, t] of Object.entries(w.databases)) {
    dbs[name] ??= {
      entries: t.entries,
      bytes: (t.branch + t.leaf + t.overflow) * ps,
      depth: t.depth,
      pages: { branch: t.branch, leaf: t.leaf, overflow: t.overflow },
    };
    (dbs[name] as DbStats).space = dbSpace(t, ps, bytes);
  }
  const lmdbPages = 2 + w.freeDb.pages + w.mainDb.pages;
  return {
    file,
    bytes,
    pageSize: ps,
    pages: w.filePages,
    lmdb: { pages: lmdbPages, bytes: lmdbPages * ps, share: shareOf(lmdbPages * ps, bytes) },
    free: {
      pages: w.free,
      bytes: w.free * ps,
      share: shareOf(w.free * ps, bytes),
      listed: w.freeListed,
      unlisted: w.unreachable - w.freeListed,
      tail: w.tail,
    },
    complete: w.complete,
    problems: w.problems,
  };
}

/** Bytes by role, both files together. */
function roles(
  log: Record<string, DbStats>,
  derived: Record<string, DbStats>,
  files: FileSpace[],
): Stats["roles"] {
  const bytes = Object.fromEntries(Object.keys(ROLES).map((r) => [r, 0])) as Record<Role, number>;
  for (const [isDerived, dbs] of [
    [false, log],
    [true, derived],
  ] as const)
    for (const [name, d] of Object.entries(dbs)) bytes[roleOf(isDerived, name)] += d.space?.bytes ?? 0;
  let total = 0;
  for (const f of files) {
    bytes.lmdb += f.lmdb.bytes;
    bytes.free += f.free.bytes;
    total += f.bytes;
  }
  const out = {} as Stats["roles"];
  for (const r of Object.keys(ROLES) as Role[]) out[r] = { bytes: bytes[r], share: shareOf(bytes[r], total) };
  return out;
}

/** What the disk budget counts (store/disk-use.ts), from the walk of both files. */
function diskSpace(files: FileSpace[], b: { max: number; lowWater: number }): Stats["disk"] {
  const d = { budget: b.max, lowWater: b.lowWater, inUse: 0, free: 0, files: 0 };
  for (const f of files) {
    d.inUse += f.bytes - (f.free.listed + f.free.tail) * f.pageSize;
    d.free += f.free.bytes;
    d.files += f.bytes;
  }
  return d;
}

/** `config`: the budget's settings (none without it). */
export function collectStats(store: Store, dir: string, config?: Config): Stats {
  const env = store.env.getStats() as EnvStat;
  const bounds = timeBounds(store);
  const kinds: Record<string, number> = {};
  for (const [k, n] of [...countByKind(store)].sort((a, b) => a[0] - b[0])) kinds[String(k)] = n;
  const file = dataFileSize(dir);
  const databases = databaseStats(store.env);
  const derived = databaseStats(store.derived);
  const space = {
    log: fileSpace(dir, "data.mdb", walk(store.env, dir, "data.mdb"), databases),
    derived: fileSpace(
      dir,
      `${DERIVED_DIR}/data.mdb`,
      walk(store.derived, dir, `${DERIVED_DIR}/data.mdb`),
      derived,
    ),
  };
  return {
    data: dir,
    events: (store.events.getStats() as LmdbStat).entryCount,
    oldest: bounds?.oldest ?? null,
    newest: bounds?.newest ?? null,
    kinds,
    databases: sortedByName(databases),
    derived: sortedByName(derived),
    file: {
      ...file,
      used: (env.lastPageNumber + 1) * env.pageSize,
      mapSize: env.mapSize,
      pageSize: env.pageSize,
    },
    readers: env.numReaders,
    space,
    roles: roles(databases, derived, [space.log, space.derived]),
    disk: diskSpace([space.log, space.derived], config ? budgetSettings(config) : { max: 0, lowWater: 0 }),
  };
}

const sortedByName = <T>(r: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export async function run(argv: string[]): Promise<number> {
  return guarded("stats", async () => {
    const { flags, config } = commandArgs(argv, { booleans: ["json"], positional: 0 });
    const store = openExisting(config.data, config["store.mapSizeGb"]);
    let s: Stats;
    try {
      s = collectStats(store, config.data, config);
    } finally {
      await closeStore(store);
    }
    console.log(flags.json !== undefined ? JSON.stringify(s) : table(s));
    return 0;
  });
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function table(s: Stats): string {
  const when = (t: number | null) => (t === null ? "-" : `${t} (${isoTime(t)})`);
  const lines = [
    `data      ${s.data}`,
    `file      data.mdb ${fmtBytes(s.file.bytes)}, ${fmtBytes(s.file.onDisk)} on disk, ${fmtBytes(s.file.used)} in use (map ${fmtBytes(s.file.mapSize)}, page ${s.file.pageSize} B)`,
    `          ${s.space.derived.file} ${fmtBytes(s.space.derived.bytes)}`,
    `events    ${fmtInt(s.events)}`,
    `oldest    ${when(s.oldest)}`,
    `newest    ${when(s.newest)}`,
    "",
    "kind          events",
    ...Object.entries(s.kinds).map(([k, n]) => `${k.padEnd(8)} ${fmtInt(n).padStart(11)}`),
  ];
  const cols = (
    name: string,
    entries: string,
    depth: string,
    pages: string,
    size: string,
    share: string,
    fill: string,
  ) =>
    `${name.padEnd(14)} ${entries.padStart(10)} ${depth.padStart(6)} ${pages.padStart(10)} ${size.padStart(11)} ${share.padStart(7)} ${fill.padStart(6)}`.trimEnd();
  const section = (title: string, dbs: Record<string, DbStats>, f: FileSpace) => {
    lines.push("", cols(title, "entries", "depth", "pages", "size", "share", "fill"));
    for (const [name, d] of Object.entries(dbs)) {
      const sp = d.space;
      lines.push(
        cols(
          name,
          fmtInt(d.entries),
          String(d.depth),
          sp ? fmtInt(sp.pages) : "-",
          fmtBytes(sp ? sp.bytes : d.bytes),
          sp ? pct(sp.share) : "-",
          sp && sp.pages > 0 ? pct(sp.fill) : "-",
        ),
      );
    }
    if (f.pageSize === 0) {
      lines.push(`  (${f.problems[0]})`);
      return;
    }
    lines.push(cols("(lmdb)", "", "", fmtInt(f.lmdb.pages), fmtBytes(f.lmdb.bytes), pct(f.lmdb.share), ""));
    lines.push(cols("free", "", "", fmtInt(f.free.pages), fmtBytes(f.free.bytes), pct(f.free.share), ""));
    lines.push(cols("total", "", "", fmtInt(f.pages), fmtBytes(f.bytes), "", ""));
    if (f.free.unlisted > 0 || f.free.tail > 0)
      lines.push(
        `  of the free pages, ${fmtInt(f.free.unlisted)} are in no free list (lost until 'relay compact') and ${fmtInt(f.free.tail)} lie past the last page in use`,
      );
    if (!f.complete)
      lines.push(
        `  walk incomplete (pages counted are a lower bound, free pages an upper one): ${f.problems.slice(0, 3).join("; ")}${f.problems.length > 3 ? "; ..." : ""}`,
      );
  };
  section("database", s.databases, s.space.log);
  section("derived/", s.derived, s.space.derived);
  const d = s.disk;
  const use = `data in use ${fmtBytes(d.inUse)}, free pages ${fmtBytes(d.free)}, data files ${fmtBytes(d.files)}`;
  lines.push(
    "",
    d.budget > 0
      ? `budget    ${fmtBytes(d.budget)} (store.maxDiskGb), low-water ${fmtBytes(d.lowWater)}; ${use}${d.inUse > d.budget ? "; over the budget" : ""}`
      : `budget    none (store.maxDiskGb); ${use}`,
  );
  lines.push("", "role                  size   share");
  for (const [r, v] of Object.entries(s.roles))
    if (v.bytes > 0)
      lines.push(
        `${ROLES[r as Role].padEnd(16)} ${fmtBytes(v.bytes).padStart(11)} ${pct(v.share).padStart(7)}`,
      );
  return lines.join("\n");
}
