// What the query, count, search and live phases aim at (authors and follows, hot threads, hashtags,
// stable ids, note words), derived from the dataset, and a wire-filter matcher kept apart from src/
// to judge any relay.
import type { Dataset, WireEvent } from "./dataset.ts";

export interface WireFilter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  since?: number;
  until?: number;
  limit?: number;
  search?: string;
  [tag: `#${string}`]: string[];
}

export interface Catalog {
  authors: string[];
  /** pubkey → followed pubkeys, from the newest contact list */
  follows: Map<string, string[]>;
  /** ids referenced by `e` tags, most referenced first (threads worth looking up) */
  roots: string[];
  /** hashtags by use, most used first */
  hashtags: string[];
  /** ids of kind-1 events, which are never replaced, so an id lookup always has an answer */
  noteIds: string[];
  /** contents of those kind-1 events, where the search phase takes its words */
  noteTexts: string[];
  minTime: number;
  maxTime: number;
}

function byCount(m: Map<string, number>): string[] {
  return [...m.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
}

export function buildCatalog(d: Dataset): Catalog {
  const follows = new Map<string, { at: number; pks: string[] }>();
  const refs = new Map<string, number>();
  const tags = new Map<string, number>();
  const noteIds: string[] = [];
  const noteTexts: string[] = [];
  let minTime = Number.MAX_SAFE_INTEGER;
  let maxTime = 0;
  for (const e of d.list) {
    minTime = Math.min(minTime, e.created_at);
    maxTime = Math.max(maxTime, e.created_at);
    if (e.kind === 1) {
      noteIds.push(e.id);
      noteTexts.push(e.content);
    }
    if (e.kind === 3) {
      const cur = follows.get(e.pubkey);
      if (!cur || cur.at <= e.created_at)
        follows.set(e.pubkey, { at: e.created_at, pks: e.tags.map((t) => t[1]!) });
    }
    for (const t of e.tags) {
      if (t[0] === "e") refs.set(t[1]!, (refs.get(t[1]!) ?? 0) + 1);
      else if (t[0] === "t") tags.set(t[1]!, (tags.get(t[1]!) ?? 0) + 1);
    }
  }
  return {
    authors: d.authors.map((a) => a.pk),
    follows: new Map([...follows].map(([k, v]) => [k, v.pks])),
    // Tiny datasets may have no replies yet; any id keeps `#e` filters well-formed.
    roots: refs.size > 0 ? byCount(refs) : d.list.map((e) => e.id),
    hashtags: byCount(tags),
    noteIds,
    noteTexts,
    minTime,
    maxTime,
  };
}

/** NIP-01 matching of one wire filter (limit ignored; no `search`: the live phase sends none). */
export function matchWire(f: WireFilter, e: WireEvent): boolean {
  if (f.ids && !f.ids.includes(e.id)) return false;
  if (f.authors && !f.authors.includes(e.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(e.kind)) return false;
  if (f.since !== undefined && e.created_at < f.since) return false;
  if (f.until !== undefined && e.created_at > f.until) return false;
  for (const [key, values] of Object.entries(f)) {
    if (key[0] !== "#") continue;
    const letter = key.slice(1);
    const want = values as string[];
    if (!e.tags.some((t) => t[0] === letter && t[1] !== undefined && want.includes(t[1]))) return false;
  }
  return true;
}
