// Syncing the log's data file. The log's commits sync their pages and write their meta page
// without syncing it (MDB_NOMETASYNC, openStore in store.ts): a commit becomes visible, and goes
// to live subscribers, after one sync instead of two. A sync of the data file afterwards makes
// the meta page durable too; whatever acknowledges a write (an OK, a data command's report)
// waits for one. LMDB keeps its integrity without it: a system crash before it can only undo
// the last commits, never mix two.
import { fdatasync, fdatasyncSync } from "node:fs";
import type { Store } from "./types.ts";

/** Makes every commit of the log so far durable. Runs on the thread pool. */
export function syncLog(s: Store): Promise<void> {
  const through = s.lastSerial;
  return new Promise((resolve, reject) =>
    fdatasync(s.logFd, (e) => {
      if (e) return reject(e);
      if (through > s.syncedSerial) s.syncedSerial = through;
      resolve();
    }),
  );
}

/** syncLog, in this thread. */
export function syncLogSync(s: Store): void {
  const through = s.lastSerial;
  fdatasyncSync(s.logFd);
  if (through > s.syncedSerial) s.syncedSerial = through;
}
