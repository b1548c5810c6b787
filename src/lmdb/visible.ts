// When a commit of the log becomes visible to readers, ahead of the sync that lmdb-js's commit
// waits for.
//
// Why: the log's environment commits with lmdb-js's overlapping sync. Its native commit writes
// the meta page (from then on every new read transaction sees the commit), tells JavaScript so
// (a progress callback with status 1, which lmdb-js itself ignores), and then, for a small
// transaction, syncs the data file before it returns; only then does lmdb-js resolve the
// transaction's promise. On this machine's disk that sync takes ~0.7 ms at the median and
// 100-400 ms at its worst moments (docs/performance/2026-11.md, "Live delivery without the disk"), and
// live subscribers waited for it. They need the commit to be visible, not durable: what
// acknowledges a write (an OK) still waits for the sync.
//
// The hook wraps the native environment's `startWriting`, the one call through which lmdb-js
// hands a batch of writes to its write thread, and passes every status on unchanged. The report
// is a hint, not a proof: it reaches JavaScript through another queue than the commit's
// resolution, so it may come after that resolution, and then while the next transaction is
// open. So each report is checked against what a fresh read transaction sees before anything
// is published. Where lmdb-js lacks the call (another version), nothing is hooked and commits
// are published when they resolve, as before.

import type { RootDatabase } from "lmdb";

type StatusCallback = (status: number) => unknown;
interface NativeEnv {
  startWriting?: (address: number, callback: StatusCallback) => unknown;
}

/** status of lmdb-js's write-thread progress callback: the transaction is visible to readers */
const VISIBLE = 1;

export interface Visibility {
  /** whether lmdb-js reports visibility here (the hook is in place) */
  readonly hooked: boolean;
  /**
   * Called at the end of a transaction's body: at the next report that a commit is visible
   * after which `visible()` holds (read with a fresh read transaction), `then` runs. It may
   * never run (the commit's resolution came first); the log has one transaction in flight.
   * The returned function ends the watch: call it once the commit has resolved or failed, so
   * that a report of another transaction on the log (the consumers' trims of the removal log),
   * or one that arrives while the store closes, reads nothing.
   */
  whenVisible(then: () => void, visible: () => boolean): () => void;
}

const hooks = new WeakMap<RootDatabase, Visibility>();

/** The environment's hook, put in place on first use (once per environment). */
export function visibilityOf(env: RootDatabase): Visibility {
  let v = hooks.get(env);
  if (!v) {
    v = watch(env);
    hooks.set(env, v);
  }
  return v;
}

function watch(env: RootDatabase): Visibility {
  const native = (env as unknown as { env?: NativeEnv }).env;
  const start = native?.startWriting;
  let waiting: { then: () => void; visible: () => boolean } | undefined;
  const unhooked: Visibility = { hooked: false, whenVisible: () => () => {} };
  if (!native || typeof start !== "function") return unhooked;
  const reported = (): void => {
    if (!waiting) return;
    // lmdb-js keeps a read transaction until a timer of its own fires: take a fresh one, for
    // the check and for every reader after it in this turn (a REQ must not answer from a
    // snapshot before a batch it takes for stored, not live).
    env.resetReadTxn();
    if (!waiting.visible()) return;
    const w = waiting;
    waiting = undefined;
    w.then();
  };
  // The prototype's method is read-only, so the wrapper is defined on the instance.
  const hooked = function (this: NativeEnv, address: number, callback: StatusCallback) {
    return start.call(this, address, (status: number) => {
      // lmdb-js's own bookkeeping first, as if unhooked.
      const out = callback(status);
      if (status === VISIBLE) reported();
      return out;
    });
  };
  try {
    Object.defineProperty(native, "startWriting", { value: hooked, writable: true, configurable: true });
  } catch {
    return unhooked;
  }
  return {
    hooked: true,
    whenVisible: (then, visible) => {
      const w = { then, visible };
      waiting = w;
      return () => {
        if (waiting === w) waiting = undefined;
      };
    },
  };
}
