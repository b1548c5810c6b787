// Opening an LMDB environment while another process commits to it can lose that commit. The
// LMDB that lmdb-js builds (3.5.6, the newest) sets the lock file's current transaction id from
// the meta page it reads whenever a process opens the environment (mdb_env_open2), not only
// when it is the first. A commit made by another process between that read and that assignment
// is set back by one; the next write transaction, by any process, starts from the meta page
// before it and writes its own meta page over the newer one: that commit is gone, with every
// event it stored, though its OKs were sent. Upstream LMDB fixed the same bug as ITS#9496.
// Measured here: a process committing 3,000 small transactions while another opened and closed
// the environment in a loop lost 9 of them; a successor relay opening the data directory while
// its predecessor drained lost an OK'd event (test/handover.test.ts, 1 run in 12 under I/O load).
//
// So an open and another process's commits never overlap: a file lock in the data directory
// (flock, shared by any number of holders or held by one alone), taken exclusively around each
// environment's opening, and shared by every write transaction of either environment, from
// before it begins until its commit is visible (its meta page written) or it is aborted. A
// process's opens are then a few milliseconds during which the others' next commits wait. Both
// environments of a directory (the log and derived/) share its lock.
//
// Each thread has its own descriptor of the lock file (flock is held by a descriptor), counts
// the write transactions it has in flight and holds the shared lock while there is one. A
// thread that opens the store while it has a write in flight (only this process's own threads
// share an environment, and lmdb-js then opens nothing) does not wait for itself.
import { dlopen, FFIType } from "bun:ffi";
import { closeSync, openSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RootDatabase } from "lmdb";

/** The lock file in the data directory. */
export const OPEN_LOCK_FILE = "lmdb-open.lock";

// flock(2) operations, the same on Linux and macOS.
const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
/**
 * How long an opening waits for the writes in flight before it fails (a process that never
 * lets go is a bug or a stopped process; failing says so, where opening anyway could lose a
 * commit).
 */
const OPEN_WAIT_MS = 60_000;
/**
 * How long a write waits for an opening before it goes on without the lock: an opening holds
 * it for milliseconds, and a process stopped in the middle of one (SIGSTOP, a debugger) must
 * not stop the relay's writes.
 */
const WRITE_WAIT_MS = 10_000;

type Flock = (fd: number, op: number) => number;
let flockFn: Flock | null | undefined;

const LIBC: Record<string, string[]> = {
  linux: ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"],
  darwin: ["/usr/lib/libSystem.B.dylib"],
};

function loadFlock(): Flock | null {
  for (const name of LIBC[process.platform] ?? []) {
    try {
      const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
      return (fd, op) => lib.symbols.flock(fd, op) as number;
    } catch {}
  }
  return null;
}

/**
 * Takes the lock (`op`: shared or exclusive), asking without blocking every millisecond until
 * `waitMs` pass (a blocking flock would also wait through a signal's EINTR). False when it
 * could not: the time passed, or the platform has no flock.
 */
function lock(fd: number, op: number, waitMs: number): boolean {
  flockFn ??= loadFlock();
  if (!flockFn) return false;
  const until = performance.now() + waitMs;
  for (;;) {
    if (flockFn(fd, op | LOCK_NB) === 0) return true;
    if (performance.now() >= until) return false;
    Bun.sleepSync(1);
  }
}

function unlock(fd: number): void {
  flockFn?.(fd, LOCK_UN);
}

/** One data directory's lock, as this thread holds it. */
export class OpenGate {
  /**
   * write transactions in flight: synchronous ones (nested included) and lmdb-js's batches,
   * counted apart so that an abort lmdb-js makes twice on an error path can only end a
   * synchronous one's hold, never a batch's
   */
  private syncTxns = 0;
  private asyncTxns = 0;
  private opening = false;
  private shared = false;
  /** the last write's wait for the lock ran out (an opening that does not end) */
  private waitedOut = false;
  /** stores of this directory open in this thread */
  refs = 0;
  /** writes that waited WRITE_WAIT_MS for the lock and went on without it */
  waitsRunOut = 0;

  constructor(
    readonly dir: string,
    /** the lock file's descriptor, or undefined where it cannot be made (a read-only directory) */
    private readonly fd: number | undefined,
  ) {}

  /** Runs `open` (an environment's opening) while no other process commits to the directory. */
  whileOpening<T>(open: () => T): T {
    if (this.fd === undefined || this.shared || this.opening) return open();
    flockFn ??= loadFlock();
    if (!flockFn) return open();
    if (!lock(this.fd, LOCK_EX, OPEN_WAIT_MS))
      throw new Error(
        `${this.dir}: another process has held ${OPEN_LOCK_FILE} for ${OPEN_WAIT_MS / 1000} s (writing without a pause, or stopped while it opens the store); opening now could lose one of its commits`,
      );
    this.opening = true;
    try {
      return open();
    } finally {
      this.opening = false;
      unlock(this.fd);
    }
  }

  private enter(): void {
    if (this.fd === undefined || this.opening || this.shared) return;
    // After a wait that ran out, each write asks once without waiting until the lock is had
    // again: an opening stopped half way costs the writes one wait, not one each.
    const wait = this.waitedOut ? 0 : WRITE_WAIT_MS;
    this.shared = lock(this.fd, LOCK_SH, wait);
    if (!this.shared && wait > 0 && flockFn) this.waitsRunOut++;
    this.waitedOut = !this.shared && flockFn != null;
  }

  private leave(): void {
    if (!this.shared || this.syncTxns > 0 || this.asyncTxns > 0) return;
    this.shared = false;
    unlock(this.fd!);
  }

  beginSync(): void {
    this.syncTxns++;
    this.enter();
  }

  endSync(): void {
    if (this.syncTxns > 0) this.syncTxns--;
    this.leave();
  }

  beginAsync(): void {
    this.asyncTxns++;
    this.enter();
  }

  endAsync(): void {
    if (this.asyncTxns > 0) this.asyncTxns--;
    this.leave();
  }

  close(): void {
    if (--this.refs > 0) return;
    gates.delete(this.dir);
    if (this.fd !== undefined) closeSync(this.fd);
  }
}

const gates = new Map<string, OpenGate>();

/** The directory's lock for this thread (taken by openStore, given back by closeStore). */
export function openGate(path: string): OpenGate {
  // One per directory however it is named: a second descriptor would wait for the first.
  let dir = resolve(path);
  try {
    dir = realpathSync(dir);
  } catch {}
  let g = gates.get(dir);
  if (!g) {
    let fd: number | undefined;
    try {
      fd = openSync(join(dir, OPEN_LOCK_FILE), "a", 0o600);
    } catch {}
    g = new OpenGate(dir, fd);
    gates.set(dir, g);
  }
  g.refs++;
  return g;
}

/** lmdb-js's native environment: the calls through which every write transaction goes. */
interface NativeWrites {
  beginTxn(flags: number): unknown;
  commitTxn(): unknown;
  abortTxn(): unknown;
  startWriting(address: number, callback: (status: number) => unknown): unknown;
}

/**
 * What lmdb-js's write thread reports of a batch before its result: its transaction's
 * callbacks are to run here, the transaction still open (2). Any other report ends the batch's
 * hold: the commit is visible (1: its meta page is written; the sync that follows only writes
 * the same transaction's again) or the batch's result (0, or an error).
 */
const CALLBACKS = 2;

/**
 * Has every write transaction of `env` hold the gate shared: lmdb-js's synchronous ones
 * (beginTxn … commitTxn or abortTxn), each batch it hands its write thread (startWriting, until
 * its commit is visible: the relay's writer starts its next batch then, so a batch in flight
 * and the next one leave a gap between them, where an opening waiting for the lock gets it),
 * and the creation of a named database (openDB, which commits a transaction of its own).
 */
export function shareGateInWrites(env: RootDatabase, gate: OpenGate): void {
  const native = (env as unknown as { env?: Partial<NativeWrites> }).env;
  if (!native?.beginTxn || !native.commitTxn || !native.abortTxn || !native.startWriting) return;
  const { beginTxn, commitTxn, abortTxn, startWriting } = native as NativeWrites;
  // The prototype's methods are read-only: the wrappers are defined on the instance.
  const hook = <K extends keyof NativeWrites>(name: K, f: NativeWrites[K]) =>
    Object.defineProperty(native, name, { value: f, writable: true, configurable: true });
  hook("beginTxn", function (this: unknown, flags) {
    gate.beginSync();
    try {
      return beginTxn.call(this, flags);
    } catch (e) {
      gate.endSync();
      throw e;
    }
  });
  hook("commitTxn", function (this: unknown) {
    try {
      return commitTxn.call(this);
    } finally {
      gate.endSync();
    }
  });
  hook("abortTxn", function (this: unknown) {
    try {
      return abortTxn.call(this);
    } finally {
      gate.endSync();
    }
  });
  hook("startWriting", function (this: unknown, address, callback) {
    gate.beginAsync();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      gate.endAsync();
    };
    try {
      return startWriting.call(this, address, (status) => {
        try {
          return callback(status);
        } finally {
          if (status !== CALLBACKS) end();
        }
      });
    } catch (e) {
      end();
      throw e;
    }
  });
  const openDB = env.openDB;
  env.openDB = function (this: RootDatabase, ...args: unknown[]) {
    gate.beginSync();
    try {
      return (openDB as (...a: unknown[]) => unknown).apply(this, args);
    } finally {
      gate.endSync();
    }
  } as typeof env.openDB;
}
