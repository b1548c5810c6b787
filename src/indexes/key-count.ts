// Exact counts from index entry counts: LMDB counts the entries of a range natively (lmdb-js's
// getValuesCount walks them in C), so a COUNT that an index answers on its own costs a few range
// counts instead of a JavaScript step and an allocation per matching key. The watermark and the
// ranges are read in one read transaction of the derived environment; the events committed after
// the watermark are matched directly, and events removed since their entries were written are
// taken back out, as every other reader of the indexes does.
import type { Filter } from "../nostr/filter.ts";
import { countEntries } from "../store/index-db.ts";
import { kindBytes } from "../store/keys.ts";
import type { Store } from "../store/types.ts";
import { indexSnapshotIn } from "./indexes.ts";
import { planFilter } from "./plan.ts";
import { bodyFrom, matchTail, tailEvents, tailRemoved } from "./tail.ts";

/** What a count needs of the query options (query.ts). */
export interface KeyCountOptions {
  /** only serials at or below this are visible */
  hwm: number;
  hidden?: (serial: number) => boolean;
  /** false when `hidden` hides nothing at this moment */
  anyHidden?: () => boolean;
  allow?: (json: string) => boolean;
  /** the kinds `allow` may refuse */
  restrictedKinds?: readonly number[];
}

/**
 * The number of stored events matching `f` when key counts can give it exactly: an index that
 * guarantees every condition of the filter, whose ranges no event is in twice (one prefix, or
 * one author or kind per prefix), no expired event awaiting its purge, and no access rule that
 * could refuse a counted event (none, or no event of a restricted kind stored). Otherwise
 * undefined, and the caller walks the keys.
 */
export function countByKeys(s: Store, f: Filter, o: KeyCountOptions): number | undefined {
  if (f.search !== undefined || (o.hidden && o.anyHidden?.() !== false)) return undefined;
  const plan = planFilter(s, f);
  if (plan.type !== "scan" || plan.needsCheck) return undefined;
  if (plan.index === "tag" && plan.prefixes.length > 1) return undefined;
  const since = f.since ?? 0;
  const until = f.until ?? Number.MAX_SAFE_INTEGER;
  const txn = s.derived.useReadTransaction();
  try {
    const snap = indexSnapshotIn(s, txn);
    if (!snap || snap.through > o.hwm) return undefined;
    if (o.allow) {
      // The rule refuses only events of restricted kinds: with none stored it refuses nothing.
      const restricted = o.restrictedKinds ?? [];
      if (restricted.length === 0) return undefined;
      for (const k of restricted)
        if (countEntries(s.kind, kindBytes(k), 0, Number.MAX_SAFE_INTEGER, txn) > 0) return undefined;
      for (const [, e] of tailEvents(snap)) if (restricted.includes(e.kind)) return undefined;
    }
    let n = 0;
    for (const p of plan.prefixes) n += countEntries(plan.db, p, since, until, txn);
    const body = bodyFrom(s);
    // Indexed events removed since: their keys are still counted above.
    for (const [serial, e] of tailRemoved(snap)) if (matchTail(f, serial, e, body)) n--;
    // Events committed after the watermark, not removed since.
    for (const [serial, e] of tailEvents(snap)) if (serial <= o.hwm && matchTail(f, serial, e, body)) n++;
    return n;
  } finally {
    (txn as { done(): void }).done();
  }
}
