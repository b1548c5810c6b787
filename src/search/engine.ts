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
// A ranked search first tries the words' high-impact lists (impact.ts): when the limit-th best
// of the documents they name scores above what any other document can, that is the exact
// answer, from a few thousand documents instead of every match. COUNT walks every match.

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
import type { SearchIndex, SearchSnapshot } from "./consumer.ts";
import { eventLanguages, SEARCH_FIELDS } from "./fields.ts";
import { boundOutside } from "./impact.ts";
import type { SearchQuery } from "./parse.ts";
import { parseSearch } from "./parse.ts";
import { PostingLookup, PostingStream } from "./postings.ts";

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

/** What a search reads from one snapshot of the index: its words, statistics and exclusions. */
interface Setup {
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
  /** removed documents, ascending: the walk steps through them beside the postings */
  excluded: Float64Array;
  visible: (serial: number, kind: number, time: number) => boolean;
}

/** The snapshot and words of a search; undefined when nothing can match. */
function setUp(ix: SearchIndex, f: Filter, p: Prepared, o: QueryOptions): Setup | undefined {
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
  return { snap, words, idfs, avg, stored, hwm: o.hwm, since, until, kinds, excluded, visible };
}

/**
 * Adds every event containing all words to `c`, scored; false if cancelled. `hwm` bounds what
 * is visible; removed documents and events `hidden` (expired) are left out.
 */
async function allCandidates(
  ix: SearchIndex,
  u: Setup,
  p: Prepared,
  o: QueryOptions,
  c: Candidates,
): Promise<boolean> {
  const streams = u.words.map((w) => new PostingStream(ix.blocksView, w.prefix));
  try {
    const walk = new Intersection(streams, u.idfs, u.avg, u.stored, {
      since: u.since,
      until: u.until,
      kinds: p.kinds,
      excluded: u.excluded,
      hidden: o.hidden,
    });
    // Two groups of blocks per word between yields of the turn.
    while (!walk.step(c, 2 * PostingStream.groupSize)) {
      await yieldTurn();
      if (o.cancelled?.()) return false;
    }
  } finally {
    for (const s of streams) s.close();
  }
  addViews(u, c);
  return true;
}

/** Documents committed after the watermark, from the views (their serials are all above it). */
function addViews(u: Setup, c: Candidates): void {
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

/** How searches were answered: from the high lists alone, or by ranking every match. */
export const searchPaths = { high: 0, all: 0 };

/** Most documents in some but not all of a search's high lists before it walks everything instead. */
const HIGH_MAX = 200_000;

/** Documents in some of a search's high lists but not all, as parallel arrays. */
class Partial {
  serial: number[] = [];
  most: number[] = [];
  length: number[] = [];
  time: number[] = [];
  /** k per document, in word order: the tf from the word's high list, 0 when not in it */
  tfs: number[] = [];
}

/**
 * The merge of the words' high lists in serial order (highCandidates), a bounded number of
 * steps at a time. A class of its own, as Intersection, so that its loop is compiled early.
 */
class HighMerge {
  private readonly alive: boolean[];
  private readonly tfs: number[];
  /** the next entry of `excluded` that may be at or above the current serial */
  private ex = 0;
  /** partial documents that cannot reach this are not kept (a lower bound of the final cut) */
  floor = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly streams: PostingStream[],
    private readonly idfs: number[],
    private readonly avg: number,
    /** the weight bound of a word whose posting is in no high list, per idf */
    private readonly outside: number,
    private readonly u: Setup,
    private readonly kinds: Set<number> | undefined,
    private readonly hidden: ((serial: number) => boolean) | undefined,
  ) {
    this.alive = streams.map((st) => st.next());
    this.tfs = new Array<number>(streams.length).fill(0);
  }

  private visible(serial: number, kind: number, time: number): boolean {
    const u = this.u;
    if (time < u.since || time > u.until || (this.kinds && !this.kinds.has(kind))) return false;
    const ex = u.excluded;
    while (this.ex < ex.length && ex[this.ex]! < serial) this.ex++;
    if (this.ex < ex.length && ex[this.ex] === serial) return false;
    return !this.hidden?.(serial);
  }

  /** Up to `steps` documents of the merge: full ones into `c`, partial ones into `p`; true when done. */
  step(c: Candidates, p: Partial, steps: number): boolean {
    const { streams, alive, tfs, idfs, avg } = this;
    const k = streams.length;
    const stored = this.u.stored;
    for (let n = 0; n < steps; n++) {
      let at = Number.POSITIVE_INFINITY;
      for (let w = 0; w < k; w++) if (alive[w] && streams[w]!.serial < at) at = streams[w]!.serial;
      if (at > stored) return true;
      let all = true;
      let length = 0;
      let kind = 0;
      let time = 0;
      for (let w = 0; w < k; w++) {
        const st = streams[w]!;
        if (alive[w] && st.serial === at) {
          tfs[w] = st.tf;
          length = st.length;
          kind = st.kind;
          time = st.createdAt;
          alive[w] = st.next();
        } else {
          tfs[w] = 0;
          all = false;
        }
      }
      if (!this.visible(at, kind, time)) continue;
      let score = 0;
      let rest = 0;
      for (let w = 0; w < k; w++) {
        if (tfs[w]! > 0) score += termScore(idfs[w]!, tfs[w]!, length, avg);
        else rest += idfs[w]! * this.outside;
      }
      if (all) c.push(at, time, score);
      else if (score + rest >= this.floor) {
        p.serial.push(at);
        p.most.push(score + rest);
        p.length.push(length);
        p.time.push(time);
        for (let w = 0; w < k; w++) p.tfs.push(tfs[w]!);
      }
    }
    return false;
  }
}

/**
 * The candidates a ranked search needs when its words have high-impact lists (impact.ts), by
 * the threshold algorithm. The words' high lists are merged in serial order: a document in
 * every one of them is scored from the lists alone; a document in some of them gets the most it
 * can score (the known words' weights, the bound for the others) and is scored later, best
 * possible first, only while that could still reach the limit-th best score (its other words
 * looked up by serial, a few hundred at most on the load tool's million). The views' documents
 * are all scored. Returns the score no document left out can reach, undefined when the lists
 * cannot help (none built, too many documents in them), or false if cancelled.
 */
async function highCandidates(
  ix: SearchIndex,
  u: Setup,
  o: QueryOptions,
  c: Candidates,
  limit: number,
): Promise<number | undefined | false> {
  const { ref, threshold } = u.snap.impact;
  // Walking every match costs in proportion to the rarest word's postings: below a few tens of
  // thousands that is about a millisecond, less than the lists' merge plus a walk when they do
  // not decide (the 50k load: search p50 7 ms without them, 21 with them).
  if (ref <= 0 || u.words[0]!.df < ix.highFrom) return undefined;
  const k = u.words.length;
  const { idfs, avg } = u;
  // A hair above the bound, so that rounding in a sum of scores never lets a tie through.
  const outside = boundOutside(avg, ref, threshold) * (1 + 1e-9);
  const some = new Partial();
  const streams = u.words.map((w) => new PostingStream(ix.highView, w.prefix));
  try {
    const merge = new HighMerge(streams, idfs, avg, outside, u, u.kinds, o.hidden);
    while (!merge.step(c, some, 4096)) {
      if (some.serial.length >= HIGH_MAX) return undefined;
      // The cut so far only rises: partial documents below it need not be kept.
      merge.floor = kthScore(c, limit);
      await yieldTurn();
      if (o.cancelled?.()) return false;
    }
  } finally {
    for (const st of streams) st.close();
  }
  addViews(u, c);
  // Best possible first, of those that can still reach the limit-th best score.
  let kth = kthScore(c, limit);
  const order: number[] = [];
  for (let i = 0; i < some.most.length; i++) if (some.most[i]! >= kth) order.push(i);
  order.sort((a, b) => some.most[b]! - some.most[a]!);
  const lookups = u.words.map((w) => new PostingLookup(ix.blocksView, w.prefix));
  let stop = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < order.length; j++) {
    const i = order[j]!;
    if ((j & 63) === 63) {
      kth = kthScore(c, limit);
      await yieldTurn();
      if (o.cancelled?.()) return false;
    }
    // Ties at the cut are ordered by time: a document that can only tie is still scored.
    if (some.most[i]! < kth) {
      stop = some.most[i]!;
      break;
    }
    const serial = some.serial[i]!;
    const length = some.length[i]!;
    let score = 0;
    let all = true;
    for (let w = 0; w < k; w++) {
      const tf = some.tfs[i * k + w] || lookups[w]!.tf(serial);
      if (tf === 0) {
        all = false;
        break;
      }
      score += termScore(idfs[w]!, tf, length, avg);
    }
    if (all) c.push(serial, some.time[i]!, score);
  }
  // Lists rebuilt at another reference while this read them (between its reads) bound nothing.
  const now = ix.impact();
  if (now.ref !== ref || now.threshold !== threshold) return undefined;
  return Math.max(stop, outside * sum(idfs));
}

/** The limit-th best score among the candidates, or -Infinity when there are fewer. */
function kthScore(c: Candidates, limit: number): number {
  if (c.n < limit) return Number.NEGATIVE_INFINITY;
  const scores = c.scratch.subarray(0, c.n);
  scores.set(c.score.subarray(0, c.n));
  return select(scores, c.n - limit);
}

const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);

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
  const u = setUp(ix, f, p, o);
  if (!u) return [];
  let c = Candidates.take();
  try {
    // The high lists first: when the limit-th best of their documents scores above what any
    // other document can, that is the answer (impact.ts). Otherwise every match is ranked.
    const bound = await highCandidates(ix, u, o, c, limit);
    if (bound === false) return undefined;
    if (bound !== undefined) {
      const hits = await best(s, p, c, limit, o);
      if (hits === undefined) return undefined;
      if (hits.length === limit && hits[limit - 1]!.score > bound) {
        searchPaths.high++;
        return unscored(hits);
      }
      c.release();
      c = Candidates.take();
    }
    searchPaths.all++;
    return (await allCandidates(ix, u, p, o, c)) ? unscored(await best(s, p, c, limit, o)) : undefined;
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
): Promise<ScoredHit[] | undefined> {
  // A little slack: an event removed since the snapshot is skipped when loaded.
  const order = rankOrder(c, p.needsEvent || p.checksAccess ? c.n : limit * 2 + 16);
  const hits: ScoredHit[] = [];
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
  return hits.slice(0, limit);
}

type ScoredHit = SearchHit & { score: number };

const unscored = (hits: ScoredHit[] | undefined): SearchHit[] | undefined =>
  hits?.map(({ time, serial, json }) => ({ time, serial, json }));

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
  const u = setUp(ix, f, p, o);
  if (!u) return true;
  const c = Candidates.take();
  try {
    return (await allCandidates(ix, u, p, o, c)) && (await countInto(s, p, c, seen, o));
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
