// An inverted index of live subscriptions. Each filter is registered under one selective field
// (its ids, authors, one tag's values, kinds, or "all"), so a new event is fully matched only
// against filters that could want it. Sending is the caller's business.
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter, SearchMatcher } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";

export interface LiveSub {
  readonly filters: readonly Filter[];
  /** set by the index while matching one event, so a sub matched by two filters is sent once */
  stamp: number;
}

interface Entry<S extends LiveSub> {
  sub: S;
  filter: Filter;
}

type Bucket<S extends LiveSub> = Map<string | number, Set<Entry<S>>>;

export class LiveIndex<S extends LiveSub> {
  private readonly byId: Bucket<S> = new Map();
  private readonly byAuthor: Bucket<S> = new Map();
  private readonly byTag: Bucket<S> = new Map();
  private readonly byKind: Bucket<S> = new Map();
  private readonly all = new Set<Entry<S>>();
  private readonly entries = new Map<
    S,
    { bucket: Bucket<S> | undefined; keys: (string | number)[]; entry: Entry<S> }[]
  >();
  private stamp = 0;
  size = 0;

  /** `search` decides NIP-50 conditions of live filters (none match without it). */
  constructor(private readonly search?: SearchMatcher) {}

  add(sub: S): void {
    const regs = sub.filters.map((filter) => {
      const entry = { sub, filter };
      const [bucket, keys] = this.placement(filter);
      if (bucket) for (const k of keys) getOrAdd(bucket, k).add(entry);
      else this.all.add(entry);
      return { bucket, keys, entry };
    });
    this.entries.set(sub, regs);
    this.size++;
  }

  remove(sub: S): void {
    const regs = this.entries.get(sub);
    if (!regs) return;
    for (const { bucket, keys, entry } of regs) {
      if (!bucket) {
        this.all.delete(entry);
        continue;
      }
      for (const k of keys) {
        const set = bucket.get(k);
        set?.delete(entry);
        if (set?.size === 0) bucket.delete(k);
      }
    }
    this.entries.delete(sub);
    this.size--;
  }

  /** Calls `visit` once for each subscription that has a filter matching the event. */
  match(e: NostrEvent, visit: (sub: S) => void): void {
    const stamp = ++this.stamp;
    const check = (set: Set<Entry<S>> | undefined) => {
      if (!set) return;
      for (const { sub, filter } of set) {
        if (sub.stamp === stamp || !matchFilter(filter, e, this.search)) continue;
        sub.stamp = stamp;
        visit(sub);
      }
    };
    check(this.byId.get(e.id));
    check(this.byAuthor.get(e.pubkey));
    check(this.byKind.get(e.kind));
    if (this.byTag.size > 0)
      for (const t of e.tags)
        if (t[0]?.length === 1 && t[1] !== undefined) check(this.byTag.get(`${t[0]}:${t[1]}`));
    check(this.all);
  }

  private placement(f: Filter): [Bucket<S> | undefined, (string | number)[]] {
    if (f.ids) return [this.byId, f.ids];
    if (f.authors) return [this.byAuthor, f.authors];
    if (f.tags && f.tags.length > 0) {
      let best = f.tags[0]!;
      for (const t of f.tags) if (t[1].length < best[1].length) best = t;
      return [this.byTag, best[1].map((v) => `${best[0]}:${v}`)];
    }
    if (f.kinds) return [this.byKind, f.kinds];
    return [undefined, []];
  }
}

function getOrAdd<K, V>(m: Map<K, Set<V>>, k: K): Set<V> {
  let s = m.get(k);
  if (!s) {
    s = new Set();
    m.set(k, s);
  }
  return s;
}
