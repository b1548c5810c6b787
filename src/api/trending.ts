// Trending notes: the kind-1 notes of the recent window (api.trendingWindowSeconds) with their
// engagement, held in memory and ranked on request. Seeded at start-up by one reverse scan of
// the kind index over the window only; then kept current by the counters consumer, which tells
// it about notes committed and removed and about new totals as each event is committed.

import type { EngagementCounters } from "../engagement/counters.ts";
import { engagements } from "../engagement/engagement.ts";
import type { NoteCounts } from "../engagement/keys.ts";
import { zeroNote } from "../engagement/keys.ts";
import { indexSnapshot } from "../indexes/indexes.ts";
import { tailEvents } from "../indexes/tail.ts";
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import { entriesOf } from "../store/index-db.ts";
import { kindBytes } from "../store/keys.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";

export interface WindowNote {
  id: string;
  serial: number;
  createdAt: number;
  counts: NoteCounts;
  score: number;
}

/**
 * The engagement score (docs/api.md): every reaction is engagement (a `-` included), a repost or
 * a reply weighs two, a zap three, plus the zapped amount on a log scale, so one large zap does
 * not outweigh a lively thread: log10(1 + sats) adds 1 for 9 sats, 3 for 999, 6 for 999,999.
 */
export function engagementScore(c: NoteCounts): number {
  const sats = Number(c.msats / 1000n);
  return c.likes + c.reactions + 2 * c.reposts + 2 * c.replies + 3 * c.zaps + Math.log10(1 + sats);
}

const byRank = (a: WindowNote, b: WindowNote): number =>
  b.score - a.score || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const PRUNE_EVERY_SECONDS = 60;

/** The counts of a note nobody engaged with yet (shared, never changed). */
const ZERO: NoteCounts = Object.freeze(zeroNote());

export class TrendingWindow {
  private readonly notes = new Map<string, WindowNote>();
  /** notes whose counts changed (or were never read) since the last ranking */
  private readonly stale = new Set<string>();
  /** the notes with a score above zero, best first; rebuilt after a change */
  private ranked: WindowNote[] | undefined;
  private lastPrune = 0;

  constructor(
    readonly seconds: number,
    private readonly counters: EngagementCounters,
    private readonly clock: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /**
   * Told by the relay of what each commit stored and removed (beside broadcast and the cluster):
   * kind-1 notes come and go, and the notes whose counts move are read again when ranked.
   */
  committed(
    stored: readonly { event: NostrEvent; serial: number }[],
    removed: readonly { event: NostrEvent }[],
  ): void {
    for (const { event: e, serial } of stored) {
      if (e.kind === 1) this.added(e.id, e.created_at, serial);
      // No read here: this runs for every committed event, on the relay's main thread.
      for (const g of engagements(e)) this.touched(g.id);
    }
    for (const { event: e } of removed) {
      if (e.kind === 1) this.removed(e.id);
      for (const g of engagements(e)) this.touched(g.id);
    }
  }

  get size(): number {
    this.counters.refresh();
    return this.notes.size;
  }

  /**
   * Loads the window's notes from the kind index (newest first, stopping at the window's start)
   * and from the events committed after the index's watermark.
   */
  seed(s: Store): number {
    const since = this.clock() - this.seconds;
    const snap = indexSnapshot(s);
    for (const { time, serial } of entriesOf(s.kind, kindBytes(1), since)) {
      if (serial > snap.through) continue;
      const json = readEvent(s, serial);
      if (json === undefined) continue;
      this.track(json.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64), serial, time);
    }
    for (const [serial, e] of tailEvents(snap))
      if (e.kind === 1 && e.created_at >= since) this.track(e.id, serial, e.created_at);
    this.lastPrune = this.clock();
    return this.notes.size;
  }

  added(id: string, createdAt: number, serial: number): void {
    const now = this.clock();
    if (now - this.lastPrune >= PRUNE_EVERY_SECONDS) this.prune(now);
    if (createdAt >= now - this.seconds) this.track(id, serial, createdAt);
  }

  removed(id: string): void {
    const n = this.notes.get(id);
    if (!n) return;
    this.notes.delete(id);
    this.stale.delete(id);
    if (n.score > 0) this.ranked = undefined;
  }

  touched(id: string): void {
    if (this.notes.has(id)) this.stale.add(id);
  }

  /**
   * Notes are tracked with their counts unread: reading them as each event commits would cost
   * a store read per note and per reaction on the relay's main thread; they are read once, when
   * a ranking is asked for.
   */
  private track(id: string, serial: number, createdAt: number): void {
    const old = this.notes.get(id);
    this.notes.set(id, { id, serial, createdAt, counts: old?.counts ?? ZERO, score: old?.score ?? 0 });
    this.stale.add(id);
  }

  /** Reads the counts of the notes that changed since the last ranking. */
  private recount(): void {
    if (this.stale.size === 0) return;
    for (const id of this.stale) {
      const n = this.notes.get(id);
      if (!n) continue;
      n.counts = this.counters.note(id);
      n.score = engagementScore(n.counts);
    }
    this.stale.clear();
    this.ranked = undefined;
  }

  private prune(now: number): void {
    const since = now - this.seconds;
    for (const [id, n] of this.notes) if (n.createdAt < since) this.removed(id);
    this.lastPrune = now;
  }

  /**
   * Notes of the window with any engagement, best first (score, then newer, then lower id),
   * each passing `visible`, at most `limit`.
   */
  top(limit: number, visible: (n: WindowNote) => boolean): WindowNote[] {
    this.counters.refresh(); // notes and counts committed since the last look
    const now = this.clock();
    if (now - this.lastPrune >= PRUNE_EVERY_SECONDS) this.prune(now);
    this.recount();
    this.ranked ??= [...this.notes.values()].filter((n) => n.score > 0).sort(byRank);
    const since = now - this.seconds;
    const out: WindowNote[] = [];
    for (const n of this.ranked) {
      if (out.length >= limit) break;
      if (n.createdAt >= since && visible(n)) out.push(n);
    }
    return out;
  }
}
