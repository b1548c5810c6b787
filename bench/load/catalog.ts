// What the query, count, search and live phases aim at (authors and follows, hot threads, hashtags,
// stable ids, note words), derived from the dataset, and a wire-filter matcher kept apart from src/
// to judge any relay. The catalog is built once, as the dataset is generated, and stored beside it
// (StoredCatalog), so a run at a million events never parses the events to aim its requests; the
// notes themselves stay on disk and are read by offset when a request needs one.

import type { NoteList } from "./notes.ts";
import { listNotes } from "./notes.ts";
import type { WireEvent } from "./wire.ts";

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
  /** kind-1 events, which are never replaced, so an id lookup always has an answer; their
   * contents are where the search phase takes its words */
  notes: NoteList;
  minTime: number;
  maxTime: number;
}

/** The catalog as kept in the dataset's meta file: follows by author index, notes apart. */
export interface StoredCatalog {
  /** [author index, followed author indexes] from each author's newest contact list */
  follows: [number, number[]][];
  roots: string[];
  hashtags: string[];
  minTime: number;
  maxTime: number;
}

/** The phases look at the first 500 roots at most; a few more are kept. */
const ROOTS_KEPT = 1000;

function byCount(m: Map<string, number>, keep = Number.POSITIVE_INFINITY): string[] {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, keep)
    .map(([k]) => k);
}

type Catalogued = Pick<WireEvent, "id" | "pubkey" | "created_at" | "kind" | "tags">;

/** Sees the dataset's events in order, one at a time, and keeps only what the catalog needs. */
export class CatalogBuilder {
  private readonly index: Map<string, number>;
  private readonly follows = new Map<number, { at: number; pks: number[] }>();
  private readonly refs = new Map<string, number>();
  private readonly tags = new Map<string, number>();
  /** for tiny datasets with no replies yet: any id keeps `#e` filters well-formed */
  private readonly firstIds: string[] = [];
  private minTime = Number.MAX_SAFE_INTEGER;
  private maxTime = 0;

  constructor(authors: readonly string[]) {
    this.index = new Map(authors.map((pk, i) => [pk, i]));
  }

  add(e: Catalogued): void {
    this.minTime = Math.min(this.minTime, e.created_at);
    this.maxTime = Math.max(this.maxTime, e.created_at);
    if (this.firstIds.length < ROOTS_KEPT) this.firstIds.push(e.id);
    if (e.kind === 3) {
      const who = this.index.get(e.pubkey);
      const cur = who === undefined ? undefined : this.follows.get(who);
      if (who !== undefined && (!cur || cur.at <= e.created_at))
        this.follows.set(who, { at: e.created_at, pks: e.tags.map((t) => this.index.get(t[1]!) ?? -1) });
    }
    for (const t of e.tags) {
      if (t[0] === "e") this.refs.set(t[1]!, (this.refs.get(t[1]!) ?? 0) + 1);
      else if (t[0] === "t") this.tags.set(t[1]!, (this.tags.get(t[1]!) ?? 0) + 1);
    }
  }

  finish(): StoredCatalog {
    return {
      follows: [...this.follows].map(([who, f]) => [who, f.pks.filter((i) => i >= 0)]),
      roots: this.refs.size > 0 ? byCount(this.refs, ROOTS_KEPT) : this.firstIds,
      hashtags: byCount(this.tags),
      minTime: this.minTime,
      maxTime: this.maxTime,
    };
  }
}

/** The catalog from its stored form, the authors' pubkeys and the dataset's notes. */
export function openCatalog(s: StoredCatalog, authors: readonly string[], notes: NoteList): Catalog {
  return {
    authors: [...authors],
    follows: new Map(s.follows.map(([who, pks]) => [authors[who]!, pks.map((i) => authors[i]!)])),
    roots: s.roots,
    hashtags: s.hashtags,
    notes,
    minTime: s.minTime,
    maxTime: s.maxTime,
  };
}

/** The catalog of events held in memory (bench scripts that make their own events). */
export function buildCatalog(d: { authors: { pk: string }[]; list: readonly WireEvent[] }): Catalog {
  const pks = d.authors.map((a) => a.pk);
  const b = new CatalogBuilder(pks);
  for (const e of d.list) b.add(e);
  return openCatalog(b.finish(), pks, listNotes(d.list.filter((e) => e.kind === 1)));
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
