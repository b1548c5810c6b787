// Storage full: telling a commit that failed because the disk (or LMDB's map) has no room from
// any other failure, and the state of a writer that met one. While full, the writer refuses
// events at once with `error: storage full: …` instead of failing a transaction per batch, and
// tries a real commit again as soon as the filesystem reports more free space (or every
// RETRY_MS, for limits statfs does not show: a quota, the map). A commit that stores
// something ends the state.
//
// lmdb-js reports a failed asynchronous commit as an Error whose `commitError` is a promise of
// the LMDB error; that promise must be handled, or the process dies of an unhandled rejection.
import { statfsSync } from "node:fs";

/** LMDB's MDB_MAP_FULL. lmdb-js grows its map by itself, so only a failed remap gives it. */
const MDB_MAP_FULL = -30792;
const FULL_CODES = new Set<unknown>(["ENOSPC", "EDQUOT", "EFBIG", 28, 122, 27, MDB_MAP_FULL]);
/** LMDB turns a short write (the disk filled mid-page) into EIO. */
const EIO = new Set<unknown>(["EIO", 5]);
/** Below this much free space, an I/O error on a write is taken for a full disk. */
const LOW_SPACE = 64 * 2 ** 20;
/** How often a full writer tries a commit when no more free space shows. */
export const RETRY_MS = 10_000;

interface LmdbError extends Error {
  code?: unknown;
  commitError?: Promise<unknown>;
}

/**
 * The error behind a failed commit: lmdb-js's `commitError` when there is one (handled here),
 * else the error itself.
 */
export async function commitCause(e: unknown): Promise<LmdbError> {
  const err = (e ?? new Error("write failed")) as LmdbError;
  const inner = err.commitError;
  if (!inner || typeof inner.then !== "function") return err;
  try {
    await inner;
    return err;
  } catch (cause) {
    return (cause ?? err) as LmdbError;
  }
}

/** Bytes free for unprivileged writers on the filesystem of `dir`, or undefined. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** Why a failed write means "storage full" ("no space left on device…"), or undefined. */
export function fullReason(cause: LmdbError, dir: string): string | undefined {
  const code = cause.code;
  const free = freeBytes(dir);
  const left = free === undefined ? "" : `, ${mib(free)} free on ${dir}`;
  if (code === MDB_MAP_FULL || /MDB_MAP_FULL/.test(cause.message))
    return `the LMDB map is full (MDB_MAP_FULL${left})`;
  if (FULL_CODES.has(code)) return `no space left on device (${cause.message}${left})`;
  if (EIO.has(code) && free !== undefined && free < LOW_SPACE)
    return `no space left on device (${cause.message}${left})`;
  return undefined;
}

const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;

/** A writer's storage-full state, for its refusals, /metrics and the log. */
export class FullState {
  /** the reason while full, else undefined */
  reason: string | undefined;
  /** when it became full (ms since the epoch) */
  since = 0;
  /** events refused because storage was full, since start */
  refused = 0;
  /** times storage became full, since start */
  episodes = 0;
  private freeAtFailure = 0;
  private lastTry = 0;

  constructor(private readonly dir: string) {}

  get full(): boolean {
    return this.reason !== undefined;
  }

  /** A commit failed for lack of room. */
  failed(reason: string, now = Date.now()): void {
    if (!this.full) {
      this.since = now;
      this.episodes++;
    }
    this.reason = reason;
    this.freeAtFailure = freeBytes(this.dir) ?? 0;
    this.lastTry = now;
  }

  /** A commit that wrote something succeeded: there is room again. */
  cleared(): void {
    this.reason = undefined;
  }

  /**
   * Whether a full writer should try a real commit now: more room shows on the filesystem
   * than when it failed (an operator freed some), or it has not tried for RETRY_MS.
   */
  shouldTry(now = Date.now()): boolean {
    if (!this.full) return true;
    const free = freeBytes(this.dir);
    if ((free !== undefined && free > this.freeAtFailure + 2 ** 20) || now - this.lastTry >= RETRY_MS) {
      this.lastTry = now;
      return true;
    }
    return false;
  }
}

const COMMIT_FAILED = "Commit failed (see commitError for details)";
let guarded = false;

/**
 * lmdb-js rejects, besides the promise of the transaction that failed (which its caller
 * handles), an internal promise nobody can reach; left alone, that unhandled rejection would
 * stop the process on the first commit that meets a full disk. This swallows those (the
 * failure is handled where the transaction was awaited) and keeps Bun's default for any other
 * unhandled rejection: print it and exit 1.
 */
export function guardCommitRejections(): void {
  if (guarded) return;
  guarded = true;
  process.on("unhandledRejection", (reason) => {
    const e = reason as LmdbError | undefined;
    if (e instanceof Error && e.message === COMMIT_FAILED) {
      void commitCause(e);
      return;
    }
    console.error(reason);
    process.exit(1);
  });
}
