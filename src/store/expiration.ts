// NIP-40 expiration: an index `expiration 8 | serial 8` kept by the writer, an in-memory map
// so readers can hide expired events before they are purged, and the purge itself (run as a
// writer task, so removal goes through the one write path).
import type { NostrEvent } from "../nostr/event.ts";
import { expirationOf } from "../nostr/event.ts";
import { indexKey, keySerial, keyTime } from "./keys.ts";
import { removeBySerial } from "./lifecycle.ts";
import { EMPTY, openLogDb } from "./store.ts";
import type { BinDb, Indexer, Store } from "./types.ts";

const NO_PREFIX = Buffer.alloc(0);

/** The expiry index of the log (`expiration 8 | serial 8`). */
export const openExpiry = (s: Store): BinDb => openLogDb(s, "expiry");

/**
 * The serials of stored events whose expiration has passed at `now` (seconds) and that await
 * their purge, read from the expiry index `db` (openExpiry): for a reader that keeps no schedule
 * of its own (a reader thread, readers/worker.ts).
 */
export function expiredSerials(db: BinDb, now: number): Set<number> {
  const out = new Set<number>();
  for (const k of db.getKeys({ end: indexKey(NO_PREFIX, now, Number.MAX_SAFE_INTEGER) }))
    out.add(keySerial(k as Buffer));
  return out;
}

export class Expiration implements Indexer {
  readonly name = "expiration";
  private readonly db: BinDb;
  private readonly bySerial = new Map<number, number>();

  constructor(s: Store) {
    this.db = openExpiry(s);
    for (const k of this.db.getKeys({})) this.bySerial.set(keySerial(k as Buffer), keyTime(k as Buffer));
  }

  put(_s: Store, e: NostrEvent, serial: number): void {
    const t = expirationOf(e);
    if (t === undefined) return;
    this.db.put(indexKey(NO_PREFIX, t, serial), EMPTY);
    this.bySerial.set(serial, t);
  }

  remove(_s: Store, e: NostrEvent, serial: number): void {
    const t = expirationOf(e);
    if (t === undefined) return;
    this.db.remove(indexKey(NO_PREFIX, t, serial));
    this.bySerial.delete(serial);
  }

  seen(e: NostrEvent, serial: number, added: boolean): void {
    const t = expirationOf(e);
    if (t === undefined) return;
    if (added) this.bySerial.set(serial, t);
    else this.bySerial.delete(serial);
  }

  /** True when the stored event has expired (readers must not see it even before the purge). */
  readonly hidden = (serial: number): boolean => {
    if (this.bySerial.size === 0) return false;
    const t = this.bySerial.get(serial);
    return t !== undefined && t <= Date.now() / 1000;
  };

  /** Whether `hidden` hides anything now: some event's expiration has passed and awaits its purge. */
  readonly anyHidden = (): boolean => {
    if (this.bySerial.size === 0) return false;
    for (const k of this.db.getKeys({ limit: 1 })) return keyTime(k as Buffer) <= Date.now() / 1000;
    return false;
  };

  get pending(): number {
    return this.bySerial.size;
  }

  /** Removes up to `max` expired events; must run inside a write transaction. */
  purge(s: Store, now: number, max: number): number {
    const due: Buffer[] = [];
    for (const k of this.db.getKeys({ end: indexKey(NO_PREFIX, now, Number.MAX_SAFE_INTEGER), limit: max }))
      due.push(Buffer.from(k as Buffer));
    for (const k of due) {
      const serial = keySerial(k);
      // An entry whose event is already gone is dropped so it cannot be purged forever.
      if (!removeBySerial(s, serial)) {
        this.db.remove(k);
        this.bySerial.delete(serial);
      }
    }
    return due.length;
  }
}
