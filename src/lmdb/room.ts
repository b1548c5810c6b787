// Free disk for the derived environment's next write transaction, checked before it starts.
//
// The relay writes the derived environment through a writable memory map (MDB_WRITEMAP,
// store.ts): LMDB changes its pages in the file's pages in the page cache instead of copying
// each into the C heap first, where a consumer batch's copies were the largest part of the
// relay's anonymous memory at a million events (docs/performance.md). LMDB then keeps the file
// as long as its map, which lmdb-js doubles as the data grows: the part past the data is a
// hole, and a page written in a hole gets its block from the filesystem on the spot. On a full
// disk that is a SIGBUS, which kills the process, not an error a commit can report.
//
// So before each derived write transaction the relay makes sure the filesystem has room for the
// most it could grow the file: a transaction copies each page it changes to a new one, and can
// change each page of the data once, so it grows the file by at most the data's length plus
// what it adds (taken as three times the stored JSON of its events, and MARGIN for the log's
// commits meanwhile on the same filesystem). In practice it grows far less: the pages earlier
// transactions freed take most copies. Where the filesystem has less free, the transaction does
// not start and the consumers wait for room as on any full disk (ENOSPC, full.ts). Allocating
// a guess of the growth ahead instead (fallocate) was not enough: a batch ten times the size of
// the one before it grew past the guess, and on a nearly full tmpfs the relay died of a SIGBUS.
import type { RootDatabase } from "lmdb";
import { freeBytes } from "./full.ts";

/** Free space left for the log's commits while a derived transaction runs. */
export const MARGIN = 4 * 2 ** 20;
/** What a transaction may add to the derived data, per byte of the events' stored JSON. */
const ADDED_PER_BYTE = 3;

interface EnvInfo {
  lastPageNumber: number;
}

/** The derived environment's filesystem, checked for room before each write transaction. */
export class DerivedRoom {
  constructor(
    private readonly env: RootDatabase,
    private readonly dir: string,
    private readonly pageSize: number,
  ) {}

  /** The data's end: the last page in use. */
  dataEnd(): number {
    return (
      ((this.env as unknown as { env: { info(): EnvInfo } }).env.info().lastPageNumber + 1) * this.pageSize
    );
  }

  /** The most a transaction adding `adding` bytes of events could grow the file, with MARGIN. */
  needed(adding: number): number {
    return this.dataEnd() + ADDED_PER_BYTE * adding + MARGIN;
  }

  /**
   * Throws an error coded ENOSPC unless the filesystem has `needed(adding)` free: the next
   * write transaction, adding `adding` bytes of events' JSON, cannot then run it out of room.
   */
  check(adding: number): void {
    const free = freeBytes(this.dir);
    if (free === undefined) return;
    const need = this.needed(adding);
    if (free >= need) return;
    throw Object.assign(
      new Error(
        `the derived indexes' next write needs ${mib(need)} free at most, ${mib(free)} are (written through a memory map, they could not report a full disk)`,
      ),
      { code: "ENOSPC" },
    );
  }
}

const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
