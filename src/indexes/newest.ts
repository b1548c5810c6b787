// The newest created_at of each (author, kind) range of the pubkind index, as far as this process
// knows: a bound that no entry of the range is above. A newest-first REQ over many such ranges
// (a home feed: 100 follows × 2 kinds) then opens only those that can hold one of its answers
// (cursor.ts): at 50k events, 53 of a home feed's 150 ranges on average, the rest older than its
// 100th answer or empty. Opening a range is a call into lmdb-js that costs more than reading
// several entries of it.
//
// Why the bound holds: a range's newest entry is learned from its first read (newest first, no
// `until`), together with the snapshot's views of the events committed and not yet indexed; and
// every event stored after that (this process's writes and other processes' that the writer
// follows) raises the bound of a key that is kept (`put`, `seen`). A read may learn only when
// every serial the writer has assigned is in its snapshot (the index entries or the views): an
// event stored or being stored after the snapshot would otherwise be in neither and miss the
// bound. A removed event leaves its bound too high, which only opens a range for nothing.
// Kept per store for at most KEPT authors, a few hundred bytes each (cleared when full: a
// forgotten range is only unknown again).
import type { NostrEvent } from "../nostr/event.ts";
import type { Indexer, Store } from "../store/types.ts";
import type { NewestBounds } from "./cursor.ts";
import type { IndexSnapshot } from "./tail.ts";

const KEPT = 16_384;

export class NewestByPubkind implements Indexer {
  readonly name = "newest";
  /**
   * By author, then kind. Two levels: a filter's author strings are the same objects REQ after
   * REQ, and JavaScriptCore keeps a string's hash with it, where a key made of author and kind
   * would be a new string to hash at every look-up (a quarter of a home feed's time).
   */
  private readonly newest = new Map<string, Map<number, number>>();

  put(_s: Store, e: NostrEvent): void {
    this.raise(e);
  }

  remove(): void {}

  seen(e: NostrEvent, _serial: number, added: boolean): void {
    if (added) this.raise(e);
  }

  private raise(e: NostrEvent): void {
    const byKind = this.newest.get(e.pubkey);
    const v = byKind?.get(e.kind);
    if (v !== undefined && e.created_at > v) byKind!.set(e.kind, e.created_at);
  }

  /**
   * The bounds of the ranges `authors × kinds` (author-major, as the planner lists them), and
   * what their first reads teach, for a scan that reads under `snap`.
   */
  bounds(s: Store, authors: readonly string[], kinds: readonly number[], snap: IndexSnapshot): NewestBounds {
    const n = kinds.length;
    const above: (number | undefined)[] = new Array(authors.length * n);
    for (let a = 0; a < authors.length; a++) {
      const byKind = this.newest.get(authors[a]!);
      for (let k = 0; k < n; k++) above[a * n + k] = byKind?.get(kinds[k]!);
    }
    const covered = coveredBy(snap);
    const seen = (i: number, indexed: number): void => {
      // Something was stored, or is being stored, after this snapshot: it may be in neither.
      if (s.lastSerial > covered) return;
      const author = authors[Math.floor(i / n)]!;
      const kind = kinds[i % n]!;
      this.learn(author, kind, Math.max(indexed, newestInViews(snap, author, kind)));
    };
    return { above, seen };
  }

  private learn(author: string, kind: number, newest: number): void {
    let byKind = this.newest.get(author);
    if (byKind === undefined) {
      if (this.newest.size >= KEPT) this.newest.clear();
      byKind = new Map();
      this.newest.set(author, byKind);
    }
    byKind.set(kind, newest);
  }
}

/** The highest serial a snapshot holds: every event up to it is indexed or in a view. */
function coveredBy(snap: IndexSnapshot): number {
  let top = snap.through;
  for (const v of snap.views) if (v.top > top) top = v.top;
  return top;
}

/** The newest created_at of an author's events of a kind in the views (-1: none). */
function newestInViews(snap: IndexSnapshot, author: string, kind: number): number {
  let newest = -1;
  for (const v of snap.views) {
    const serials = v.byAuthor.get(author);
    if (serials === undefined) continue;
    for (const serial of serials) {
      const e = v.events.get(serial);
      if (e !== undefined && e.kind === kind && e.created_at > newest) newest = e.created_at;
    }
  }
  return newest;
}

const kept = new WeakMap<Store, NewestByPubkind>();

/**
 * Keeps the bounds for a store whose every write this process sees: its own writer's, and
 * other processes' through that writer (the relay's `follow`). A process that only reads must
 * not: another's writes would never raise them.
 */
export function keepNewest(s: Store): void {
  if (kept.has(s)) return;
  const n = new NewestByPubkind();
  kept.set(s, n);
  s.indexers.push(n);
}

/** The bounds kept for a store, if keepNewest was called for it. */
export const newestOf = (s: Store): NewestByPubkind | undefined => kept.get(s);
