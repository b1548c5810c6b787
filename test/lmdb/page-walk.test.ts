// The page walk on real LMDB files written by lmdb-js: its counts against LMDB's own for plain
// databases, a DUPSORT database's sub-database (which LMDB's statistics leave out), free pages,
// damaged files, and a walk while another process writes.
import { afterAll, expect, test } from "bun:test";
import {
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { type FilePages, type TreePages, walkEnvironment, walkFile } from "../../src/lmdb/page-walk.ts";

const root = mkdtempSync(join(tmpdir(), "page-walk-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const newDir = (): string => join(root, `env${n++}`);

interface LmdbStat {
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
  entryCount: number;
}

const openEnv = (path: string): RootDatabase =>
  open({ path, maxDbs: 8, compression: false, noSubdir: false, mapSize: 2 ** 30 } as never) as RootDatabase;

const key = (i: number): Buffer => Buffer.from(i.toString().padStart(8, "0"));

function dbOf(w: FilePages, name: string): TreePages {
  const t = w.databases[name];
  if (!t) throw new Error(`no database ${name} in ${Object.keys(w.databases)}`);
  return t;
}

/** Every page from 0 to last_pg is a meta page, reached from a tree, or listed free: exactly once. */
function expectAccounted(w: FilePages, fileGrows = false): void {
  expect(w.problems).toEqual([]);
  expect(w.complete).toBe(true);
  expect(w.reachable + w.unreachable + 2).toBe(w.snapshotPages);
  expect(w.freeListed).toBe(w.unreachable);
  const inTrees = [w.freeDb, w.mainDb, ...Object.values(w.databases)].reduce((a, t) => a + t.pages, 0);
  expect(inTrees).toBe(w.reachable);
  expect(w.free).toBe(w.unreachable + w.tail);
  const size = statSync(w.file).size;
  if (fileGrows) expect(w.filePages * w.pageSize).toBeLessThanOrEqual(size);
  else expect(w.filePages * w.pageSize).toBe(size);
}

test("plain databases: pages and entries equal LMDB's statistics; every page accounted for", async () => {
  const dir = newDir();
  const env = openEnv(dir);
  const big = env.openDB({ name: "big", keyEncoding: "binary", encoding: "binary" });
  const small = env.openDB({ name: "small", keyEncoding: "binary", encoding: "binary" });
  const empty = env.openDB({ name: "empty", keyEncoding: "binary", encoding: "binary" });
  env.transactionSync(() => {
    for (let i = 0; i < 500; i++) big.putSync(key(i), Buffer.alloc(3000 + i, i & 0xff));
    for (let i = 0; i < 20_000; i++) small.putSync(key(i), Buffer.alloc(32, i & 0xff));
  });
  const w = walkEnvironment(env, join(dir, "data.mdb"));
  expectAccounted(w);
  expect(Object.keys(w.databases)).toEqual(["big", "empty", "small"]);
  for (const [name, db] of [
    ["big", big],
    ["small", small],
    ["empty", empty],
  ] as const) {
    const st = db.getStats() as LmdbStat;
    const t = dbOf(w, name);
    expect([name, t.branch, t.leaf, t.overflow, t.entries]).toEqual([
      name,
      st.treeBranchPageCount,
      st.treeLeafPageCount,
      st.overflowPages,
      st.entryCount,
    ]);
    expect(t.pages).toBe(st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages);
  }
  // 3000..3499-byte values: one overflow page each, their bytes counted whole
  expect(dbOf(w, "big").overflow).toBe(500);
  expect(dbOf(w, "big").used).toBeGreaterThan(500 * 3000);
  expect(dbOf(w, "big").used).toBeLessThanOrEqual(dbOf(w, "big").capacity);
  expect(dbOf(w, "empty").pages).toBe(0);
  // 20,000 nodes of 8 + 8 + 32 bytes and a 2-byte offset each, at least
  expect(dbOf(w, "small").used).toBeGreaterThanOrEqual(20_000 * 50);
  await env.close();
});

test("a DUPSORT|DUPFIXED database: the values in a sub-database count, though LMDB's statistics leave them out", async () => {
  const dir = newDir();
  const env = openEnv(dir);
  const dups = env.openDB({
    name: "dups",
    keyEncoding: "binary",
    encoding: "binary",
    dupSort: true,
    dupFixed: true,
  } as never) as unknown as typeof env;
  env.transactionSync(() => {
    for (let i = 0; i < 10_000; i++) {
      const v = Buffer.alloc(16);
      v.writeUInt32BE(i, 12);
      dups.putSync(Buffer.from("one key"), v);
    }
    // three values: inline in the leaf (a sub-page), no sub-database
    for (let i = 0; i < 3; i++) dups.putSync(Buffer.from("other key"), Buffer.alloc(16, i));
  });
  const w = walkEnvironment(env, join(dir, "data.mdb"));
  expectAccounted(w);
  const t = dbOf(w, "dups");
  const st = dups.getStats() as LmdbStat;
  expect(t.dupSort).toBe(true);
  expect(t.entries).toBe(10_003);
  expect(st.entryCount).toBe(10_003);
  expect(t.subDbs).toBe(1);
  expect(t.pages).toBeGreaterThanOrEqual(Math.ceil((10_000 * 16) / 4096));
  expect(t.subLeaf).toBeGreaterThanOrEqual(Math.ceil((10_000 * 16) / 4072));
  expect(t.used).toBeGreaterThanOrEqual(10_003 * 16);
  // LMDB's statistics: the top tree only (one leaf holding both keys)
  expect(st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages).toBe(1);
  expect(t.branch + t.leaf + t.overflow).toBe(1);
  await env.close();
});

test("deleting half of a database in a later transaction leaves free pages, all of them listed", async () => {
  const dir = newDir();
  const env = openEnv(dir);
  const db = env.openDB({ name: "db", keyEncoding: "binary", encoding: "binary" });
  env.transactionSync(() => {
    for (let i = 0; i < 20_000; i++) db.putSync(key(i), Buffer.alloc(100, 1));
  });
  const before = walkEnvironment(env, join(dir, "data.mdb"));
  expectAccounted(before);
  env.transactionSync(() => {
    for (let i = 0; i < 20_000; i += 2) db.removeSync(key(i));
  });
  env.transactionSync(() => {
    for (let i = 0; i < 10_000; i++) db.removeSync(key(i));
  });
  const after = walkEnvironment(env, join(dir, "data.mdb"));
  expectAccounted(after);
  expect(dbOf(after, "db").entries).toBe(5_000);
  expect(dbOf(after, "db").pages).toBeLessThan(dbOf(before, "db").pages);
  expect(after.unreachable).toBeGreaterThan(0);
  expect(after.unreachable).toBeGreaterThan(before.unreachable);
  // removing half of the entries of each leaf leaves the pages about half full
  expect(dbOf(after, "db").used / dbOf(after, "db").capacity).toBeLessThan(0.75);
  await env.close();
});

test("a damaged or truncated file: the walk says incomplete, it does not throw", async () => {
  const dir = newDir();
  const env = openEnv(dir);
  const db = env.openDB({ name: "db", keyEncoding: "binary", encoding: "binary" });
  env.transactionSync(() => {
    for (let i = 0; i < 20_000; i++) db.putSync(key(i), Buffer.alloc(100, 1));
  });
  await env.close();
  const good = walkFile(join(dir, "data.mdb"));
  expectAccounted(good);

  const damaged = join(root, "damaged.mdb");
  copyFileSync(join(dir, "data.mdb"), damaged);
  const fd = openSync(damaged, "r+");
  const junk = Buffer.alloc(4096, 0x5a);
  for (let p = 3; p < good.snapshotPages; p += 7) writeSync(fd, junk, 0, 4096, p * 4096);
  closeSync(fd);
  const d = walkFile(damaged);
  expect(d.complete).toBe(false);
  expect(d.problems.length).toBeGreaterThan(0);
  expect(d.reachable).toBeLessThan(good.reachable);

  const truncated = join(root, "truncated.mdb");
  copyFileSync(join(dir, "data.mdb"), truncated);
  truncateSync(truncated, Math.floor(good.snapshotPages / 2) * 4096);
  const t = walkFile(truncated);
  expect(t.complete).toBe(false);
  expect(t.problems.some((p) => p.includes("short read"))).toBe(true);

  expect(() => walkFile(join(root, "no such file"))).toThrow();
});

/** A process that for 1.5 s commits transactions of random puts and removes to `db` in `dir`. */
/**
 * Another process committing random writes until told to stop: tests stop it once they have seen
 * what they wait for (not after a fixed time, which a loaded machine may spend starting it).
 */
async function startWriter(dir: string): Promise<{ running: () => boolean; finish: () => Promise<number> }> {
  const script = join(root, `writer${n}.ts`);
  const stop = join(root, `stop${n++}`);
  await Bun.write(
    script,
    `import { existsSync } from "node:fs";
import { open } from "lmdb";
const env = open({ path: ${JSON.stringify(dir)}, maxDbs: 8, compression: false, noSubdir: false, mapSize: 2 ** 30 });
const db = env.openDB({ name: "db", keyEncoding: "binary", encoding: "binary" });
const key = (i) => Buffer.from(i.toString().padStart(8, "0"));
let txns = 0;
while (!existsSync(${JSON.stringify(stop)})) {
  env.transactionSync(() => {
    for (let j = 0; j < 300; j++) {
      const i = Math.floor(Math.random() * 40_000);
      if (Math.random() < 0.5) db.removeSync(key(i));
      else db.putSync(key(i), Buffer.alloc(100 + (i % 400), txns & 0xff));
    }
  });
  txns++;
}
console.log(txns);
await env.close();
`,
  );
  const writer = Bun.spawn([process.execPath, script], {
    cwd: import.meta.dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  const started = Date.now();
  return {
    running: () => writer.exitCode === null && Date.now() - started < 15_000,
    finish: async () => {
      writeFileSync(stop, "");
      await writer.exited;
      expect([writer.exitCode, await new Response(writer.stderr).text()]).toEqual([0, ""]);
      return Number(await new Response(writer.stdout).text());
    },
  };
}

function filledEnv(): { dir: string; env: RootDatabase } {
  const dir = newDir();
  const env = openEnv(dir);
  const db = env.openDB({ name: "db", keyEncoding: "binary", encoding: "binary" });
  env.transactionSync(() => {
    for (let i = 0; i < 20_000; i++) db.putSync(key(i), Buffer.alloc(200, 1));
  });
  return { dir, env };
}

test("walks while another process writes: each in a read transaction sees one whole snapshot", async () => {
  const { dir, env } = filledEnv();
  const writer = await startWriter(dir);
  const txnids = new Set<number>();
  let walks = 0;
  while (writer.running() && (walks < 5 || txnids.size < 4)) {
    // the writer commits meanwhile; the read transaction keeps the walked pages from reuse
    const w = walkEnvironment(env, join(dir, "data.mdb"), { afterMeta: () => Bun.sleepSync(50) });
    expectAccounted(w, true);
    txnids.add(w.txnid);
    walks++;
    await Bun.sleep(1);
  }
  expect(await writer.finish()).toBeGreaterThan(3);
  expect(walks).toBeGreaterThan(3);
  // the walks saw the writer's commits, not one snapshot over and over
  expect(txnids.size).toBeGreaterThan(3);
  await env.close();
}, 20_000);

test("the control: walks without a read transaction meet pages the writer reused", async () => {
  const { dir, env } = filledEnv();
  await env.close();
  const writer = await startWriter(dir);
  let incomplete = 0;
  while (writer.running() && incomplete === 0) {
    const w = walkFile(join(dir, "data.mdb"), { afterMeta: () => Bun.sleepSync(100) });
    if (!w.complete) incomplete++;
    await Bun.sleep(1);
  }
  await writer.finish();
  expect(incomplete).toBeGreaterThan(0);
}, 20_000);
