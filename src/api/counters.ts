// The aggregates behind the HTTP API as a store Indexer: per note its likes, other reactions,
// reposts, replies, zaps and zapped msats; per pubkey its followers and kind-1 notes; per relay
// URL the kind-10002 lists naming it. put() adds what engagement.ts says an event contributes
// and remove() (replaced, deleted, expired or vanished) subtracts the same; the deltas are summed
// over the write transaction and written once in flush(), like the search document frequencies.
// Counters are written in the transaction itself (never deferred), so they commit with the events.
import type { NostrEvent } from "../nostr/event.ts";
import { hexBytes } from "../store/keys.ts";
import type { BinDb, Indexer, Store } from "../store/store.ts";
import { openDb, replayStored } from "../store/store.ts";
import { engagements, followed, relayList } from "./engagement.ts";
import type { NoteCounts, PubkeyCounts } from "./keys.ts";
import {
  isZeroNote,
  noteValue,
  pubkeyValue,
  readNote,
  readPubkey,
  readU32,
  relayKey,
  u32,
  VERSION_KEY,
  zeroNote,
  zeroPubkey,
} from "./keys.ts";

/** Bumped when what is counted changes, so stores counted the old way are counted again. */
export const COUNTERS_VERSION = 1;

/** Told about kind-1 notes as they are stored or removed, and about new totals after a flush. */
export interface NoteListener {
  added(e: NostrEvent, serial: number): void;
  removed(id: string): void;
  counted(id: string, counts: NoteCounts): void;
}

export class Counters implements Indexer {
  readonly name = "api-counters";
  readonly notes: BinDb;
  readonly pubkeys: BinDb;
  readonly relays: BinDb;
  readonly meta: BinDb;
  listener: NoteListener | undefined;

  private noteDelta = new Map<string, NoteCounts>();
  private pubkeyDelta = new Map<string, PubkeyCounts>();
  private relayDelta = new Map<string, number>();

  constructor(s: Store) {
    this.notes = openDb(s, "api_note");
    this.pubkeys = openDb(s, "api_pubkey");
    this.relays = openDb(s, "api_relay");
    this.meta = openDb(s, "api_meta");
  }

  put(_s: Store, e: NostrEvent, serial: number): void {
    this.apply(e, 1);
    if (e.kind === 1) this.listener?.added(e, serial);
  }

  remove(_s: Store, e: NostrEvent, _serial: number): void {
    this.apply(e, -1);
    if (e.kind === 1) this.listener?.removed(e.id);
  }

  private apply(e: NostrEvent, sign: 1 | -1): void {
    for (const g of engagements(e)) {
      const d = this.noteDeltaOf(g.id);
      d[g.field] += sign;
      if (g.msats !== undefined) d.msats += sign > 0 ? g.msats : -g.msats;
    }
    if (e.kind === 1) this.pubkeyDeltaOf(e.pubkey).notes += sign;
    else if (e.kind === 3) for (const pk of followed(e)) this.pubkeyDeltaOf(pk).followers += sign;
    else if (e.kind === 10002)
      for (const r of relayList(e)) this.relayDelta.set(r.url, (this.relayDelta.get(r.url) ?? 0) + sign);
  }

  private noteDeltaOf(id: string): NoteCounts {
    let d = this.noteDelta.get(id);
    if (!d) {
      d = zeroNote();
      this.noteDelta.set(id, d);
    }
    return d;
  }

  private pubkeyDeltaOf(pk: string): PubkeyCounts {
    let d = this.pubkeyDelta.get(pk);
    if (!d) {
      d = zeroPubkey();
      this.pubkeyDelta.set(pk, d);
    }
    return d;
  }

  flush(_s?: Store): void {
    for (const [id, d] of this.noteDelta) {
      if (isZeroDelta(d)) continue;
      const key = hexBytes(id);
      const c = readNote(this.notes.get(key));
      c.likes += d.likes;
      c.reactions += d.reactions;
      c.reposts += d.reposts;
      c.replies += d.replies;
      c.zaps += d.zaps;
      c.msats += d.msats;
      if (isZeroNote(c)) this.notes.remove(key);
      else this.notes.put(key, noteValue(c));
      this.listener?.counted(id, readNote(noteValue(c)));
    }
    this.noteDelta.clear();
    for (const [pk, d] of this.pubkeyDelta) {
      if (d.followers === 0 && d.notes === 0) continue;
      const key = hexBytes(pk);
      const c = readPubkey(this.pubkeys.get(key));
      c.followers += d.followers;
      c.notes += d.notes;
      if (c.followers <= 0 && c.notes <= 0) this.pubkeys.remove(key);
      else this.pubkeys.put(key, pubkeyValue(c));
    }
    this.pubkeyDelta.clear();
    for (const [url, d] of this.relayDelta) {
      const key = d === 0 ? undefined : relayKey(url);
      if (!key) continue;
      const n = readU32(this.relays.get(key)) + d;
      if (n <= 0) this.relays.remove(key);
      else this.relays.put(key, u32(n));
    }
    this.relayDelta.clear();
  }

  /** A note's counters as stored plus what this transaction has added so far. */
  note(id: string): NoteCounts {
    const c = readNote(this.notes.get(hexBytes(id)));
    const d = this.noteDelta.get(id);
    if (d) {
      for (const f of ["likes", "reactions", "reposts", "replies", "zaps"] as const)
        c[f] = Math.max(0, c[f] + d[f]);
      c.msats = c.msats + d.msats < 0n ? 0n : c.msats + d.msats;
    }
    return c;
  }

  pubkey(pk: string): PubkeyCounts {
    return readPubkey(this.pubkeys.get(hexBytes(pk)));
  }

  /** How many relay URLs stored relay lists name. */
  relayCount(): number {
    return this.relays.getKeysCount();
  }

  isCurrent(): boolean {
    const v = this.meta.get(VERSION_KEY);
    return v !== undefined && readU32(v) === COUNTERS_VERSION;
  }

  markCurrent(): void {
    this.meta.putSync(VERSION_KEY, u32(COUNTERS_VERSION));
  }

  /** Forgets the version, so the next start with the API enabled counts everything again. */
  markStale(): void {
    if (this.meta.get(VERSION_KEY) !== undefined) this.meta.removeSync(VERSION_KEY);
  }
}

const isZeroDelta = (d: NoteCounts): boolean =>
  d.likes === 0 && d.reactions === 0 && d.reposts === 0 && d.replies === 0 && d.zaps === 0 && d.msats === 0n;

/**
 * Counts every stored event again from nothing, `batch` events per write transaction, in serial
 * order. Run at start-up (before the writer starts) when the counters are missing or stale.
 */
export function recount(s: Store, c: Counters, batch = 10_000): { events: number; ms: number } {
  const started = performance.now();
  const listener = c.listener;
  c.listener = undefined;
  c.markStale();
  for (const db of [c.notes, c.pubkeys, c.relays, c.meta]) db.clearSync();
  const events = replayStored(
    s,
    1,
    batch,
    (e, serial) => c.put(s, e, serial),
    () => c.flush(s),
  );
  c.markCurrent();
  c.listener = listener;
  return { events, ms: performance.now() - started };
}

/** Registers the counters as a store indexer, counting the stored events first if needed. */
export function enableCounters(s: Store, log: (line: string) => void = console.log): Counters {
  const c = new Counters(s);
  if (!c.isCurrent()) {
    const r = recount(s, c);
    if (r.events > 0) log(`api: counters built from ${r.events} stored events in ${Math.round(r.ms)} ms`);
  }
  s.indexers.push(c);
  return c;
}

/** With the API off the writer does not keep the counters: they must be rebuilt when it is on. */
export function disableCounters(s: Store): void {
  new Counters(s).markStale();
}

export const countersOf = (s: Store): Counters | undefined =>
  s.indexers.find((ix): ix is Counters => ix instanceof Counters);
