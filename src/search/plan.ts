// What a search filter asks, and what it reads from one snapshot of the index: its words
// (rarest first), their idfs, the corpus average, what is stored and what is excluded. Both ways
// of answering (intersect.ts, high-walk.ts) start from it, and both take the documents committed
// after the watermark from the consumer's views (addViews).
import type { QueryOptions } from "../indexes/query.ts";
import type { Filter } from "../nostr/filter.ts";
import { tokenPrefix } from "./blocks.ts";
import { idf, termScore } from "./bm25.ts";
import type { Candidates } from "./candidates.ts";
import type { SearchIndex, SearchSnapshot } from "./consumer.ts";
import { SEARCH_FIELDS } from "./fields.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";

export interface Prepared {
  q: SearchQuery;
  /** the filter without `search`, checked on loaded events */
  rest: Filter;
  kinds: Set<number> | undefined;
  needsEvent: boolean;
  /** the reader's access rule can refuse a searchable event */
  checksAccess: boolean;
}

export function prepare(f: Filter, o: QueryOptions): Prepared | undefined {
  if (f.search === undefined) return undefined;
  const q = parseSearch(f.search);
  if (q.words.length === 0) return undefined;
  const { search: _, ...rest } = f;
  const needsEvent =
    f.ids !== undefined || f.authors !== undefined || f.tags !== undefined || q.languages.length > 0;
  // Restricted kinds (DMs, gift wraps) are not searchable: then the rule refuses no result, and
  // ranking need not load every candidate to check it.
  const restricted = o.restrictedKind;
  const checksAccess = o.allow !== undefined && (!restricted || [...SEARCH_FIELDS.keys()].some(restricted));
  return { q, rest, kinds: f.kinds && new Set(f.kinds), needsEvent, checksAccess };
}

/** What a search reads from one snapshot of the index: its words, statistics and exclusions. */
export interface Setup {
  snap: SearchSnapshot;
  words: { token: string; prefix: Buffer; df: number }[];
  idfs: number[];
  avg: number;
  /** serials above this come from the consumer's views, not the index */
  stored: number;
  /** the reader's high-water mark: nothing above it is visible */
  hwm: number;
  since: number;
  until: number;
  kinds: Set<number> | undefined;
  /** removed documents, ascending: the walks step through them beside the postings */
  excluded: Float64Array;
  /** events the reader may not see yet (expired) */
  hidden: ((serial: number) => boolean) | undefined;
  /** the same rules for a document in any order (the views' documents) */
  visible: (serial: number, kind: number, time: number) => boolean;
}

/** The snapshot and words of a search; undefined when nothing can match. */
export function setUp(ix: SearchIndex, f: Filter, p: Prepared, o: QueryOptions): Setup | undefined {
  const since = f.since ?? 0;
  const until = f.until ?? Number.MAX_SAFE_INTEGER;
  if (since > until || p.kinds?.size === 0) return undefined;
  // Everything below is read from one snapshot: the watermark, the statistics and the views.
  const snap = ix.snapshot();
  const words = p.q.words.map((token) => ({
    token,
    prefix: tokenPrefix(token),
    df: ix.docFrequency(snap, token),
  }));
  if (words.some((w) => w.df <= 0)) return undefined;
  words.sort((a, b) => a.df - b.df || (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const avg = snap.docs > 0 ? snap.totalLength / snap.docs : 1;
  const idfs = words.map((w) => idf(snap.docs, w.df));
  // A flush after this snapshot may add serials above the watermark: those come from the views.
  const stored = Math.min(snap.w?.serial ?? 0, o.hwm);
  const removed = new Set<number>();
  for (const v of snap.views) for (const serial of v.removed.keys()) removed.add(serial);
  const kinds = p.kinds;
  const gone = snap.gone;
  const hidden = o.hidden;
  const visible = (serial: number, kind: number, time: number): boolean =>
    time >= since &&
    time <= until &&
    (!kinds || kinds.has(kind)) &&
    !removed.has(serial) &&
    !gone.has(serial) &&
    !hidden?.(serial);
  let excluded = snap.goneSorted;
  if (removed.size > 0) {
    excluded = Float64Array.from([...snap.goneSorted, ...removed]);
    excluded.sort();
  }
  return { snap, words, idfs, avg, stored, hwm: o.hwm, since, until, kinds, excluded, hidden, visible };
}

/**
 * Setup's visibility rules for documents met in ascending serial order, as both walks meet them:
 * the excluded serials are stepped through beside them instead of looked up in sets.
 */
export class InOrder {
  /** the next entry of `excluded` that may be at or above the current serial */
  private ex = 0;

  constructor(private readonly u: Setup) {}

  visible(serial: number, kind: number, time: number): boolean {
    const u = this.u;
    if (time < u.since || time > u.until || (u.kinds && !u.kinds.has(kind))) return false;
    const ex = u.excluded;
    while (this.ex < ex.length && ex[this.ex]! < serial) this.ex++;
    if (this.ex < ex.length && ex[this.ex] === serial) return false;
    return !u.hidden?.(serial);
  }
}

/** Documents committed after the watermark, from the views (their serials are all above it). */
export function addViews(u: Setup, c: Candidates): void {
  const { words, idfs, avg } = u;
  for (const v of u.snap.views)
    for (const [serial, doc] of v.docs) {
      if (serial > u.hwm || !u.visible(serial, doc.kind, doc.createdAt)) continue;
      let score = 0;
      let all = true;
      for (let i = 0; i < words.length; i++) {
        const tf = doc.terms.get(words[i]!.token);
        if (tf === undefined) {
          all = false;
          break;
        }
        score += termScore(idfs[i]!, tf, doc.length, avg);
      }
      if (all) c.push(serial, doc.createdAt, score);
    }
}
