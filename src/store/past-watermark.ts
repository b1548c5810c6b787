// What lies past a consumer's watermark in the log: the events stored after the serial it has
// applied, and the removal records, after the seq it has applied, of events at or before that
// serial (their entries are still to be taken out). Readers add it to the consumer's entries
// where no generations hold it (indexes.ts `fromLog`, consumers/log-tail.ts), and the writer's
// removals find in it the events that have no index entries yet (lifecycle.ts).
import { readU64, serialKey } from "./keys.ts";
import type { Removal } from "./removals.ts";
import { removalsAfter } from "./removals.ts";
import type { Store } from "./types.ts";

/** A place in the log: events through `serial` and removal records through `seq` are behind it. */
export interface LogPlace {
  serial: number;
  seq: number;
}

export interface PastVisitor {
  /** an event stored after the place, with its stored JSON */
  added(serial: number, json: string): void;
  /** a removal record after the place, of an event at or before it; absent: not read */
  removed?(r: Removal): void;
}

/**
 * Reads the log past `from` in the current read (or write) transaction: the removal records
 * first, then the events. Returns how far it read (the last serial and seq it met, or `from`'s).
 */
export function readPast(s: Store, from: LogPlace, v: PastVisitor): LogPlace {
  const to = { ...from };
  if (v.removed)
    for (const r of removalsAfter(s.removals, from.seq)) {
      to.seq = r.seq;
      if (r.serial <= from.serial) v.removed(r);
    }
  for (const { key, value } of s.eventsText.getRange({ start: serialKey(from.serial + 1) })) {
    to.serial = readU64(key as Buffer, 0);
    v.added(to.serial, value as string);
  }
  return to;
}
