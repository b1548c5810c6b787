// Copies of the log's LMDB environment, for `relay compact` and `relay backup`. Both read one
// snapshot (one read transaction), so they are consistent while a relay keeps writing.
//
// Neither uses LMDB's compacting copy (mdb_env_copy2 with MDB_CP_COMPACT, lmdb-js
// `backup(dest, true)`): in the LMDB that lmdb-js 3.5 builds (its own freelist format), a
// compacted copy of an environment that had free pages takes writes until a transaction frees
// pages, then aborts (`Assertion 'key.mv_size > 0' failed in mdb_page_alloc()`) or segfaults,
// every time: `relay delete` and a NIP-62 vanish on such a copy crashed the process
// (kriszyp/lmdb-js#198 reports corrupt compacted backups). The plain copy (mdb_env_copy,
// `backup(dest, false)`) and a rewrite through ordinary puts are sound.
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RootDatabase, Transaction } from "lmdb";
import { open } from "lmdb";

/** The named databases of an environment, as its main database lists them in `txn`. */
export function databaseNamesIn(env: RootDatabase, txn?: Transaction): string[] {
  return Array.from(env.getKeys(txn === undefined ? {} : { transaction: txn }), String);
}

/** Bytes of keys and values written per write transaction of the copy. */
const CHUNK_BYTES = 64 * 2 ** 20;

/**
 * Writes a compacted copy of `env` into the empty directory `dest`: every named database
 * rewritten in key order with MDB_APPEND, so pages are filled densely and free pages are left
 * behind, from one read transaction of the source. Returns the entries copied per database
 * (the snapshot's counts). Every database must be a plain one (binary keys, no duplicates).
 */
export async function compactCopy(
  env: RootDatabase,
  dest: string,
  mapSize: number,
): Promise<Record<string, number>> {
  const copy = open({ path: dest, maxDbs: 32, compression: false, noSubdir: false, mapSize });
  // Every database is opened before the read transaction begins: LMDB refuses a cursor in a
  // transaction older than the handle of its database.
  const dbs = databaseNamesIn(env).map((name) => ({
    name,
    from: env.openDB({ name, keyEncoding: "binary", encoding: "binary" }),
    to: copy.openDB({ name, keyEncoding: "binary", encoding: "binary" }),
  }));
  const txn = env.useReadTransaction();
  const counts: Record<string, number> = {};
  try {
    for (const { name, from, to } of dbs) {
      const it = from.getRange({ transaction: txn })[Symbol.iterator]();
      let n = 0;
      let more = true;
      while (more) {
        copy.transactionSync(() => {
          let bytes = 0;
          while (bytes < CHUNK_BYTES) {
            const r = it.next();
            if (r.done) {
              more = false;
              return;
            }
            const { key, value } = r.value as { key: Buffer; value: Buffer };
            to.putSync(key, value, { append: true });
            bytes += key.length + value.length;
            n++;
          }
        });
      }
      counts[name] = n;
    }
  } finally {
    txn.done();
    await copy.close();
  }
  return counts;
}

/**
 * Writes a plain copy of `env` (LMDB's mdb_env_copy: every page as it is, free pages too) into
 * the directory `dest`. Consistent: LMDB copies from one read transaction.
 */
export async function plainCopy(env: RootDatabase, dest: string): Promise<void> {
  await env.backup(dest, false);
}

/** Whether a directory already holds an LMDB data file. */
export const holdsData = (dir: string): boolean => readdirSync(dir).includes("data.mdb");

/**
 * Where a copy is written until it is complete: DEST/incomplete/, emptied first (what a copy
 * killed part way left there). Only a copy that checks out is moved to DEST/data.mdb
 * (`publishCopy`, one rename), so DEST never holds a torn or partial data.mdb that a relay
 * could be started on.
 */
export function stagingDir(dest: string): string {
  const dir = join(dest, INCOMPLETE);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The staging subdirectory's name. */
export const INCOMPLETE = "incomplete";

/**
 * Moves a checked copy from DEST/incomplete/ to DEST/data.mdb and removes the staging. The rest
 * of the staging (lock.mdb, derived/) goes first, so a process killed after the rename leaves at
 * most an empty directory beside the published copy.
 */
export function publishCopy(dest: string): void {
  const dir = join(dest, INCOMPLETE);
  for (const name of readdirSync(dir))
    if (name !== "data.mdb") rmSync(join(dir, name), { recursive: true, force: true });
  renameSync(join(dir, "data.mdb"), join(dest, "data.mdb"));
  rmSync(dir, { recursive: true, force: true });
}
