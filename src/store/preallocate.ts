// Disk blocks for the derived environment's next writes, allocated before they are needed.
//
// The relay writes the derived environment through a writable memory map (MDB_WRITEMAP,
// store.ts): LMDB changes its pages in the file's pages in the page cache instead of copying
// each into the C heap first, where a consumer batch's copies were the largest part of the
// relay's anonymous memory at a million events (docs/performance.md). LMDB then keeps the file
// as long as its map, which it doubles as the data grows: the part past the data is a hole, and
// a page written in a hole gets its block from the filesystem on the spot; on a full disk that
// is a SIGBUS, which kills the process, not an error a commit can report. So before each write
// transaction of the derived environment the relay allocates the blocks LMDB may write next,
// from the end of its data to `headroom` past it (fallocate, keeping the file's length: LMDB
// sets that when it grows the map, and a longer file would only be cut back then), and a full
// disk is an ordinary error there (ENOSPC), which the consumers' full-disk handling takes: the
// batch waits and is tried again once there is room.
//
// LMDB writes a new page either in a free page of its own (within the data, already on disk)
// or past the last page in use. A transaction copies each page it changes to a new one, so at
// worst it grows the data by as much as the data (every page changed once) plus what it adds;
// in practice far less, as the pages earlier transactions freed take most copies. What the next
// one needs is taken to be four times the most one of the last RECENT has grown the data, a thirty-second
// of the data, and MIN_HEADROOM, whichever is most. Where the disk has less free, the
// consumers wait for room as on any full disk. (On a 16 MiB filesystem with 256 KiB free, a
// need of 64 KiB let a batch of 40 notes take the relay down with a SIGBUS.)
import { dlopen, FFIType, type Pointer, read } from "bun:ffi";
import { closeSync, fstatSync, openSync } from "node:fs";
import { dirname } from "node:path";
import type { RootDatabase } from "lmdb";
import { freeBytes } from "./full.ts";

/** The least room a transaction is taken to need past the data's end. */
export const MIN_HEADROOM = 2 ** 20;
/** Room is allocated in steps of this much. */
const STEP = 2 ** 20;
/**
 * The growth of this many transactions back counts: a rebuild's large ones say little of the
 * batches after it, and room taken for them would stay allocated.
 */
const RECENT = 32;
/** What an allocation leaves free on the filesystem at least, for the log's next commits. */
const LOG_MARGIN = 2 ** 20;
/** fallocate's mode: allocate without changing the file's length (linux/falloc.h). */
const FALLOC_FL_KEEP_SIZE = 1;

/** fallocate(2): 0, or the error number. */
type Fallocate = (fd: number, offset: number, length: number) => number;

let fallocate: Fallocate | null | undefined;

function loadFallocate(): Fallocate | null {
  if (process.platform !== "linux") return null;
  try {
    const lib = dlopen("libc.so.6", {
      fallocate: { args: [FFIType.i32, FFIType.i32, FFIType.i64, FFIType.i64], returns: FFIType.i32 },
      __errno_location: { args: [], returns: FFIType.ptr },
    });
    const { fallocate: call, __errno_location: errno } = lib.symbols;
    return (fd, offset, length) =>
      call(fd, FALLOC_FL_KEEP_SIZE, offset, length) === 0 ? 0 : read.i32(errno() as Pointer, 0);
  } catch {
    return null;
  }
}

/** errno values posix_fallocate returns for a full disk or quota. */
const NO_ROOM: Record<number, string> = { 28: "ENOSPC", 122: "EDQUOT", 27: "EFBIG" };

interface EnvInfo {
  lastPageNumber: number;
}

/** The derived environment's data file, kept allocated ahead of LMDB's writes. */
export class Preallocation {
  private readonly fd: number;
  /** bytes of the file known to have blocks, from its start */
  private allocated: number;
  private lastEnd = 0;
  /** how much the data grew before each of the last RECENT write transactions (bytes) */
  private readonly grown = new Float64Array(RECENT);
  private calls = 0;

  private readonly dir: string;

  constructor(
    private readonly env: RootDatabase,
    file: string,
    private readonly pageSize: number,
  ) {
    this.dir = dirname(file);
    this.fd = openSync(file, "r+");
    // The file's blocks, as far as they go (past its length too: what this class allocated
    // before): LMDB has written every page up to its last one.
    this.allocated = fstatSync(this.fd).blocks * 512;
  }

  /**
   * Makes sure the blocks past the data's end are there for the next write transaction; throws
   * an error with the filesystem's code (ENOSPC, EDQUOT) when they cannot be allocated.
   */
  ensure(): void {
    fallocate ??= loadFallocate();
    if (!fallocate) return;
    const info = (this.env as unknown as { env: { info(): EnvInfo } }).env.info();
    const end = (info.lastPageNumber + 1) * this.pageSize;
    if (this.lastEnd > 0) this.grown[this.calls++ % RECENT] = Math.max(0, end - this.lastEnd);
    this.lastEnd = end;
    let growth = 0;
    for (const g of this.grown) if (g > growth) growth = g;
    const need = end + Math.max(MIN_HEADROOM, 4 * growth, end / 32);
    if (need <= this.allocated) return;
    const to = Math.ceil(need / STEP) * STEP;
    // Asked only of what the filesystem has free, leaving the log room: an allocation that
    // fails takes the free space for a moment (tmpfs gives it back once it has failed), and the
    // log's commit that came then failed for lack of room with megabytes free.
    const free = freeBytes(this.dir) ?? Number.POSITIVE_INFINITY;
    const rc =
      free >= to - this.allocated + LOG_MARGIN ? fallocate(this.fd, this.allocated, to - this.allocated) : 28;
    if (rc === 0) {
      this.allocated = to;
      return;
    }
    const code = NO_ROOM[rc];
    throw Object.assign(
      new Error(
        `could not allocate ${to - this.allocated} bytes for the derived indexes (${code ?? `errno ${rc}`})`,
      ),
      { code: code ?? rc },
    );
  }

  close(): void {
    closeSync(this.fd);
  }
}
