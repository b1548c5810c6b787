// Removes what due.ts found, inside a write transaction (a writer task in the relay, serials.ts
// writeTxn in `relay prune`): through removeBySerial, the path deletions take, so the removal
// log tells every consumer (REQ indexes, search, NIP-45 records, API counters) to take the
// event out with its next batch. No tombstone is kept: an evicted event may come back, and one
// a rule removed is refused on arrival by the rule itself.
import { removeBySerial } from "../store/lifecycle.ts";
import { removalsAfter } from "../store/removals.ts";
import type { Store } from "../store/types.ts";

/**
 * Events removed per transaction. Each removal rewrites a few pages of the log (body, id,
 * removal record); 256 of them commit in a few milliseconds, so the events queued behind a
 * removal task wait no longer than for a batch of their own.
 */
export const REMOVE_BATCH = 256;

/** Events to remove in one transaction, oldest first. */
export interface RemovalBatch {
  serials: number[];
  /**
   * For a count rule: how many serials at the end are due only because the rule holds too many,
   * the kinds it governs, and the removal seq when its events were counted. Events of those
   * kinds removed since (a deletion, a replacement) make that many fewer due.
   */
  count?: { only: number; kinds: ReadonlySet<number>; seq: number };
}

/** Removes a batch; returns how many events it removed. Runs inside a write transaction. */
export function removeBatch(s: Store, b: RemovalBatch): number {
  let serials = b.serials;
  if (b.count && b.count.only > 0) {
    const chosen = new Set(serials);
    let gone = 0;
    let records = 0;
    for (const r of removalsAfter(s.removals, b.count.seq)) {
      if (r.seq > s.lastRemoval) break;
      records++;
      if (b.count.kinds.has(r.event.kind) && !chosen.has(r.serial)) gone++;
    }
    // Records already trimmed (every consumer passed them): what was removed is unknown, so
    // the count part waits for the next sweep, which counts again.
    if (records !== s.lastRemoval - b.count.seq) gone = b.count.only;
    serials = serials.slice(0, serials.length - Math.min(gone, b.count.only));
  }
  let n = 0;
  for (const serial of serials) if (removeBySerial(s, serial)) n++;
  return n;
}
