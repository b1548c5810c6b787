// Answers filters that carry `search`. Every query word must occur in a result (AND). The
// rarest word's postings are walked in serial order and the other words' postings intersected
// with them, block by block (blocks whose last serial is below the next candidate are skipped
// undecoded). The index covers the log up to its consumer's watermark; the documents committed
// after it come from the consumer's views, and the documents removed since from its views too,
// so a search sees exactly what is committed. Scores use the corpus statistics of the same
// snapshot, so the answer does not depend on how far the consumer has got.
// Kinds, since and until are checked on the posting; ids, authors, tags and `language:` need
// the event, which is loaded only for candidates in rank order until the limit is filled.
// Ranking: BM25 descending, then created_at descending, then id ascending; `limit` is applied
// after ranking (NIP-50), keeping the whole tie group at the cut so the cut is deterministic.

import type { QueryOptions, Searcher, SearchHit } from "../indexes/query.ts";
import { yieldTurn } from "../indexes/query.ts";
import { STORED_ID_OFFSET } from "../nostr/canonical.ts";
import type { NostrEvent } from "../nostr/event.ts";
import type { Filter } from "../nostr/filter.ts";
import { matchFilter } from "../nostr/filter.ts";
import { readEvent } from "../store/store.ts";
import type { Store } from "../store/types.ts";
import { tokenPrefix } from "./blocks.ts";
import { idf, termScore } from "./bm25.ts";
import type { SearchIndex } from "./consumer.ts";
import { eventLanguages, SEARCH_FIELDS } from "./fields.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";
import { PostingStream } from "./postings.ts";

interface Prepared {
  q: SearchQuery;
  /** the filter without `search`, checked on loaded events */
  rest: Filter;
  kinds: Set<number> | undefined;
  needsEvent: boolean;
  /** the reader's access rule can refuse a searchable event */
  checksAccess: boolean;
}

/**
 * Candidates as parallel typed arrays, ascending by serial; `n` of them are set. Searches take
 * them from a small pool and give them back: allocating tens of kilobytes of typed arrays per
 * search (growing as it goes) cost more than the search itself until the JIT warmed up, and
 * kept the collector busy after.
 */
class Candidates {
  private static readonly pool: Candidates[] = [];
  n = 0;
  serial = new Float64Array(1024);
  time = new Float64Array(1024);
  score = new Float64Array(1024);
  /** room for a copy of the scores or times, for selection */
  scratch = new Float64Array(1024);

  static take(): Candidates {
    const c = Candidates.pool.pop() ?? new Candidates();
    c.n = 0;
    return c;
  }

  /** Back to the pool (a few, and none that grew past a few megabytes). */
  release(): void {
    if (Candidates.pool.length < 8 && this.serial.length <= 1 << 17) Candidates.pool.push(this);
  }

  push(serial: number, time: number, score: number): void {
    if (this.n === this.serial.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.serial = grow(this.serial);
      this.time = grow(this.time);
      this.score = grow(this.score);
      this.scratch = new Float64Array(this.score.length);
    }
    this.serial[this.n] = serial;
    this.time[this.n] = time;
    this.score[this.n++] = score;
  }
}

function prepare(f: Filter, o: QueryOptions): Prepared | undefined {
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

/**
 * Leapfrog intersection of the words' postings: the rarest word leads; every other word seeks to
 * its serial, and a word that overshoots moves the lead on to where it landed. Kept out of the
 * async code so that its loop is compiled early (it is most of a search's time).
 */
class Intersection {
  private more: boolean;
  /** the next entry of `excluded` that may be at or above the current serial */
  private ex = 0;

  constructor(
    private readonly streams: PostingStream[],
    private readonly idfs: number[],
    private readonly avg: number,
    /** serials above this come from the consumer's views, not the index */
    private readonly stored: number,
    private readonly only: {
      since: number;
      until: number;
      kinds: Set<number> | undefined;
      /** serials never to return, ascending */
      excluded: Float64Array;
      hidden: ((serial: number) => boolean) | undefined;
    },
  ) {
    this.more = streams[0]!.next();
  }

  private visible(serial: number, kind: number, time: number): boolean {
    const o = this.only;
    if (time < o.since || time > o.until || (o.kinds && !o.kinds.has(kind))) return false;
    const ex = o.excluded;
    while (this.ex < ex.length && ex[this.ex]! < serial) this.ex++;
    if (this.ex < ex.length && ex[this.ex] === serial) return false;
    return !o.hidden?.(serial);
  }

  /** Adds matches to `c` until `blocks` index blocks were read; true when done. */
  step(c: Candidates, blocks: number): boolean {
    const streams = this.streams;
    const lead = streams[0]!;
    const k = streams.length;
    for (const s of streams) s.blocksRead = 0;
    let read = 0;
    let sinceCount = 0;
    while (this.more && read < blocks) {
      let target = lead.serial;
      let i = 1;
      if (k === 2) {
        if (!lead.meet(streams[1]!)) return this.done();
        target = lead.serial;
        i = 2;
      }
      while (i < k) {
        const s = streams[i]!;
        if (!s.seek(target)) return this.done();
        if (s.serial === target) i++;
        else if (!lead.seek(s.serial)) return this.done();
        else {
          target = lead.serial;
          i = 1;
        }
      }
      if (target > this.stored) return this.done();
      if (this.visible(target, lead.kind, lead.createdAt)) {
        let score = 0;
        for (let w = 0; w < k; w++) score += termScore(this.idfs[w]!, streams[w]!.tf, lead.length, this.avg);
        c.push(target, lead.createdAt, score);
      }
      this.more = lead.next();
      // Blocks read so far, summed now and then: a block holds up to ~200 postings.
      if (++sinceCount === 64) {
        sinceCount = 0;
        read = 0;
        for (let w = 0; w < k; w++) read += streams[w]!.blocksRead;
      }
    }
    return !this.more;
  }

  private done(): boolean {
    this.more = false;
    return true;
  }
}

/**
 * Adds every event containing all words to `c`, scored; false if cancelled. `hwm` bounds what
 * is visible; removed documents and events `hidden` (expired) are left out.
 */
async function candidates(
  ix: SearchIndex,
  f: Filter,
  p: Prepared,
  o: QueryOptions,
  c: Candidates,
): Promise<boolean> {
  const since = f.since ?? 0;
  const until = f.until ?? Number.MAX_SAFE_INTEGER;
  if (since > until || p.kinds?.size === 0) return true;
  // Everything below is read from one snapshot: the watermark, the statistics and the views.
  const snap = ix.snapshot();
  const words = p.q.words.map((token) => ({
    token,
    prefix: tokenPrefix(token),
    df: ix.docFrequency(snap, token),
  }));
  if (words.some((w) => w.df <= 0)) return true;
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
  // Removed documents, ascending: the walk steps through them beside the postings.
  let excluded = snap.goneSorted;
  if (removed.size > 0) {
    excluded = Float64Array.from([...snap.goneSorted, ...removed]);
    excluded.sort();
  }
  const streams = words.map((w) => new PostingStream(ix.blocksView, w.prefix));
  try {
    const walk = new Intersection(streams, idfs, avg, stored, { since, until, kinds, excluded, hidden });
    // Two groups of blocks per word between yields of the turn.
    while (!walk.step(c, 2 * PostingStream.groupSize)) {
      await yieldTurn();
      if (o.cancelled?.()) return false;
    }
  } finally {
    for (const s of streams) s.close();
  }
  // Documents committed after the watermark, from the views (their serials are all above it).
  for (const v of snap.views)
    for (const [serial, doc] of v.docs) {
      if (serial > o.hwm || !visible(serial, doc.kind, doc.createdAt)) continue;
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
  return true;
}

/** The reader may see the event and it passes the filter's other conditions. */
function admits(p: Prepared, json: string, o: QueryOptions): boolean {
  if (p.checksAccess && o.allow && !o.allow(json)) return false;
  if (!p.needsEvent) return true;
  const e = JSON.parse(json) as NostrEvent;
  if (!matchFilter(p.rest, e)) return false;
  const langs = p.q.languages;
  return langs.length === 0 || eventLanguages(e).some((l) => langs.includes(l));
}

/**
 * The value that would be at `at` if `a` (which is reordered) were sorted ascending: Hoare's
 * selection, linear on average, where a full sort of thousands of scores per search was not.
 */
export function select(a: Float64Array, at: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // Median of three as the pivot keeps sorted and reversed input linear.
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (at <= j) hi = j;
    else if (at >= i) lo = i;
    else return a[at]!;
  }
  return a[at]!;
}

/**
 * Candidate positions in rank order: score, then newer, then higher serial (the final order
 * breaks ties by id). When only the best `need` can be results, the rest are not sorted: every
 * candidate scoring above the need-th best score is kept, and of those tied with it the newest,
 * down to the created_at that fills `need`, with its own ties.
 */
function rankOrder(c: Candidates, need: number): number[] {
  const n = c.n;
  const keep: number[] = [];
  if (n <= need * 2 + 64) for (let k = 0; k < n; k++) keep.push(k);
  else {
    const scores = c.scratch.subarray(0, n);
    scores.set(c.score.subarray(0, n));
    const kth = select(scores, n - need);
    const tied: number[] = [];
    for (let k = 0; k < n; k++) {
      const score = c.score[k]!;
      if (score > kth) keep.push(k);
      else if (score === kth) tied.push(k);
    }
    const room = need - keep.length;
    if (tied.length <= room) keep.push(...tied);
    else {
      const cut = select(
        Float64Array.from(tied, (k) => c.time[k]!),
        tied.length - room,
      );
      for (const k of tied) if (c.time[k]! >= cut) keep.push(k);
    }
  }
  return keep.sort(
    (a, b) => c.score[b]! - c.score[a]! || c.time[b]! - c.time[a]! || c.serial[b]! - c.serial[a]!,
  );
}

/** The best `limit` results of a search filter, best first; undefined if cancelled. */
async function searchFilter(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  limit: number,
  o: QueryOptions,
): Promise<SearchHit[] | undefined> {
  const p = prepare(f, o);
  if (!p || limit === 0) return [];
  const c = Candidates.take();
  try {
    return (await candidates(ix, f, p, o, c)) ? await best(s, p, c, limit, o) : undefined;
  } finally {
    c.release();
  }
}

/** The best `limit` candidates the reader may see, loaded; undefined if cancelled. */
async function best(
  s: Store,
  p: Prepared,
  c: Candidates,
  limit: number,
  o: QueryOptions,
): Promise<SearchHit[] | undefined> {
  // A little slack: an event removed since the snapshot is skipped when loaded.
  const order = rankOrder(c, p.needsEvent || p.checksAccess ? c.n : limit * 2 + 16);
  const hits: (SearchHit & { score: number })[] = [];
  let cutScore = Number.NaN;
  let cutTime = Number.NaN;
  let sinceYield = 0;
  for (const k of order) {
    const score = c.score[k]!;
    const time = c.time[k]!;
    if (hits.length >= limit && (score !== cutScore || time !== cutTime)) break;
    if (++sinceYield >= o.yieldEvery) {
      sinceYield = 0;
      await yieldTurn();
      if (o.cancelled?.()) return undefined;
    }
    const serial = c.serial[k]!;
    const json = readEvent(s, serial);
    if (json === undefined || !admits(p, json, o)) continue;
    hits.push({ time, serial, json, score });
    if (hits.length === limit) {
      cutScore = score;
      cutTime = time;
    }
  }
  const id = (h: SearchHit) => h.json.slice(STORED_ID_OFFSET, STORED_ID_OFFSET + 64);
  hits.sort((a, b) => b.score - a.score || b.time - a.time || (id(a) < id(b) ? -1 : 1));
  return hits.slice(0, limit).map(({ time, serial, json }) => ({ time, serial, json }));
}

/** Adds the serial of every event matching a search filter to `seen`; false if cancelled. */
async function searchCount(
  ix: SearchIndex,
  s: Store,
  f: Filter,
  seen: Set<number>,
  o: QueryOptions,
): Promise<boolean> {
  const p = prepare(f, o);
  if (!p) return true;
  const c = Candidates.take();
  try {
    return (await candidates(ix, f, p, o, c)) && (await countInto(s, p, c, seen, o));
  } finally {
    c.release();
  }
}

async function countInto(
  s: Store,
  p: Prepared,
  c: Candidates,
  seen: Set<number>,
  o: QueryOptions,
): Promise<boolean> {
  let sinceYield = 0;
  for (let k = 0; k < c.n; k++) {
    const serial = c.serial[k]!;
    if (seen.has(serial)) continue;
    if (p.needsEvent || p.checksAccess) {
      if (++sinceYield >= o.yieldEvery) {
        sinceYield = 0;
        await yieldTurn();
        if (o.cancelled?.()) return false;
      }
      const json = readEvent(s, serial);
      if (json === undefined || !admits(p, json, o)) continue;
    }
    seen.add(serial);
  }
  return true;
}

/** The search engine over one index, as the store's queries use it. */
export function searcher(ix: SearchIndex): Searcher {
  return {
    filter: (s, f, limit, o) => searchFilter(ix, s, f, limit, o),
    count: (s, f, seen, o) => searchCount(ix, s, f, seen, o),
  };
}
