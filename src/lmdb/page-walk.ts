// Counts the pages of every database of an LMDB file by walking its B-trees from the newest
// meta page, and the pages no tree reaches (free pages: space the file holds that LMDB hands out
// again). Why: lmdb-js getStats() reports a DUPSORT database's top tree only (the REQ indexes
// keep the values of a key in sub-pages and sub-databases: 4 KiB reported for 935k entries),
// and nothing about free pages or how full the pages are; it exposes no page walk either.
//
// The format is that of the LMDB bundled with lmdb-js (node_modules/lmdb/dependencies/lmdb/
// libraries/liblmdb/mdb.c, a fork close to LMDB 1.0 "mdb.master3"), 64-bit little-endian build:
//   page header (24 B): pgno u64 | txnid u64 | pad u16 (key size on LEAF2 pages) | flags u16 |
//     lower u16, upper u16 (offsets past the header: the free space between them) or, on the
//     first page of an overflow run, its page count u32
//   pages 0 and 1 are meta pages: header, then MDB_meta: magic u32 | version u32 |
//     address u64 | mapsize u64 | MDB_db[2] (free DB, main DB) | last_pg u64 | txnid u64
//   MDB_db (48 B): pad u32 (page size in the free DB's) | flags u16 | depth u16 |
//     branch u64 | leaf u64 | overflow u64 | entries u64 | root u64 (all ones: empty)
//   branch and leaf pages: u16 offsets (past the header) of their nodes after the header;
//     node (8 B + key): lo u16, hi u16 (data size, or with flags the child's pgno on a branch
//     page) | flags u16 | key size u16 | key | data
//   leaf node flags: F_BIGDATA (data on an overflow run; the node holds pgno u64 | txnid u64 |
//     pages u64), F_SUBDATA alone (a named database: MDB_db in the main DB), F_DUPDATA alone
//     (the values of a DUPSORT key inline: a sub-page, header and nodes, inside the node),
//     F_DUPDATA|F_SUBDATA (the values in a sub-database: MDB_db in the node)
//   LEAF2 pages (leaves of DUPFIXED sub-databases): values of `pad` bytes packed after the header
//   the free DB (dbi 0; its own pages are in use) maps txnid → list of freed pages: count u64,
//     then entries u64: a pgno, 0 (a gap), or -n followed by the first pgno of a run of n pages
// Every page from 2 to last_pg is then either reached exactly once from the meta's trees or
// listed in the free DB; the walk checks both, and every tree's page and entry counts against
// what its MDB_db records, and reports the walk incomplete (never throws) when a page does not
// look like what points to it.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const PAGEHDRSZ = 24;
const NODESIZE = 8;
const DB_SIZE = 48;
/** MDB_meta's offset in a meta page, and its fields' offsets in it */
const META = PAGEHDRSZ;
const MM_DBS = 24;
const MM_LAST_PG = MM_DBS + 2 * DB_SIZE;
const MM_TXNID = MM_LAST_PG + 8;
const MM_SIZE = MM_TXNID + 16;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;

const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const P_LEAF2 = 0x20;
const P_SUBP = 0x40;
/** the page flags a page on disk can have (the others are in-memory marks) */
const P_KINDS = P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_LEAF2 | P_SUBP;

const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const F_DUPDATA = 0x04;

const MDB_DUPSORT = 0x04;
const MDB_DUPFIXED = 0x10;

const MAX_PROBLEMS = 20;

/** The pages of one database (or of LMDB's free DB or main DB) in the walked snapshot. */
export interface TreePages {
  /** entries as its MDB_db records them (DUPSORT: every value) */
  entries: number;
  depth: number;
  dupSort: boolean;
  /** pages of its own tree */
  branch: number;
  leaf: number;
  overflow: number;
  /** DUPSORT: sub-databases (keys whose values outgrew an inline sub-page) and their pages */
  subDbs: number;
  subBranch: number;
  subLeaf: number;
  subOverflow: number;
  /** every page above */
  pages: number;
  /** bytes in use on those pages: nodes and their offsets; LEAF2: the values; overflow: the data */
  used: number;
  /** bytes those pages can hold: a page less its header (an overflow run has one header) */
  capacity: number;
}

export interface FilePages {
  file: string;
  pageSize: number;
  /** the txnid of the meta page walked */
  txnid: number;
  /** the snapshot's pages: its last_pg + 1 */
  snapshotPages: number;
  /** the pages of the file that take disk (filePagesOf: its length, or its blocks when sparse) */
  filePages: number;
  /** LMDB's free DB (dbi 0): the lists of free pages; its own pages are in use */
  freeDb: TreePages;
  /** LMDB's main DB (dbi 1): the names of the named databases */
  mainDb: TreePages;
  /** the named databases */
  databases: Record<string, TreePages>;
  /** pages reached from the meta's trees (free DB and main DB included, the 2 meta pages not) */
  reachable: number;
  /** pages of the snapshot no tree reaches: snapshotPages − 2 − reachable */
  unreachable: number;
  /** of those, the pages the free DB lists (LMDB reuses them once no reader needs them) */
  freeListed: number;
  /** pages of the file past the snapshot's last page */
  tail: number;
  /** unreachable + tail: reusable space */
  free: number;
  /** false when a page did not look like what points to it: the counts are then a lower bound */
  complete: boolean;
  problems: string[];
}

interface Meta {
  slot: number;
  txnid: number;
  lastPg: number;
  pageSize: number;
  freeDb: DbRecord;
  mainDb: DbRecord;
}

/** An MDB_db record. */
interface DbRecord {
  pad: number;
  flags: number;
  depth: number;
  branch: number;
  leaf: number;
  overflow: number;
  entries: number;
  /** -1: empty */
  root: number;
}

/** A u64 as a number (page numbers, counts and txnids stay far below 2^53); all ones: -1. */
function u64(b: Buffer, at: number): number {
  const lo = b.readUInt32LE(at);
  const hi = b.readUInt32LE(at + 4);
  if (lo === 0xffffffff && hi === 0xffffffff) return -1;
  return hi * 0x100000000 + lo;
}

function dbRecord(b: Buffer, at: number): DbRecord {
  return {
    pad: b.readUInt32LE(at),
    flags: b.readUInt16LE(at + 4),
    depth: b.readUInt16LE(at + 6),
    branch: u64(b, at + 8),
    leaf: u64(b, at + 16),
    overflow: u64(b, at + 24),
    entries: u64(b, at + 32),
    root: u64(b, at + 40),
  };
}

function readMeta(page: Buffer, slot: number): Meta | string {
  if ((page.readUInt16LE(18) & P_META) === 0) return `page ${slot} is not a meta page`;
  if (page.readUInt32LE(META) !== MDB_MAGIC) return `page ${slot}: not an LMDB meta page (magic)`;
  const version = page.readUInt32LE(META + 4) & 0xffff;
  if (version !== MDB_DATA_VERSION)
    return `page ${slot}: LMDB data version ${version}, expected ${MDB_DATA_VERSION}`;
  const freeDb = dbRecord(page, META + MM_DBS);
  return {
    slot,
    txnid: u64(page, META + MM_TXNID),
    lastPg: u64(page, META + MM_LAST_PG),
    pageSize: freeDb.pad,
    freeDb,
    mainDb: dbRecord(page, META + MM_DBS + DB_SIZE),
  };
}

/**
 * The newest of the two meta pages (the one a read transaction beginning now would use). Read
 * twice until both reads agree, so that a meta page being written meanwhile is not taken half old.
 */
function newestMeta(fd: number): Meta {
  const first = Buffer.alloc(4096);
  let pageSize = 0;
  for (let attempt = 0; attempt < 10; attempt++) {
    if (readSync(fd, first, 0, 4096, 0) < PAGEHDRSZ + MM_SIZE) throw new Error("too short for an LMDB file");
    const m0 = readMeta(first, 0);
    if (typeof m0 === "string") throw new Error(m0);
    pageSize = m0.pageSize;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0)
      throw new Error(`page size ${pageSize} in meta page 0`);
    const both = Buffer.alloc(2 * pageSize);
    const again = Buffer.alloc(2 * pageSize);
    if (readSync(fd, both, 0, 2 * pageSize, 0) !== 2 * pageSize)
      throw new Error("too short for two meta pages");
    readSync(fd, again, 0, 2 * pageSize, 0);
    if (!both.equals(again)) continue;
    const metas = [0, 1].map((slot) => readMeta(both.subarray(slot * pageSize), slot));
    const good = metas.filter((m): m is Meta => typeof m !== "string");
    if (good.length === 0) throw new Error(String(metas[0]));
    return good.reduce((a, b) => (b.txnid > a.txnid ? b : a));
  }
  throw new Error("the meta pages kept changing while read");
}

function emptyTree(rec: DbRecord, dupSort: boolean): TreePages {
  return {
    entries: rec.entries,
    depth: rec.depth,
    dupSort,
    branch: 0,
    leaf: 0,
    overflow: 0,
    subDbs: 0,
    subBranch: 0,
    subLeaf: 0,
    subOverflow: 0,
    pages: 0,
    used: 0,
    capacity: 0,
  };
}

/** One tree being walked: a database's own, or a sub-database of one of its keys. */
interface Tree {
  name: string;
  rec: DbRecord;
  /** where its pages are added */
  into: TreePages;
  sub: boolean;
  kind: "free" | "main" | "named" | "sub";
  /** what the walk found, checked against `rec` at the end */
  branch: number;
  leaf: number;
  overflow: number;
  entries: number;
}

interface Step {
  pgno: number;
  level: number;
  tree: Tree;
}

class Walker {
  readonly psize: number;
  readonly lastPg: number;
  /** 1: reached from a tree */
  readonly seen: Uint8Array;
  /** 1: listed in the free DB */
  readonly listed: Uint8Array;
  readonly problems: string[] = [];
  private problemCount = 0;
  private readonly page: Buffer;
  private readonly header = Buffer.alloc(PAGEHDRSZ);
  private readonly stack: Step[] = [];
  readonly trees: Tree[] = [];
  /** the named databases found in the main DB */
  readonly named = new Map<string, TreePages>();
  reachable = 0;
  listedTwice = 0;

  constructor(
    private readonly fd: number,
    readonly meta: Meta,
  ) {
    this.psize = meta.pageSize;
    this.lastPg = meta.lastPg;
    this.seen = new Uint8Array(meta.lastPg + 1);
    this.listed = new Uint8Array(meta.lastPg + 1);
    this.page = Buffer.alloc(this.psize);
  }

  problem(what: string): void {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(what);
  }

  get incomplete(): boolean {
    return this.problemCount > 0;
  }

  /** Marks pages [pgno, pgno + n) reached; false (and a problem) if not in the snapshot or reached before. */
  private reach(pgno: number, n: number, what: string): boolean {
    if (pgno < 2 || pgno + n - 1 > this.lastPg) {
      this.problem(`${what}: page ${pgno}${n > 1 ? `+${n}` : ""} outside 2..${this.lastPg}`);
      return false;
    }
    for (let p = pgno; p < pgno + n; p++)
      if (this.seen[p]) {
        this.problem(`${what}: page ${p} reached twice`);
        return false;
      }
    this.seen.fill(1, pgno, pgno + n);
    this.reachable += n;
    return true;
  }

  private read(into: Buffer, length: number, offset: number, what: string): boolean {
    if (readSync(this.fd, into, 0, length, offset) === length) return true;
    this.problem(`${what}: short read at byte ${offset}`);
    return false;
  }

  /** Walks a tree from its root; its sub-trees are walked too, before run() returns. */
  add(name: string, rec: DbRecord, into: TreePages, kind: Tree["kind"]): void {
    const tree: Tree = {
      name,
      rec,
      into,
      sub: kind === "sub",
      kind,
      branch: 0,
      leaf: 0,
      overflow: 0,
      entries: 0,
    };
    this.trees.push(tree);
    if (rec.root !== -1) this.stack.push({ pgno: rec.root, level: 1, tree });
  }

  run(): void {
    for (let step = this.stack.pop(); step; step = this.stack.pop()) this.visit(step);
    for (const t of this.trees) {
      const { rec } = t;
      const found = [t.branch, t.leaf, t.overflow, t.entries].join("/");
      const recorded = [rec.branch, rec.leaf, rec.overflow, rec.entries].join("/");
      if (found !== recorded)
        this.problem(`${t.name}: walked branch/leaf/overflow/entries ${found}, its record says ${recorded}`);
    }
  }

  private visit({ pgno, level, tree }: Step): void {
    const what = tree.name;
    if (!this.reach(pgno, 1, what)) return;
    const p = this.page;
    const ps = this.psize;
    if (!this.read(p, ps, pgno * ps, what)) return;
    const flags = p.readUInt16LE(18) & P_KINDS;
    const leaf2 = tree.sub && (tree.rec.flags & MDB_DUPFIXED) !== 0;
    const expect = level < tree.rec.depth ? P_BRANCH : P_LEAF | (leaf2 ? P_LEAF2 : 0);
    if (u64(p, 0) !== pgno || flags !== expect || level > tree.rec.depth) {
      this.problem(
        `${what}: page ${pgno} (level ${level}) has pgno ${u64(p, 0)}, flags 0x${flags.toString(16)}`,
      );
      return;
    }
    const lower = p.readUInt16LE(20);
    const upper = p.readUInt16LE(22);
    if (lower > upper || upper > ps - PAGEHDRSZ || (lower & 1) !== 0) {
      this.problem(`${what}: page ${pgno} has lower ${lower}, upper ${upper}`);
      return;
    }
    const n = lower >> 1;
    const into = tree.into;
    const used = ps - PAGEHDRSZ - (upper - lower);
    into.used += used;
    into.capacity += ps - PAGEHDRSZ;
    into.pages++;
    if (flags === P_BRANCH) {
      tree.branch++;
      if (tree.sub) into.subBranch++;
      else into.branch++;
    } else {
      tree.leaf++;
      if (tree.sub) into.subLeaf++;
      else into.leaf++;
    }
    if (flags & P_LEAF2) {
      const ksize = p.readUInt16LE(16);
      if (ksize !== tree.rec.pad || n * ksize !== used)
        this.problem(`${what}: LEAF2 page ${pgno}: ${n} values of ${ksize} B in ${used} B`);
      tree.entries += n;
      return;
    }
    for (let i = 0; i < n; i++) {
      const at = PAGEHDRSZ + p.readUInt16LE(PAGEHDRSZ + 2 * i);
      if (at < PAGEHDRSZ + upper || at + NODESIZE > ps) {
        this.problem(`${what}: page ${pgno} node ${i} at ${at}`);
        return;
      }
      const lo = p.readUInt16LE(at);
      const hi = p.readUInt16LE(at + 2);
      const nflags = p.readUInt16LE(at + 4);
      const ksize = p.readUInt16LE(at + 6);
      const data = at + NODESIZE + ksize;
      if (flags === P_BRANCH) {
        // NODEPGNO: lo | hi << 16 | flags << 32
        this.stack.push({ pgno: nflags * 0x100000000 + hi * 0x10000 + lo, level: level + 1, tree });
        continue;
      }
      const dsize = lo + hi * 0x10000;
      const dlen = nflags & F_BIGDATA ? 24 : dsize;
      if (data + dlen > ps) {
        this.problem(`${what}: page ${pgno} node ${i} runs past the page`);
        return;
      }
      if (nflags & F_BIGDATA) {
        const listing =
          tree.kind === "free"
            ? this.overflowData(p, data, dsize, tree)
            : this.overflow(p, data, dsize, tree);
        if (listing) this.list(listing, what);
        tree.entries++;
      } else if (tree.kind === "main" && nflags & F_SUBDATA) {
        // lmdb-js stores the names with their C string's NUL
        const name = p.toString("utf8", at + NODESIZE, data).replace(/\0$/, "");
        const rec = dbRecord(p, data);
        const t = emptyTree(rec, (rec.flags & MDB_DUPSORT) !== 0);
        this.named.set(name, t);
        this.add(name, rec, t, "named");
        tree.entries++;
      } else if ((nflags & (F_DUPDATA | F_SUBDATA)) === (F_DUPDATA | F_SUBDATA)) {
        const rec = dbRecord(p, data);
        into.subDbs++;
        tree.entries += rec.entries;
        this.add(`${what} (a sub-database)`, rec, into, "sub");
      } else if (nflags & F_DUPDATA) {
        // a sub-page: its bytes are part of this page's; its values are entries
        const sflags = p.readUInt16LE(data + 18);
        if ((sflags & P_SUBP) === 0 || dsize < PAGEHDRSZ) {
          this.problem(`${what}: page ${pgno} node ${i}: sub-page flags 0x${sflags.toString(16)}`);
          return;
        }
        tree.entries += p.readUInt16LE(data + 20) >> 1;
      } else {
        if (tree.kind === "free") this.list(p.subarray(data, data + dsize), what);
        tree.entries++;
      }
    }
  }

  /** An F_BIGDATA node's overflow run: counted, its first page's header checked. */
  private overflow(p: Buffer, data: number, dsize: number, tree: Tree): undefined {
    const what = tree.name;
    const first = u64(p, data);
    const n = u64(p, data + 16);
    const ps = this.psize;
    const expected = Math.floor((PAGEHDRSZ - 1 + dsize) / ps) + 1;
    if (n !== expected) {
      this.problem(`${what}: overflow run at ${first} of ${n} pages for ${dsize} B`);
      return;
    }
    if (!this.reach(first, n, what)) return;
    if (!this.read(this.header, PAGEHDRSZ, first * ps, what)) return;
    const h = this.header;
    if (u64(h, 0) !== first || (h.readUInt16LE(18) & P_KINDS) !== P_OVERFLOW || h.readUInt32LE(20) !== n) {
      this.problem(
        `${what}: overflow page ${first} has pgno ${u64(h, 0)}, flags 0x${h.readUInt16LE(18).toString(16)}`,
      );
      return;
    }
    tree.overflow += n;
    const into = tree.into;
    if (tree.sub) into.subOverflow += n;
    else into.overflow += n;
    into.pages += n;
    into.used += dsize;
    into.capacity += n * ps - PAGEHDRSZ;
  }

  /** A free DB record on an overflow run: counted like any, its list read. */
  private overflowData(p: Buffer, data: number, dsize: number, tree: Tree): Buffer | undefined {
    const before = tree.overflow;
    this.overflow(p, data, dsize, tree);
    if (tree.overflow === before) return undefined;
    const list = Buffer.alloc(dsize);
    return this.read(list, dsize, u64(p, data) * this.psize + PAGEHDRSZ, tree.name) ? list : undefined;
  }

  /** Marks the pages a free DB record lists: count, then pgno | 0 | -n, first pgno of n. */
  private list(b: Buffer, what: string): void {
    if (b.length < 8) return;
    const count = Math.min(u64(b, 0), b.length / 8 - 1);
    for (let i = 1; i <= count; i++) {
      const e = b.readBigInt64LE(i * 8);
      let first: number;
      let n: number;
      if (e === 0n) continue;
      if (e > 0n) {
        first = Number(e);
        n = 1;
      } else {
        n = Number(-e);
        i++;
        if (i > count) {
          this.problem(`${what}: a run of ${n} free pages without its first page`);
          return;
        }
        first = Number(b.readBigInt64LE(i * 8));
      }
      if (first < 2 || first + n - 1 > this.lastPg) {
        this.problem(`${what}: free pages ${first}+${n} outside 2..${this.lastPg}`);
        continue;
      }
      for (let q = first; q < first + n; q++) {
        if (this.listed[q]) this.listedTwice++;
        this.listed[q] = 1;
      }
    }
  }
}

export interface WalkOptions {
  /** called between reading the meta page and walking its trees (tests: to let writers run) */
  afterMeta?: () => void;
}

/**
 * Walks the newest snapshot of an LMDB file. Safe alone only when no one writes the file: see
 * walkEnvironment for a file a process may be writing.
 */
export function walkFile(file: string, o: WalkOptions = {}): FilePages {
  const fd = openSync(file, "r");
  try {
    const meta = newestMeta(fd);
    o.afterMeta?.();
    const w = new Walker(fd, meta);
    const freeDb = emptyTree(meta.freeDb, false);
    const mainDb = emptyTree(meta.mainDb, false);
    w.add("(free DB)", meta.freeDb, freeDb, "free");
    w.add("(main DB)", meta.mainDb, mainDb, "main");
    w.run();
    let unreachable = 0;
    let freeListed = 0;
    let both = 0;
    for (let p = 2; p <= meta.lastPg; p++) {
      if (w.listed[p]) {
        if (w.seen[p]) both++;
        else freeListed++;
      }
      if (!w.seen[p]) unreachable++;
    }
    if (both > 0) w.problem(`${both} pages are both in use and listed free`);
    if (w.listedTwice > 0) w.problem(`${w.listedTwice} free pages are listed twice`);
    const filePages = filePagesOf(fd, meta.pageSize);
    const tail = Math.max(0, filePages - (meta.lastPg + 1));
    const databases: Record<string, TreePages> = {};
    for (const name of [...w.named.keys()].sort()) databases[name] = w.named.get(name) as TreePages;
    return {
      file,
      pageSize: meta.pageSize,
      txnid: meta.txnid,
      snapshotPages: meta.lastPg + 1,
      filePages,
      freeDb,
      mainDb,
      databases,
      reachable: w.reachable,
      unreachable,
      freeListed,
      tail,
      free: unreachable + tail,
      complete: !w.incomplete,
      problems: w.problems,
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * The pages of a file that take disk: its length, or for a sparse file (an environment written
 * through a writable map is as long as its map, store.ts) the blocks allocated to it.
 */
function filePagesOf(fd: number, pageSize: number): number {
  const st = fstatSync(fd);
  return Math.floor(Math.min(st.size, st.blocks * 512) / pageSize);
}

/** What an LMDB file's free lists hold, read from them alone (disk-use.ts). */
export interface FreeListed {
  pageSize: number;
  /** the snapshot's pages: its last_pg + 1 */
  snapshotPages: number;
  /** the pages of the file that take disk (filePagesOf) */
  filePages: number;
  /** pages of the snapshot the free DB lists (its own pages not among them) */
  listed: number;
  /** false when a page did not look like what points to it: `listed` is then a lower bound */
  complete: boolean;
  problems: string[];
}

/**
 * The pages of the newest snapshot of an LMDB file that its free lists hold, walking LMDB's
 * free DB only: a few pages (8 bytes a free page), where walkFile reads the whole file. Same
 * safety as walkFile: run it through inReadTxn for a file a process may be writing.
 */
export function walkFreeList(file: string): FreeListed {
  const fd = openSync(file, "r");
  try {
    const meta = newestMeta(fd);
    const w = new Walker(fd, meta);
    w.add("(free DB)", meta.freeDb, emptyTree(meta.freeDb, false), "free");
    w.run();
    let listed = 0;
    for (let p = 2; p <= meta.lastPg; p++) if (w.listed[p] && !w.seen[p]) listed++;
    return {
      pageSize: meta.pageSize,
      snapshotPages: meta.lastPg + 1,
      filePages: filePagesOf(fd, meta.pageSize),
      listed,
      complete: !w.incomplete,
      problems: w.problems,
    };
  } finally {
    closeSync(fd);
  }
}

/** What walkEnvironment needs of an lmdb-js environment. */
interface ReadTxnSource {
  useReadTransaction(): { done(): void };
}

/**
 * Walks the newest snapshot of the file of `env`, which a process (`relay serve`) may be writing
 * meanwhile. LMDB hands out again only pages freed by transactions older than its oldest reader,
 * so while a read transaction pins snapshot T, no page of snapshot T or of any later one is
 * overwritten. Hence the order: the read transaction begins first, and the meta pages are read
 * after it, so the newest of them has a txnid ≥ T and its trees stay intact until done().
 * (Reading the meta first, then checking that env info's lastTxnId equals its txnid, does not
 * prove the transaction pins it: a writer stores the meta page before it publishes the txnid
 * in the lock file that a beginning reader takes its snapshot from, so a reader may pin T − 1
 * while the file and env info already say T, and pages freed by T may be reused.)
 * The txnid walked is usually T itself, but may be a later one committed meanwhile.
 */
export function walkEnvironment(env: ReadTxnSource, file: string, o: WalkOptions = {}): FilePages {
  return inReadTxn(env, () => walkFile(file, o));
}

/** Runs `walk` (walkFile, walkFreeList) while a read transaction of `env` pins its snapshot. */
export function inReadTxn<T>(env: ReadTxnSource, walk: () => T): T {
  const txn = env.useReadTransaction();
  try {
    return walk();
  } finally {
    txn.done();
  }
}
