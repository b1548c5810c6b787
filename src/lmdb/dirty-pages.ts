// Giving back the memory LMDB keeps for the pages its write transactions change.
//
// Without MDB_WRITEMAP, a write transaction copies every page it changes into a page-sized block
// of the C heap, and when the transaction ends LMDB keeps those blocks on a list in the
// environment (`me_dpages`) for the next one instead of freeing them. Nothing shortens the list
// before the environment closes, so each environment holds as much as its largest transaction
// ever changed: at a million events a consumer batch changes most leaf pages of the random-keyed
// REQ, count and search trees, and the derived environment kept ~190 MiB of the relay's ~320 MiB
// of anonymous memory at rest, for as long as the process lived (docs/performance/2026-11.md, "Memory,
// where it goes"). MDB_WRITEMAP, which needs no such copies, makes LMDB extend the data file to
// the whole map size (a sparse 1 TiB file) and turns a full disk into a SIGBUS; closing and
// opening the environment again would invalidate every handle the relay's threads hold.
//
// So once a burst is over, the relay frees that list itself: inside a write transaction of the
// environment (which holds LMDB's writer lock, and the list is only touched by the thread that
// holds it), each block is handed to libc's free() and the list head cleared, then malloc_trim
// returns the freed memory to the kernel. The next large transaction allocates its pages again.
//
// This reads LMDB's environment structure through lmdb-js's table of open environments. The
// offsets are those of the lmdb-js release pinned in package.json (3.5.6, 64-bit), computed with
// offsetof() over its mdb.c; before touching anything the environment is recognised by three
// fields at once (its process id, its page size and its path, which must name this store's
// directory), and on any other platform, version or mismatch nothing is done.
import { CString, dlopen, FFIType, read, toArrayBuffer } from "bun:ffi";
import { realpathSync } from "node:fs";
import type { RootDatabase } from "lmdb";
import pkg from "../../package.json" with { type: "json" };

/** The lmdb-js release whose layout the offsets below describe. */
const LAYOUT_VERSION = "3.5.6";

// lmdb-js's env_tracking_t: { pthread_mutex_t* envsLock; std::vector<SharedEnv> envs; … }, and a
// SharedEnv is { MDB_env* env; uint64_t dev; uint64_t inode; int count; bool hasWrites; }.
const ENVS_BEGIN = 8;
const ENVS_END = 16;
const SHARED_ENV_SIZE = 32;
// MDB_env (lmdb-js 3.5.6's mdb.c, MDB_RPAGE_CACHE on, 64-bit)
const ME_PSIZE = 16;
const ME_PID = 40;
const ME_PATH = 48;
const ME_DPAGES = 232;
/** a free block's link to the next one: MDB_page's first word (`mp_next`) */
const MP_NEXT = 0;

interface Libc {
  free: (p: number) => void;
  mallocTrim: () => number;
}

let libc: Libc | null | undefined;

function loadLibc(): Libc | null {
  if (process.platform !== "linux" || (process.arch !== "x64" && process.arch !== "arm64")) return null;
  // the exact release package.json pins (and package-lock.json installs)
  if (pkg.dependencies.lmdb !== LAYOUT_VERSION) return null;
  try {
    // glibc's: lmdb-js's native module allocates with the process's malloc, which is glibc's
    // (not the runtime's own allocator, which only its JavaScript heaps use). Where libc.so.6 or
    // malloc_trim is missing (musl) nothing is freed.
    const lib = dlopen("libc.so.6", {
      free: { args: [FFIType.u64], returns: FFIType.void },
      malloc_trim: { args: [FFIType.u64], returns: FFIType.i32 },
    });
    return {
      free: (p) => lib.symbols.free(p),
      mallocTrim: () => lib.symbols.malloc_trim(0) as number,
    };
  } catch {
    return null;
  }
}

function realpath(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** The address of the MDB_env this process opened at `dir`, or 0 if it cannot be recognised. */
function findEnv(dir: string): number {
  const tracking = (globalThis as { __lmdb_envs__?: number }).__lmdb_envs__;
  const want = realpath(dir);
  if (typeof tracking !== "number" || tracking === 0 || want === null) return 0;
  const begin = read.ptr(tracking as never, ENVS_BEGIN);
  const end = read.ptr(tracking as never, ENVS_END);
  if (begin === 0 || end < begin || (end - begin) % SHARED_ENV_SIZE !== 0) return 0;
  for (let at = begin; at < end; at += SHARED_ENV_SIZE) {
    const env = read.ptr(at as never, 0);
    if (env === 0) continue;
    const psize = read.u32(env as never, ME_PSIZE);
    if (
      read.i32(env as never, ME_PID) !== process.pid ||
      psize < 512 ||
      psize > 65536 ||
      (psize & (psize - 1)) !== 0
    )
      continue;
    const path = read.ptr(env as never, ME_PATH);
    if (path !== 0 && realpath(new CString(path as never).toString()) === want) return env;
  }
  return 0;
}

export interface Released {
  /** page-sized blocks freed */
  pages: number;
  bytes: number;
}

/**
 * Frees the blocks LMDB keeps for the next write transaction of the environment `env` opened at
 * `dir`, then returns free memory to the kernel. Returns null where that cannot be done safely
 * (another platform or lmdb-js release, or the environment not recognised). Runs a write
 * transaction, so call it when writes have paused: it waits for the one in progress.
 */
export function releaseDirtyPages(envs: readonly { env: RootDatabase; dir: string }[]): Released | null {
  libc ??= loadLibc();
  if (!libc) return null;
  const { free, mallocTrim } = libc;
  let pages = 0;
  let bytes = 0;
  let found = 0;
  for (const { env, dir } of envs) {
    const at = findEnv(dir);
    if (at === 0) continue;
    found++;
    env.transactionSync(() => {
      const psize = read.u32(at as never, ME_PSIZE);
      let p = read.ptr(at as never, ME_DPAGES);
      new DataView(toArrayBuffer(at as never, ME_DPAGES, 8)).setBigUint64(0, 0n, true);
      while (p !== 0) {
        const next = read.ptr(p as never, MP_NEXT);
        free(p);
        pages++;
        bytes += psize;
        p = next;
      }
    });
  }
  if (found === 0) return null;
  if (pages > 0) mallocTrim();
  return { pages, bytes };
}
