// Reading what the consumers have not applied yet: events committed to the log, each in the
// log or, once removed since, in its removal record (removals.ts), which stays until every
// consumer has applied the removal.
import { readU64, serialKey } from "./keys.ts";
import { readEvent } from "./store.ts";
import type { Store } from "./types.ts";

/**
 * The stored JSON of events committed that the consumers have not applied yet: in the log,
 * unless removed since, and then in its removal record (kept until every consumer has applied
 * the removal), past seq `after`. The removal records past `after` are indexed by serial at
 * the first event not in the log and again at a later one, each record read once: a walk of
 * them for each such event made reading a generation quadratic once a fresh snapshot of the
 * log came between its commit and its reading (a run of contact lists, most replaced since).
 */
export class CommittedReader {
  /** serial → seq of its removal record, for the records up to `scanned` */
  private removed: Map<number, number> | undefined;
  private scanned: number;

  constructor(
    private readonly s: Store,
    after: number,
  ) {
    this.scanned = after;
  }

  json(serial: number): string {
    const json = readEvent(this.s, serial);
    if (json !== undefined) return json;
    let seq = this.removed?.get(serial);
    if (seq === undefined) {
      this.scan();
      seq = this.removed!.get(serial);
    }
    if (seq === undefined) throw new Error(`event ${serial} is neither stored nor in the removal log`);
    return removalRecord(this.s, seq).json;
  }

  private scan(): void {
    if (this.removed === undefined) this.removed = new Map();
    const removed = this.removed;
    for (const key of this.s.removals.getKeys({ start: serialKey(this.scanned + 1) } as never)) {
      const seq = readU64(key as Buffer, 0);
      const v = this.s.removals.getBinaryFast(key as Buffer) as Buffer | undefined;
      if (v !== undefined) removed.set(readU64(v, 0), seq);
      this.scanned = seq;
    }
  }
}

/** A removal record the consumers have not applied yet: the serial and JSON of what it removed. */
export function removalRecord(s: Store, seq: number): { serial: number; json: string } {
  const v = s.removals.get(serialKey(seq));
  if (v === undefined) throw new Error(`removal record ${seq} is gone`);
  return { serial: readU64(v, 0), json: v.toString("utf8", 8) };
}
