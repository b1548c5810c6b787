// The aggregates behind the HTTP API, as a consumer of the event log: per note its likes, other
// reactions, reposts, replies, zaps and zapped msats; per pubkey its followers and kind-1 notes;
// per relay URL the kind-10002 lists naming it. engagement.ts says what an event contributes;
// a batch adds the contributions of its events and subtracts those of removed ones (replaced,
// deleted, expired, vanished), summed per key and written once per batch. Reads add the views
// of batches not yet applied, so a count moves the moment an event is committed.

import type { NostrEvent } from "../nostr/event.ts";
import type { Batch, Consumer, Prepared, Snapshot, Tail } from "../store/consumer.ts";
import { noTail, readSnapshot } from "../store/consumer.ts";
import { hexBytes } from "../store/keys.ts";
import { openDb } from "../store/store.ts";
import type { BinDb, Store } from "../store/types.ts";
import type { Engagement } from "./engagement.ts";
import { engagements, followed, relayList } from "./engagement.ts";
import type { NoteCounts, PubkeyCounts } from "./keys.ts";
import {
  isZeroNote,
  NOTE_FIELDS,
  noteValue,
  pubkeyValue,
  readNote,
  readPubkey,
  readU32,
  relayKey,
  u32,
  zeroNote,
  zeroPubkey,
} from "./keys.ts";

/** Bumped when what is counted changes, so stores counted the old way are counted again. */
export const COUNTERS_VERSION = 2;

/** What one event contributes. */
export interface Contribution {
  engages: Engagement[];
  /** kind 1: the note itself (its author's note count, the trending window) */
  note?: { id: string; pubkey: string; createdAt: number };
  /** kind 3: the pubkeys it follows */
  follows?: string[];
  /** kind 10002: the relay URLs it lists */
  relays?: string[];
}

/** Counter deltas of events not yet applied (or of a batch being applied). */
export interface Deltas {
  notes: Map<string, NoteCounts>;
  pubkeys: Map<string, PubkeyCounts>;
  relays: Map<string, number>;
}

const newDeltas = (): Deltas => ({ notes: new Map(), pubkeys: new Map(), relays: new Map() });

function getOr<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    m.set(k, v);
  }
  return v;
}

/** Adds (sign 1) or subtracts (sign -1) one contribution. */
function addTo(d: Deltas, c: Contribution, sign: number): void {
  for (const g of c.engages) {
    const n = getOr(d.notes, g.id, zeroNote);
    n[g.field] += sign;
    if (g.msats !== undefined) n.msats += sign > 0 ? g.msats : -g.msats;
  }
  if (c.note) getOr(d.pubkeys, c.note.pubkey, zeroPubkey).notes += sign;
  if (c.follows) for (const pk of c.follows) getOr(d.pubkeys, pk, zeroPubkey).followers += sign;
  if (c.relays) for (const url of c.relays) d.relays.set(url, (d.relays.get(url) ?? 0) + sign);
}

const isZeroDelta = (d: NoteCounts): boolean =>
  d.likes === 0 && d.reactions === 0 && d.reposts === 0 && d.replies === 0 && d.zaps === 0 && d.msats === 0n;

export class EngagementCounters implements Consumer<Contribution, Deltas> {
  readonly name = "counters";
  readonly version = COUNTERS_VERSION;
  readonly notes: BinDb;
  readonly pubkeys: BinDb;
  readonly relays: BinDb;
  /** set by the runner that feeds this consumer */
  tail: Tail<Deltas> = noTail;

  constructor(private readonly s: Store) {
    this.notes = openDb(s, "api_note");
    this.pubkeys = openDb(s, "api_pubkey");
    this.relays = openDb(s, "api_relay");
  }

  prepare(e: NostrEvent): Contribution | null {
    const c: Contribution = { engages: engagements(e) };
    if (e.kind === 1) c.note = { id: e.id, pubkey: e.pubkey, createdAt: e.created_at };
    else if (e.kind === 3) c.follows = followed(e);
    else if (e.kind === 10002) c.relays = relayList(e).map((r) => r.url);
    return c.engages.length > 0 || c.note || c.follows?.length || c.relays?.length ? c : null;
  }

  newView(): Deltas {
    return newDeltas();
  }

  view(v: Deltas, d: Prepared<Contribution>, sign: 1 | -1, removal: boolean): void {
    addTo(v, d.p, removal ? -sign : sign);
  }

  /** Each event's contribution is summed per key as it is added; each key is written once. */
  batch(_s: Store): Batch {
    const d = newDeltas();
    return {
      add: (e, _serial, sign) => {
        const c = this.prepare(e);
        if (c !== null) addTo(d, c, sign);
      },
      write: () => this.write(d),
    };
  }

  private write(d: Deltas): void {
    for (const [id, delta] of d.notes) {
      if (isZeroDelta(delta)) continue;
      const key = hexBytes(id);
      const c = readNote(this.notes.get(key));
      for (const f of NOTE_FIELDS) c[f] += delta[f];
      c.msats += delta.msats;
      if (isZeroNote(c)) this.notes.remove(key);
      else this.notes.put(key, noteValue(c));
    }
    for (const [pk, delta] of d.pubkeys) {
      if (delta.followers === 0 && delta.notes === 0) continue;
      const key = hexBytes(pk);
      const c = readPubkey(this.pubkeys.get(key));
      c.followers += delta.followers;
      c.notes += delta.notes;
      if (c.followers <= 0 && c.notes <= 0) this.pubkeys.remove(key);
      else this.pubkeys.put(key, pubkeyValue(c));
    }
    for (const [url, delta] of d.relays) {
      const key = delta === 0 ? undefined : relayKey(url);
      if (!key) continue;
      const n = readU32(this.relays.get(key)) + delta;
      if (n <= 0) this.relays.remove(key);
      else this.relays.put(key, u32(n));
    }
  }

  clear(_s: Store): void {
    for (const db of [this.notes, this.pubkeys, this.relays]) db.clearSync();
    // The counters of the first version lived beside their own version key.
    const legacy = openDb(this.s, "api_meta");
    legacy.clearSync();
  }

  /** The views of what is committed and not in the entries read with watermark `w`. */
  private views(): Snapshot<Deltas> {
    return readSnapshot(this.s, this);
  }

  /**
   * Brings the views up to what was committed since the last read (they are built when a reader
   * first asks for them).
   */
  refresh(): void {
    this.views();
  }

  /** A note's counters: what is on disk plus what is committed and not yet applied. */
  note(id: string): NoteCounts {
    const { views } = this.views();
    const c = readNote(this.notes.get(hexBytes(id)));
    for (const v of views) {
      const d = v.notes.get(id);
      if (!d) continue;
      for (const f of NOTE_FIELDS) c[f] += d[f];
      c.msats += d.msats;
    }
    for (const f of NOTE_FIELDS) c[f] = Math.max(0, c[f]);
    if (c.msats < 0n) c.msats = 0n;
    return c;
  }

  pubkey(pk: string): PubkeyCounts {
    const { views } = this.views();
    const c = readPubkey(this.pubkeys.get(hexBytes(pk)));
    for (const v of views) {
      const d = v.pubkeys.get(pk);
      if (!d) continue;
      c.followers += d.followers;
      c.notes += d.notes;
    }
    return { followers: Math.max(0, c.followers), notes: Math.max(0, c.notes) };
  }

  /** How many relay URLs stored relay lists name. */
  relayCount(): number {
    const { views } = this.views();
    let n = this.relays.getKeysCount();
    const delta = new Map<string, number>();
    for (const v of views) for (const [url, d] of v.relays) delta.set(url, (delta.get(url) ?? 0) + d);
    for (const [url, d] of delta) {
      const key = d === 0 ? undefined : relayKey(url);
      if (!key) continue;
      const before = readU32(this.relays.get(key));
      const after = before + d;
      if (before <= 0 && after > 0) n++;
      else if (before > 0 && after <= 0) n--;
    }
    return n;
  }
}
