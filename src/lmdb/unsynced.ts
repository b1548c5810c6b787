// The derived environment's commits are not synced to disk when the relay writes it through a
// writable map (MDB_NOSYNC with MDB_WRITEMAP, store.ts). What it holds is rebuilt from the log,
// which is synced, so only its integrity matters, and a process that dies (kill -9, the OOM
// killer) loses nothing of it: its pages are in the page cache, which outlives the process. A
// machine that goes down (power loss, kernel panic) may have written some of its pages and not
// others, and LMDB cannot tell. So before the first unsynced commit a file `unsynced` in the
// environment's directory names the boot (Linux's boot_id); a clean stop syncs the file and
// removes it; and an opening that finds it from another boot removes the environment, which
// the consumers then rebuild from the log.
//
// Why: synced, each consumer batch wrote every page it changed before the next could start.
// At a million events that was ~100 MB/s of writes and a quarter of the CPU in the kernel;
// unsynced, the kernel writes a page changed by several batches once (docs/performance/2026-12.md).
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

export const UNSYNCED_FILE = "unsynced";
const BOOT_ID = "/proc/sys/kernel/random/boot_id";

/** This boot of the machine (Linux), or undefined where it cannot be told: then commits sync. */
export function bootId(): string | undefined {
  try {
    const id = readFileSync(BOOT_ID, "utf8").trim();
    return id.length > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The boot in which the environment in `dir` was last written without syncing, if any. */
export function unsyncedSince(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, UNSYNCED_FILE), "utf8").trim();
  } catch {
    return undefined;
  }
}

/**
 * Whether the environment in `dir` may have lost pages: it was written without syncing in a
 * boot that is not this one (the machine went down before a clean stop). A marker from an
 * unreadable boot counts as another boot.
 */
export const mayBeTorn = (dir: string, boot: string | undefined): boolean => {
  const since = unsyncedSince(dir);
  return since !== undefined && since !== boot;
};

/** Removes the environment in `dir` (its data and lock files, and the marker). */
export function removeEnvironment(dir: string): void {
  for (const f of ["data.mdb", "lock.mdb", UNSYNCED_FILE]) rmSync(join(dir, f), { force: true });
  syncDir(dir);
}

/** Before the first unsynced commit: the marker, durable, naming this boot. */
export function markUnsynced(dir: string, boot: string): void {
  if (unsyncedSince(dir) === boot) return;
  const file = join(dir, UNSYNCED_FILE);
  writeFileSync(file, `${boot}\n`);
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDir(dir);
}

/**
 * A clean stop, once nothing writes the environment any more: its data file synced (through the
 * file, which on Linux writes the pages a writable map changed), then the marker removed.
 */
export function markSynced(dir: string): void {
  const data = join(dir, "data.mdb");
  if (!existsSync(join(dir, UNSYNCED_FILE))) return;
  if (existsSync(data)) {
    const fd = openSync(data, "r+");
    try {
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  rmSync(join(dir, UNSYNCED_FILE), { force: true });
  syncDir(dir);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
